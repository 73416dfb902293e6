"""vitest: applies to a project listing ``vitest`` among its dependencies; runs once (``vitest
run``) with its JSON reporter into a file, beside its default console reporter (kept in the raw
log for people), and with the options the package's ``test`` script gives vitest that decide
which tests run and how they end: ``--typecheck`` (its type tests, ``*.test-d.ts``, are tests
of its ``npm test``), ``--config``, ``--root``, ``--dir``, ``--project``, ``--workspace``,
``--testNamePattern``, ``--exclude``, ``--shard``, ``--passWithNoTests``, its file filters
(``vitest run src/unit``) and ``--coverage`` (with its ``--coverage.*``: thresholds not met
fail vitest's run)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js import scripts
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.scripts import Grammar
from pytest_qbench.tools.js.scripts import Option


NAME = "vitest"
OK_CODES = frozenset({0, 1})
"""vitest exits 0 when every test passed and 1 when one failed (or a file failed to run)."""
_TYPECHECK_FLAGS = frozenset({"enabled", "only", "ignoreSourceErrors", "allowJs"})
"""``--typecheck.<option>``s that take no value."""
_COVERAGE_FLAGS = frozenset(
    {
        "enabled",
        "all",
        "clean",
        "cleanOnRerun",
        "reportOnFailure",
        "allowExternal",
        "skipFull",
        "thresholds.autoUpdate",
        "thresholds.perFile",
        "thresholds.100",
    }
)
"""``--coverage.<option>``s that take no value (vitest 3.2's command line)."""
OPTIONS = (
    Option(("--config", "-c")),
    Option(("--root", "-r")),
    Option(("--dir",)),
    Option(("--workspace",)),
    Option(("--project",), repeated=True),
    Option(("--testNamePattern", "-t")),
    Option(("--exclude",)),
    Option(("--shard",)),
    Option(("--passWithNoTests",), values=0),
)
"""The options of the test script that choose vitest's tests, carried into qbench's run."""
GRAMMAR = Grammar(
    flags=scripts.long_options(
        "update watch ui open hideSkippedTests coverage isolate globals dom fileParallelism "
        "passWithNoTests logHeapUsage allowOnly dangerouslyIgnoreUnhandledErrors "
        "expandSnapshotDiff disableConsoleIntercept typecheck cache printConsoleTrace "
        "includeTaskLocation run color clearScreen standalone browser.enabled "
        "browser.headless browser.isolate browser.ui browser.fileParallelism"
    )
    | {f"--coverage.{flag}" for flag in _COVERAGE_FLAGS}
    | {f"--typecheck.{flag}" for flag in _TYPECHECK_FLAGS}
    | {"-u", "-w"},
    modes=frozenset({"run", "watch", "dev"}),
    refused=(
        ("related", "the tests of the files it names, found through their imports"),
        ("--changed", "the tests of the files git sees changed"),
        ("bench", "benchmarks, not tests"),
        ("list", "a listing of the tests, not a run"),
        ("init", "a project set-up, not a run"),
    ),
)
"""vitest's command line as its parser (cac) reads it (3.2's options that take no value)."""


def detect(package: Package) -> bool:
    """Whether the package uses vitest."""
    return package.depends_on(NAME)


def command(
    start: list[str], output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """``vitest run`` (``start``: its binary, or the Node command the test script runs its
    script with) writing its JSON report to ``output``, with the options of ``package``'s test
    script that choose its tests (`script_options`), on ``paths`` or else on the script's file
    filters.

    Raises:
        Unsupported: the script gives options qbench cannot carry (`scripts.carried`,
            `scripts.filters`).
    """
    chosen = script_options(package) if package is not None else []
    if not paths and package is not None:
        paths = scripts.filters(package, NAME, GRAMMAR)
    return [
        *start,
        "run",
        "--reporter=default",
        "--reporter=json",
        f"--outputFile.json={output}",
        "--includeTaskLocation",
        *chosen,
        *paths,
    ]


def script_options(package: Package) -> list[str]:
    """The options the package's test script gives vitest that choose its tests and how they
    end: its ``--typecheck`` and ``--coverage`` ones (`dotted_options`) and `OPTIONS`."""
    return [
        *typecheck_options(package),
        *dotted_options(package, "--coverage", _COVERAGE_FLAGS),
        *scripts.carried(package, NAME, OPTIONS),
    ]


def typecheck_options(package: Package) -> list[str]:
    """The ``--typecheck`` options (``--typecheck``, ``--typecheck.only``,
    ``--typecheck.tsconfig FILE``...) that the package's ``test`` script gives vitest, in any
    of its commands or the scripts it runs (``npm run test:types && vitest``). A typecheck
    enabled in the vitest configuration needs none: vitest reads it in qbench's run too."""
    return dotted_options(package, "--typecheck", _TYPECHECK_FLAGS)


def dotted_options(package: Package, name: str, flags: frozenset[str]) -> list[str]:
    """The words of option ``name`` (``--coverage``) and its ``name.<option>``s
    (``--coverage.include src``) that the package's ``test`` script gives vitest, in any of its
    commands or the scripts it runs, each once; ``flags``: its options that take no value."""
    found: list[str] = []
    for words in scripts.invocations(package, NAME):
        found += _dotted_words(words, name, flags)
    return list(dict.fromkeys(found))


def _dotted_words(words: list[str], name: str, flags: frozenset[str]) -> list[str]:
    found: list[str] = []
    for number, word in enumerate(words):
        option = word.split("=", 1)[0]
        if option != name and not option.startswith(f"{name}."):
            continue
        found.append(word)
        flag = option.removeprefix(name).removeprefix(".")
        following = words[number + 1] if number + 1 < len(words) else None
        if "=" not in word and flag and flag not in flags and following is not None:
            found.append(following)
    return found


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    """The tests of vitest's JSON report, ids relative to ``cwd`` (the plugin interface's
    parser: the caller rebases them onto the project's root)."""
    return results.parse_report(raw, cwd, NAME, cwd)


def passed_without_tests(raw: bytes, cwd: Path) -> list[str]:
    """The files of vitest's JSON report that passed holding no test (type-test files whose
    ``expectTypeOf`` stand outside any ``test()``), relative to ``cwd``."""
    return results.passed_without_tests(raw, cwd, cwd)
