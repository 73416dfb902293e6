"""vitest: applies to a project listing ``vitest`` among its dependencies; runs once
(``vitest run``) with its JSON reporter into a file, beside its default console reporter (kept
in the raw log for people), and with the options the package's ``test`` script gives vitest
that decide which tests run: ``--typecheck`` (its type tests, ``*.test-d.ts``, are tests of
its ``npm test``), ``--config``, ``--root``, ``--dir``, ``--project``, ``--workspace``."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js import scripts
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.scripts import Option


NAME = "vitest"
OK_CODES = frozenset({0, 1})
"""vitest exits 0 when every test passed and 1 when one failed (or a file failed to run)."""
_TYPECHECK_FLAGS = frozenset({"enabled", "only", "ignoreSourceErrors", "allowJs"})
"""``--typecheck.<option>``s that take no value."""
OPTIONS = (
    Option(("--config", "-c")),
    Option(("--root", "-r")),
    Option(("--dir",)),
    Option(("--workspace",)),
    Option(("--project",), repeated=True),
)
"""The options of the test script that choose vitest's tests, carried into qbench's run."""


def detect(package: Package) -> bool:
    """Whether the package uses vitest."""
    return package.depends_on(NAME)


def command(
    binary: Path, output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """``vitest run`` writing its JSON report to ``output`` (on ``paths``, or all its tests),
    with the options of ``package``'s test script that choose its tests (`script_options`).

    Raises:
        Unsupported: the script gives options qbench cannot carry (`scripts.carried`).
    """
    return [
        str(binary),
        "run",
        "--reporter=default",
        "--reporter=json",
        f"--outputFile.json={output}",
        "--includeTaskLocation",
        *(script_options(package) if package is not None else []),
        *paths,
    ]


def script_options(package: Package) -> list[str]:
    """The options the package's test script gives vitest that choose its tests: its
    ``--typecheck`` ones (`typecheck_options`) and `OPTIONS`."""
    return [*typecheck_options(package), *scripts.carried(package, NAME, OPTIONS)]


def typecheck_options(package: Package) -> list[str]:
    """The ``--typecheck`` options (``--typecheck``, ``--typecheck.only``,
    ``--typecheck.tsconfig FILE``...) that the package's ``test`` script gives vitest, in any
    of its commands or the scripts it runs (``npm run test:types && vitest``). A typecheck
    enabled in the vitest configuration needs none: vitest reads it in qbench's run too."""
    found: list[str] = []
    for words in scripts.invocations(package, NAME):
        found += _typecheck_words(words)
    return list(dict.fromkeys(found))


def _typecheck_words(words: list[str]) -> list[str]:
    found: list[str] = []
    for number, word in enumerate(words):
        option = word.split("=", 1)[0]
        if option != "--typecheck" and not option.startswith("--typecheck."):
            continue
        found.append(word)
        flag = option.removeprefix("--typecheck").removeprefix(".")
        following = words[number + 1] if number + 1 < len(words) else None
        if "=" not in word and flag and flag not in _TYPECHECK_FLAGS and following is not None:
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
