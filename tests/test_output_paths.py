"""Output paths, the result stream and the run directory under hostile conditions (issues 11.1,
12.1-12.5): devices, FIFOs and symlinks as outputs, a full disk, unwritable or vanishing run
directories, two runs claiming one id."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import stat
import sys
import threading
from contextlib import closing
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import pytest
from cli_here import qbench_here

from pytest_qbench.core import atomic
from pytest_qbench.report import store
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.readers import load_source
from pytest_qbench.report.shapes import new

from conftest import RunQBench


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def leftovers(directory: Path) -> list[str]:
    """Temporary files an atomic write left behind."""
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# --- 12.1: the atomic writer replaces regular files only --------------------------------------


def test_atomic_write_through_symlink_keeps_link(tmp_path: Path) -> None:
    """(issue 12.1) A symlink output stays a link; its target gets the text, atomically."""
    target = tmp_path / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    atomic.write_text_atomic(link, "new\n")
    assert link.is_symlink()
    assert target.read_text() == "new\n"
    assert leftovers(target.parent) == [] and leftovers(tmp_path) == []


def test_atomic_write_through_dangling_symlink_creates_target(tmp_path: Path) -> None:
    """(issue 12.1) A symlink to a missing file: the target is created, the link kept."""
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    atomic.write_text_atomic(link, "{}")
    assert link.is_symlink()
    assert (tmp_path / "made.json").read_text() == "{}"


def test_atomic_write_to_fifo_writes_in_place(tmp_path: Path) -> None:
    """(issue 12.1) A FIFO output is written in place (a reader gets the text), not replaced."""
    fifo = tmp_path / "myfifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic.write_text_atomic(fifo, "digest\n")
    reader.join(timeout=600)  # it ends at once (the write closed the FIFO): a safety net
    assert got == [b"digest\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_atomic_write_to_link_to_dev_null_keeps_both(tmp_path: Path) -> None:
    """(issue 12.1) A symlink to /dev/null: the device is written in place, the link kept.

    (Never aim a test at /dev/null itself: a writer that replaces files would replace the
    machine's /dev/null when run as root.)"""
    link = tmp_path / "out.md"
    link.symlink_to("/dev/null")
    atomic.write_text_atomic(link, "x" * 100)
    assert link.is_symlink()
    assert stat.S_ISCHR(os.stat(link).st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_atomic_write_to_own_char_device_keeps_device(tmp_path: Path) -> None:
    """(issue 12.1) A character device made with mknod (a null device) is not replaced."""
    device = tmp_path / "mynull"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    atomic.write_text_atomic(device, "report")
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert leftovers(tmp_path) == []


# --- 12.2: a failed write of a stream record never damages the next -------------------------


class FlakyDisk:
    """The stream's ``os.write`` (``store.os_write``) that, on the ``fail_at``-th write of a result record, writes part of it and
    then fails with ENOSPC ``times`` times; every other write goes through."""

    def __init__(self, fail_at: int, times: int = 1, truncate_fails: bool = False) -> None:
        self.real_write = os.write
        self.real_truncate = os.ftruncate
        self.fail_at, self.times, self.truncate_fails = fail_at, times, truncate_fails
        self.results = 0
        self.failing = False

    def write(self, fd: int, data: bytes) -> int:
        if self.failing:
            self.failing = False
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if b'{"kind":"result"' in bytes(data[:40]):
            self.results += 1
            if self.fail_at <= self.results < self.fail_at + self.times:
                self.failing = True  # a short write, then the disk is full
                return self.real_write(fd, data[: len(data) // 2])
        return self.real_write(fd, data)

    def ftruncate(self, fd: int, length: int) -> None:
        if self.truncate_fails:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.real_truncate(fd, length)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(store, "os_write", self.write)
        monkeypatch.setattr(store, "os_ftruncate", self.ftruncate)


def stream_result(name: str) -> TestResultRecord:
    """A result record, as the plugin streams it."""
    return new("TestResult", nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome="passed")


@pytest.mark.parametrize("truncate_fails", [False, True])
def test_stream_short_write_never_glues_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, truncate_fails: bool
) -> None:
    """(issue 12.2) A short write, then ENOSPC: the record raises, and waits; the next write
    holds it and the next one, whole (issue 28: the writer keeps what the disk refused)."""
    path = tmp_path / "results.jsonl"
    writer = store.StreamWriter(path)
    FlakyDisk(fail_at=2, truncate_fails=truncate_fails).install(monkeypatch)
    writer.write_result(stream_result("a"))
    with pytest.raises(OSError, match="No space left"):
        writer.write_result(stream_result("b"))
    writer.write_result(stream_result("c"))
    writer.close()
    monkeypatch.undo()
    assert writer.damaged is truncate_fails
    names = [json.loads(raw)["test_name"] for raw in store.iter_result_json(path, check=True)]
    assert names == ["a", "b", "c"]
    assert [r.test_name for r in read_stream_results(path)] == ["a", "b", "c"]
    assert store.repair_stream(path) == (1 if truncate_fails else 0)
    lines = path.read_text().splitlines()
    assert [json.loads(line)["result"]["test_name"] for line in lines] == ["a", "b", "c"]


def read_stream_results(path: Path) -> list[TestResult]:
    """The results ``read_stream`` finds (what ``qbench render RUN_DIR`` rebuilds from)."""
    from pytest_qbench.report.models import Environment
    from pytest_qbench.report.models import ReportMeta
    from pytest_qbench.report.models import RunMeta
    from pytest_qbench.report.models import StreamStart
    from pytest_qbench.report.readers import read_stream

    now = datetime.now(timezone.utc)
    start = StreamStart(
        meta=ReportMeta(qbench_version="0", created_at=now),
        run=RunMeta(run_id="r", started_at=now, cwd="/", command=[]),
        environment=Environment(
            python="3",
            implementation="CPython",
            platform="Linux",
            pytest_version="9",
            qbench_version="0",
        ),
    )
    full = path.with_name("with-start.jsonl")
    full.write_bytes(start.model_dump_json().encode() + b"\n" + path.read_bytes())
    return read_stream(full).results


FIVE_TESTS = """
    def test_1(): pass
    def test_2(): pass
    def test_3(): assert 0
    def test_4(): pass
    def test_5(): pass
"""


def test_disk_full_for_a_moment_keeps_every_result(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(issue 12.2) The disk refuses the 3rd result once (a short write, then ENOSPC): every
    file is whole and valid, holds all 5 tests, and qbench says once what happened."""
    pytester.makepyfile(FIVE_TESTS)
    monkeypatch.setattr(store, "BATCH_RECORDS", 1)  # each result its own write (issue 28)
    FlakyDisk(fail_at=3).install(monkeypatch)
    run = run_qbench("--qbench-json=copy.json")
    monkeypatch.undo()
    assert [r.test_name for r in run.report.results] == [f"test_{i}" for i in range(1, 6)]
    copy = TestReport.model_validate_json((pytester.path / "copy.json").read_text())
    assert len(copy.results) == 5
    records = run.stream_records()  # every line whole JSON
    # the 3rd was kept in memory, and streamed (in order) when the disk took writes again
    streamed = [r["result"]["test_name"] for r in records if r["kind"] == "result"]
    assert streamed == [f"test_{i}" for i in range(1, 6)]
    assert len(load_source(run.run_dir).results) == 5  # qbench render RUN_DIR
    out = run.result.stdout.str()
    assert out.count("could not write .qbench/runs/") == 1
    assert "results.jsonl: No space left on device" in out
    assert "internal error" not in out


def test_disk_full_for_the_rest_of_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(issue 12.3) The stream fails from the 2nd result on: one line, not one per test; the
    results kept in memory reach report.json, and the run is indexed."""
    pytester.makepyfile(FIVE_TESTS)
    monkeypatch.setattr(store, "BATCH_RECORDS", 1)  # each result its own write (issue 28)
    FlakyDisk(fail_at=2, times=10**6).install(monkeypatch)
    run = run_qbench()
    monkeypatch.undo()
    assert [r.test_name for r in run.report.results] == [f"test_{i}" for i in range(1, 6)]
    out = run.result.stdout.str()
    assert out.count("could not write") == 1
    assert "internal error" not in out
    assert indexed_runs(pytester.path) == [run.report.run.run_id]


def indexed_runs(root: Path) -> list[str]:
    """The run ids in ``.qbench/index.sqlite``."""
    index = root / ".qbench" / "index.sqlite"
    if not index.exists():
        return []
    with closing(sqlite3.connect(index)) as db:
        return [row[0] for row in db.execute("SELECT run_id FROM runs")]


# --- 11.1, 12.3: output paths refused at start, and written at the end whatever happens --------


def assert_refused(result: pytest.RunResult, *patterns: str) -> None:
    """pytest stopped with a usage error before any test ran; no internal error."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(list(patterns))
    assert "internal error" not in result.stdout.str() + result.stderr.str()
    assert "passed" not in result.stdout.str()


def test_output_in_proc_refused_at_start(pytester: pytest.Pytester) -> None:
    """(issue 11.1) --qbench-json=/proc/x.json is refused at start (no file can be made there)."""
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-json=/proc/x.json")
    assert_refused(result, "*--qbench-json is not writable, given: /proc/x.json (*")


def test_qbench_dir_in_sys_refused_at_start(pytester: pytest.Pytester) -> None:
    """(issue 11.1) --qbench-dir=/sys/qb is refused at start."""
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-dir=/sys/qb")
    assert_refused(result, "*--qbench-dir is not writable, given: /sys/qb (*")


@pytest.mark.usefixtures("chmod_binds")
def test_read_only_runs_dir_refused_at_start(pytester: pytest.Pytester) -> None:
    """(issue 11.1) A runs directory the user cannot write (chmod 555) is refused at start.
    pytest runs in a child chmod binds (``chmod_binds.run``: as root too, so CI runs it)."""
    from child_pytest import child_env
    from child_pytest import pytest_command
    from chmod_binds import run

    runs = pytester.path / ".qbench" / "runs"
    runs.mkdir(parents=True)
    runs.chmod(0o555)
    pytester.makepyfile("def test_ok(): pass")
    try:
        done = run(pytest_command("-p", "no:cacheprovider"), cwd=pytester.path, env=child_env())
    finally:
        runs.chmod(0o755)
    result = pytest.RunResult(
        done.returncode, done.stdout.splitlines(), done.stderr.splitlines(), 0
    )
    assert_refused(result, "*--qbench-dir is not writable, given: *.qbench (cannot create *runs*")


def test_runs_path_blocked_refused_at_start(pytester: pytest.Pytester) -> None:
    """(issue 11.1) A runs "directory" that is a file is refused at start, naming it."""
    (pytester.path / ".qbench").mkdir()
    (pytester.path / ".qbench" / "runs").write_text("")
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("-p", "qbench")
    assert_refused(result, "*--qbench-dir is not writable, given: *.qbench (cannot create *runs*")


FAIL_RUN_REPORT = """
    import errno
    import os

    from pytest_qbench.report import store

    real = store.write_report_json

    def full_disk_in_run_dir(path, *args, **kwargs):
        if ".qbench" in path.parts:  # the run directory's disk is full; copy.json's is not
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, *args, **kwargs)

    store.write_report_json = full_disk_in_run_dir
"""


def test_run_dir_unwritable_at_end_still_writes_the_rest(pytester: pytest.Pytester) -> None:
    """(issue 12.3) report.json cannot be written in the run directory: one line naming it,
    --qbench-json is still written (from the report itself), and the run is not indexed."""
    pytester.makeconftest(FAIL_RUN_REPORT)
    pytester.makepyfile("def test_ok(): pass\ndef test_bad(): assert 0")
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-json=copy.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["qbench: could not write .qbench/runs/*/report.json: No space left on device"]
    )
    assert "internal error" not in result.stdout.str()
    copy = TestReport.model_validate_json((pytester.path / "copy.json").read_text())
    assert [r.outcome for r in copy.results] == ["passed", "failed"]
    assert indexed_runs(pytester.path) == []


# --- 12.4: retention spares a run in progress; a vanished run directory is made again ---------


def test_retention_spares_a_locked_run_dir(tmp_path: Path) -> None:
    """(issue 12.4) A run directory its live run holds is not deleted by retention; once the
    run let go, it is."""
    from pytest_qbench.history.indexer import remove_run_dirs

    lock = store.RunLock(store.run_dir(tmp_path, "live-1"))
    lock.claim()
    assert store.run_in_progress(lock.path)
    problems = remove_run_dirs(tmp_path, ["live-1"])
    assert lock.path.is_dir()
    assert problems == [f"did not delete old run {lock.path}: it is still running"]
    lock.release()
    assert not store.run_in_progress(lock.path)
    assert remove_run_dirs(tmp_path, ["live-1"]) == []
    assert not lock.path.exists()


def test_qbench_index_keep_runs_spares_a_run_in_progress(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 12.4) `qbench index --keep-runs 1` leaves the directory of a run still going."""
    from pytest_qbench.cli import main

    pytester.makepyfile("def test_ok(): pass")
    run_qbench("--qbench-run-id=a-old")
    run_qbench("--qbench-run-id=b-new", run_dir="b-new")
    fcntl = pytest.importorskip("fcntl")
    live = store.run_dir(pytester.path / ".qbench", "a-old")
    held = os.open(live, os.O_RDONLY)  # the lock its run holds while it goes
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        main(["index", "--dir", str(pytester.path / ".qbench"), "--keep-runs", "1"])
    finally:
        os.close(held)
    assert live.is_dir()
    assert "its run is still going" in capsys.readouterr().err


def test_run_dir_deleted_mid_run_is_made_again(pytester: pytest.Pytester) -> None:
    """(issue 12.4) The whole .qbench deleted while tests run: the run directory, its stream,
    report.json (every result) and .gitignore are made again, with a warning."""
    pytester.makepyfile(
        """
        import shutil
        from pathlib import Path

        def test_1(): pass
        def test_2(): shutil.rmtree(Path(".qbench"))
        def test_3(): pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["qbench: the run directory .qbench/runs/* was deleted while *"])
    (run_dir,) = (pytester.path / ".qbench" / "runs").iterdir()
    report = TestReport.model_validate_json((run_dir / "report.json").read_text())
    assert [r.test_name for r in report.results] == ["test_1", "test_2", "test_3"]
    assert report.summary.total == 3
    assert [w.code for w in report.warnings] == ["run-dir-deleted"]
    assert len(load_source(run_dir).results) == 3  # the stream was written back too
    assert (pytester.path / ".qbench" / ".gitignore").is_file()


# --- 12.5: a run directory is claimed atomically ----------------------------------------------


def test_run_id_taken_after_start_check_is_refused(pytester: pytest.Pytester) -> None:
    """(issue 12.5) Another run takes the id between the option check and the session start
    (two runs started together): the second is refused, and the first's directory untouched."""
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_configure(config):
            taken = config.rootpath / ".qbench" / "runs" / "dup"
            taken.mkdir(parents=True)
            (taken / "results.jsonl").write_text("the other run's\\n")
        """
    )
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-run-id=dup")
    assert_refused(result, "*--qbench-run-id 'dup' already exists in *runs; choose a new id*")
    run_dir = pytester.path / ".qbench" / "runs" / "dup"
    assert [p.name for p in run_dir.iterdir()] == ["results.jsonl"]
    assert (run_dir / "results.jsonl").read_text() == "the other run's\n"


def test_copied_run_dir_never_replaces_its_original_in_the_index(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 12.5) A copied run directory (the same run id twice) is skipped by `qbench index`,
    with a message naming both, whether indexed with the store or alone."""
    from pytest_qbench.cli import main

    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench("--qbench-run-id=ci-1", run_dir="ci-1")
    copy = run.run_dir.with_name("0-copy")  # listed before its original
    shutil.copytree(run.run_dir, copy)
    qbench_dir = str(pytester.path / ".qbench")
    capsys.readouterr()
    assert main(["index", "--dir", qbench_dir]) == 1
    err = capsys.readouterr().err
    assert f"qbench: skipped {copy}: it holds run ci-1, as {run.run_dir} does" in err
    assert main(["index", "--dir", qbench_dir, str(copy)]) == 1
    assert "a copied run directory?" in capsys.readouterr().err
    assert indexed_runs(pytester.path) == ["ci-1"]


def test_start_up_probe_leaves_nothing_behind(pytester: pytest.Pytester) -> None:
    """(issue 11.1) Probing the output directories at start makes no directory that stays:
    `pytest --help` leaves neither .qbench nor an output's directory."""
    result = pytester.runpytest("-p", "qbench", "--help", "--qbench-json=out/sub/x.json")
    assert result.ret == pytest.ExitCode.OK
    assert not (pytester.path / ".qbench").exists()
    assert not (pytester.path / "out").exists()


def test_report_json_parses_what_it_splices_from_a_damaged_stream(tmp_path: Path) -> None:
    """(issue 12.2) A torn line that looks whole (it ends in "}") is never spliced into
    report.json when the stream is known damaged: the file stays valid JSON."""
    stream = tmp_path / "results.jsonl"
    writer = store.StreamWriter(stream)
    writer.write_result(stream_result("a"))
    writer.close()
    with stream.open("a") as handle:
        handle.write(store.RESULT_PREFIX + '{"nodeid":"t.py::b","x":{}}\n')  # cut after a "}"
    out = tmp_path / "report.json"
    record = cast("TestReportRecord", {"meta": {}, "results": []})
    store.write_report_json(out, record, stream, check=True)
    assert [r["test_name"] for r in json.loads(out.read_text())["results"]] == ["a"]


def test_torn_record_the_disk_would_not_cut_back_is_repaired(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(issue 12.2) When even cutting the torn record back fails, the next record starts on a
    line of its own, and the stream is rewritten whole at the end."""
    pytester.makepyfile(FIVE_TESTS)
    FlakyDisk(fail_at=3, truncate_fails=True).install(monkeypatch)
    run = run_qbench()
    monkeypatch.undo()
    assert [r.test_name for r in run.report.results] == [f"test_{i}" for i in range(1, 6)]
    records = run.stream_records()  # every line whole JSON after the repair
    assert [r["result"]["test_name"] for r in records if r["kind"] == "result"] == [
        f"test_{i}" for i in range(1, 6)
    ]


def test_atomic_write_to_dev_stdout_link_keeps_the_redirected_file(tmp_path: Path) -> None:
    """(issue 12.1) A link to /proc/self/fd/N (what /dev/stdout is) writes the open file in
    place: the file the descriptor holds gets the text, no other file replaces it."""
    redirected = tmp_path / "out.md"
    with redirected.open("w") as held:
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{held.fileno()}")
        inode = os.stat(redirected).st_ino
        atomic.write_text_atomic(link, "report\n")
        assert link.is_symlink()
        assert os.stat(redirected).st_ino == inode
        assert redirected.read_text() == "report\n"
    assert leftovers(tmp_path) == []


def test_md_to_a_stdout_link_is_printed_not_replaced(pytester: pytest.Pytester) -> None:
    """(issue 12.1) --qbench-md=LINK, LINK -> /proc/self/fd/1 (as /dev/stdout is): accepted at
    start, the Markdown goes to pytest's stdout (here a file), and the link stays a link."""
    pytester.makepyfile("def test_ok(): pass")
    link = pytester.path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    result = pytester.runpytest_subprocess("-p", "qbench", f"--qbench-md={link}")
    assert result.ret == pytest.ExitCode.OK
    # written through pytest's own descriptor: what pytest printed before and after is intact
    result.stdout.fnmatch_lines(
        ["collected 1 item", "*# *Test report: 1 passed*", "*= 1 passed in *"]
    )
    assert link.is_symlink()
    assert os.readlink(link) == "/proc/self/fd/1"


# --- a symlink loop as an output is refused, never replaced -----------------------------------


def make_loop(directory: Path) -> Path:
    """``loop1 -> loop2 -> loop1``; returns ``loop1``."""
    (directory / "loop1").symlink_to("loop2")
    (directory / "loop2").symlink_to("loop1")
    return directory / "loop1"


def test_atomic_write_to_a_symlink_loop_is_refused_with_eloop(tmp_path: Path) -> None:
    """A symlink loop is refused with the system's ELOOP, naming the path; both links stay."""
    loop = make_loop(tmp_path)
    with pytest.raises(OSError, match="Too many levels of symbolic links") as caught:
        atomic.write_text_atomic(loop, "{}")
    assert caught.value.errno == errno.ELOOP
    assert caught.value.filename == str(loop)
    assert loop.is_symlink() and (tmp_path / "loop2").is_symlink()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "option",
    ["--qbench-json", "--qbench-md", "--qbench-html", "--qbench-digest", "--qbench-template"],
)
def test_symlink_loop_output_refused_at_start(pytester: pytest.Pytester, option: str) -> None:
    """Every output option refuses a symlink loop before any test runs, with ELOOP's message."""
    pytester.makepyfile("def test_ok(): pass")
    loop = make_loop(pytester.path)
    value = f"md.j2={loop}" if option == "--qbench-template" else str(loop)
    if option == "--qbench-template":
        (pytester.path / "md.j2").write_text("{{ summary }}")
    result = pytester.runpytest("-p", "qbench", f"{option}={value}")
    assert_refused(
        result, f"*{option} is not writable, given: *loop1 (Too many levels of symbolic links)*"
    )
    assert loop.is_symlink() and (pytester.path / "loop2").is_symlink()


def test_cli_output_to_a_symlink_loop_is_refused(pytester: pytest.Pytester) -> None:
    """``qbench render -o LOOP`` says the system's message and leaves the links as they are."""
    pytester.makepyfile("def test_ok(): pass")
    pytester.runpytest("-p", "qbench", "--qbench-json=report.json")
    loop = make_loop(pytester.path)
    result = qbench_here("render", "report.json", "-o", loop)  # its words are the subject
    assert result.ret != 0
    result.err_lines().fnmatch_lines(["qbench: error: Too many levels of symbolic links: *loop1"])
    assert loop.is_symlink() and (pytester.path / "loop2").is_symlink()


def test_a_directory_another_process_removes_during_the_probe_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four pytest processes starting at once in a fresh project (a queue's machines) each
    create ``.qbench``, probe it and remove what they made: one process's directory can vanish
    between its mkdir and its probe file. That is not "not writable": the directory is made
    again. The other process's removal is played here at that exact point."""
    import tempfile

    from pytest_qbench.plugin.options import settings

    directory = tmp_path / ".qbench"
    real = tempfile.NamedTemporaryFile
    removed: list[Path] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not removed:
            directory.rmdir()  # the other process cleans up the directory it made
            removed.append(directory)
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", racing)
    settings.probe_directory(directory, "--qbench-dir")
    assert removed and not directory.exists()  # probed, then removed: nothing left behind


def test_a_directory_another_process_removes_during_mkdir_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other moment of the same race: this process's mkdir fails because another process
    has just made the directory, and that process removes it before mkdir checks that it is a
    directory, so ``Path.mkdir(exist_ok=True)`` raises "File exists" of a path that is gone.
    It failed a queue worker with "--qbench-dir is not writable ... File exists" in CI."""
    from pytest_qbench.plugin.options import settings

    directory = tmp_path / ".qbench"
    real = Path.mkdir
    raced: list[Path] = []

    def racing(self: Path, *args: Any, **kwargs: Any) -> None:
        if self == directory and not raced:
            real(self)  # the other process makes the directory first ...
            self.rmdir()  # ... and removes it once it has probed it
            raced.append(self)
            raise FileExistsError(17, "File exists", str(self))
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", racing)
    settings.probe_directory(directory, "--qbench-dir")
    assert raced and not directory.exists()  # probed, then removed: nothing left behind


def removed_after_first_look(directory: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """``directory`` removed right after this process first stats it (``os.stat``, which
    ``Path.exists``, ``is_dir`` and ``stat`` all come to), as another pytest process starting
    at once removes the directory its probe made; the list says whether that happened."""
    real = os.stat
    removed: list[Path] = []

    def racing(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        result = real(path, *args, **kwargs)
        if (
            not removed
            and isinstance(path, (str, os.PathLike))
            and os.fspath(path) == str(directory)
        ):
            directory.rmdir()  # the other process cleans up the directory it made
            removed.append(directory)
        return result

    monkeypatch.setattr(os, "stat", racing)
    return removed


def test_a_qbench_dir_another_process_removes_between_two_looks_is_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pytest processes starting at once in a fresh project: the other removes ``.qbench``
    right after this one saw it there. The start-up check looks at the path once and again
    when it went away: the directory is made again. Before (47301ef's parent), ``exists()``
    then ``is_dir()`` read the directory gone as "--qbench-dir must be a directory ... (a
    file)", exit 4 (a queue machine stopped)."""
    from pytest_qbench.plugin.options import settings

    directory = tmp_path / ".qbench"
    directory.mkdir()
    removed = removed_after_first_look(directory, monkeypatch)
    settings.ensure_writable_dir(directory, "--qbench-dir")
    assert removed  # the race was played; probed, then what the probe made was removed


def test_an_output_dir_another_process_removes_between_two_looks_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race for an output file under ``.qbench`` (``--qbench-json=.qbench/x.json``):
    the directory the check found existing is gone when its permission is asked. It is looked
    for again (its parent is writable) and made. Before, it was "--qbench-json is not writable
    ... (no write permission on .qbench)"."""
    from pytest_qbench.plugin.options import settings

    directory = tmp_path / ".qbench"
    directory.mkdir()
    removed = removed_after_first_look(directory, monkeypatch)
    settings.ensure_writable_file(directory / "report.json", "--qbench-json")
    assert removed


def test_runs_dir_another_process_removes_as_the_run_dir_is_claimed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race at the session start: four runs started at once in a fresh project with
    one ``--qbench-dir``, one's ``runs/`` removed by another's probe between its mkdir and the
    run directory's: that run stopped with "--qbench-dir is not writable ... No such file or
    directory" (found by trial6). The directory is made again and the run goes on."""
    pytester.makepyfile("def test_ok(): pass")
    runs = pytester.path / ".qbench" / "runs"
    real = Path.mkdir
    raced: list[Path] = []

    def racing(self: Path, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        if self == runs and not raced and sys._getframe(1).f_code.co_name == "claim":
            self.rmdir()  # the other process removes the directory its probe made
            raced.append(self)

    monkeypatch.setattr(Path, "mkdir", racing)
    result = pytester.runpytest_inprocess("-p", "qbench", "--qbench-run-id=r1")
    assert raced
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    assert (runs / "r1" / "report.json").is_file()
    assert indexed_runs(pytester.path) == ["r1"]
