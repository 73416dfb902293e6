"""A run store this user may not write: ``.qbench`` read-only (its ``runs/`` writable), or the
index file without write permission. The run still reports, its exit status pytest's, the
index's error named; the commands that only read (``qbench runs``, ``history``, ``flaky``, MCP
``list_runs``) open the index read-only (SQLite's ``mode=ro``) instead of failing.

chmod does not bind root (root writes a read-only file and directory): every child that meets
the store runs through ``chmod_binds.run``, which, as root, gives up root's file overrides
first, so these tests run in CI (root) too; they skip, saying why, only where that cannot be
done.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chmod_binds import run


pytestmark = pytest.mark.usefixtures("chmod_binds")

TESTS = """
def test_ok():
    pass

def test_fails():
    assert 0
"""
OLD = Path(__file__).parent / "data" / "history"
NOT_INDEXED = "qbench: run not indexed, so no history in its reports: "


def run_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    argv = [sys.executable, "-m", "pytest", "-p", "qbench", "-q", "-p", "no:cacheprovider"]
    return run(argv, cwd=root, env=env)


def qbench(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pytest_qbench", *args], cwd=root)


LIST_RUNS = """
import json, sys
from pathlib import Path
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.tools import QBenchTools

root = Path(sys.argv[1])
listed = QBenchTools(ServerConfig(root=root, qbench_dir=root / ".qbench")).list_runs(5)
print(listed.model_dump_json())
"""
"""The MCP server's ``list_runs`` of the project named, printed as JSON."""


def mcp_list_runs(root: Path) -> dict[str, Any]:
    done = run([sys.executable, "-c", LIST_RUNS, str(root)], cwd=root)
    assert done.returncode == 0, done.stderr
    listed: dict[str, Any] = json.loads(done.stdout)
    return listed


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project with one run indexed (its index checkpointed: no write-ahead log left)."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "test_x.py").write_text(TESTS)
    assert run_pytest(root).returncode == 1
    assert not (root / ".qbench/index.sqlite-wal").exists()
    yield root
    for path in (root / ".qbench", root / ".qbench/index.sqlite"):  # tmp_path's clean-up
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


WHAT = ["directory", "directory and index"]
"""What is made read-only: ``.qbench`` (its ``runs/`` writable), and its index file too. The
index file alone read-only in a writable directory worked on main already (SQLite opens the
file read-only itself, and makes its shared-memory file beside it; the run names the error)."""


def make_read_only(root: Path, what: str) -> None:
    paths = [root / ".qbench"] + ([root / ".qbench/index.sqlite"] if "index" in what else [])
    for path in paths:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@pytest.mark.parametrize("what", WHAT)
def test_a_run_reports_and_names_the_index_error_its_status_unchanged(
    project: Path, what: str
) -> None:
    """The run's reports are written and its exit status is pytest's 1; the terminal and
    report.md name why it is not in the index. A read-only ``.qbench`` stopped pytest before
    any test with exit status 4 (``--qbench-dir is not writable``)."""
    make_read_only(project, what)
    runs = project / ".qbench/runs"
    before = set(runs.iterdir())  # the fixture's run: its id may sort after this one's
    done = run_pytest(project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert NOT_INDEXED in done.stdout and "is read-only" in done.stdout
    [run] = set(runs.iterdir()) - before
    report = run / "report.md"
    assert "run not indexed" in report.read_text()


@pytest.mark.parametrize("what", WHAT)
def test_read_only_commands_read_a_read_only_index(project: Path, what: str) -> None:
    """`qbench runs`, `history`, `flaky` and MCP `list_runs` read the index; on main they
    failed (``index-read-only``, exit 1; MCP: a note instead of the runs). A command that
    writes still names the error."""
    make_read_only(project, what)
    runs = qbench(project, "runs")
    assert runs.returncode == 0, runs.stderr
    assert "2 tests: 1 failed, 1 passed" in runs.stdout
    history = qbench(project, "history", "test_x.py::test_fails")
    assert history.returncode == 0, history.stderr
    assert "runs      1: 0 passed, 1 failed" in history.stdout
    flaky = qbench(project, "flaky")
    assert flaky.returncode == 0, flaky.stderr
    listed = mcp_list_runs(project)
    assert listed["note"] is None
    [only] = listed["runs"]
    assert only["summary"]["failed"] == 1
    quarantined = qbench(project, "quarantine", "add", "test_x.py::test_fails", "--reason", "known")
    assert quarantined.returncode != 0 and "is read-only" in quarantined.stderr


def test_a_run_that_died_in_a_read_only_store_is_named_not_fatal(project: Path) -> None:
    """A run that died (no end record, no report.json) is indexed by the history's commands
    before they answer; in a store this user may not write, they answer from the index as it
    is and name the run left out. On main: ``index-read-only``, exit status 1."""
    [source] = (project / ".qbench/runs").iterdir()
    dead = source.with_name("20991231T235959Z-dead01")
    shutil.copytree(source, dead)
    for name in ("report.json", "report.md"):
        (dead / name).unlink(missing_ok=True)
    stream = dead / "results.jsonl"
    lines = stream.read_text(encoding="utf-8").replace(source.name, dead.name).splitlines()
    stream.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # no end record
    make_read_only(project, "directory")
    runs = qbench(project, "runs")
    assert runs.returncode == 0, runs.stderr
    assert "2 tests: 1 failed, 1 passed" in runs.stdout
    assert f"the runs that died ({dead.name}) are not in the index: " in runs.stderr
    assert "is read-only" in runs.stderr


def test_a_read_only_index_of_an_older_schema_names_the_migration(tmp_path: Path) -> None:
    """An index of schema 11 (main's, tests/data/history/index-schema-11.sql) in a read-only
    directory cannot be read before it is migrated, which writes: the error says so, and
    that it can be read-only again after (on main: "needs to write ... even to read it")."""
    qbench_dir = tmp_path / ".qbench"
    qbench_dir.mkdir()
    with sqlite3.connect(qbench_dir / "index.sqlite") as db:
        db.executescript((OLD / "index-schema-11.sql").read_text(encoding="utf-8"))
    make_read_only(tmp_path, "directory")
    try:
        runs = qbench(tmp_path, "runs")
    finally:
        qbench_dir.chmod(0o755)
    assert runs.returncode == 1
    assert "is read-only and of index schema 11: this qbench reads it once migrated" in runs.stderr
