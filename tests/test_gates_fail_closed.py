"""Gates fail closed: when qbench itself raises while judging a gate (metric minimum, baseline,
coverage threshold, --qbench-max-errors), or while setting one up, the run fails with exit 1 and
the terminal and the report name the gate and the internal error (issue 19.1).

Each test injects the error with a conftest.py that patches qbench's deciding code, in a real
pytest subprocess (so the patch never leaks into this process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import QBenchRun
from conftest import RunQBench


INJECTED = "RuntimeError: injected gate failure"
SCORED = """
    def test_agent(qbench):
        qbench.record("answer")
        qbench.add("quality", 0.9)
"""


def inject(pytester: pytest.Pytester, module: str, attribute: str) -> None:
    """A conftest.py that makes ``module.attribute`` raise when called."""
    pytester.makeconftest(
        f"""
        import importlib

        def _boom(*args, **kwargs):
            raise RuntimeError("injected gate failure")

        setattr(importlib.import_module({module!r}), {attribute!r}, _boom)
        """
    )


def assert_gate_failed(
    pytester: pytest.Pytester, run_args: list[str], run: RunQBench, line: str
) -> QBenchRun:
    """Exit 1, the terminal names the gate and the error, the report's gate failed with it."""
    result = run(
        *run_args,
        "--qbench-digest=digest.json",
        "--qbench-run-id=gated",
        subprocess=True,
        run_dir="gated",
    )
    assert result.result.ret == pytest.ExitCode.TESTS_FAILED, result.result.stdout.str()
    result.result.stdout.fnmatch_lines([f"qbench: {line}*{INJECTED}*"])
    failed = [g for g in result.report.gates if g.passed is False]
    assert failed and all(INJECTED in g.detail for g in failed), result.report.gates
    assert result.report.run.exit_code == 1
    assert INJECTED in result.markdown
    assert "❌" in result.markdown.splitlines()[0]
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    assert any(INJECTED in step for step in digest["next_steps"]), digest["next_steps"]
    return result


def test_metric_gate_error_fails_the_run(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """An error while judging --qbench-metric-min fails the run (it passed before: exit 0)."""
    pytester.makepyfile(SCORED)
    inject(pytester, "pytest_qbench.plugin.gates", "metric_min_gate")
    run = assert_gate_failed(
        pytester, ["--qbench-metric-min=quality=0.5"], run_qbench, "metric gate quality: "
    )
    run.result.assert_outcomes(passed=1)  # every test passed: the gate alone failed the run


def test_baseline_gate_error_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An error while judging --qbench-baseline fails the run."""
    pytester.makepyfile(SCORED)
    first = run_qbench("--qbench-run-id=base", run_dir="base")
    assert first.result.ret == 0
    baseline = Path(first.run_dir, "report.json")
    inject(pytester, "pytest_qbench.plugin.gates", "baseline_gate")
    assert_gate_failed(pytester, [f"--qbench-baseline={baseline}"], run_qbench, "baseline gate ")


COVERED = """
def add(a, b):
    return a + b
"""


def coverage_project(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("pkg").joinpath("calc.py").write_text(COVERED, encoding="utf-8")
    pytester.makepyfile(
        test_calc="from pkg.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )


@pytest.mark.parametrize(
    ("module", "attribute"),
    [
        ("pytest_qbench.plugin.coverage_run", "coverage_gate"),  # the verdict itself
        ("pytest_qbench.report.coverage.data", "coverage_record"),  # the total it rests on
    ],
)
def test_coverage_gate_error_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, module: str, attribute: str
) -> None:
    """An error while measuring or judging --qbench-cov-fail-under fails the run (as pytest-cov
    does: a failed measurement is no pass)."""
    coverage_project(pytester)
    inject(pytester, module, attribute)
    assert_gate_failed(
        pytester,
        ["--qbench-cov=pkg", "--qbench-cov-fail-under=10"],
        run_qbench,
        "coverage gate coverage: ",
    )


@pytest.mark.parametrize(
    ("module", "attribute"),
    [
        ("pytest_qbench.report.checks.intest", "max_errors_gate"),  # the verdict
        ("pytest_qbench.tools.runner", "start_checks"),  # the checkers' start
    ],
)
def test_max_errors_gate_error_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, module: str, attribute: str
) -> None:
    """An error while starting the checkers or judging --qbench-max-errors fails the run."""
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    inject(pytester, module, attribute)
    assert_gate_failed(
        pytester, ["--qbench-check=ruff", "--qbench-max-errors=5"], run_qbench, "error gate ruff: "
    )


def test_error_at_start_fails_every_configured_gate(pytester: pytest.Pytester) -> None:
    """qbench failing to start cannot drop the gates the user configured: each one fails, named
    on the terminal with the error; the tests still run."""
    pytester.makepyfile(SCORED)
    inject(pytester, "pytest_qbench.plugin.session", "QBenchSession")
    result = pytester.runpytest_subprocess(
        "-p",
        "qbench",
        "--qbench-metric-min=quality=0.5",
        "--qbench-cov-fail-under=10",
        "--qbench-cov=.",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines_random(
        [
            f"qbench: metric gate quality: *{INJECTED}*",
            f"qbench: coverage gate coverage: *{INJECTED}*",
        ]
    )


def test_error_at_start_without_gates_keeps_the_exit_status(pytester: pytest.Pytester) -> None:
    """Without a gate, qbench's own error never changes pytest's exit status."""
    pytester.makepyfile(SCORED)
    inject(pytester, "pytest_qbench.plugin.session", "QBenchSession")
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-json=report.json")
    assert result.ret == pytest.ExitCode.OK
    result.stderr.fnmatch_lines([f"qbench: internal error at start*{INJECTED[:12]}*"])


def test_coverage_gate_without_a_measurement_fails(pytester: pytest.Pytester) -> None:
    """Under ``coverage run`` qbench does not measure, so --qbench-cov-fail-under has no total:
    the gate fails (it passed silently before) and says why."""
    coverage_project(pytester)
    result = pytester.run(
        sys.executable, "-m", "coverage", "run", "--source=pkg", "-m", "pytest",
        "-p", "qbench", "--qbench-cov=pkg", "--qbench-cov-fail-under=10",
        "--qbench-digest=digest.json",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "qbench: coverage: coverage.py already measures this process*",
            "qbench: no coverage was measured (see the coverage warning), so the required 10% "
            "is not met",
        ]
    )
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    assert any("--qbench-cov-fail-under" in step for step in digest["next_steps"])
