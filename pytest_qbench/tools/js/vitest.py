"""vitest: applies to a project listing ``vitest`` among its dependencies; runs once
(``vitest run``) with its JSON reporter into a file, beside its default console reporter (kept
in the raw log for people)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js.project import Package


NAME = "vitest"
OK_CODES = frozenset({0, 1})
"""vitest exits 0 when every test passed and 1 when one failed (or a file failed to run)."""


def detect(package: Package) -> bool:
    """Whether the package uses vitest."""
    return package.depends_on(NAME)


def command(binary: Path, output: Path, paths: list[str]) -> list[str]:
    """``vitest run`` writing its JSON report to ``output`` (on ``paths``, or all its tests)."""
    return [
        str(binary),
        "run",
        "--reporter=default",
        "--reporter=json",
        f"--outputFile.json={output}",
        "--includeTaskLocation",
        *paths,
    ]


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    """The tests of vitest's JSON report, ids relative to ``cwd`` (the plugin interface's
    parser: the caller rebases them onto the project's root)."""
    return results.parse_report(raw, cwd, NAME, cwd)
