"""vitest: applies to a project listing ``vitest`` among its dependencies; runs once
(``vitest run``) with its JSON reporter into a file, beside its default console reporter (kept
in the raw log for people), and with the ``--typecheck`` options the package's ``test`` script
gives vitest (its type tests, ``*.test-d.ts``, are tests of its ``npm test``)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.js import results
from pytest_qbench.tools.js.project import Package


NAME = "vitest"
OK_CODES = frozenset({0, 1})
"""vitest exits 0 when every test passed and 1 when one failed (or a file failed to run)."""
SCRIPT = "test"
"""The script whose vitest options qbench's run takes: the one ``npm test`` runs."""
_COMMANDS = re.compile(r"&&|\|\||[;|&\n]")
"""What separates the commands of a script."""
_RUNS_SCRIPT = re.compile(r"^(?:npm|pnpm|yarn|bun)$")
_TYPECHECK_FLAGS = frozenset({"enabled", "only", "ignoreSourceErrors", "allowJs"})
"""``--typecheck.<option>``s that take no value."""
_DEPTH = 5
"""How many scripts deep ``npm run other`` is followed."""


def detect(package: Package) -> bool:
    """Whether the package uses vitest."""
    return package.depends_on(NAME)


def command(
    binary: Path, output: Path, paths: list[str], package: Package | None = None
) -> list[str]:
    """``vitest run`` writing its JSON report to ``output`` (on ``paths``, or all its tests),
    with the ``--typecheck`` options of ``package``'s test script (`typecheck_options`)."""
    return [
        str(binary),
        "run",
        "--reporter=default",
        "--reporter=json",
        f"--outputFile.json={output}",
        "--includeTaskLocation",
        *(typecheck_options(package) if package is not None else []),
        *paths,
    ]


def typecheck_options(package: Package) -> list[str]:
    """The ``--typecheck`` options (``--typecheck``, ``--typecheck.only``,
    ``--typecheck.tsconfig FILE``...) that the package's ``test`` script gives vitest, in any
    of its commands or the scripts it runs (``npm run test:types && vitest``). A typecheck
    enabled in the vitest configuration needs none: vitest reads it in qbench's run too."""
    found: list[str] = []
    _script_options(package, SCRIPT, found, _DEPTH)
    return list(dict.fromkeys(found))


def _script_options(package: Package, name: str, found: list[str], depth: int) -> None:
    script = package.scripts.get(name)
    if not isinstance(script, str) or depth == 0:
        return
    for part in _COMMANDS.split(script):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and "=" in words[0] and not words[0].startswith("-"):
            words.pop(0)  # NODE_ENV=test vitest
        vitest = [n for n, w in enumerate(words) if w == NAME or w.endswith(f"/{NAME}")]
        if vitest:
            found += _typecheck_words(words[vitest[0] + 1 :])
        elif len(words) >= 2 and _RUNS_SCRIPT.match(words[0]):
            other = words[2] if words[1] in ("run", "run-script") and len(words) > 2 else words[1]
            _script_options(package, other, found, depth - 1)


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
