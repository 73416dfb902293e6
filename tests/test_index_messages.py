"""What the history commands and check_health say about an index that is not what it should be:
the real problem and its fix (issue 12.12)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.history.sqlite import SQLiteIndex
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.tools import QBenchTools


pytestmark = pytest.mark.engine


@pytest.fixture
def qdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty qbench directory, the local index (no database) configured."""
    monkeypatch.delenv("QBENCH_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    qbench_dir = tmp_path / ".qbench"
    qbench_dir.mkdir()
    return qbench_dir


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one ``qbench: error:`` line on stderr."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("qbench: error: "), err
    return err


def test_index_that_is_a_directory(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """index.sqlite as a directory is named as such, not "run pytest to create it"
    (issue 12.12)."""
    (qdir / "index.sqlite").mkdir()
    for command in ("runs", "index"):
        assert main([command, "--dir", str(qdir)]) == ERR
        err = one_error(capsys)
        assert "is not a file (a directory?)" in err and "move it away" in err
        assert "run pytest" not in err


def test_foreign_sqlite_database(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An SQLite file of something else with a runs table is named as foreign by runs and by
    index, which leaves it alone (no "table runs already exists") (issue 12.12)."""
    with sqlite3.connect(qdir / "index.sqlite") as db:
        db.execute("CREATE TABLE runs (id INTEGER, name TEXT)")
    before = (qdir / "index.sqlite").read_bytes()
    for command in ("runs", "index"):
        assert main([command, "--dir", str(qdir)]) == ERR
        err = one_error(capsys)
        assert "an SQLite database of something else (tables: runs)" in err
        assert "already exists" not in err and "run 'qbench index' to build it" not in err
    assert (qdir / "index.sqlite").read_bytes() == before


def test_read_only_index_is_not_called_damaged(
    qdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A healthy index the user may not write is called read-only, with no advice to delete it
    (issue 12.12), by a command that writes it; one that only reads opens it read-only
    (``mode=ro``) and answers (tests/test_history_read_only.py, with real permissions)."""
    assert main(["index", "--dir", str(qdir)]) == OK
    capsys.readouterr()

    def read_only(self: SQLiteIndex) -> None:  # what SQLite says; chmod does not stop root
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(SQLiteIndex, "_set_pragmas", read_only)
    assert main(["runs", "--dir", str(qdir)]) == OK
    capsys.readouterr()
    assert main(["index", "--dir", str(qdir)]) == ERR
    err = one_error(capsys)
    assert "index.sqlite is read-only" in err and "writable" in err and "delete" not in err


def test_index_of_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """qbench index --dir MISSING is an error, and creates nothing (issue 12.12)."""
    missing = tmp_path / "nonexistent"
    assert main(["index", "--dir", str(missing)]) == ERR
    assert f"--dir {missing} is not a directory" in one_error(capsys)
    assert not missing.exists()


def test_check_health_reports_a_corrupt_index(qdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check_health with a corrupt index is degraded and says why, not "ok, no index yet"
    (issue 12.12)."""
    (qdir / "index.sqlite").write_bytes(b"this is not SQLite at all" * 100)
    tools = QBenchTools(ServerConfig(root=qdir.parent, qbench_dir=qdir))
    health = tools.check_health()
    assert health.status == "degraded"
    assert health.runs_indexed is None
    assert any("index.sqlite is not a usable qbench index" in p for p in health.problems)


def _two_runs(qbench_dir: Path) -> None:
    """A small run (``small``), and a run of 3 000 results (``big``) not indexed yet."""
    from history_data import report
    from history_data import result
    from history_data import write_run

    write_run(qbench_dir, report("small", 0, [result("test_a")]))
    assert main(["index", "--dir", str(qbench_dir)]) == OK
    many = [result(f"test_{i:05d}_" + "x" * 100, "failed") for i in range(3000)]
    write_run(qbench_dir, report("big", 1, many))


def test_a_full_disk_is_named_and_the_index_kept(
    qdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's SQLITE_FULL ("database or disk is full") while indexing says the disk is full
    and never advises deleting the index, which still holds its runs afterwards. The disk is
    made full for SQLite by ``PRAGMA max_page_count`` on qbench's own connection."""
    _two_runs(qdir)
    real_connect = sqlite3.connect

    def full_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        conn.execute(f"PRAGMA max_page_count = {pages + 2}").fetchall()
        return conn

    monkeypatch.setattr(sqlite3, "connect", full_connect)
    capsys.readouterr()
    assert main(["index", "--dir", str(qdir)]) == ERR
    err = capsys.readouterr().err
    assert "is full (database or disk is full)" in err and "the index is unchanged" in err
    assert "delete" not in err and "not a usable qbench index" not in err
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    assert main(["runs", "--dir", str(qdir), "--json"]) == OK
    assert '"run_id": "small"' in capsys.readouterr().out


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounting a tmpfs needs root"
)
def test_a_full_file_system_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same on a real full file system (an 8 MiB tmpfs), where SQLite may say "disk I/O
    error" rather than "disk is full"."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        qbench_dir = mount / ".qbench"
        _two_runs(qbench_dir)
        filler = mount / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as handle:
            while True:  # bounded by the file system's size
                handle.write(b"\0" * 4096)
                handle.flush()
        capsys.readouterr()
        assert main(["index", "--dir", str(qbench_dir)]) == ERR
        err = capsys.readouterr().err
        assert "is full" in err or "No space left on device" in err, err
        assert "delete it" not in err and "not a usable qbench index" not in err
        filler.unlink()
        assert main(["runs", "--dir", str(qbench_dir), "--json"]) == OK
        assert '"run_id": "small"' in capsys.readouterr().out
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
