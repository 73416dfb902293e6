"""jest: applies to a project listing ``jest`` among its dependencies; runs with ``--json``
into a file and ``--testLocationInResults`` (each test's line)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js.project import Package


NAME = "jest"
OK_CODES = frozenset({0, 1})
"""jest exits 0 when every test passed and 1 when one failed (or a suite failed to run)."""


def detect(package: Package) -> bool:
    """Whether the package uses jest."""
    return package.depends_on(NAME)


def command(
    binary: Path, output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """jest writing its JSON report to ``output`` (on ``paths``, or all its tests). No
    ``--ci``: jest tells CI itself (``CI`` in the environment), as vitest does, so a new
    snapshot is written outside CI and fails in it, as in the project's own ``jest`` run.
    ``package`` (its scripts) adds nothing: its configuration file is jest's own."""
    del package
    return [
        str(binary),
        "--json",
        f"--outputFile={output}",
        "--testLocationInResults",
        *paths,
    ]


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    """The tests of jest's JSON report, ids relative to ``cwd`` (the plugin interface's
    parser: the caller rebases them onto the project's root)."""
    return results.parse_report(raw, cwd, NAME, cwd)
