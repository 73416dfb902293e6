"""qbench's ``pytest_runtest_makereport``: pytest's own implementation called by qbench's, one
plain implementation that pluggy calls instead of a wrapper's generator around pytest's (issue
28), and what the facts of a report become when another plugin's implementation returns the
report first."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import RunQBench


COUNTING_CONFTEST = """
    import inspect
    import json
    import sys

    import pytest

    COUNTS = {}
    HOOKS = ("pytest_runtest_makereport", "pytest_runtest_logreport")


    def _profile(frame, event, arg):
        # every implementation pluggy calls, and every resumption of a wrapper's generator
        if event != "call":
            return
        back = frame.f_back
        if back is None or back.f_code.co_name != "_multicall":
            return
        hook = back.f_locals.get("hook_name")
        if hook not in HOOKS:
            return
        code = frame.f_code
        path = code.co_filename.replace("\\\\", "/")
        who = "qbench" if "/pytest_qbench/" in path else path.rsplit("/", 1)[-1]
        kind = "generator" if code.co_flags & inspect.CO_GENERATOR else "plain"
        key = f"{hook} {who} {kind}"
        COUNTS[key] = COUNTS.get(key, 0) + 1
"""

PROFILED_WINDOW = """


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        sys.setprofile(_profile)


    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session):
        sys.setprofile(None)
        with open("counts.json", "w") as handle:
            json.dump(COUNTS, handle)
"""
"""A conftest's end: its ``_profile`` sees the run's tests, from collection's end to the
session's, and what it counted in ``COUNTS`` is written to ``counts.json``."""

COUNTING_CONFTEST += PROFILED_WINDOW

FOUR_TESTS = """
    import pytest

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2

    @pytest.mark.skip(reason="no")
    def test_skip():
        pass

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        assert 0
"""


def test_pluggy_calls_one_plain_makereport_of_qbench_a_phase(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Each phase's report is made by qbench's implementation, which calls pytest's own: pluggy
    calls one plain implementation of qbench's for it and none of pytest's runner, and resumes
    no generator of qbench's (a wrapper costs pluggy about twice a plain implementation's
    call, 8.2 k instructions against 3.9 k), so qbench adds pluggy calls for the logged report
    alone. Its facts still arrive: the failure's frames, the xfail's reason, the markers."""
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_four=FOUR_TESTS)
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1, skipped=1, xfailed=1)
    counts = json.loads((pytester.path / "counts.json").read_text())
    phases = 4 * 3 - 1  # the skipped test has no call
    assert counts.get("pytest_runtest_makereport qbench plain") == phases, counts
    assert "pytest_runtest_makereport runner.py plain" not in counts, counts
    assert not any(key.endswith("generator") and "qbench" in key for key in counts), counts
    assert counts.get("pytest_runtest_logreport qbench plain") == phases, counts
    failure = run.by_name("test_fail").failure
    assert failure is not None and failure.error_type == "AssertionError"
    assert [frame.function for frame in failure.frames] == ["test_fail"]
    assert run.by_name("test_xfail").outcome == "xfailed"
    assert run.by_name("test_xfail").failure is None
    assert "xfail" in run.by_name("test_xfail").markers


FIRST_REPORT_CONFTEST = """
    import pytest


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(item, call):
        # a plugin that makes the report itself, before qbench's implementation is called
        return pytest.TestReport.from_item_and_call(item, call)
"""

DEEP_FAILURE = """
    import pytest

    def helper(level):
        if level == 0:
            raise KeyError("deep")
        helper(level - 1)

    @pytest.mark.filterwarnings("ignore")
    def test_deep():
        '''Goes deep.'''
        helper(3)

    def test_ok():
        pass
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_a_report_returned_first_keeps_the_failures_file_and_line(
    pytester: pytest.Pytester, run_qbench: RunQBench, workers: list[str]
) -> None:
    """When another plugin's makereport returns the report before qbench's is called, the
    report comes without qbench's facts: its failure is still there, with pytest's text of it,
    named and located as pytest's traceback names it and puts it (the helper's ``raise``), not
    at the test's ``def`` line; the item's facts come from the collected item."""
    pytester.makeconftest(FIRST_REPORT_CONFTEST)
    pytester.makepyfile(test_first=DEEP_FAILURE)
    run = run_qbench(*workers, subprocess=bool(workers))
    run.result.assert_outcomes(passed=1, failed=1)
    failure = run.by_name("test_deep").failure
    assert failure is not None
    assert (failure.file, failure.line) == ("test_first.py", 5)
    assert (failure.error_type, failure.error_message) == ("KeyError", "'deep'")
    assert "KeyError" in failure.stack_trace
    deep = run.by_name("test_deep")  # the item's facts, found by the test's id
    assert "filterwarnings" in deep.markers
    assert deep.metadata is not None and deep.metadata.description == "Goes deep."
    assert run.by_name("test_ok").outcome == "passed"
    assert not run.report.run.recording_errors


REPLACING_CONFTEST = """
    import pytest


    def check_leaks():
        raise RuntimeError("a leaked handle")


    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(item, call):
        # what pytest-rerunfailures does when a higher scope's teardown fails: a report made
        # from another call replaces the phase's
        report = yield
        if report.when == "teardown" and report.passed:
            check = pytest.CallInfo.from_call(check_leaks, "teardown")
            return pytest.TestReport.from_item_and_call(item, check)
        return report
"""


def test_a_replaced_report_without_facts_is_located_by_its_traceback(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A failed report made from another call than the phase's (a plugin's wrapper replaced
    it) has no exception of qbench's to describe: its error is named as pytest names it and
    located at the line pytest's traceback of it ends in, in the project (the conftest's
    ``raise``), not at the test's."""
    pytester.makeconftest(REPLACING_CONFTEST)
    pytester.makepyfile(test_replaced="def test_one():\n    pass\n")
    run = run_qbench()
    run.result.assert_outcomes(passed=1, errors=1)
    failure = run.by_name("test_one").failure
    assert failure is not None and failure.phase == "teardown"
    assert (failure.file, failure.line) == ("conftest.py", 5)
    assert (failure.error_type, failure.error_message) == ("RuntimeError", "a leaked handle")


SIDE_EFFECT_CONFTEST = """
    import pytest

    SEEN = []


    def pytest_runtest_makereport(item, call):
        # a plain implementation for its side effect (a screenshot at a failure, say): pluggy
        # calls it after qbench's, which must then not make the report in pytest's place
        SEEN.append(call.when)


    def pytest_sessionfinish(session):
        with open("seen.txt", "w") as handle:
            handle.write(" ".join(SEEN))
"""


def test_a_plain_makereport_of_a_conftest_is_still_called(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A conftest's plain ``pytest_runtest_makereport`` registered before qbench's session
    would be called after qbench's and before pytest's own: qbench's implementation is then a
    wrapper around them all, as before, and the conftest's is called for every phase; the
    failure's facts arrive."""
    pytester.makeconftest(SIDE_EFFECT_CONFTEST)
    pytester.makepyfile(test_seen=DEEP_FAILURE)
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    assert (pytester.path / "seen.txt").read_text().split() == ["setup", "call", "teardown"] * 2
    failure = run.by_name("test_deep").failure
    assert failure is not None and failure.error_type == "KeyError"
    assert [frame.function for frame in failure.frames] == ["test_deep", *["helper"] * 4]
    assert "filterwarnings" in run.by_name("test_deep").markers


SECRET_THEN_SKIP = """
    import unittest

    import pytest

    def test_sets_a_secret(monkeypatch):
        monkeypatch.setenv("WORKER_API_TOKEN", "worker-secret-0123456789")

    def test_skipped_after():
        pytest.skip("not here")

    class TestUnit(unittest.TestCase):
        @unittest.skip("unit skip")
        def test_unit_skip(self):
            pass
"""


def test_a_skips_reason_survives_a_workers_redaction(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An xdist worker that learned a secret a test set redacts every report it sends after:
    a skip's ``(path, line, reason)`` stays a tuple, so the skip keeps its reason (it was a
    list, whose reason qbench did not read, on the worker that had run the secret's test)."""
    pytester.makepyfile(test_worker=SECRET_THEN_SKIP)
    run = run_qbench("-p", "xdist", "-n", "1", subprocess=True)
    run.result.assert_outcomes(passed=1, skipped=2)
    assert run.by_name("test_skipped_after").reason == "not here"
    assert run.by_name("TestUnit::test_unit_skip").reason == "unit skip"


DOUBLE_FAULT_CONFTEST = """
    import pytest_qbench.plugin.session as qbench_session


    def _broken_failure_facts(*args, **kwargs):
        raise ValueError("describing the failure")


    # qbench's own bugs, injected: one while the teardown's report is made, one while its
    # failure is described as the report is logged (serially) or sent (by an xdist worker)
    qbench_session.failure_facts = _broken_failure_facts


    def pytest_qbench_attachments(item):
        raise RuntimeError("making the report")
"""

BROKEN_TEARDOWN = """
    import pytest

    @pytest.fixture
    def leaks():
        yield
        raise KeyError("teardown")

    def test_leaks(leaks):
        pass
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "1"]], ids=["serial", "xdist"])
def test_a_late_failures_error_is_recorded_alike_serially_and_by_a_worker(
    pytester: pytest.Pytester, run_qbench: RunQBench, workers: list[str]
) -> None:
    """The failure of a phase that raised is described by one function, where its report is
    logged (this process) or sent (an xdist worker), with one rule for qbench's errors: the
    one while the report was made stays, one while its failure was described is recorded when
    there was none. On main the worker's second error replaced the first; serially it did not."""
    pytester.makeconftest(DOUBLE_FAULT_CONFTEST)
    pytester.makepyfile(test_double=BROKEN_TEARDOWN)
    run = run_qbench(*workers, subprocess=True)  # qbench's module patched in its own process
    run.result.assert_outcomes(passed=1, errors=1)
    errors = [e for e in run.report.run.recording_errors if "test_double.py::test_leaks" in e]
    assert errors == [
        "internal error in pytest_runtest_makereport (test_double.py::test_leaks): "
        "RuntimeError: making the report"
    ]
    result = run.by_name("test_leaks")  # the error's test keeps its outcome and its failure
    assert result.outcome == "error"
    assert result.teardown_failure is None
    assert result.failure is not None and result.failure.error_type == "KeyError"


LATER_REPORT_CONFTEST = """
    import pytest


    def pytest_runtest_makereport(item, call):
        # registered while collecting, after qbench's session: called before qbench's
        return pytest.TestReport.from_item_and_call(item, call)
"""
FIRST_REPORT_FACTS = """
    def helper():
        raise ValueError("deep")

    def test_agent(qbench):
        qbench.attach("seen", name="note.txt")
        qbench.record("the answer", ground_truth="the answer")
        helper()
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize(
    ("where", "conftest"),
    [
        pytest.param(".", FIRST_REPORT_CONFTEST, id="tryfirst-at-the-root"),
        pytest.param("pkg/deeper", LATER_REPORT_CONFTEST, id="plain-of-a-directory-found-later"),
    ],
)
def test_a_report_returned_first_keeps_its_frames_agent_facts_and_attachments(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    workers: list[str],
    where: str,
    conftest: str,
) -> None:
    """A conftest whose ``pytest_runtest_makereport`` returns its own report before qbench's
    is called: a ``tryfirst`` one at the root, or a plain one of a directory whose conftest is
    registered while collecting, after qbench's session. Before, the failure lost its frames,
    and the test its agent facts (the response) and its attachments: qbench's implementation
    was never called. It is now the wrapper around whichever implementation makes the report
    (registered as the conftest comes), serially and under xdist."""
    directory = pytester.path / where
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "conftest.py").write_text(textwrap.dedent(conftest))
    (directory / "test_first.py").write_text(textwrap.dedent(FIRST_REPORT_FACTS))
    run = run_qbench(*workers, subprocess=bool(workers))
    run.result.assert_outcomes(failed=1)
    result = run.by_name("test_agent")
    assert result.failure is not None and result.failure.error_type == "ValueError"
    assert [frame.function for frame in result.failure.frames] == ["test_agent", "helper"]
    assert result.agent_response == "the answer"
    assert [attachment.name for attachment in result.attachments] == ["note.txt"]
    assert not run.report.run.recording_errors


LATE_REPORT_MAKER = """
    import pytest


    class LateMaker:
        def pytest_runtest_makereport(self, item, call):
            return pytest.TestReport.from_item_and_call(item, call)


    @pytest.fixture(scope="session", autouse=True)
    def late_maker(request):
        # a plugin registered while the tests run, after the tests were collected
        request.config.pluginmanager.register(LateMaker(), "late-maker")
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_a_report_maker_registered_while_the_tests_run_is_given_way_to(
    pytester: pytest.Pytester, run_qbench: RunQBench, workers: list[str]
) -> None:
    """A plugin registered by a fixture, while the first test sets up, makes every report from
    then on: its first setup report, which came without qbench's facts, makes qbench's
    makereport the wrapper, and the call's facts (frames, agent facts, attachments) arrive.
    Before, they were lost for every test."""
    pytester.makeconftest(LATE_REPORT_MAKER)
    pytester.makepyfile(test_first=FIRST_REPORT_FACTS)
    run = run_qbench(*workers, "-p", "no:randomly", subprocess=bool(workers))
    run.result.assert_outcomes(failed=1)
    result = run.by_name("test_agent")
    assert result.failure is not None
    assert [frame.function for frame in result.failure.frames] == ["test_agent", "helper"]
    assert result.agent_response == "the answer"
    assert [attachment.name for attachment in result.attachments] == ["note.txt"]


GENERATORS_CONFTEST = (
    """
    import json
    import sys

    import pytest

    COUNTS = {}


    def _profile(frame, event, arg):
        # each start and resumption of a makereport generator of qbench's, by its function
        code = frame.f_code
        if event == "call" and code.co_name == "pytest_runtest_makereport":
            if "/pytest_qbench/" in code.co_filename.replace("\\\\", "/"):
                COUNTS[code.co_qualname] = COUNTS.get(code.co_qualname, 0) + 1
"""
    + PROFILED_WINDOW
    + LATE_REPORT_MAKER
)


def test_a_report_maker_registered_late_leaves_one_generator_of_qbench_a_phase(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Issue 28, twelfth round: once a plugin registered while the tests run makes the reports,
    qbench's makereport is the worker's own wrapper, registered under the late holder's name:
    one generator of qbench's a phase, started and resumed once (main: two, the holder's
    delegating to the worker's through ``yield from``). Its facts still arrive."""
    pytester.makeconftest(GENERATORS_CONFTEST)
    pytester.makepyfile(test_first=FIRST_REPORT_FACTS, test_more=FOUR_TESTS)
    run = run_qbench("-p", "no:randomly")
    run.result.assert_outcomes(passed=1, failed=2, skipped=1, xfailed=1)
    counts = json.loads((pytester.path / "counts.json").read_text())
    # five tests' phases, the skipped one without a call, less the first setup's (made by the
    # late maker before qbench's wrapper was registered): a start and a resumption each
    # (the agent hooks' wrapper, registered for the test of the ``qbench`` fixture, aside)
    assert "ReportWrapper.pytest_runtest_makereport" not in counts, counts
    assert counts["QBenchWorker.pytest_runtest_makereport"] == 2 * (5 * 3 - 1 - 1), counts
    result = run.by_name("test_agent")
    assert result.failure is not None
    assert [frame.function for frame in result.failure.frames] == ["test_agent", "helper"]
    assert result.agent_response == "the answer"
    assert [attachment.name for attachment in result.attachments] == ["note.txt"]


SERIALIZABLE_CALLS = """
    import pytest

    CONFIG = []


    def pytest_configure(config):
        CONFIG.append(config)


    def pytest_collection_finish(session):
        impls = session.config.hook.pytest_report_to_serializable.get_hookimpls()
        print("SERIALIZERS", sorted(impl.plugin_name for impl in impls))


    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(report):
        # as pytest-reportlog does for every report, in the process that logs it
        data = CONFIG[0].hook.pytest_report_to_serializable(config=CONFIG[0], report=report)
        assert data["nodeid"] == report.nodeid
"""


def test_the_session_leaves_report_serialization_to_pytest(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Issue 28, twelfth round: where the reports are logged (a run without xdist, an xdist
    controller), qbench registers no ``pytest_report_to_serializable``: its wrapper handed each
    report's data back as it was, a generator a call of the hook (pytest-reportlog calls it for
    every report). An xdist worker still has it (the worker tests of ``test_xdist.py``)."""
    pytester.makeconftest(SERIALIZABLE_CALLS)
    pytester.makepyfile(test_more=FOUR_TESTS)
    run = run_qbench("-s", "-p", "no:randomly")
    run.result.assert_outcomes(passed=1, failed=1, skipped=1, xfailed=1)
    line = next(x for x in run.result.outlines if x.startswith("SERIALIZERS"))
    assert "qbench" not in line, line
    failure = run.by_name("test_fail").failure
    assert failure is not None and failure.error_type == "AssertionError"
