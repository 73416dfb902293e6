"""History-side truths (session 40): one rule for a run still going (``store.run_in_progress``,
its lock and its mark), one order of runs (the index's) for every reader of the run store, and
one name for a shard. Real pytest runs in subprocesses, a real SQLite index, the ``qbench``
command in this process (``cli_here``) but where it must not share it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from cli_here import qbench_here
from test_history_truths import DYING
from test_history_truths import FAILING_ON_DEMAND
from test_history_truths import FUTURE_CONFTEST
from test_history_truths import LOCKLESS
from test_history_truths import WAITING
from test_history_truths import indexed_runs
from test_history_truths import qbench


def wait_for(pytester: pytest.Pytester, name: str, child: subprocess.Popen[bytes]) -> None:
    """Until ``child`` made the file ``name`` (a safety net of 120 s, not a verdict)."""
    deadline = time.monotonic() + 120
    while not (pytester.path / name).exists():
        assert child.poll() is None and time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)


def start_live(pytester: pytest.Pytester, *args: str) -> subprocess.Popen[bytes]:
    """Run "live" (pytest ARGS, on a file system without locks), in its test (``WAITING``)
    until the test creates "go"."""
    from child_pytest import child_env

    live = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "qbench", "-p", "lockless", "-p", "no:randomly",
         "--qbench-run-id=live", *args],
        cwd=pytester.path,
        env=child_env({"QBENCH_TEST_WAIT": "1"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_for(pytester, "waiting", live)
    return live


def three_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, run_ids: str, *args: str
) -> None:
    """Runs of ``run_ids`` (three, split by spaces) one after another, passing (pytest ARGS),
    the second with its clock in 2031 (a frozen clock at start-up)."""
    pytester.makeconftest(FUTURE_CONFTEST)
    pytester.makepyfile(test_a=FAILING_ON_DEMAND)
    first, future, last = run_ids.split()
    for run_id in (first, future, last):
        with monkeypatch.context() as patch:
            if run_id == future:
                patch.setenv("QBENCH_TEST_FUTURE", "1")
            ran = pytester.runpytest_subprocess(
                "-p", "qbench", "-p", "no:randomly", f"--qbench-run-id={run_id}", *args
            )
            assert ran.ret == 0


def test_qbench_index_and_retention_leave_a_live_run_alone_without_locks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system without locks (flock fails: simulated in every process), run "died" is
    killed mid-test and run "live" waits in its test. `qbench index` (the rebuild) indexes
    "died" as a run that died, and leaves "live" out (its mark says its process, of this
    machine, runs), as the session end's died-run path does; retention (`live_runs_in`,
    `remove_run_dirs`) spares it. "live" then ends and indexes itself, passed. Before,
    `store.run_in_progress` looked at locks only: `qbench index` indexed "live" as died (its
    test a ProcessDied failure) and retention deleted its directory while it ran."""

    from pytest_qbench.history.indexer import live_runs_in
    from pytest_qbench.history.indexer import remove_run_dirs

    pytester.makepyfile(lockless=LOCKLESS, test_wait=WAITING, test_die=DYING)
    args = ("-p", "qbench", "-p", "lockless", "-p", "no:randomly")
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    died = pytester.runpytest_subprocess(*args, "--qbench-run-id=died", "test_die.py")
    assert died.ret not in (0, 1)  # killed by SIGKILL
    monkeypatch.delenv("QBENCH_TEST_DIE")
    live = start_live(pytester, "test_wait.py")
    try:
        status, done = qbench(pytester, "index", first="lockless")
        assert status == 0
        assert [run["run_id"] for run in done["indexed"]] == ["died"]
        assert indexed_runs(pytester) == ["died"]
        # retention, in this process, on the same file system without locks
        import fcntl

        qbench_dir = pytester.path / ".qbench"
        with monkeypatch.context() as patch:
            patch.setattr(fcntl, "flock", _no_locks)
            assert live_runs_in(qbench_dir)("live") and not live_runs_in(qbench_dir)("died")
            assert remove_run_dirs(qbench_dir, ["live"]) == [
                f"did not delete old run {qbench_dir / 'runs/live'}: it is still running"
            ]
        assert (qbench_dir / "runs/live/results.jsonl").is_file()
    finally:
        (pytester.path / "go").touch()
        assert live.wait(timeout=300) == 0
    assert indexed_runs(pytester) == ["died", "live"]
    report = json.loads((pytester.path / ".qbench/runs/live/report.json").read_text())
    assert [r["outcome"] for r in report["results"]] == ["passed"]
    _, shown = qbench(pytester, "show", "died")
    assert shown["interrupted"] is True


def _no_locks(fd: int, operation: int) -> None:
    import errno

    raise OSError(errno.ENOLCK, "No locks available")


def test_qbench_coverage_and_the_mcp_tools_name_the_last_run_in_the_index_order(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run r2's clock says 2031 (a frozen clock at start-up); r3 ran after it on a right clock.
    `qbench coverage last` and the MCP tools' `last` (``mcp.runs.find_run``) name r3, the run
    `qbench show last` names, and `last~1` is r2; a run not indexed yet (r4's directory, its
    stream's start only, as while it goes) comes after the last indexed run that started
    before it. Before, they ordered the run store by the start each run recorded: r2 stayed
    "last" for them."""
    from pytest_qbench.mcp.config import ServerConfig
    from pytest_qbench.mcp.runs import find_run

    three_runs(pytester, monkeypatch, "r1 r2 r3", "--qbench-cov=test_a")
    assert qbench(pytester, "show", "last")[1]["run_id"] == "r3"
    for ref, run_id in (("last", "r3"), ("last~1", "r2")):
        done = qbench_here("coverage", ref, "--dir", ".qbench", "-f", "json", "-o", f"{ref}.json")
        assert done.ret == 0
        pytest.LineMatcher(done.out.splitlines()).fnmatch_lines(
            [f"qbench: wrote coverage json report of {run_id}: *"]
        )
    config = ServerConfig(root=pytester.path, qbench_dir=pytester.path / ".qbench")
    assert find_run(config, "last").name == "r3"
    assert find_run(config, "last~1").name == "r2"
    going = pytester.path / ".qbench/runs/r4"
    going.mkdir()
    start = (pytester.path / ".qbench/runs/r3/results.jsonl").read_text().splitlines()[0]
    (going / "results.jsonl").write_text(start.replace('"r3"', '"r4"') + "\n")
    assert find_run(config, "last").name == "r4"
    assert find_run(config, "last~1").name == "r3"


def test_qbench_index_rebuilds_in_the_order_runs_were_indexed_else_by_their_start(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs ci-9, ci-10 (its clock in 2031) and ci-11, in that order. `qbench index` with no
    argument indexes them again in the order they were indexed (ci-9, ci-10, ci-11); from an
    index deleted, in the order their streams recorded their start (ci-9, ci-11, ci-10: the
    clock is all a rebuild from nothing has). Before, in their directories' names' order
    (ci-10, ci-11, ci-9): `qbench show last` named ci-9, the first run."""
    three_runs(pytester, monkeypatch, "ci-9 ci-10 ci-11")
    status, done = qbench(pytester, "index")
    assert status == 0
    assert [run["run_id"] for run in done["indexed"]] == ["ci-9", "ci-10", "ci-11"]
    assert indexed_runs(pytester) == ["ci-9", "ci-10", "ci-11"]
    (pytester.path / ".qbench/index.sqlite").unlink()
    status, done = qbench(pytester, "index")
    assert status == 0
    assert [run["run_id"] for run in done["indexed"]] == ["ci-9", "ci-11", "ci-10"]
    assert indexed_runs(pytester) == ["ci-9", "ci-11", "ci-10"]
    assert qbench(pytester, "show", "last~2")[1]["run_id"] == "ci-9"


KILLED_SHARD = """
    import os, signal

    def test_ok():
        if os.environ.get("QBENCH_TEST_DIE"):
            os.kill(os.getpid(), signal.SIGKILL)
"""


def test_pr_comment_finds_the_merged_run_of_a_killed_shard_indexed_after_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI shards 1/2 and 2/2 of commit c1, shard 2 killed mid-test; `qbench merge` of their run
    directories is indexed; `qbench pr-comment` (no run named) indexes the killed shard first
    (a run that died), so the last run is that shard. The comment is about the merged run (on
    the shard's commit, indexed before it, not finished either), which names the shard as
    the verdict does: "shard 2/2 (run s2)". Before, only a merged run indexed after the shard
    (and started no later) was looked for: none, so pr-comment refused ("no merged run of its
    shards is indexed"); and the verdict's reason named the shard "shard 2/2 s2"."""
    from pytest_qbench.report.verdict import red_reasons

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "c1" * 20)
    pytester.makepyfile(test_m0=KILLED_SHARD, test_m1=KILLED_SHARD.replace("DIE", "DIE_1"))
    args = ("-p", "qbench", "-p", "no:randomly")
    for i in (1, 2):
        with monkeypatch.context() as patch:
            patch.setenv("QBENCH_TEST_DIE_1", "1")
            ran = pytester.runpytest_subprocess(
                *args, f"--qbench-shard={i}/2", f"--qbench-run-id=s{i}"
            )
        assert ran.ret == 0 if i == 1 else ran.ret not in (0, 1)
    runs = pytester.path / ".qbench/runs"
    merged = pytester.path / "merged/report.json"
    done = qbench_here("merge", runs / "s1", runs / "s2", "-o", merged)
    assert done.ret == 0
    done.err_lines().fnmatch_lines(["qbench: warning: shard 2/2 (run s2) did not finish*"])
    report = json.loads(merged.read_text())
    reasons = [reason.text for reason in red_reasons(report)]
    assert "a merged shard did not finish: shard 2/2 (run s2)" in reasons
    assert qbench_here("index", merged).ret == 0
    monkeypatch.delenv("GITHUB_ACTIONS")
    done = qbench_here("pr-comment")
    assert done.ret == 0, done.err
    text = done.out
    assert f"run `{report['run']['run_id']}`" in text and "(merged CI shards)" in text
    assert indexed_runs(pytester)[-1] == "s2"


FORKS_AND_DIES = """
    import os, pathlib, signal, time

    def test_server():
        child = os.fork()  # a test's server process, forked (multiprocessing's fork does so)
        if child == 0:
            pathlib.Path("child.tmp").write_text(str(os.getpid()))
            os.replace("child.tmp", "child.pid")  # whole when seen (the parent dies then)
            deadline = time.monotonic() + 120  # a safety net: the test creates "go"
            while not pathlib.Path("go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            os._exit(0)
        while not pathlib.Path("child.pid").exists():
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)  # the run is killed; its child lives on
"""


def test_a_run_killed_is_not_going_while_a_child_it_forked_lives_on(
    pytester: pytest.Pytester,
) -> None:
    """A test forks a child (a server) and the run is killed (SIGKILL); the child lives on.
    The run died: `qbench runs` indexes it as a run that died (its test a ProcessDied failure),
    and `qbench index` agrees. Before, the forked child kept the run directory's lock (a lock
    belongs to the descriptor the child shares), so every reader took the run for one still
    going as long as the child ran: it was in no history."""
    import os
    import signal

    from pytest_qbench.report.store import run_in_progress

    pytester.makepyfile(test_server=FORKS_AND_DIES)
    died = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=k")
    assert died.ret not in (0, 1)  # killed by SIGKILL
    child = int((pytester.path / "child.pid").read_text())
    try:
        os.kill(child, 0)  # the child still runs
        assert not run_in_progress(pytester.path / ".qbench/runs/k")
        status, runs = qbench(pytester, "runs")
        assert status == 0 and [run["run_id"] for run in runs["runs"]] == ["k"]
        assert runs["runs"][0]["interrupted"] is True
        status, done = qbench(pytester, "index")
        assert status == 0 and [run["run_id"] for run in done["indexed"]] == ["k"]
        _, shown = qbench(pytester, "show", "k")
        assert [f["error_type"] for f in shown["failures"]] == ["ProcessDied"]
    finally:
        (pytester.path / "go").touch()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
    assert indexed_runs(pytester) == ["k"]


def test_a_live_run_whose_process_proc_hides_is_not_taken_for_dead(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system without locks, a run's mark names its live process; /proc hides it from
    the reader (``hidepid``: another user's process). The run is going (``os.kill`` finds its
    process), so `qbench index` leaves it. Before, an unreadable /proc entry was a process that
    died: the live run was indexed as died."""

    from pytest_qbench.history.files import index_sources
    from pytest_qbench.history.sqlite import SQLiteIndex
    from pytest_qbench.report import store

    pytester.makepyfile(lockless=LOCKLESS, test_wait=WAITING)
    live = start_live(pytester)
    try:
        import fcntl

        hidden = store._process_stat
        monkeypatch.setattr(fcntl, "flock", _no_locks)
        monkeypatch.setattr(
            store, "_process_stat", lambda pid: None if pid == live.pid else hidden(pid)
        )
        qbench_dir = pytester.path / ".qbench"
        assert store.mark_owner(qbench_dir, "live") == "alive"
        index = SQLiteIndex(qbench_dir / "index.sqlite", create=True)
        try:
            said: list[str] = []
            indexed, _ = index_sources(
                index, [qbench_dir / "runs/live"], strict=False, say=said.append
            )
        finally:
            index.close()
        assert indexed == [] and said == [
            f"skipped {qbench_dir / 'runs/live'}: its run is still going (it is indexed when it ends)"
        ]
    finally:
        monkeypatch.undo()
        (pytester.path / "go").touch()
        assert live.wait(timeout=300) == 0


def test_a_stored_runs_html_trend_holds_the_runs_indexed_up_to_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run r2's clock says 2031; r1 ran before it, r3 after it on a right clock. The HTML page
    `qbench render RUN_DIR --html` writes of a stored run draws the runs indexed up to it:
    r3's holds r1, r2 and r3, r2's holds r1 and r2. Before, the runs that started no later than
    it: r3's left r2 out, and r2's drew r3, which ran after it."""
    three_runs(pytester, monkeypatch, "r1 r2 r3")
    for run_id, drawn in (("r3", ["r1", "r2", "r3"]), ("r2", ["r1", "r2"])):
        page = pytester.path / f"{run_id}.html"
        assert qbench_here("render", f".qbench/runs/{run_id}", "--html", page).ret == 0
        titles = re.findall(r"<title>(r\d) · ", page.read_text())
        assert sorted(set(titles)) == drawn


def test_runs_that_died_are_indexed_in_the_order_they_ran_not_by_name(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs ci-9 then ci-10 are killed mid-test; `qbench runs` indexes them (runs that died)
    before it answers: ci-9 first, so ci-10 is the last run. Before, they were indexed in their
    names' order (ci-10 before ci-9), and `qbench show last` named ci-9, the first."""
    pytester.makepyfile(test_die=DYING)
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    for run_id in ("ci-9", "ci-10"):
        died = pytester.runpytest_subprocess(
            "-p", "qbench", "-p", "no:randomly", f"--qbench-run-id={run_id}"
        )
        assert died.ret not in (0, 1)  # killed by SIGKILL
    status, runs = qbench(pytester, "runs")
    assert status == 0 and [run["run_id"] for run in runs["runs"]] == ["ci-10", "ci-9"]
    assert indexed_runs(pytester) == ["ci-9", "ci-10"]
    assert qbench(pytester, "show", "last")[1]["run_id"] == "ci-10"
