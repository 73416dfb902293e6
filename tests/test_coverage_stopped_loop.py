"""Coverage when pytest's test loop stops early: ``-x``, ``--maxfail``, ``pytest.exit``. The
gate is judged all the same (a test's ``pytest.exit(returncode=0)`` left exit status 0 under
a gate the terminal and report.md called failed), and pytest-cov's data, which pytest-cov
neither finishes nor reports then, is not read as a measured 0.00% of 0 lines (trial11:
parse's ``addopts = --cov=parse`` with ``-x``). Runs are subprocesses: coverage.py traces a
whole process."""

from __future__ import annotations

import pytest

from conftest import RunQBench


MOD = """
def half(x):
    return None if x % 2 else x // 2


def twice(x):
    return 2 * x
"""
STOPS_WITH_0 = """
import pytest
import mod


def test_half():
    assert mod.half(4) == 2


def test_enough():
    pytest.exit("enough", returncode=0)


def test_never_run():
    assert mod.twice(1) == 2
"""


def make_project(pytester: pytest.Pytester, tests: str) -> None:
    pytester.makepyfile(mod=MOD, test_mod=tests)
    pytester.makeini("[pytest]\npythonpath = .\n")


@pytest.mark.parametrize(
    "measure",
    [["--qbench-cov=mod"], ["-p", "pytest_cov.plugin", "--cov=mod"]],
    ids=["qbench", "pytest-cov"],
)
def test_a_coverage_gate_fails_a_run_a_test_ended_with_exit_status_0(
    pytester: pytest.Pytester, run_qbench: RunQBench, measure: list[str]
) -> None:
    make_project(pytester, STOPS_WITH_0)
    run = run_qbench(*measure, "--qbench-cov-fail-under=99", subprocess=True)
    assert run.result.ret == 1
    assert run.report.run.exit_code == 1
    [gate] = run.report.gates
    assert (gate.kind, gate.passed) == ("coverage", False)


def test_pytest_cov_stopped_by_x_is_not_read_as_zero_percent(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    make_project(
        pytester,
        """
        import mod

        def test_half():
            assert mod.half(4) == 3

        def test_never_run():
            assert mod.twice(1) == 2
        """,
    )
    run = run_qbench("-p", "pytest_cov.plugin", "--cov=mod", "-x", subprocess=True)
    run.result.assert_outcomes(failed=1)
    assert run.report.coverage is None
    out = run.result.stdout.str()
    assert "0.00%" not in out
    run.result.stdout.fnmatch_lines(["*coverage: pytest-cov did not finish measuring*"])
    assert any("pytest-cov did not finish" in w.message for w in run.report.warnings)
