"""Every gate at its edges and fail closed (session 37's audit): an error outside a gate's own
judging fails that gate (no INTERNALERROR), a checker whose errors were not all counted fails
``--qbench-max-errors``, and a coverage total is never shown rounded up past the threshold it
failed."""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from test_check_plugin import fake_plan
from test_gates_fail_closed import SCORED
from test_gates_fail_closed import assert_gate_failed
from test_gates_fail_closed import coverage_project
from tools_plugins import replace_planner

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.command import coverage_args
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.other_runners import refuse_pytest_only
from pytest_qbench.report import junit
from pytest_qbench.report.checks.intest import max_errors_gate
from pytest_qbench.report.coverage.view import coverage_gate
from pytest_qbench.report.coverage.view import percent_text
from pytest_qbench.report.coverage.view import threshold_text
from pytest_qbench.report.gates.verdicts import CaseScore
from pytest_qbench.report.gates.verdicts import baseline_gate
from pytest_qbench.report.merge import merged_exit_code
from pytest_qbench.report.models import GateResult
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.shapes import new

from conftest import RunQBench


def inject_method(pytester: pytest.Pytester, module: str, cls: str, method: str) -> None:
    """A conftest.py that makes method ``cls.method`` of ``module`` raise when called."""
    pytester.makeconftest(
        f"""
        import importlib

        def _boom(*args, **kwargs):
            raise RuntimeError("injected gate failure")

        setattr(getattr(importlib.import_module({module!r}), {cls!r}), {method!r}, _boom)
        """
    )


def test_metric_gates_loop_error_fails_the_gates(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An error in the metric gates' loop itself (outside each gate's judging) fails each
    configured gate, named; it was an INTERNALERROR, exit 3, before."""
    pytester.makepyfile(SCORED)
    inject_method(pytester, "pytest_qbench.plugin.gates", "GateCollector", "evaluate")
    run = assert_gate_failed(
        pytester, ["--qbench-metric-min=quality=0.5"], run_qbench, "metric gate quality: "
    )
    run.result.assert_outcomes(passed=1)
    assert "INTERNALERROR" not in run.result.stdout.str()


def test_coverage_threshold_lookup_error_fails_the_gate(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An error while finding whether a coverage threshold applies fails the coverage gate; it
    was an INTERNALERROR, exit 3, before."""
    coverage_project(pytester)
    inject_method(pytester, "pytest_qbench.plugin.coverage_run", "CoverageCollector", "_gated")
    run = assert_gate_failed(
        pytester,
        ["--qbench-cov=pkg", "--qbench-cov-fail-under=0"],
        run_qbench,
        "coverage gate coverage: ",
    )
    assert "INTERNALERROR" not in run.result.stdout.str()


def test_max_errors_gate_fails_with_a_crashed_checker() -> None:
    """A crashed checker is one error diagnostic, but its own errors were never counted: the
    gate fails at any maximum (with --qbench-max-errors=5 it passed before)."""
    gate = max_errors_gate({"ruff.lint": {"error": 1}}, 5, crashed=["ruff.lint"])
    assert gate["passed"] is False
    assert "ruff.lint crashed or did not finish, so its errors are not counted" in gate["detail"]
    clean = max_errors_gate({"ruff.lint": {"error": 5}}, 5)  # exactly the maximum: passes
    assert clean["passed"] is True


def test_crashing_checker_fails_the_max_errors_gate(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real run: a checker that crashes fails --qbench-max-errors=1 (exit 0 before: its one
    crash diagnostic was within the maximum)."""
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    command = [sys.executable, "-c", "import sys; print('boom'); sys.exit(7)"]
    replace_planner(monkeypatch, "ruff", fake_plan(command))
    run = run_qbench("--qbench-check=ruff", "--qbench-max-errors=1")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED, run.result.stdout.str()
    (gate,) = run.report.gates
    assert (gate.kind, gate.passed) == ("max_errors", False)
    assert "ruff.lint crashed or did not finish" in gate.detail


@pytest.mark.parametrize(
    ("value", "shown"),
    [(99.996, "99.99%"), (0.004, "0.01%"), (79.996, "80.00%"), (100.0, "100.00%")],
)
def test_percent_text_never_rounds_past_the_edges(value: float, shown: str) -> None:
    """As coverage.py shows it: 99.996 % is not shown as 100.00 % (the gate of 100 fails it)."""
    assert percent_text(value) == shown


def test_coverage_gate_of_100_at_99_996_says_below() -> None:
    """The message never contradicts the verdict: it said "100.00% is below the required 100%"."""
    record = new(
        "CoverageReport",
        percentage=99.996,
        lines_covered=24999,
        lines_total=25000,
        threshold=100.0,
        met=False,
        measured_by="qbench",
        files=[
            new(
                "CoverageFile",
                path="a.py",
                statements=25000,
                covered=24999,
                missing=1,
                percent=99.996,
            )
        ],
    )
    gate = coverage_gate(record)
    assert gate["passed"] is False
    assert gate["detail"] == "coverage 99.99% is below the required 100%"


def test_coverage_gate_of_0_with_no_file_measured_fails(pytester: pytest.Pytester) -> None:
    """A package no test imports gives no file and 0/0 lines: --qbench-cov-fail-under=0 cannot
    be judged on nothing, so it fails (exit 0 before: "coverage 0.00% meets the required 0%")."""
    coverage_project(pytester)
    result = pytester.runpytest_subprocess(
        "-p",
        "qbench",
        "--qbench-cov=nosuchpkg",
        "--qbench-cov-fail-under=0",
        "--qbench-digest=digest.json",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["qbench: no file was measured (see the coverage warning), so the required 0% is not met"]
    )
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    assert any(step.startswith("Measure coverage") for step in digest["next_steps"]), digest


def test_mcp_coverage_threshold_of_0_is_refused_without_pytest() -> None:
    """run_test_workflow(coverage_threshold=0, test_type="vitest"): a gate no runner applies is
    refused, not ignored (0 compared equal to False, so the run went on without it)."""
    with pytest.raises(ToolFailure, match=r"^coverage_threshold: pytest only"):
        refuse_pytest_only(RunRequest(coverage_threshold=0.0), ["vitest"])
    refuse_pytest_only(RunRequest(), ["vitest"])  # nothing given: nothing refused


def test_a_threshold_keeps_its_digits(tmp_path: Path) -> None:
    """A threshold of 99.99999 is neither passed to pytest nor shown as 100 (``:g``'s 6 digits);
    80 stays 80."""
    config = ServerConfig(root=tmp_path, qbench_dir=tmp_path / ".qbench")
    args = coverage_args(config, RunRequest(coverage_threshold=99.99999))
    assert args[-1] == "--qbench-cov-fail-under=99.99999"
    assert coverage_args(config, RunRequest(coverage_threshold=80))[-1].endswith("=80")
    assert (threshold_text(99.99999), threshold_text(92.5)) == ("99.99999%", "92.5%")


@pytest.mark.parametrize("tests", [("t1", "t2"), ("t1",)])  # with a CI, and too few for one
def test_baseline_drop_over_the_allowed_is_never_shown_equal_to_it(tests: tuple[str, ...]) -> None:
    """A drop of 0.0104 over the 0.01 allowed fails, and says 0.0104: it said "a drop of 0.010
    ...: more than the 0.01 allowed"."""
    before = {t: CaseScore(Fraction(0.8), 1) for t in tests}
    after = {t: CaseScore(Fraction(0.8) - Fraction(0.0104), 1) for t in tests}
    gate = baseline_gate("quality", before, after, 0.01)
    assert gate["passed"] is False
    assert "a drop of 0.0104 " in gate["detail"], gate["detail"]


def test_merged_exit_code_keeps_a_shards_failed_gate_beside_failing_tests() -> None:
    """qbench merge: a shard's 1 from failing tests and a failed coverage gate stays 1 when a
    rerun shard passed those tests (the gate was dropped: 0)."""
    report = junit.read_junit([Path(__file__).parent / "data" / "junit" / "go-junit-report.xml"])
    gate = GateResult(kind="coverage", name="coverage", passed=False, detail="below")
    shard = report.model_copy(
        update={
            "summary": report.summary.model_copy(update={"failed": 1}),
            "run": report.run.model_copy(update={"exit_code": 1}),
            "gates": [gate],
        }
    )
    assert merged_exit_code([shard], ReportSummary(failed=0)) == 1
    passed = shard.model_copy(update={"gates": []})
    assert merged_exit_code([passed], ReportSummary(failed=0)) == 0  # rerun and passed: 0
