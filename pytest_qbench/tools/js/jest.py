"""jest: applies to a project listing ``jest`` among its dependencies; runs with ``--json``
into a file and ``--testLocationInResults`` (each test's line), and with the options the
package's ``test`` script gives jest that decide which tests run: ``--config``, ``--rootDir``,
``--roots``, ``--projects``, ``--selectProjects``, ``--ignoreProjects``."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js import scripts
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.scripts import Option


NAME = "jest"
OK_CODES = frozenset({0, 1})
"""jest exits 0 when every test passed and 1 when one failed (or a suite failed to run)."""
OPTIONS = (
    Option(("--config", "-c")),
    Option(("--rootDir",)),
    Option(("--roots",), values=None),
    Option(("--projects",), values=None),
    Option(("--selectProjects",), values=None),
    Option(("--ignoreProjects",), values=None),
)
"""The options of the test script that choose jest's tests, carried into qbench's run (the
lists as jest reads them: every word up to the next option)."""


def detect(package: Package) -> bool:
    """Whether the package uses jest."""
    return package.depends_on(NAME)


def command(
    binary: Path, output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """jest writing its JSON report to ``output`` (on ``paths``, or all its tests), with the
    options of ``package``'s test script that choose its tests (`OPTIONS`; first, so that
    qbench's own options end their lists). No ``--ci``: jest tells CI itself (``CI`` in the
    environment), as vitest does, so a new snapshot is written outside CI and fails in it, as
    in the project's own ``jest`` run.

    Raises:
        Unsupported: the script gives options qbench cannot carry (`scripts.carried`).
    """
    return [
        str(binary),
        *(scripts.carried(package, NAME, OPTIONS) if package is not None else []),
        "--json",
        f"--outputFile={output}",
        "--testLocationInResults",
        *paths,
    ]


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    """The tests of jest's JSON report, ids relative to ``cwd`` (the plugin interface's
    parser: the caller rebases them onto the project's root)."""
    return results.parse_report(raw, cwd, NAME, cwd)
