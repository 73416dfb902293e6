"""Where qbench's report said less than pytest, or the wrong thing: a run pytest-cov's
fail-under (or another plugin) failed with every test passed, ``--qbench-md=-``, the GitHub step
summary after a failed session end, and an exception whose ``str()`` raises. Real pytest runs
of the checkout, faults injected through a conftest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.report.verdict import verdict_of


MODULE = "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    return 3\n"
"""Six statements; the test runs four of them (66.67%)."""


def read_json(root: Path, name: str = "r.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / name).read_text(encoding="utf-8"))
    return data


def test_pytest_cov_fail_under_is_named_as_a_gate(pytester: pytest.Pytester) -> None:
    """pytest-cov's --cov-fail-under fails the run (pytest exits 1, every test passed): the
    report names it as a failed coverage gate, in report.json's gates, the Markdown headline,
    the digest's next step and a terminal line, not a bare red headline."""
    pytester.makepyfile(mod=MODULE, test_a="import mod\n\ndef test_a():\n    assert mod.f(1)\n")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "pytest_cov.plugin", "--cov=mod", "--cov-fail-under=90",
        "--qbench-json=r.json", "--qbench-md=r.md", "--qbench-digest=d.json",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    said = "coverage 66.67% is under pytest-cov's fail-under 90%"
    result.stdout.fnmatch_lines([f"qbench: {said}*"])
    report = read_json(pytester.path)
    (gate,) = report["gates"]
    assert gate["kind"] == "coverage" and gate["name"] == "pytest-cov"
    assert gate["passed"] is False and gate["threshold"] == 90
    assert [reason.kind for reason in verdict_of(report).reasons] == ["gate"]
    headline = (pytester.path / "r.md").read_text(encoding="utf-8").split("## ")[0]
    assert said in headline
    (step,) = read_json(pytester.path, "d.json")["next_steps"]
    assert said in step


def test_pytest_cov_fail_under_met_passes_its_gate(pytester: pytest.Pytester) -> None:
    """Met, pytest-cov's fail-under is a passed gate: the run stays green."""
    pytester.makepyfile(mod=MODULE, test_a="import mod\n\ndef test_a():\n    assert mod.f(1)\n")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "pytest_cov.plugin", "--cov=mod", "--cov-fail-under=50",
        "--qbench-json=r.json",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    report = read_json(pytester.path)
    assert [g["passed"] for g in report["gates"]] == [True]
    assert verdict_of(report).green


STATUS_SETTER = """
def pytest_sessionfinish(session):
    session.exitstatus = 3
"""


def test_a_status_another_plugin_set_is_said(pytester: pytest.Pytester) -> None:
    """A plugin sets pytest's exit status to 3 with every test passed and no gate failed: the
    terminal says so in a line of qbench's, and the report's headline names the status."""
    pytester.makeconftest(STATUS_SETTER)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-md=r.md")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        ['qbench: pytest exits 3, its status for "internal error", though its line counts no *']
    )
    assert "pytest exited 3 (internal error)" in (pytester.path / "r.md").read_text("utf-8")


@pytest.mark.parametrize(
    "option", ["--qbench-md=-", "--qbench-json=-", "--qbench-html=-", "--qbench-digest=-"]
)
def test_dash_as_an_output_is_refused(pytester: pytest.Pytester, option: str) -> None:
    """``-`` is ``qbench render``'s stdout; inside pytest it would mix the report into pytest's
    output (and it wrote a file named ``-``): refused at start, naming the fix."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    flag = option.removesuffix("=-")
    result.stderr.fnmatch_lines([f"ERROR: {flag} is -, given: * give a file path*"])
    assert not (pytester.path / "-").exists()


def test_dash_in_the_ini_file_is_refused(pytester: pytest.Pytester) -> None:
    """The ini file's ``qbench_md = -`` is refused as the option is."""
    pytester.makeini("[pytest]\nqbench_md = -\n")
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini qbench_md is -, given: *"])


BROKEN_END = """
from pytest_qbench.report import aggregate

def boom(*args, **kwargs):
    raise RuntimeError("boom at the end")

aggregate.Aggregator.summary = boom
"""


def test_the_step_summary_gets_the_last_resort_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's end fails (a bug injected into qbench's aggregation): GitHub's step
    summary, which earlier steps wrote to, gets the last-resort report appended (red, naming
    the error), not silence; pytest's status is its own."""
    summary = pytester.path / "step-summary.md"
    summary.write_text("# an earlier step's summary\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makeconftest(BROKEN_END)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.OK
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# an earlier step's summary\n")
    assert "# ❌ Test report incomplete" in text and "boom at the end" in text
    assert "✅" not in text


def test_the_step_summary_says_when_no_report_could_be_made(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last-resort report cannot be made either: the step summary still says the run has
    no report, red."""
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makeconftest(
        BROKEN_END + "from pytest_qbench.report import last_resort\n"
        "last_resort.last_resort_report = boom\n"
    )
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.OK
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# ❌ Test report incomplete") and "has no report" in text


UNPRINTABLE = """
class NoStr(Exception):
    def __str__(self):
        raise RuntimeError("no str")


class Neither(NoStr):
    def __repr__(self):
        raise RuntimeError("no repr")


def test_no_str():
    raise NoStr("secret words")


def test_neither():
    raise Neither("secret words")
"""


def test_an_exception_whose_str_raises_is_told_as_pytest_tells_it(
    pytester: pytest.Pytester,
) -> None:
    """An exception whose ``__str__`` raises: pytest prints ``<exception str() failed>`` (the
    traceback module's words); qbench's message said its repr, or ``<unrepresentable ...>``.
    Now the report's message and trace hold what pytest's short summary shows."""
    pytester.makepyfile(test_x=UNPRINTABLE)
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-json=r.json", "-rf")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    shown = {
        line.split(" - ", 1)[0].removeprefix("FAILED "): line.split(": ", 1)[1]
        for line in result.stdout.lines
        if line.startswith("FAILED ")
    }
    results = read_json(pytester.path)["results"]
    assert len(shown) == len(results) == 2
    for test in results:
        failure = test["failure"]
        assert failure["error_message"] == shown[test["nodeid"]], shown
        assert failure["stack_trace"].endswith(f"{shown[test['nodeid']]}")


GATE_BREAKS = """
from pytest_qbench.plugin import coverage_run

def boom(*args, **kwargs):
    raise RuntimeError("boom in the gate")

coverage_run.pytest_cov_gate = boom
"""


@pytest.mark.parametrize(("fail_under", "status"), [(50, 0), (90, 1)])
def test_a_bug_in_reading_pytest_covs_verdict_keeps_its_status(
    pytester: pytest.Pytester, fail_under: int, status: int
) -> None:
    """A bug in reading pytest-cov's fail-under (injected): pytest's status stays pytest-cov's
    own, and the report is incomplete (never green), naming the error; no traceback."""
    pytester.makeconftest(GATE_BREAKS)
    pytester.makepyfile(mod=MODULE, test_a="import mod\n\ndef test_a():\n    assert mod.f(1)\n")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "pytest_cov.plugin", "--cov=mod", f"--cov-fail-under={fail_under}",
        "--qbench-json=r.json",
    )  # fmt: skip
    assert result.ret == status
    result.stdout.fnmatch_lines(
        ["qbench: internal error in reading pytest-cov's fail-under: RuntimeError: boom*"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "incomplete" in [r.kind for r in verdict_of(read_json(pytester.path)).reasons]
