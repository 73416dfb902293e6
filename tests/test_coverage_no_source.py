"""Coverage that names no source (``--qbench-cov`` alone, pytest-cov's bare ``--cov``):
coverage.py measures whatever runs outside the standard library and site-packages, which
included qbench's own package when qbench was installed from a checkout (editable), as in this
project's development environment. qbench leaves out its own files, pytest's and the virtual
environment's, so its figure is the project's: pytest-cov's alone, on the same tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pytest_qbench

from conftest import RunQBench


MODULE = """
def used(x):
    return x + 1


def unused(x):
    y = x * 2
    return y
"""
TESTS = """
from mod import used


def test_used():
    assert used(1) == 2
"""
EDITABLE = "site-packages" not in Path(pytest_qbench.__file__).parts
"""qbench runs from a checkout (its files outside site-packages): coverage.py measured them."""


def pytest_cov_alone(pytester: pytest.Pytester) -> float:
    """pytest-cov's total on the project, qbench not loaded."""
    result = pytester.runpytest_subprocess(
        "-p", "pytest_cov.plugin", "--cov", "--cov-report=json:alone.json"
    )
    result.assert_outcomes(passed=1)
    total = json.loads((pytester.path / "alone.json").read_text())["totals"]["percent_covered"]
    return float(total)


def test_no_source_counts_the_project_not_qbench(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``--qbench-cov`` alone: the total is pytest-cov's on the same tests, every file the
    project's. Before, qbench's own files (run by every test, outside site-packages when
    installed editable) were measured: 38 % on idna where pytest-cov said 88 %."""
    pytester.makepyfile(mod=MODULE, test_mod=TESTS)
    alone = pytest_cov_alone(pytester)
    run = run_qbench("--qbench-cov", subprocess=True)
    cov = run.report.coverage
    assert cov is not None and cov.measured_by == "qbench"
    assert sorted(f.path for f in cov.files) == ["mod.py", "test_mod.py"]
    assert cov.percentage == alone


def test_pytest_cov_without_a_source_is_read_without_qbench(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """pytest-cov's bare ``--cov`` beside qbench: pytest-cov measures qbench's files too (its
    total counts them); qbench's record and its contexts file leave them out, the total equals
    pytest-cov's without qbench, and a warning says why the two differ."""
    pytester.makepyfile(mod=MODULE, test_mod=TESTS)
    alone = pytest_cov_alone(pytester)
    contexts_of_tests = ("--cov-context=test", "--qbench-cov-contexts")
    run = run_qbench("-p", "pytest_cov.plugin", "--cov", *contexts_of_tests, subprocess=True)
    cov = run.report.coverage
    assert cov is not None and cov.measured_by == "pytest-cov"
    assert sorted(f.path for f in cov.files) == ["mod.py", "test_mod.py"]
    assert cov.percentage == alone
    assert cov.contexts_file is not None
    contexts = json.loads((pytester.path / cov.contexts_file).read_text())["files"]
    assert sorted(contexts) == ["mod.py", "test_mod.py"]
    if EDITABLE:
        run.result.stdout.fnmatch_lines(
            ["qbench: coverage: pytest-cov measured * files of qbench's own, pytest's or *"]
        )
