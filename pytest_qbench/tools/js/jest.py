"""jest: applies to a project listing ``jest`` among its dependencies; runs with ``--json`` into a
file and ``--testLocationInResults`` (each test's line), and with the options the package's
``test`` script gives jest that decide which tests run and how they end: ``--config``,
``--rootDir``, ``--roots``, ``--projects``, ``--selectProjects``, ``--ignoreProjects``, the
test-path and test-name patterns, ``--shard``, ``--passWithNoTests``, its file filters (``jest
tests/api``) and ``--coverage`` with its options (thresholds not met fail jest's run)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js import scripts
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.scripts import Grammar
from pytest_qbench.tools.js.scripts import Option


NAME = "jest"
OK_CODES = frozenset({0, 1})
"""jest exits 0 when every test passed and 1 when one failed (or a suite failed to run)."""
OPTIONS = (
    Option(("--config", "-c")),
    Option(("--rootDir",)),
    Option(("--roots",), values=None),
    Option(("--projects",), values=None),
    Option(("--selectProjects",), values=None, repeated=True),
    Option(("--ignoreProjects",), values=None),
    Option(("--testPathPattern",), values=None, filters=True),
    Option(("--testPathPatterns",), values=None, filters=True),
    Option(("--testPathIgnorePatterns",), values=None),
    Option(("--testMatch",), values=None),
    Option(("--testRegex",), values=None),
    Option(("--testNamePattern", "-t")),
    Option(("--shard",)),
    Option(("--runTestsByPath",), values=0),
    Option(("--passWithNoTests",), values=0),
    Option(("--coverage",), values=0),
    Option(("--collectCoverage",), values=0),
    Option(("--collectCoverageFrom",)),
    Option(("--coverageProvider",)),
    Option(("--coverageReporters",), values=None),
    Option(("--coverageThreshold",)),
    Option(("--coverageDirectory",)),
    Option(("--coveragePathIgnorePatterns",), values=None),
)
"""The options of the test script that choose jest's tests and how they end, carried into
qbench's run (the lists as jest reads them: every word up to the next option)."""
GRAMMAR = Grammar(
    flags=scripts.long_options(
        "all automock bail cache changedFilesWithAncestor ci clearCache clearMocks "
        "collectCoverage color colors coverage debug detectLeaks detectOpenHandles "
        "errorOnDeprecated expand findRelatedTests forceExit init injectGlobals json "
        "lastCommit listTests logHeapUsage noStackTrace notify onlyChanged onlyFailures "
        "passWithNoTests randomize resetMocks resetModules restoreMocks runInBand "
        "runTestsByPath showConfig showSeed silent skipFilter testLocationInResults "
        "updateSnapshot useStderr verbose watch watchAll watchman workerThreads"
    )
    | {"-b", "-e", "-o", "-f", "-i", "-u"},
    lists=scripts.long_options(
        "coveragePathIgnorePatterns coverageReporters ignoreProjects moduleDirectories "
        "moduleFileExtensions modulePathIgnorePatterns modulePaths projects reporters roots "
        "selectProjects setupFiles setupFilesAfterEnv snapshotSerializers testMatch "
        "testPathIgnorePatterns testPathPattern testPathPatterns testRegex "
        "transformIgnorePatterns unmockedModulePathPatterns watchPathIgnorePatterns"
    ),
    refused=(
        ("--onlyChanged", "the tests of the files git sees changed"),
        ("-o", "the tests of the files git sees changed"),
        ("--changedSince", "the tests of the files changed since a commit"),
        ("--lastCommit", "the tests of the files the last commit changed"),
        ("--findRelatedTests", "the tests of the files it names, found through their imports"),
        ("--onlyFailures", "the tests that failed in jest's last run, kept in its cache"),
        ("-f", "the tests that failed in jest's last run, kept in its cache"),
        ("--listTests", "a listing of the tests, not a run"),
    ),
)
"""jest's command line as its parser (yargs) reads it (29's options that take no value, and
its lists)."""


def detect(package: Package) -> bool:
    """Whether the package uses jest."""
    return package.depends_on(NAME)


def command(
    start: list[str], output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """jest (``start``: its binary, or the Node command the test script runs its script with)
    writing its JSON report to ``output``, with the options of ``package``'s test script that
    choose its tests (`OPTIONS`; first, so that qbench's own options end their lists), on
    ``paths`` or else on the script's file filters and test-path patterns. No ``--ci``: jest
    tells CI itself (``CI`` in the environment), as vitest does, so a new snapshot is written
    outside CI and fails in it, as in the project's own ``jest`` run.

    Raises:
        Unsupported: the script gives options qbench cannot carry (`scripts.carried`,
            `scripts.filters`).
    """
    chosen: list[str] = []
    if package is not None:
        chosen = scripts.carried(package, NAME, OPTIONS, filters=not paths)
        if not paths:
            paths = scripts.filters(package, NAME, GRAMMAR)
    return [
        *start,
        *chosen,
        "--json",
        f"--outputFile={output}",
        "--testLocationInResults",
        *paths,
    ]


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    """The tests of jest's JSON report, ids relative to ``cwd`` (the plugin interface's
    parser: the caller rebases them onto the project's root)."""
    return results.parse_report(raw, cwd, NAME, cwd)
