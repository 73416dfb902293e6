"""History-side truths (session 39): real pytest runs in subprocesses, a real SQLite index and
the ``qbench`` command as a subprocess. A run whose clock was moved to the future does not stay
"last"; a run that died is indexed once and only once it is dead; the phase a killed test died
in; a killed CI shard is that shard, interrupted, not a missing one."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from typing import Any

import pytest
from cli_here import qbench_here


FUTURE_CONFTEST = """
    import datetime as _dt
    import os

    if os.environ.get("QBENCH_TEST_FUTURE"):
        # a machine whose clock was wrong when qbench was imported (a VM's bad clock, a
        # frozen-clock plugin loaded before qbench): the run records its start in 2031
        from pytest_qbench.core import clock as _clock

        _future = _dt.datetime(2031, 1, 1, tzinfo=_dt.timezone.utc).timestamp() - _clock.wall_time()
        _real = _clock.wall_time
        _clock.wall_time = lambda: _real() + _future
"""

FAILING_ON_DEMAND = """
    import os

    def test_a():
        assert not os.environ.get("QBENCH_TEST_FAIL")
"""


def qbench(pytester: pytest.Pytester, *args: str, first: str = "") -> tuple[int, Any]:
    """``qbench ARGS --json --dir .qbench``: its status and parsed output. In this process;
    with ``first``, in a subprocess that imports the module ``first`` before (a plugin that
    changes the process, as ``lockless`` does)."""
    if not first:
        here = qbench_here(*args, "--json", "--dir", ".qbench")
        return here.ret, json.loads(here.out)
    code = f"import sys, {first}; from pytest_qbench.cli import main; "
    code += "sys.exit(main(sys.argv[1:]))"
    done = pytester.run(sys.executable, "-c", code, *args, "--json", "--dir", ".qbench")
    return done.ret, json.loads(done.stdout.str())


def test_a_run_whose_clock_was_in_the_future_is_not_last_for_ever(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run r2's clock says 2031 (a frozen clock at start-up); r3, started after it on a right
    clock, is the last run: `qbench show last` and `qbench diff` (last~1 against last) name it,
    its failure is new against r2, and its history counts r2. Before, the index ordered runs by
    their recorded start, so r2 stayed last: `qbench diff` compared r3 with r2 the wrong way
    round ("fixed"), and r3's history left r2 out."""
    pytester.makeconftest(FUTURE_CONFTEST)
    pytester.makepyfile(test_a=FAILING_ON_DEMAND)
    args = ("-p", "qbench", "-p", "no:randomly")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r1").ret == 0
    monkeypatch.setenv("QBENCH_TEST_FUTURE", "1")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r2").ret == 0
    monkeypatch.delenv("QBENCH_TEST_FUTURE")
    monkeypatch.setenv("QBENCH_TEST_FAIL", "1")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r3").ret == 1
    _, shown = qbench(pytester, "show", "last")
    assert shown["run_id"] == "r3"
    assert shown["started_at"] < "2031"
    _, runs = qbench(pytester, "runs")
    assert [run["run_id"] for run in runs["runs"]] == ["r3", "r2", "r1"]
    assert runs["runs"][1]["started_at"].startswith("2031-01-01")  # shown as recorded
    status, diff = qbench(pytester, "diff")
    assert status == 1
    assert (diff["base"]["run_id"], diff["head"]["run_id"]) == ("r2", "r3")
    assert [change["nodeid"] for change in diff["new_failures"]] == ["test_a.py::test_a"]
    report = json.loads((pytester.path / ".qbench/runs/r3/report.json").read_text())
    (result,) = report["results"]
    assert result["history"]["runs"] == 2  # r1 and r2 before it
    # indexed again (its report read back), r1 keeps its place: it does not become the last
    assert qbench_here("index", ".qbench/runs/r1").ret == 0
    assert qbench(pytester, "show", "last")[1]["run_id"] == "r3"


def test_a_shard_killed_mid_run_is_that_shard_interrupted_not_a_missing_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards 1/3, 2/3 and 3/3, shard 2 killed (SIGKILL) in its test, merged by `qbench merge`
    from their run directories: the killed shard is shard 2/3 (its stream's start record says
    so), so no shard is missing; a note and stderr name it as not finished, and the merged run
    is interrupted with exit code 2. Before, the start record had no shard, so the merge said
    "shard 2/3 of the plan is not among the merged reports" beside exit code 0."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # one CI commit: every shard the same plan
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    for n in range(3):
        pytester.makepyfile(
            **{
                f"test_m{n}": f"""
                import os, signal

                def test_ok():
                    if os.environ.get("QBENCH_TEST_DIE") == "{n}":
                        __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)
                """
            }
        )
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    for i in (1, 2, 3):
        ran = pytester.runpytest_subprocess(
            "-p", "qbench", "-p", "no:randomly", f"--qbench-shard={i}/3", f"--qbench-run-id=s{i}"
        )
        assert ran.ret == 0 if i != 2 else ran.ret not in (0, 1)  # shard 2 runs test_m1
    runs = pytester.path / ".qbench/runs"
    assert not (runs / "s2/report.json").exists()
    start = json.loads((runs / "s2/results.jsonl").read_text().splitlines()[0])
    assert (start["run"]["shard"]["index"], start["run"]["shard"]["count"]) == (2, 3)
    out = pytester.path / "merged.json"
    done = qbench_here("merge", *(runs / f"s{i}" for i in (1, 2, 3)), "-o", out)
    assert done.ret == 0
    assert "not among the merged reports" not in done.err
    done.err_lines().fnmatch_lines(["qbench: warning: shard 2/3 (run s2) did not finish*"])
    merged = json.loads(out.read_text())
    codes = [w["code"] for w in merged["warnings"]]
    assert "merge-missing-shards" not in codes and "merge-unfinished-shards" in codes
    assert merged["run"]["interrupted"] is True and merged["run"]["exit_code"] == 2
    assert (merged["summary"]["passed"], merged["summary"]["failed"]) == (2, 1)


DYING = """
    import os, signal, pytest

    @pytest.mark.parametrize("n", [1, 2])
    def test_it(n):  # [1] fails, [2] is killed when asked
        assert n == 2
        if os.environ.get("QBENCH_TEST_DIE"):
            __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)
"""


def indexed_runs(pytester: pytest.Pytester) -> list[str]:
    """The run ids in the index, in the order they were indexed (read with sqlite3 itself)."""
    with sqlite3.connect(pytester.path / ".qbench/index.sqlite") as db:
        return [str(row[0]) for row in db.execute("SELECT run_id FROM runs ORDER BY id")]


def test_runs_that_died_stay_marked_until_a_run_indexes_them(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r1 and r2 are killed mid-test; r3 ends when the index cannot be used (a directory in its
    place), so it indexes nothing, and keeps its own mark too; r4, with the index usable again,
    indexes r1, r2 and r3, in the order they ran, before itself, and its failing test's
    history counts them. Before, r3 took their marks away before it tried, so r4 never saw
    them: they were lost to the session ends (r4's history: "new failure"); and r3 took its
    own away, so it was never indexed (truths12)."""
    pytester.makepyfile(test_die=DYING)
    args = ("-p", "qbench", "-p", "no:randomly")
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    for run_id in ("r1", "r2"):
        died = pytester.runpytest_subprocess(*args, f"--qbench-run-id={run_id}")
        assert died.ret not in (0, 1)  # killed by SIGKILL
    monkeypatch.delenv("QBENCH_TEST_DIE")
    (pytester.path / ".qbench/index.sqlite").mkdir()
    broken = pytester.runpytest_subprocess(*args, "--qbench-run-id=r3")
    broken.stdout.fnmatch_lines(["qbench: run not indexed*"])
    marked = sorted(p.name for p in (pytester.path / ".qbench/unfinished").iterdir())
    assert marked == ["r1", "r2", "r3"]
    (pytester.path / ".qbench/index.sqlite").rmdir()
    after = pytester.runpytest_subprocess(*args, "--qbench-run-id=r4")
    after.stdout.fnmatch_lines(["qbench: */r1 has no report.json*", "qbench: */r2 has no*"])
    assert indexed_runs(pytester) == ["r1", "r2", "r3", "r4"]
    assert list((pytester.path / ".qbench/unfinished").iterdir()) == []
    report = json.loads((pytester.path / ".qbench/runs/r4/report.json").read_text())
    history = next(r["history"] for r in report["results"] if r["nodeid"].endswith("test_it[1]"))
    assert history["summary"].startswith("broken since run r1: failed 4 of the last 4 runs")


LOCKLESS = """
    import errno
    import fcntl


    def _no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")


    # a file system without locks (a network mount): every flock fails
    fcntl.flock = _no_locks
"""

WAITING = """
    import os, pathlib, time

    def test_wait():
        if os.environ.get("QBENCH_TEST_WAIT"):
            pathlib.Path("waiting").touch()
            deadline = time.monotonic() + 120  # a safety net: the test creates "go"
            while not pathlib.Path("go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
"""


def test_a_run_still_going_without_locks_is_never_indexed_as_died(
    pytester: pytest.Pytester,
) -> None:
    """On a file system without locks (flock fails: simulated in every process), run "live"
    waits in its test while run "other" ends and `qbench runs` lists the history: neither
    indexes "live" as a run that died (its mark says its process, of this machine, runs), nor
    "ghost", a run left marked by another machine sharing the directory, which only that
    machine can tell; both keep their marks. "live" then ends and indexes itself, passed.
    Before, locks were the only sign of a live run: "other" indexed "live" as died, its test
    failed as ProcessDied."""
    from child_pytest import child_env

    pytester.makepyfile(lockless=LOCKLESS, test_wait=WAITING)
    args = ("-p", "qbench", "-p", "lockless", "-p", "no:randomly")
    live = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args, "--qbench-run-id=live"],
        cwd=pytester.path,
        env=child_env({"QBENCH_TEST_WAIT": "1"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # a safety net, not a verdict
        while not (pytester.path / "waiting").exists():
            assert live.poll() is None and time.monotonic() < deadline, "live did not start"
            time.sleep(0.05)
        ghost = pytester.path / ".qbench/runs/ghost"
        ghost.mkdir()
        start = (pytester.path / ".qbench/runs/live/results.jsonl").read_text().splitlines()[0]
        (ghost / "results.jsonl").write_text(start.replace('"live"', '"ghost"') + "\n")
        (pytester.path / ".qbench/unfinished/ghost").write_text("elsewhere|-|- 1 1\n")
        other = pytester.runpytest_subprocess(*args, "--qbench-run-id=other")
        assert other.ret == 0
        assert "has no report.json" not in other.stdout.str()
        status, runs = qbench(pytester, "runs", first="lockless")
        assert status == 0 and [run["run_id"] for run in runs["runs"]] == ["other"]
        marks = sorted(p.name for p in (pytester.path / ".qbench/unfinished").iterdir())
        assert marks == ["ghost", "live"]
    finally:
        (pytester.path / "go").touch()
        assert live.wait(timeout=300) == 0
    assert indexed_runs(pytester) == ["other", "live"]
    report = json.loads((pytester.path / ".qbench/runs/live/report.json").read_text())
    assert [r["outcome"] for r in report["results"]] == ["passed"]


KILLED_IN = """
    import os, signal, pytest

    def die(phase):
        if os.environ.get("QBENCH_TEST_DIE_IN") == phase:
            __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

    @pytest.fixture
    def resource():
        die("setup")
        yield
        die("teardown")

    def test_first():
        pass

    def test_killed(resource):
        die("call")

    def test_after():
        pass
"""


@pytest.mark.parametrize(
    ("phase", "outcome"), [("setup", "error"), ("call", "failed"), ("teardown", "error")]
)
def test_a_test_killed_mid_phase_is_recorded_in_that_phase(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, phase: str, outcome: str
) -> None:
    """A test killed (SIGKILL, as pytest-timeout's thread method ends the process) in its
    fixture's setup, in its call or in its fixture's teardown: the run's report rebuilt by
    `qbench render` and the history (`qbench show`) give it the phase it died in, an error in
    setup or teardown (as pytest counts one), a failure in the call. The phase is the first
    byte of the run directory's ``phase`` file, beside ``collected.txt``. Before, every such test was
    a failure in phase `call`."""
    pytester.makepyfile(test_k=KILLED_IN)
    monkeypatch.setenv("QBENCH_TEST_DIE_IN", phase)
    died = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=k")
    assert died.ret not in (0, 1)  # killed by SIGKILL
    # the phase, then the count of results made (issue 28: the stream's writes are batched)
    assert (pytester.path / ".qbench/runs/k/phase").stat().st_size == 16
    status, shown = qbench(pytester, "show", "k")
    assert status == 0 and shown["interrupted"] is True
    assert [(f["nodeid"], f["outcome"]) for f in shown["failures"]] == [
        ("test_k.py::test_killed", outcome)
    ]
    rendered = qbench_here("render", ".qbench/runs/k")
    assert rendered.ret == 0
    report = json.loads((pytester.path / ".qbench/runs/k/report.json").read_text())
    killed = [r for r in report["results"] if r["nodeid"] == "test_k.py::test_killed"]
    assert [(r["outcome"], r["failure"]["phase"]) for r in killed] == [(outcome, phase)]
    assert (report["summary"]["errors"], report["summary"]["failed"]) == (
        (1, 0) if outcome == "error" else (0, 1)
    )


def test_a_later_run_without_tests_is_found_whatever_the_last_runs_clock(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r1 is green with its clock in 2031 (a frozen clock at start-up); r2, on a right clock,
    ran no test (``-k`` matching nothing) and is never indexed. `qbench pr-comment` refuses,
    naming r2, rather than comment green on r1. Before, "later" was by the recorded times, so
    nothing the right clock wrote was after r1's 2031 end, and r1 was commented on."""
    pytester.makeconftest(FUTURE_CONFTEST)
    pytester.makepyfile(test_a=FAILING_ON_DEMAND)
    args = ("-p", "qbench", "-p", "no:randomly")
    monkeypatch.setenv("QBENCH_TEST_FUTURE", "1")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r1").ret == 0
    monkeypatch.delenv("QBENCH_TEST_FUTURE")
    assert pytester.runpytest_subprocess(*args, "-k", "nosuch", "--qbench-run-id=r2").ret == 5
    done = qbench_here("pr-comment", "--dir", ".qbench")
    assert done.ret != 0
    assert "the last run, r2, ran no tests (pytest's exit status 5" in done.err


def test_a_later_run_without_tests_is_found_after_a_merged_run_whatever_its_clock(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards s1 and s2 with their clock in 2031 are merged and the merged run indexed; r3, on
    a right clock, ran no test. `qbench pr-comment` refuses, naming r3. Before, the merged run's
    report is not in the run store, so "later" was after its recorded end, 2031: r3 was not
    seen, and the merged run was commented on. It is now after the reports it merged were
    written, by the file system's clock."""
    pytester.makeconftest(FUTURE_CONFTEST)
    pytester.makepyfile(test_a=FAILING_ON_DEMAND, test_b="def test_b():\n    pass\n")
    args = ("-p", "qbench", "-p", "no:randomly")
    monkeypatch.setenv("QBENCH_TEST_FUTURE", "1")
    for shard in (1, 2):
        run = pytester.runpytest_subprocess(
            *args, f"--qbench-shard={shard}/2", f"--qbench-run-id=s{shard}"
        )
        assert run.ret == 0
    monkeypatch.delenv("QBENCH_TEST_FUTURE")
    merge = ("merge", ".qbench/runs/s1", ".qbench/runs/s2", "-o", "merged/report.json")
    assert qbench_here(*merge).ret == 0
    assert qbench_here("index", "merged/report.json").ret == 0
    assert pytester.runpytest_subprocess(*args, "-k", "nosuch", "--qbench-run-id=r3").ret == 5
    done = qbench_here("pr-comment", "--dir", ".qbench")
    assert done.ret != 0
    assert "the last run, r3, ran no tests (pytest's exit status 5" in done.err
