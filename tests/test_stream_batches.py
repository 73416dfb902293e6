"""The stream's writes batched (issue 28): one ``write`` for up to ``BATCH_RECORDS`` records,
none older than ``BATCH_SECONDS`` left waiting (a timer thread writes them, also while a test
hangs), every record written before the stream is read, at the session's end on every exit
path, and before the process forks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_qbench.cli import main
from pytest_qbench.report import store
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.shapes import new

from conftest import find_run_dir


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestResultRecord


def result(name: str) -> TestResultRecord:
    """A result record, as the plugin streams it."""
    return new("TestResult", nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome="passed")


class Writes:
    """The stream's writes (``store.os_write``) counted, per descriptor."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.real = os.write
        self.calls: list[tuple[int, str]] = []
        monkeypatch.setattr(store, "os_write", self.write)

    def write(self, fd: int, data: bytes) -> int:
        self.calls.append((fd, threading.current_thread().name))
        return self.real(fd, data)


def results_in(path: Path) -> list[str]:
    return [json.loads(raw)["test_name"] for raw in store.iter_result_json(path)]


def wait_for(check: object, seconds: float = 60.0) -> bool:
    """Whether ``check()`` came true within ``seconds`` (generous: the machine may be busy)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_a_batched_stream_writes_a_batch_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 results: 4 writes (64, 64, 64, then 8 with the end record), not 200; the file holds
    the same bytes as a stream that writes each record at once."""
    monkeypatch.setattr(store, "BATCH_SECONDS", 3600.0)  # no write by the timer, however slow
    writes = Writes(monkeypatch)
    batched = store.StreamWriter(tmp_path / "batched.jsonl", batched=True)
    plain = store.StreamWriter(tmp_path / "plain.jsonl")
    fds = {"batched": batched._fd, "plain": plain._fd}
    for writer in (batched, plain):
        writer.write_start({"kind": "start"})  # type: ignore[typeddict-item]
        for index in range(200):
            writer.write_result(result(f"test_{index}"))
        writer.write_end({"kind": "end"})  # type: ignore[typeddict-item]
        writer.close()
    counts = {name: sum(fd == held for fd, _ in writes.calls) for name, held in fds.items()}
    assert counts == {"batched": 1 + 3 + 1, "plain": 202}  # start, 3 x 64, the rest and end
    assert (tmp_path / "batched.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
    assert batched.written is not None and plain.written is not None
    assert batched.written.rows == plain.written.rows
    assert batched.written.nodeids == plain.written.nodeids


def test_the_timer_writes_what_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three results and nothing after them (a test that hangs): the timer thread writes them,
    not before they waited ``BATCH_SECONDS``."""
    writes = Writes(monkeypatch)
    path = tmp_path / "results.jsonl"
    writer = store.StreamWriter(path, batched=True)
    try:
        added = time.monotonic()
        for name in ("a", "b", "c"):
            writer.write_result(result(name))
        assert results_in(path) == [] or time.monotonic() - added >= store.BATCH_SECONDS
        assert wait_for(lambda: results_in(path) == ["a", "b", "c"])
        assert time.monotonic() - added >= store.BATCH_SECONDS
        # by the timer alone: once, unless the machine held this thread 0.1 s between two (the
        # writes to this stream only: another thread of the process may write elsewhere)
        mine = [name for fd, name in writes.calls if fd == writer._fd]
        assert set(mine) == {"qbench-stream"}
        assert 1 <= len(mine) <= 3
    finally:
        writer.close()
    assert not any(thread.name == "qbench-stream" for thread in threading.enumerate())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_fork_writes_what_waits_and_stops_the_timer(tmp_path: Path) -> None:
    """Before the process forks, the records waiting are written and the timer thread ends
    (Python 3.12+ warns when a process with threads forks); the child holds none of them; the
    next record starts the timer again."""
    path = tmp_path / "results.jsonl"
    writer = store.StreamWriter(path, batched=True)
    try:
        writer.write_result(result("a"))
        assert any(thread.name == "qbench-stream" for thread in threading.enumerate())
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: what it holds of the writer, and its threads
            held = f"{len(writer._pending)} {threading.active_count()}"
            os.write(write, held.encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as pipe:
            assert pipe.read() == "0 1"
        assert results_in(path) == ["a"]
        assert not any(thread.name == "qbench-stream" for thread in threading.enumerate())
        writer.write_result(result("b"))
        assert any(thread.name == "qbench-stream" for thread in threading.enumerate())
    finally:
        writer.close()
    assert results_in(path) == ["a", "b"]


def test_a_refused_batch_waits_and_is_written_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch the disk refuses (a short write, then ENOSPC) is cut off the file again and
    waits; the next write that succeeds holds it, whole and in order; one the disk never takes
    is handed back by ``close``."""
    import errno

    monkeypatch.setattr(store, "BATCH_SECONDS", 3600.0)  # no write by the timer, however slow
    path = tmp_path / "results.jsonl"
    writer = store.StreamWriter(path, batched=True)
    real = os.write
    full = [True]

    def short_then_full(fd: int, data: bytes) -> int:
        if full[0]:
            full[0] = False
            return real(fd, data[: len(data) // 3])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store, "os_write", short_then_full)
    with pytest.raises(OSError, match="No space left"):
        for index in range(store.BATCH_RECORDS):
            writer.write_result(result(f"test_{index}"))
    monkeypatch.setattr(store, "os_write", real)
    assert path.read_bytes() == b""  # cut off again
    writer.flush()
    assert results_in(path) == [f"test_{index}" for index in range(store.BATCH_RECORDS)]
    monkeypatch.setattr(store, "os_write", short_then_full)
    writer.write_result(result("late"))
    writer.close()
    monkeypatch.setattr(store, "os_write", real)
    assert [line.startswith(store.RESULT_PREFIX.encode()) for line in writer.unwritten] == [True]
    assert len(results_in(path)) == store.BATCH_RECORDS


HANG_CONFTEST = """
import os

from pytest_qbench.report import store

# The stream's clock stands still until a test moves it: its timer writes nothing before,
# however slow the machine, so the writes counted are the batches' alone (before, one result a
# write whenever a loaded machine took over 0.1 s a test).
clock = [0.0]
store.monotonic = lambda: clock[0]

real_write = os.write
writes = [0]

def counting(fd, data):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("results.jsonl"):
            writes[0] += 1
    except OSError:
        pass
    return real_write(fd, data)

store.os_write = counting
"""

HANG_TESTS = """
import json, os, time
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_pass(n):
    pass

def test_hang():
    # the main thread blocks here: only the stream's timer can write the results before; the
    # clock moved past their batch time, it finds them due at its next look
    import conftest, glob
    conftest.clock[0] = 3600.0
    stream = glob.glob(".qbench/runs/*/results.jsonl")[0]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with open(stream) as handle:
            if sum(line.startswith('{{"kind":"result"') for line in handle) == {count}:
                break
        time.sleep(0.01)
    with open("hanging.tmp", "w") as handle:
        json.dump({{"writes": conftest.writes[0]}}, handle)
    os.replace("hanging.tmp", "hanging")  # whole once seen
    while True:
        time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc")
def test_a_run_killed_while_a_test_hangs_keeps_every_result_before_it(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commonest death: a test hangs and the CI job (or pytest-timeout's thread method)
    kills the run. 150 results, then a test that blocks: the timer writes them while it
    blocks, in a few writes, not 151; after ``kill -9``, the stream holds all 150,
    and ``qbench render`` reads a run that died in the hanging test: never green. The stream's
    clock stands still until the test hangs (``HANG_CONFTEST``): the timer writes once, what
    waits then, whatever the machine's load (before: up to 75 writes allowed, one a result on
    a machine 75 times slower)."""
    count = 150
    pytester.makeconftest(HANG_CONFTEST)
    pytester.makepyfile(test_hang=HANG_TESTS.format(count=count))
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "qbench", "-p", "no:cacheprovider", "-q"],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(lambda: (pytester.path / "hanging").exists(), 180)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    writes = json.loads((pytester.path / "hanging").read_text())["writes"]
    # the start, the full batches, and the rest the timer wrote while the test hung
    assert writes <= 1 + count // store.BATCH_RECORDS + 1
    run_dir = find_run_dir(pytester.path)
    stream = run_dir / store.STREAM_NAME
    assert results_in(stream) == [f"test_pass[{n}]" for n in range(count)]
    assert main(["render", str(run_dir)]) == 0
    capsys.readouterr()
    report = TestReport.model_validate_json((run_dir / "report.json").read_text())
    assert report.run.interrupted is True
    assert report.summary.passed == count
    died = report.results[-1]
    assert (died.nodeid, died.outcome) == ("test_hang.py::test_hang", "failed")
    assert died.failure is not None and died.failure.error_type == "ProcessDied"


EXIT_PATHS = {
    "keyboard-interrupt": ("def test_stop(): raise KeyboardInterrupt", ()),
    "exitfirst": ("def test_stop(): assert 0", ("-x",)),
    "pytest-exit": ("import pytest\ndef test_stop(): pytest.exit('enough', returncode=3)", ()),
    "internalerror": (
        "def test_stop(): pass\n",
        ("-p", "broken_plugin"),
    ),
}
BROKEN_PLUGIN = """
def pytest_runtest_logfinish(nodeid, location):
    if nodeid.endswith("test_stop"):
        raise RuntimeError("a plugin broke")
"""


@pytest.mark.parametrize("path", list(EXIT_PATHS))
def test_every_exit_path_writes_every_result(pytester: pytest.Pytester, path: str) -> None:
    """Ctrl-C, ``-x``, ``pytest.exit``, an INTERNALERROR: 100 results and then the run stops;
    the stream holds every result pytest reported, then its end record, in a few writes (not
    one a result); the stream's clock held (``HANG_CONFTEST``), the count does not depend on
    the machine's load."""
    stop, args = EXIT_PATHS[path]
    pytester.makeconftest(HANG_CONFTEST + "\nimport atexit\n" + AT_EXIT)
    pytester.makepyfile(
        test_exit=f"import pytest\n@pytest.mark.parametrize('n', range(100))\n"
        f"def test_pass(n): pass\n{stop}\ndef test_never(): pass\n"
    )
    pytester.makepyfile(broken_plugin=BROKEN_PLUGIN)
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", *args)
    assert result.ret != 0
    stream = find_run_dir(pytester.path) / store.STREAM_NAME
    names = results_in(stream)
    assert names[:100] == [f"test_pass[{n}]" for n in range(100)]
    assert "test_never" not in names
    assert store.stream_ended(stream)
    writes = sum(int(path.read_text()) for path in pytester.path.glob("writes-*"))
    assert writes <= 1 + 100 // store.BATCH_RECORDS + 1  # the start, batches, the rest and end


AT_EXIT = """
def record_writes():
    with open(f"writes-{os.getpid()}", "w") as handle:
        handle.write(str(writes[0]))

atexit.register(record_writes)
"""


def test_an_xdist_worker_crash_keeps_every_result(pytester: pytest.Pytester) -> None:
    """A worker that crashes (``os._exit`` in a test): the controller, which writes the stream,
    goes on; every result, the crashed test's too, is in the stream when the run ends, in a
    few writes."""
    pytest.importorskip("xdist")
    pytester.makeconftest(HANG_CONFTEST + "\nimport atexit\n" + AT_EXIT)
    pytester.makepyfile(
        test_crash="import os, pytest\n@pytest.mark.parametrize('n', range(100))\n"
        "def test_pass(n): pass\ndef test_crash(): os._exit(3)\n"
    )
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "xdist", "-n", "2")
    assert result.ret == 1
    stream = find_run_dir(pytester.path) / store.STREAM_NAME
    names = results_in(stream)
    assert sorted(names) == sorted([f"test_pass[{n}]" for n in range(100)] + ["test_crash"])
    assert store.stream_ended(stream)
    writes = sum(int(path.read_text()) for path in pytester.path.glob("writes-*"))
    assert writes <= 1 + 101 // store.BATCH_RECORDS + 1  # the start, batches, the rest and end


def test_a_run_killed_at_once_names_the_test_it_died_in(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test that kills its run right after others finished (``os._exit``): their results may
    still wait in memory, lost with the process (at most ``BATCH_RECORDS``, none older than
    ``BATCH_SECONDS``). The phase mark counts the results made, so the run still reads as died
    in that test (not in the first test whose result was lost), and as missing the results it
    lost: never green."""
    pytester.makepyfile(
        test_die="""
        import os, pytest
        @pytest.mark.parametrize("n", range(20))
        def test_pass(n): pass
        def test_die(): os._exit(9)
        def test_never(): pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly")
    assert result.ret == 9
    run_dir = find_run_dir(pytester.path)
    streamed = results_in(run_dir / store.STREAM_NAME)
    assert streamed == [f"test_pass[{n}]" for n in range(len(streamed))]
    assert store.read_made(run_dir / store.PHASE_NAME) == 20
    assert main(["render", str(run_dir)]) == 0
    capsys.readouterr()
    report = TestReport.model_validate_json((run_dir / "report.json").read_text())
    assert report.run.interrupted is True
    assert report.summary.passed == len(streamed)
    died = report.results[-1]
    assert (died.nodeid, died.outcome) == ("test_die.py::test_die", "failed")
    assert died.failure is not None and died.failure.error_type == "ProcessDied"
    lost = [e for e in report.run.recording_errors if "finished without a result" in e]
    assert lost == ([] if len(streamed) == 20 else [lost[0]])
    if lost:
        assert lost[0].startswith(f"{20 - len(streamed)} test(s) finished without a result")


WRITE_MOCKED = """
import os
import time
from unittest import mock

import pytest

from pytest_qbench.report import store


@pytest.mark.parametrize("n", range(100))
def test_before(n):
    assert n != 70, "a failure waiting in the stream's batch"


def test_write_mocked():
    # a logger's or a pty's test: os.write mocked while the stream's timer writes the batch
    with mock.patch("os.write", side_effect=lambda fd, data: len(data)) as write:
        deadline = time.monotonic() + 60
        while any(w._pending for w in list(store._WRITERS)) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.write(99, b"logged")
    write.assert_called_once_with(99, b"logged")


def test_after():
    pass
"""


def test_a_test_that_mocks_os_write_loses_no_result(pytester: pytest.Pytester) -> None:
    """A test that mocks ``os.write`` (a logger's, a pipe's, a pty's tests) while results
    wait in the stream's batch: the timer thread wrote them to the mock, so they were lost
    (results.jsonl and report.json lacked the 36 results after the first 64, the failure
    among them), and the user's test failed, its mock called by qbench too."""
    pytester.makepyfile(test_write=WRITE_MOCKED)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=w"
    )
    result.assert_outcomes(failed=1, passed=101)
    run = pytester.path / ".qbench/runs/w"
    assert len(results_in(run / store.STREAM_NAME)) == 102
    report = TestReport.model_validate_json((run / "report.json").read_text())
    assert len(report.results) == 102
    assert [r.nodeid for r in report.results if r.outcome == "failed"] == [
        "test_write.py::test_before[70]"
    ]


MOCK_LEFT_ON = """
from unittest import mock


def test_fails():
    assert False, "the run's one failure"


def test_leaves_mocks_on():
    # a test of an atomic writer that forgot to stop its patches: on to the session's end
    mock.patch("os.replace").start()
    mock.patch("os.fdopen").start()
    mock.patch("os.write").start()
"""
MOCK_LEFT_CONFTEST = """
import os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure():
    print("os.replace after qbench:", type(os.replace).__name__)
"""


def test_a_mock_left_on_to_the_session_end_loses_no_report(pytester: pytest.Pytester) -> None:
    """A test that leaves ``os.replace``, ``os.fdopen`` and ``os.write`` mocked to the
    session's end: report.json was never put in place (the terminal still said it was
    written), or was written empty. qbench now ends the run with the real functions, says
    which a test left replaced, and puts the mocks back."""
    pytester.makepyfile(test_left=MOCK_LEFT_ON)
    pytester.makeconftest(MOCK_LEFT_CONFTEST)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=m", "-s"
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "qbench: a test left os.fdopen, os.replace, os.write replaced (a mock never stopped)*",
            "qbench: wrote .qbench/runs/m/report.json, .qbench/runs/m/report.md",
            "os.replace after qbench: MagicMock",
        ]
    )
    report = TestReport.model_validate_json(
        (pytester.path / ".qbench/runs/m/report.json").read_text()
    )
    assert [r.outcome for r in report.results] == ["failed", "passed"]


MEASURED_TESTS = """
import os, time, tracemalloc
import pytest

@pytest.mark.parametrize("n", [f"{i:03d}" + "x" * 200 for i in range(60)])
def test_pass(n):
    pass

def test_measured():
    # the stream's timer writes the 60 results waiting while this test runs (the clock moved
    # past their batch time): what that costs counts in this test's tracemalloc
    import conftest, glob
    stream = glob.glob(".qbench/runs/*/results.jsonl")[0]
    written = os.stat(stream).st_size
    tracemalloc.start()
    conftest.clock[0] = 3600.0
    deadline = time.monotonic() + 120
    while os.stat(stream).st_size == written and time.monotonic() < deadline:
        time.sleep(0.01)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert os.stat(stream).st_size > written + 60 * 200
    assert peak < 4096, f"peak memory {peak} bytes"
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc")
def test_a_batch_written_while_a_test_runs_makes_no_copy_of_it(pytester: pytest.Pytester) -> None:
    """A test measuring its memory with tracemalloc (xmltodict's streaming test: `peak memory
    too high: 47106 bytes`, 32 KiB allowed) counts every thread's allocations, the stream
    timer's too: a batch of results written while it ran was joined into one new object of its
    size first. It is now copied into the writer's own buffer. The stream's clock stands still
    until the test moves it (``HANG_CONFTEST``), so the batch is written while it measures."""
    pytester.makeconftest(HANG_CONFTEST)
    pytester.makepyfile(test_measured=MEASURED_TESTS)
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=61)
