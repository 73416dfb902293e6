"""A red run says why, in every output and in the same words (``report/verdict.py``'s
``red_reasons``, the rule behind ``run_green``): the job summary, summary.md, report.md, the HTML
headline, the digest and CTRF. Before, a run red for a reason other than its tests (interrupted,
a plugin's exit status 1, a merged run missing a shard) showed ``❌ 1 passed`` in the job summary
and nothing more, and its CTRF document counted no failed test ("all passed")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_render import report_of
from test_render import result

from pytest_qbench.cli import main
from pytest_qbench.report.ctrf import NOT_GREEN
from pytest_qbench.report.render import render
from pytest_qbench.report.verdict import red_reasons
from pytest_qbench.report.verdict import run_green

from conftest import RunQBench
from conftest import find_run_dir


OUTPUTS = ("--qbench-digest=digest.json", "--qbench-ctrf=ctrf.json", "--qbench-html=report.html")


def outputs(pytester: pytest.Pytester) -> dict[str, Any]:
    """The step summary, the digest, the CTRF document and the HTML page a run wrote."""
    path = pytester.path
    return {
        "step": (path / "step-summary.md").read_text(encoding="utf-8"),
        "digest": json.loads((path / "digest.json").read_text(encoding="utf-8")),
        "ctrf": json.loads((path / "ctrf.json").read_text(encoding="utf-8")),
        "html": (path / "report.html").read_text(encoding="utf-8"),
    }


def test_an_interrupted_run_says_so_everywhere(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest.exit`` after a passing test: pytest exits 2 with "1 passed"; every output says
    the run was interrupted, and CTRF counts a failed entry for it."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    pytester.makepyfile(
        """
        import pytest
        def test_one(): pass
        def test_stop(): pytest.exit("stopping", returncode=2)
        """
    )
    run = run_qbench(*OUTPUTS, subprocess=True)
    assert run.result.ret == 2
    words = "the run was interrupted (Ctrl-C, pytest.exit or a signal) before its end"
    found = outputs(pytester)
    assert found["step"].startswith("# ❌ Test report: 1 passed")
    assert f"**❌ Not green:** {words}" in found["step"]
    assert f"**❌ Not green:** {words}" in run.markdown
    assert "<strong>Interrupted:</strong> " + words in found["html"]
    assert found["digest"]["success"] is False
    assert any(
        step.startswith("The run was interrupted (Ctrl-C") for step in found["digest"]["next_steps"]
    )
    summary = found["ctrf"]["results"]["summary"]
    assert summary["failed"] == 1 and summary["passed"] == 1
    assert summary["extra"]["success"] is False
    assert summary["extra"]["reasons"][0].startswith(words)
    [entry] = [t for t in found["ctrf"]["results"]["tests"] if t["name"] == NOT_GREEN]
    assert entry["status"] == "failed" and entry["message"].startswith(words)


def test_a_plugin_s_exit_status_is_the_reason(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin fails the session (exit status 1) though every test passed, as syrupy does for
    unused snapshots: the summary says pytest exited 1 and that no test failed."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish(session):
            session.exitstatus = 1
        """
    )
    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench(*OUTPUTS)
    assert run.result.ret == 1
    words = "pytest exited 1 (though no test failed: a plugin, or a gate qbench does not know"
    found = outputs(pytester)
    assert f"**❌ Not green:** {words}" in found["step"]
    assert "<strong>Exit status:</strong> " + words in found["html"]
    assert found["ctrf"]["results"]["summary"]["failed"] == 1


def test_a_failure_counted_under_a_plugin_s_word_is_the_reason(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conftest's ``pytest_report_teststatus`` files a failing test under its own word:
    pytest's line says ``1 passed, 1 known`` and exits 1. Every output said "pytest exited 1
    (though no test failed ...)" beside report.md's "Failures (1)" listing that test; the
    reason now names the plugin's word pytest's line counts the test under."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    pytester.makeconftest(
        """
        def pytest_report_teststatus(report, config):
            if report.when == "call" and report.failed:
                return "known", "K", "KNOWN-BUG"
        """
    )
    pytester.makepyfile("def test_ok(): pass\ndef test_bug(): assert 0")
    run = run_qbench(*OUTPUTS)
    run.result.stdout.fnmatch_lines(["*= 1 passed, 1 known in *"])
    assert run.result.ret == 1
    words = (
        "pytest exited 1 (its line counts no failed test, but 1 known under a plugin's words: a "
        "failure the plugin counts so, or a plugin or a gate qbench does not know, failed it)"
    )
    found = outputs(pytester)
    for text in (found["step"], run.markdown):
        assert f"**❌ Not green:** {words}" in text
        assert "though no test failed" not in text
    assert "Failures (1)" in run.markdown
    assert found["digest"]["success"] is False
    assert found["ctrf"]["results"]["summary"]["extra"]["reasons"] == [words]


def test_a_merged_run_missing_a_shard_says_which(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only shard 1/2 was merged: the merged run's summary (the job summary of the merge job)
    names the missing shard, as its report.md note does."""
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass\n")
    run_qbench("--qbench-shard=1/2")
    merged = pytester.path / "merged.json"
    assert main(["merge", str(find_run_dir(pytester.path)), "-o", str(merged)]) == 0
    summary = pytester.path / "summary.md"
    assert main(["render", str(merged), "-t", "step-summary.md.j2", "-o", str(summary)]) == 0
    capsys.readouterr()
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# ❌ Test report: ")
    assert "**❌ Not green:** the merged run is missing a shard: shard 2/2 of the plan" in text


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("tests", {"failed": 1}, "1 failed"),
    ("interrupted", {"interrupted": True, "exit_code": None}, "process died or was killed"),
    ("exit_code", {"exit_code": 3}, "pytest exited 3 (internal error)"),
    ("incomplete", {"recording_errors": ["internal error in x: boom"]}, "the report is incomplete"),
]


@pytest.mark.parametrize(("kind", "change", "words"), CASES)
def test_each_reason_alone_is_red_and_named(kind: str, change: dict[str, Any], words: str) -> None:
    """``run_green`` is "no reason": each condition alone gives one reason, of its kind."""
    test = (
        result("t.py::test_a", "failed") if "failed" in change else result("t.py::test_a", "passed")
    )
    run = {"exit_code": 0, **{k: v for k, v in change.items() if k != "failed"}}
    report = report_of([test], **run).model_dump(mode="json")
    reasons = red_reasons(report)
    assert [r.kind for r in reasons] == [kind]
    assert words in reasons[0].text
    assert run_green(report) is False


def test_a_green_run_has_no_reason() -> None:
    report = report_of([result("t.py::test_a", "passed")], exit_code=0).model_dump(mode="json")
    assert red_reasons(report) == [] and run_green(report)
    assert "Not green" not in render(report, "summary.md.j2")


def test_a_failed_gate_and_its_exit_status_are_one_reason() -> None:
    """pytest's 1 from a failed gate is explained by the gate: one reason, the gate's words."""
    report = report_of([result("t.py::test_a", "passed")], exit_code=1).model_dump(mode="json")
    report["gates"] = [
        {
            "kind": "metric_min",
            "name": "quality",
            "passed": False,
            "detail": "mean 0.70 is below the required 0.80",
        }
    ]
    reasons = red_reasons(report)
    assert [(r.kind, r.text) for r in reasons] == [
        ("gate", "metric gate quality failed: mean 0.70 is below the required 0.80")
    ]


def test_summary_lists_several_reasons() -> None:
    """Two reasons besides the failed test (which the headline counts): a list."""
    report = report_of(
        [result("t.py::test_a", "failed")], exit_code=2, interrupted=True
    ).model_dump(mode="json")
    report["coverage"] = None
    report["gates"] = [{"kind": "coverage", "name": "coverage", "passed": False, "detail": "low"}]
    text = render(report, "summary.md.j2")
    assert "**❌ Not green:**\n\n- the run was interrupted" in text  # 1 failed: the headline
    assert "\n- coverage gate failed: low\n" in text


def test_a_fault_while_deciding_is_red_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """qbench raising while it decides the verdict (here ``recording_errors``): every output is
    still written, red, naming the error; before, the summary, report.md, the digest, CTRF and
    the HTML page of the run were all lost to it."""
    from pytest_qbench.report import verdict
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.ctrf import build_ctrf
    from pytest_qbench.report.digest import build_digest
    from pytest_qbench.report.html import render_html

    def broken(report: Any) -> list[str]:
        raise RuntimeError("boom")

    monkeypatch.setattr(verdict, "recording_errors", broken)
    report = report_of([result("t.py::test_a", "passed")], exit_code=0).model_dump(mode="json")
    words = "qbench could not decide whether the run is green, so it is not: RuntimeError: boom"
    assert run_green(report) is False
    text = render(report, "summary.md.j2")
    assert text.startswith("# ❌ Test report: 1 passed")
    assert f"**❌ Not green:** {words}" in text
    view = aggregate(report["results"]).view()
    digest = build_digest(report, view)
    assert digest["success"] is False
    assert f"Q{words[1:]}; report it as a bug in qbench, with this message" in digest["next_steps"]
    ctrf = build_ctrf(report, report["results"])["results"]["summary"]
    assert ctrf["extra"]["success"] is False and ctrf["failed"] == 1
    html = render_html(report)
    assert 'data-ok="false"' in html


@pytest.mark.skipif(
    not hasattr(pytest.ExitCode, "MAX_WARNINGS_ERROR"), reason="pytest 9's --max-warnings"
)
@pytest.mark.parametrize("where", ["option", "ini"])
def test_more_warnings_than_max_warnings_is_red(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """pytest 9 exits 6 when every test passed with more warnings than ``--max-warnings``; it
    sets the status after its terminal summary, after qbench wrote the reports, which said
    ``✅ ... exit code 0`` beside a red CI job."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    pytester.makepyfile("import warnings\ndef test_ok():\n    warnings.warn(UserWarning('w'))\n")
    if where == "ini":
        pytester.makeini("[pytest]\nfilterwarnings = default\nmax_warnings = 0\n")
        args: tuple[str, ...] = ()
    else:
        pytester.makeini("[pytest]\nfilterwarnings = default\n")
        args = ("--max-warnings=0",)
    run = run_qbench(*args, *OUTPUTS)
    assert run.result.ret == 6
    assert run.report.run.exit_code == 6
    found = outputs(pytester)
    words = "pytest exited 6 (tests passed, but more warnings than --max-warnings allows)"
    assert found["step"].startswith("# ❌ Test report: 1 passed, 1 warning")
    assert f"**❌ Not green:** {words}" in found["step"]
    assert found["digest"]["success"] is False
    assert found["ctrf"]["results"]["summary"]["extra"]["exitCode"] == 6


def test_max_warnings_counts_only_over_the_limit() -> None:
    """Status 6 only above the limit (option first, then the ini), never without one."""
    from types import SimpleNamespace

    from pytest_qbench.plugin.session import _over_max_warnings

    def config(option: object, ini: object) -> Any:
        def getini(name: str) -> object:
            if isinstance(ini, Exception):
                raise ini
            return ini

        terminal = SimpleNamespace(get_plugin=lambda name: object())
        return SimpleNamespace(
            option=SimpleNamespace(max_warnings=option), getini=getini, pluginmanager=terminal
        )

    assert _over_max_warnings(config(0, None), 1)
    assert not _over_max_warnings(config(1, None), 1)
    assert _over_max_warnings(config(None, "2"), 3)
    assert not _over_max_warnings(config(None, "2"), 2)
    assert not _over_max_warnings(config(None, None), 100)
    assert not _over_max_warnings(config(None, ValueError("unknown ini")), 100)


def test_an_incomplete_report_does_not_claim_no_test_failed() -> None:
    """pytest exited 1 and qbench lost the failed test's result: the exit status's reason must
    not say that no test failed (that is only what qbench recorded)."""
    report = report_of(
        [result("t.py::test_a", "passed")],
        exit_code=1,
        recording_errors=["internal error in pytest_runtest_logreport: RuntimeError: boom"],
    ).model_dump(mode="json")
    assert [(r.kind, r.text) for r in red_reasons(report)] == [
        ("incomplete", "the report is incomplete: qbench could not record the whole run"),
        ("exit_code", "pytest exited 1 (tests failed)"),
    ]
