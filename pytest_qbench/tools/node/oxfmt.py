"""oxfmt's check (the Oxc formatter's ``oxfmt --check``) read from ``oxfmt --list-different``:
each file it would format otherwise than it is written, one path a line, as an error (``npm
test`` fails on it as ``oxfmt --check`` exits 1). Its own notes share the log (``No config
found, using defaults...``): a line naming no file of the project is not read, and the exit
status, checked against the files read, catches a file missed (exit 1 with none: a crash)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.node.bins import project_bin
from pytest_qbench.tools.node.prettier import CODE
from pytest_qbench.tools.node.words import Grammar
from pytest_qbench.tools.node.words import sort_words
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported


TOOL = "oxfmt.format"
OK_CODES = frozenset({0, 1})
"""oxfmt's exit statuses: 0 every file formatted, 1 some file not (2: no file matched, or
another error)."""
_GRAMMAR = Grammar(
    values=frozenset({"-c", "--config", "--ignore-path"}),
    flags=frozenset(
        {"--disable-nested-config", "--with-node-modules", "--no-error-on-unmatched-pattern"}
    ),
    dropped_values=frozenset({"--threads"}),
    marks=frozenset({"--check", "--list-different"}),
)
"""How qbench reads oxfmt's words (``--write``, the default, is refused)."""


def plan_check(words: list[str], cwd: Path) -> Plan[Diagnostic]:
    """``oxfmt --check [paths] [options]`` as ``oxfmt --list-different`` with its carried
    options (`parse_list`). One without ``--check`` writes the files, and is refused, as is
    an option not carried."""
    found = sort_words(words, _GRAMMAR)
    if found.refused:
        raise Unsupported(f"oxfmt options qbench cannot carry: {' '.join(found.refused)}")
    if not found.marks:
        raise Unsupported("oxfmt without --check writes the files; qbench runs only oxfmt --check")
    executable = project_bin(cwd, "oxfmt", "oxfmt")
    command = [executable, "--list-different", *found.carried, *found.paths]
    return Plan(TOOL, command, OK_CODES, parse_list)


def parse_list(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Each file of the project ``oxfmt --list-different`` printed, as an error; its other
    lines (its notes) not."""
    found: list[Diagnostic] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        name = line.strip()
        if not name or not (cwd / name).is_file():
            continue
        message = "not formatted as oxfmt formats it (oxfmt --check fails on it)"
        file = relative_file(name, cwd)
        found.append(Diagnostic(tool=TOOL, severity="error", message=message, code=CODE, file=file))
    return found
