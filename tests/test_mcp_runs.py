"""The MCP tools against real pytest children, without the SDK: results, exit statuses, timeouts,
the process group, stored runs, history and the pytest catalog (issue 6)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import STUBBORN
from mcp_helpers import group_alive
from mcp_helpers import overdue_once_written
from mcp_helpers import quiet_children
from mcp_helpers import run
from mcp_helpers import settle_at_once
from mcp_helpers import stubborn_pids
from mcp_helpers import write

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.run_history import runs_text
from pytest_qbench.mcp.testrun import run_text
from pytest_qbench.mcp.tools import QBenchTools


pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.runs_pytest,  # the server runs pytest with qbench and its collect_dump plugin
]

SUITE = """
    import pytest

    @pytest.fixture
    def broken():
        raise RuntimeError("fixture broke")

    def test_pass():
        pass

    def test_fail():
        print("hello from test_fail")
        assert 1 + 1 == 3, "arithmetic"

    def test_error(broken):
        pass

    @pytest.mark.skip(reason="not now")
    def test_skip():
        pass
"""


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    write(root, "tests/test_suite.py", SUITE)
    return root.resolve()


@pytest.fixture
def tools(project: Path) -> QBenchTools:
    return QBenchTools(ServerConfig(root=project, qbench_dir=project / ".qbench", stop_grace=1.0))


def test_a_run_returns_failures_only(tools: QBenchTools, project: Path) -> None:
    """Counts, the failed and errored tests with file, line, type, message and trace; no
    passing test and no raw output; the run's files in its directory (issue 6)."""
    result = run(tools)
    assert (result.success, result.exit_code, result.exit_meaning) == (False, 1, "tests failed")
    counts = result.summary
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (1, 1, 1, 1)
    failed, errored = result.failures
    assert failed.test_name == "tests/test_suite.py::test_fail"
    assert (failed.file, failed.line, failed.error_type) == (
        "tests/test_suite.py",
        13,
        "AssertionError",
    )
    assert "arithmetic" in failed.error_message
    assert failed.stack_trace.startswith("tests/test_suite.py:13: in test_fail")
    assert errored.outcome == "error" and "fixture broke" in errored.error_message
    assert "test_pass" not in result.model_dump_json()
    assert result.truncated.failures == 0 and not result.timed_out
    run_dir = project / ".qbench" / "runs" / result.run_id
    names = {p.name for p in run_dir.iterdir()}
    assert {"stdout.txt", "stderr.txt", "mcp-run.json", "report.json", "digest.json"} <= names
    assert "collected 4 items" in (run_dir / "stdout.txt").read_text()
    assert not (project / ".qbench" / "mcp-staging" / result.run_id).exists()
    meta = json.loads((run_dir / "mcp-run.json").read_text())
    assert meta["exit_code"] == 1 and meta["command"][1:5] == ["-m", "pytest", "-p", "qbench"]


def test_selection_runs_only_what_was_asked(tools: QBenchTools) -> None:
    """A node id and a -k expression reach pytest as single arguments."""
    result = run(tools, test_path=["tests/test_suite.py::test_pass"])
    assert (result.success, result.summary.passed, result.summary.total) == (True, 1, 1)
    result = run(tools, keyword="fail or pass")
    assert (result.summary.passed, result.summary.failed, result.summary.deselected) == (1, 1, 2)


def test_coverage_gate(tools: QBenchTools, project: Path) -> None:
    """coverage_source and coverage_threshold: the failed gate is data, with its numbers."""
    write(project, "src/pkg/__init__.py", "")
    write(
        project,
        "src/pkg/calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    )
    write(
        project,
        "tests/test_suite.py",
        """
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).parents[1] / "src"))
        from pkg.calc import add

        def test_add():
            assert add(1, 2) == 3
        """,
    )
    result = run(tools, coverage_source=["src"], coverage_threshold=95)
    assert (result.exit_code, result.success, result.summary.failed) == (1, False, 0)
    coverage = result.coverage
    assert coverage is not None and coverage.met is False and coverage.threshold == 95
    assert coverage.lines_covered == 3 and coverage.lines_total == 4
    assert any("coverage" in step.lower() for step in result.next_steps)


def test_usage_error_is_a_tool_error_with_pytests_words(tools: QBenchTools) -> None:
    """Exit status 4: a tool error carrying the end of pytest's output and what to do; the
    runner is free again afterwards (issue 6)."""
    with pytest.raises(ToolFailure) as caught:
        run(tools, markers="(unclosed")
    message = str(caught.value)
    assert "exited with status 4 (usage error)" in message
    assert "What to do:" in message
    assert "Wrong expression passed to '-m'" in message
    assert run(tools, test_path=["tests/test_suite.py::test_pass"]).success


def test_internal_error_is_a_tool_error(tools: QBenchTools, project: Path) -> None:
    """Exit status 3 (INTERNALERROR) carries the traceback's end."""
    write(
        project,
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    raise RuntimeError('conftest boom')\n",
    )
    with pytest.raises(ToolFailure, match=r"(?s)status 3 \(internal error\).*conftest boom"):
        run(tools)


def test_a_crash_is_a_tool_error_that_counts_what_finished(
    tools: QBenchTools, project: Path
) -> None:
    """pytest killed by a signal: the finished tests are kept and the error says so."""
    write(
        project,
        "tests/test_z_crash.py",
        "import os, signal\n\ndef test_crash():\n    __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)\n",
    )
    with pytest.raises(ToolFailure) as caught:
        run(tools)
    message = str(caught.value)
    assert "killed by signal SIGKILL" in message
    assert "4 test(s) had finished, and it died in tests/test_z_crash.py::test_crash" in message
    assert "the pytest process died" in message


def test_a_run_that_died_lists_its_duration_as_a_lower_bound(
    tools: QBenchTools, project: Path
) -> None:
    """A run whose process died (SIGKILL, os._exit before the session's end) ran for at least
    the time to its last result: run_test_workflow says so, and list_runs now does too, where
    it gave `in 0.15s (interrupted)`, a time the run did not take; neither calls it passed."""
    write(
        project,
        "tests/test_z_exit.py",
        "import os\n\ndef test_exit():\n"
        "    __import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(0)\n",
    )
    result = run(tools)
    assert (result.died, result.success) == (True, False)
    assert "in at least " in run_text(result, 12000).splitlines()[0]
    (line,) = runs_text(tools.list_runs(), 12000).splitlines()
    assert " in at least " in line
    assert line.endswith("s (it died; when is unknown)  (interrupted)")


def test_a_test_raising_keyboardinterrupt_is_not_blamed_on_the_outside(
    tools: QBenchTools, project: Path
) -> None:
    """pytest's status 2 after a test raised KeyboardInterrupt (or called pytest.exit, or --sw
    stopped the run): the advice names those and pytest's output, not only a Ctrl-C from outside
    with "run again", which would stop the same way (found on simplejson)."""
    write(project, "tests/test_z_stop.py", "def test_stop():\n    raise KeyboardInterrupt\n")
    with pytest.raises(ToolFailure) as caught:
        run(tools)
    message = str(caught.value)
    assert "status 2 (interrupted)" in message
    assert "a test raised KeyboardInterrupt or called pytest.exit" in message
    assert "interrupted from outside this server (Ctrl-C, a signal); run again" not in message


def test_collection_errors_are_data(tools: QBenchTools, project: Path) -> None:
    """A file that cannot be imported is a collection error in the result, not a tool error."""
    write(project, "tests/test_broken.py", "import not_a_module_anywhere\n")
    result = run(tools)
    assert result.exit_code == 2 and not result.success
    [error] = result.collection_errors
    assert error.file == "tests/test_broken.py"
    assert "not_a_module_anywhere" in error.message
    assert "collection error" in result.next_steps[0]


def test_timeout_stops_the_run_and_keeps_partial_results(
    tools: QBenchTools, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the timeout pytest is interrupted and writes its reports; the result is marked and
    holds the failures that finished (issue 6). The slow test, the last, says it started, then
    writes a file after 600 s: the deadline is moved to now once it started (so the failures
    before it have finished however slow the machine), and no file after the run means pytest
    was stopped before its natural end."""
    woke, started = project / "woke", project / "started"
    slow = (
        f"import time\n\ndef test_slow():\n    open({str(started)!r}, 'w').write('1')\n"
        f"    time.sleep(600)\n    open({str(woke)!r}, 'w')\n"
    )
    write(project, "tests/test_z_slow.py", slow)
    settle_at_once(monkeypatch)
    process = tools.start_run(RunRequest(timeout_seconds=600))
    overdue_once_written(process, started)
    tools.supervise(process)
    result = tools.finish_run(process)
    assert not woke.exists()
    assert result.timed_out and result.partial and not result.success
    assert result.timeout_seconds == 600
    assert result.exit_meaning == "stopped after the timeout of 600s"
    assert result.failures[0].test_name == "tests/test_suite.py::test_fail"
    assert result.next_steps[0].startswith("The run hit its timeout of 600s")


def test_timeout_kills_the_whole_group(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that ignores the interrupt, and its grandchild that ignores it too, are killed
    with the process group; the run is rebuilt from its stream and indexed (issue 6). The
    deadline is moved to now once the test ignores the interrupt (it wrote its pids). Nothing
    of the run can end in the grace (everything ignores the interrupt): 0.1 s of it, not 1 s."""
    write(project, "tests/test_z_stubborn.py", STUBBORN)
    settle_at_once(monkeypatch)
    config = ServerConfig(root=project, qbench_dir=project / ".qbench", stop_grace=0.1)
    tools = QBenchTools(config)
    process = tools.start_run(RunRequest(timeout_seconds=600))
    overdue_once_written(process, project / "pids.txt")  # once it ignores the interrupt
    tools.supervise(process)
    result = tools.finish_run(process)
    assert result.timed_out and result.partial
    assert result.exit_code == -signal.SIGKILL
    pytest_pid, _grandchild = stubborn_pids(project)
    assert group_alive(pytest_pid) == []
    run_dir = project / ".qbench" / "runs" / result.run_id
    assert (run_dir / "report.json").is_file() and (run_dir / "report.md").is_file()
    [listed] = [r for r in tools.list_runs(10).runs if r.run_id == result.run_id]
    assert listed.interrupted and listed.has_output


def test_one_run_at_a_time(tools: QBenchTools, project: Path) -> None:
    """A second run while one goes on is refused, naming the first; cancelling frees it. The
    slow test outlasts any wait of a loaded machine (600 s; cancelled long before): the run is
    still going when looked at (with 60 s, a machine that took a minute to write four results
    saw it ended)."""
    write(project, "tests/test_z_slow.py", "import time\n\ndef test_slow():\n    time.sleep(600)\n")
    first = tools.start_run(RunRequest())
    try:
        with pytest.raises(ToolFailure, match=f"a run is going on \\({first.plan.run_id}"):
            tools.start_run(RunRequest())
        assert tools.check_health().run_in_progress == first.plan.run_id
        while first.progress().done < 4:  # the slow test is running now
            assert first.poll() is None, "the run ended before its slow test"
            time.sleep(0.05)
        page = tools.get_run_output(first.plan.run_id)
        assert page.run.completed_at is None and page.run.exit_code is None
        assert "collected 5 items" in page.text
    finally:
        tools.abandon(first)
    assert first.poll() is not None
    assert tools.check_health().run_in_progress is None
    meta = json.loads((first.plan.run_dir / "mcp-run.json").read_text())
    assert meta["interrupted"] is True


def test_stored_runs_failures_and_output(tools: QBenchTools) -> None:
    """get_test_failure by node id or a unique part, with captured output; get_run_output
    pages with the run's metadata; helpful errors for the rest (issue 6)."""
    result = run(tools, verbose=True)
    detail = tools.get_test_failure(result.run_id, "test_fail")
    assert detail.nodeid == "tests/test_suite.py::test_fail"
    assert detail.stdout.strip() == "hello from test_fail"
    assert detail.error_type == "AssertionError" and detail.cut == []
    assert tools.get_test_failure("last", "tests/test_suite.py::test_error").phase == "setup"
    with pytest.raises(ToolFailure, match="test_pass passed in run"):
        tools.get_test_failure(result.run_id, "tests/test_suite.py::test_pass")
    with pytest.raises(ToolFailure, match="names several failing tests"):
        tools.get_test_failure(result.run_id, "test_")
    with pytest.raises(ToolFailure, match=r"names no failing test.*test_fail"):
        tools.get_test_failure(result.run_id, "nothing")
    with pytest.raises(ToolFailure, match="is not a run id"):
        tools.get_test_failure("../../etc", "x")
    with pytest.raises(ToolFailure, match="no run 'nope'"):
        tools.get_run_output("nope")

    page = tools.get_run_output(result.run_id[:10], offset=0, limit=3)
    assert page.run.run_id == result.run_id and page.run.exit_code == 1
    assert page.lines == 3 and page.next_offset == 3
    assert page.text.splitlines()[0].startswith("=====")
    rest = tools.get_run_output(result.run_id, offset=3, limit=1000)
    assert rest.next_offset is None and rest.offset + rest.lines == rest.total_lines
    assert "PASSED" in rest.text  # -v
    markdown = tools.get_run_output(result.run_id, stream="markdown")
    assert markdown.text.startswith("#")
    assert tools.get_run_output(result.run_id, stream="stderr").total_lines == 0
    with pytest.raises(ToolFailure, match="limit must be from 1 to 1000"):
        tools.get_run_output(result.run_id, limit=5000)


def test_history_runs_and_flaky_tests(tools: QBenchTools, project: Path) -> None:
    """list_runs and flaky_tests read the run history's index (issue 6)."""
    assert tools.list_runs(5).note is not None
    write(
        project,
        "tests/test_suite.py",
        f"""
        from pathlib import Path

        def test_flaky():
            counter = Path({str(project / "count.txt")!r})
            n = int(counter.read_text()) if counter.exists() else 0
            counter.write_text(str(n + 1))
            assert n % 2 == 0
        """,
    )
    results = [run(tools) for _ in range(3)]
    listed = tools.list_runs(2).runs
    assert [r.run_id for r in listed] == [results[2].run_id, results[1].run_id]
    assert listed[0].summary["passed"] == 1 and listed[1].summary["failed"] == 1
    assert tools.flaky_tests(10).tests == []  # one failure between passes: no evidence yet
    results.append(run(tools))
    [flaky] = tools.flaky_tests(10).tests
    assert flaky.nodeid == "tests/test_suite.py::test_flaky"
    assert (flaky.flips, flaky.runs, flaky.failed, flaky.flaky_indicator) == (3, 4, 2, 1.0)
    assert flaky.evidence.startswith(
        "failed alone in 2 of 4 runs between passes, the same failure each time ("
    )
    assert flaky.last_failure is not None and "AssertionError" in flaky.last_failure
    detail = tools.get_test_failure(results[1].run_id, "test_flaky")
    assert detail.history == f"new failure: passed in the previous run {results[0].run_id}"


def test_ingest_from_pytest_collection(tools: QBenchTools, project: Path) -> None:
    """The catalog learns node ids, docstrings, qbench_case fields and markers; a second ingest
    reports removals, keeps the tests of a file that stopped collecting, and takes a test with
    a malformed qbench_case without its fields (issue 6)."""
    write(
        project,
        "tests/test_shop.py",
        """
        import pytest

        @pytest.mark.slow
        @pytest.mark.qbench_case(key="SHOP-7", title="Checkout with a coupon", priority="High",
                                 tags=["checkout"], steps=[("Apply SAVE10", "Total drops")])
        def test_coupon():
            '''A customer pays less with a coupon.'''

        def test_cart_total():
            '''The cart adds prices.'''
        """,
    )
    write(project, "tests/test_other.py", "def test_other():\n    pass\n")
    report = tools.finish_collection(_collected(tools))
    assert (report.added, report.removed, report.rejected_total) == (7, 0, 0)
    case = tools.get_test_by_key("shop-7")
    assert case.nodeid == "tests/test_shop.py::test_coupon"
    assert case.description == "A customer pays less with a coupon."
    assert case.markers == ["slow"] and case.steps[0].expected == "Total drops"
    assert tools.search_tests("coupon").results[0].uid == "tests/test_shop.py::test_coupon"
    assert tools.search_tests("cart adds prices").results[0].uid.endswith("test_cart_total")
    assert not list((project / ".qbench").glob("runs/*")), "collecting writes no run"

    write(project, "tests/test_other.py", "import not_there\n")
    write(project, "tests/test_suite.py", "def test_pass():\n    pass\n")
    write(
        project,
        "tests/test_bad.py",
        "import pytest\n\n@pytest.mark.qbench_case(key=1.5)\ndef test_bad():\n    pass\n",
    )
    report = tools.finish_collection(_collected(tools))
    # test_pass moved up the file (updated); test_other.py's test is kept, not counted
    assert (report.added, report.updated, report.removed, report.unchanged) == (1, 1, 3, 2)
    assert report.collection_errors[0].startswith("tests/test_other.py: ")
    assert tools.search_tests("", path="tests/test_other.py").total == 1
    [rejected] = report.rejected
    assert rejected.record == "tests/test_bad.py::test_bad"
    assert "key must be a string" in rejected.reason


def _collected(tools: QBenchTools) -> Any:
    process = tools.start_collection()
    tools.supervise(process)
    return process


def test_a_cancelled_collection_leaves_nothing(tools: QBenchTools, project: Path) -> None:
    """Cancelling an ingest kills pytest and removes its staging directory."""
    process = tools.start_collection()
    tools.abandon(process)
    assert process.poll() is not None
    assert not process.plan.staging.exists()
    assert not (project / ".qbench" / "runs").exists()


def test_a_collection_pytest_refuses_is_a_tool_error(tools: QBenchTools, project: Path) -> None:
    """A conftest that cannot be imported stops the ingest with pytest's words; the catalog
    is not touched."""
    write(project, "conftest.py", "raise ImportError('conftest is broken')\n")
    with pytest.raises(ToolFailure, match=r"(?s)exited with status 4.*conftest is broken"):
        tools.finish_collection(_collected(tools))
    assert tools.check_health().run_in_progress is None


def test_progress_counts_finished_tests(tools: QBenchTools) -> None:
    """Progress reads the result stream: tests done, failed, and the collected total."""
    seen: list[Any] = []
    process = tools.start_run(RunRequest())
    tools.supervise(process, seen.append, sleep=lambda s: time.sleep(0.05))
    final = process.progress()
    tools.finish_run(process)
    assert (final.done, final.failed, final.total) == (4, 2, 4)
    assert final.message == "4/4 tests, 2 failed"
    assert all(p.done <= 4 for p in seen)


def test_environment_reaches_pytest(
    tools: QBenchTools, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest gets the server's environment."""
    monkeypatch.setenv("QBENCH_TEST_VALUE", "42")
    write(
        project,
        "tests/test_suite.py",
        """
        import os

        def test_env():
            assert os.environ["QBENCH_TEST_VALUE"] == "42"
        """,
    )
    assert run(tools, test_path="tests/test_suite.py").success


DETACHED = """
    import subprocess, sys, time
    from pathlib import Path

    def test_detaches_a_daemon():
        code = "import time; time.sleep(120)"
        child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        with open("daemon.pid", "w") as f:
            f.write(str(child.pid))
        deadline = time.monotonic() + 600  # a safety net: the test creates "go-on"
        while not Path("go-on").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies are dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(params=["cgroup", "process tree"])
def containment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way a run's processes are held: a cgroup (where one can be made here), its tree."""
    from pytest_qbench.core import cgroup as module

    if sys.platform != "linux":
        pytest.skip("Linux /proc and cgroups")
    if request.param == "cgroup" and module.cgroup_base() is None:
        pytest.skip("no writable cgroup v2 here")
    if request.param == "process tree":
        monkeypatch.setattr(module, "cgroup_base", lambda: None)
    return str(request.param)


@pytest.mark.parametrize("timed_out", [True, False])
def test_a_process_in_a_new_session_dies_with_the_run(
    tools: QBenchTools,
    project: Path,
    containment: str,
    timed_out: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process a test starts with start_new_session=True leaves pytest's process group; it is
    killed at the timeout, and when the run ends normally (issue 12.13). The test lives on
    after starting it until the server has seen it (the process-tree fallback looks every
    0.25 s; a process whose parent exits between two looks is its documented limit): the test
    creates "go-on" once a look noted the daemon. Before, the test lived 1 s, which a loaded
    machine could pass without a look. Timed out: the run's deadline is moved to now once the
    daemon wrote its pid (however long a loaded machine took to get there)."""
    write(project, "tests/test_z_daemon.py", DETACHED)
    process = tools.start_run(RunRequest(timeout_seconds=600))
    assert process.containment is not None and process.containment.kind == containment

    def go_on_once_seen(progress: object) -> None:
        written = project / "daemon.pid"
        if timed_out or not written.is_file() or not written.read_text():
            return
        known = getattr(process.containment, "known", None)  # the tree's; a cgroup holds all
        if known is None or int(written.read_text()) in known:
            (project / "go-on").write_text("1")

    if timed_out:
        settle_at_once(monkeypatch)
        overdue_once_written(process, project / "daemon.pid")
    tools.supervise(process, go_on_once_seen)
    result = tools.finish_run(process)
    assert result.timed_out is timed_out
    daemon = int((project / "daemon.pid").read_text())
    deadline = time.monotonic() + 60  # ends when it is gone
    while alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(daemon)


DOUBLE_FORKED = """
    import os, time
    from pathlib import Path

    def test_starts_a_daemon():
        if os.fork() == 0:
            os.setsid()
            pid = os.fork()
            if pid == 0:
                time.sleep(120)
            else:
                Path("daemon.pid").write_text(str(pid))
            os._exit(0)
        while not Path("daemon.pid").is_file():
            time.sleep(0.01)
"""


def test_a_double_forked_daemon_dies_with_the_run(
    tools: QBenchTools, project: Path, containment: str
) -> None:
    """A test that starts a daemon (fork, ``setsid``, fork again; its parent exits at once, so
    no look at the process tree sees it) leaves nothing alive once run_test_workflow's run ended:
    the cgroup, or else the cookie of its environment, finds it."""
    write(project, "tests/test_z_daemon.py", DOUBLE_FORKED)
    result = run(tools, test_path="tests/test_z_daemon.py")
    assert result.success, result
    daemon = int((project / "daemon.pid").read_text())
    deadline = time.monotonic() + 60  # ends when it is gone
    while alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(daemon)


ESCAPED = """
    from pathlib import Path

    def test_from_outside():
        Path("escaped.txt").write_text("ran")
"""


def test_a_symlink_out_of_the_root_is_not_collected(
    tools: QBenchTools, project: Path, tmp_path: Path
) -> None:
    """A directory or file inside the project that links outside it is neither run through
    test_path="tests" nor put in the catalog; a warning names it (issue 12.13)."""
    write(tmp_path, "outside/test_far.py", ESCAPED)
    write(tmp_path, "lone/test_lone.py", ESCAPED)
    (project / "tests" / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (project / "tests" / "test_linked.py").symlink_to(tmp_path / "lone" / "test_lone.py")
    result = run(tools, test_path="tests")
    assert not (project / "escaped.txt").exists()
    assert result.summary.total == 4 and result.collection_errors == []
    page = tools.get_run_output(result.run_id, limit=1000)
    assert "qbench did not collect" in page.text and "leads outside the project root" in page.text
    assert "tests/linked" in page.text and "tests/test_linked.py" in page.text
    report = tools.finish_collection(_collected(tools))
    with sqlite3.connect(project / ".qbench" / "catalog.sqlite") as conn:
        uids = [row[0] for row in conn.execute("SELECT uid FROM cases")]
    assert report.added == 4 and not any("test_from_outside" in uid for uid in uids)


def test_runs_use_the_python_option(project: Path, tmp_path: Path) -> None:
    """With --python the project's interpreter runs pytest, for runs and for the catalog
    (issue 11.15)."""
    marker = tmp_path / "used.txt"
    wrapper = tmp_path / "project-python"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    config = ServerConfig(root=project, qbench_dir=project / ".qbench", python=str(wrapper))
    tools = QBenchTools(config)
    result = run(tools, test_path="tests/test_suite.py")
    assert result.summary.failed == 1
    assert tools.finish_collection(_collected(tools)).added == 4
    calls = marker.read_text().splitlines()
    assert calls[0].startswith("-m pytest -p qbench") and "--collect-only" in calls[1]


def test_one_start_time_and_an_empty_stream_says_so(tools: QBenchTools) -> None:
    """list_runs and get_run_output give a run the same started_at (pytest's); an empty stream
    is called empty, not a page past its end (issue 11.14)."""
    from pytest_qbench.mcp import output
    from pytest_qbench.report.shapes import iso

    result = run(tools)
    [listed] = [r for r in tools.list_runs(10).runs if r.run_id == result.run_id]
    page = tools.get_run_output(result.run_id, stream="stderr")
    assert iso(page.run.started_at) == listed.started_at
    assert page.total_lines == 0
    assert page.note == f"the stderr of run {result.run_id} is empty: pytest wrote nothing to it"
    shown = output.output_text(page, 4000)
    assert shown.startswith(f"Run {result.run_id} stderr: empty\n") and "past the end" not in shown
    beyond = tools.get_run_output(result.run_id, offset=5000)
    assert output.output_text(beyond, 4000).startswith(
        f"Run {result.run_id} stdout: no lines from offset 5000\noffset 5000 is past the end"
    )


def test_cgroups_of_dead_servers_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty cgroup left by a server that was killed mid-run is removed when the next run
    makes its own; a live server's is kept (issue 12.13)."""
    from pytest_qbench.core import cgroup as module

    dead = tmp_path / "qbench-999999999-20260101T000000Z-abcdef"
    live = tmp_path / f"qbench-{os.getpid()}-20260101T000000Z-abcdef"
    dead.mkdir()
    live.mkdir()
    module.sweep_stale(tmp_path)
    assert not dead.exists() and live.exists()


def test_a_failure_asked_of_a_run_that_ran_no_test_says_so(tools: QBenchTools) -> None:
    """get_test_failure on a run whose selection matched nothing (exit status 5) said
    "names no failing test ...; failing tests: none. Give a node id.", as of a run with no
    failure; it now says the run ran no test, and why (trial11)."""
    result = run(tools, keyword="nosuchthing")
    assert result.exit_code == 5 and result.summary.total == 0
    with pytest.raises(ToolFailure) as caught:
        tools.get_test_failure(result.run_id, "test_fail")
    message = str(caught.value)
    assert f"run {result.run_id} ran no test (pytest's exit status 5" in message
    assert "failing tests: none" not in message


def test_list_runs_lists_a_run_that_wrote_no_results(tools: QBenchTools, project: Path) -> None:
    """A run whose pytest stopped at ``pytest_configure`` (found on typeguard: pytest-asyncio's
    deprecation warning under ``filterwarnings = error``, INTERNALERROR) writes no report and no
    stream, so the index never holds it: list_runs listed the run before it, exit 0, as the
    newest, while get_test_failure's ``last`` named the failed one. It is listed, first, with
    its exit status and no counts."""
    first = run(tools, test_path=["tests/test_suite.py::test_pass"])
    write(project, "conftest.py", "def pytest_configure(config):\n    raise RuntimeError('no')\n")
    with pytest.raises(ToolFailure, match=r"status 3 \(internal error\)"):
        run(tools)
    listed = tools.list_runs(10)
    assert [(r.exit_code, r.summary.get("passed")) for r in listed.runs] == [(3, None), (0, 1)]
    assert listed.runs[1].run_id == first.run_id
    assert listed.runs[0].has_output
    assert [r.run_id for r in tools.list_runs(1).runs] == [listed.runs[0].run_id]
    text = runs_text(listed, 12000)
    assert "exit 3  no results: pytest stopped before running tests" in text.splitlines()[0]
    failed = project / ".qbench" / "runs" / listed.runs[0].run_id
    generation = failed.with_name("generate-20991231T000000Z-abcdef")
    generation.mkdir()
    (generation / "mcp-run.json").write_bytes((failed / "mcp-run.json").read_bytes())
    assert [r.run_id for r in tools.list_runs(10).runs] == [r.run_id for r in listed.runs]


def test_get_test_failure_finds_a_parameter_written_as_in_the_source(
    tools: QBenchTools, project: Path
) -> None:
    """pytest escapes a parameter's non-ASCII characters in node ids (`test_word[\\u65e5...]`);
    an assistant that names the test as the source writes it (`test_word[日本語]`, found on
    anyio with a suite of edge cases) was told the name "names no failing test". Both forms
    now find it; a unicode function name stays as pytest writes it."""
    write(
        project,
        "tests/test_words.py",
        """
        import pytest

        @pytest.mark.parametrize("word", ["日本語", "café", "ok"])
        def test_word(word):
            assert word == "ok"
        """,
    )
    result = run(tools, test_path=["tests/test_words.py"])
    assert result.summary.failed == 2
    for given, stored in (
        ("tests/test_words.py::test_word[日本語]", "test_word[\\u65e5\\u672c\\u8a9e]"),
        ("test_word[café]", "test_word[caf\\xe9]"),
        ("tests/test_words.py::test_word[caf\\xe9]", "test_word[caf\\xe9]"),
    ):
        assert tools.get_test_failure(result.run_id, given).nodeid.endswith(stored)
