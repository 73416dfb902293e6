"""Warnings raised as the session ends (another plugin's or a conftest's ``pytest_sessionfinish``)
are in the report, as pytest's closing line counts them; the stream is never written after its
end record; the exit status in the report stays pytest's."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.report.models import TestReport

from conftest import QBenchRun
from conftest import RunQBench
from conftest import assert_summary_matches_pytest
from conftest import find_run_dir
from conftest import line_of


pytestmark = pytest.mark.runs_pytest

AT_SESSIONFINISH = """
    import warnings
    import pytest

    def pytest_sessionfinish(session):
        warnings.warn(UserWarning("warned at sessionfinish"))
"""
WARNS_AT_THE_END = (
    AT_SESSIONFINISH
    + """
    @pytest.fixture(scope="session", autouse=True)
    def session_resource():
        yield
        warnings.warn(UserWarning("session fixture torn down late"))
"""
)


def warning_project(pytester: pytest.Pytester, conftest: str = WARNS_AT_THE_END) -> None:
    pytester.makeini("[pytest]\nfilterwarnings =\n    default\n")  # not this suite's "error"
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")


def pytest_warnings(run: QBenchRun) -> list[str]:
    return sorted(w.message for w in run.report.warnings if w.tool == "pytest")


def assert_whole_stream(run: QBenchRun) -> None:
    """The stream ends with its end record, after every warning the report holds, and qbench
    noted no internal error (a write to the closed stream was one)."""
    records = run.stream_records()
    assert records[-1]["kind"] == "end"
    streamed = [r["diagnostic"]["message"] for r in records if r["kind"] == "warning"]
    assert sorted(streamed) == pytest_warnings(run)
    assert not [w for w in run.report.warnings if w.code == "internal-error"]
    assert "internal error" not in run.result.stdout.str()


def test_a_warning_at_sessionfinish_is_in_the_report(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """pytest records what a conftest's pytest_sessionfinish warns after every implementation
    (its warnings wrapper): the report is written after that, so it holds the warning, with the
    one of a session fixture's teardown, and counts both as pytest's closing line does."""
    warning_project(pytester)
    run = run_qbench()
    run.result.assert_outcomes(passed=1, warnings=2)
    assert_summary_matches_pytest(run)
    assert pytest_warnings(run) == ["session fixture torn down late", "warned at sessionfinish"]
    [late] = [w for w in run.report.warnings if w.message == "warned at sessionfinish"]
    line = line_of("warned at sessionfinish", WARNS_AT_THE_END)
    assert (late.code, late.file, late.line) == ("UserWarning", "conftest.py", line)
    assert late.nodeid is None  # no test's
    assert "warned at sessionfinish" in run.markdown
    assert run.report.run.exit_code == run.result.ret == 0
    assert_whole_stream(run)
    run.result.stdout.fnmatch_lines(["qbench: wrote *report.json*", "*1 passed, 2 warnings*"])


def test_under_xdist_with_a_failed_gate(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Under xdist the conftest warns in the controller and in each worker: pytest counts all
    three, and so does the report; the coverage gate's status 1 is the report's exit code."""
    pytest.importorskip("xdist")
    warning_project(pytester, AT_SESSIONFINISH)  # a session fixture would warn in each worker
    pytester.makepyfile(
        **{"pkg/__init__.py": "def used():\n    return 1\n\ndef unused():\n    return 2\n"}
    )
    pytester.makepyfile(test_pkg="import pkg\ndef test_used():\n    assert pkg.used() == 1\n")
    run = run_qbench(
        "-p", "xdist", "-n", "2", "--qbench-cov=pkg", "--qbench-cov-fail-under=100",
        subprocess=True,
    )  # fmt: skip
    run.result.assert_outcomes(passed=2, warnings=3)
    assert_summary_matches_pytest(run)
    assert pytest_warnings(run) == ["warned at sessionfinish"] * 3  # controller, both workers
    assert run.result.ret == run.report.run.exit_code == pytest.ExitCode.TESTS_FAILED
    assert [gate.passed for gate in run.report.gates] == [False]
    assert_whole_stream(run)


def test_qbench_registered_after_the_terminal_reporter(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """qbench's session registered after the terminal reporter (a plugin that registers it
    late), so that its pytest_sessionfinish wrapper is outside the terminal reporter's: the
    terminal summary comes first and writes the report, after the warnings are recorded, and
    still says what qbench wrote."""
    warning_project(
        pytester,
        WARNS_AT_THE_END
        + """
    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        hooks = config.pluginmanager.get_plugin("qbench-session")
        config.pluginmanager.unregister(hooks)
        config.pluginmanager.register(hooks, "qbench-session")
""",
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1, warnings=2)
    assert_summary_matches_pytest(run)
    assert pytest_warnings(run) == ["session fixture torn down late", "warned at sessionfinish"]
    assert_whole_stream(run)
    run.result.stdout.fnmatch_lines(["qbench: wrote *report.json*", "*1 passed, 2 warnings*"])


def test_a_warning_in_a_terminal_summary_is_said_to_be_missing(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """What a pytest_terminal_summary hook warns is recorded after qbench's lines and the report
    (pytest records it when every such hook has run): it cannot be in the report, so qbench says
    so under pytest's closing line, and the stream is left whole."""
    warning_project(
        pytester,
        """
        import warnings

        def pytest_terminal_summary(terminalreporter):
            warnings.warn(UserWarning("warned in the terminal summary"))
        """,
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1, warnings=1)
    assert run.report.summary.warnings == 0
    assert_whole_stream(run)
    run.result.stdout.fnmatch_lines(
        [
            "*1 passed, 1 warning*",
            "qbench: not in the reports: 1 warning recorded after they were written "
            "(in a pytest_terminal_summary hook)",
        ]
    )


def test_a_warning_made_an_error_at_sessionfinish_still_writes_the_reports(
    pytester: pytest.Pytester,
) -> None:
    """``-W error`` makes the conftest's warning an exception out of pytest_sessionfinish:
    pytest stops with its traceback, exit status 1 and no closing line. qbench still writes
    report.json and report.md (the stream with its end record), incomplete and never green,
    naming the exception; the exit status it records is unknown (the traceback's, not the
    session's 0)."""
    warning_project(pytester, AT_SESSIONFINISH)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-W", "error", "--qbench-digest=digest.json"
    )
    assert result.ret == 1
    result.stderr.fnmatch_lines(["UserWarning: warned at sessionfinish"])
    assert "1 passed" not in result.stdout.str()
    run_dir = find_run_dir(pytester.path)
    report = TestReport.model_validate_json((run_dir / "report.json").read_text())
    assert report.summary.passed == 1
    assert report.run.exit_code is None
    [error] = report.run.recording_errors
    assert (
        "pytest_sessionfinish implementation raised UserWarning: warned at sessionfinish" in error
    )
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert records[-1]["kind"] == "end"
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report incomplete")
    assert "warned at sessionfinish" in markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
