"""Prettier's check (``prettier --check``) read from ``prettier --list-different``: each file
Prettier would format otherwise than it is written, one path a line, as an error (``npm test``
fails on it as ``prettier --check`` exits 1)."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.node.bins import project_bin
from pytest_qbench.tools.node.words import Grammar
from pytest_qbench.tools.node.words import sort_words
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported


TOOL = "prettier.format"
OK_CODES = frozenset({0, 1})
"""Prettier's exit statuses: 0 every file formatted, 1 some file not (2: something went
wrong, such as a pattern matching no file or a file it cannot parse)."""
_MESSAGES = ("[warn] ", "[info] ", "[debug] ", "[log] ")
"""How Prettier's own messages begin (its log level's word)."""
CODE = "not-formatted"
"""The code of a file Prettier would format otherwise."""


def parse_list(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Each path ``prettier --list-different`` printed (relative to ``cwd``), as an error.

    Its own messages, which share the log (``[warn] ...``), are not files; an ``[error]``
    line (Prettier then exits 2) is no output to read.

    Raises:
        CheckOutputError: an ``[error]`` line.
    """
    found: list[Diagnostic] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        name = line.strip()
        if not name or name.startswith(_MESSAGES):
            continue
        if name.startswith("[error]"):
            raise CheckOutputError(f"prettier printed an error: {name[:200]!r}")
        message = "not formatted as Prettier formats it (prettier --check fails on it)"
        found.append(
            Diagnostic(
                tool=TOOL,
                severity="error",
                message=message,
                code=CODE,
                file=relative_file(name, cwd),
            )
        )
    return found


_CHECKS = frozenset({"--check", "-c", "--list-different", "-l"})
"""Prettier's options that check the files (qbench's run lists them: ``--list-different``)."""
_VALUES = frozenset(
    {
        "--config",
        "--ignore-path",
        "--plugin",
        "--parser",
        "--config-precedence",
        "--end-of-line",
        "--print-width",
        "--tab-width",
        "--trailing-comma",
        "--prose-wrap",
        "--quote-props",
        "--arrow-parens",
        "--html-whitespace-sensitivity",
        "--embedded-language-formatting",
        "--object-wrap",
        "--experimental-operator-position",
    }
)
"""Prettier's options taking a value, carried as written."""
_FLAGS = frozenset(
    {
        "--no-config",
        "--no-editorconfig",
        "--ignore-unknown",
        "-u",
        "--no-error-on-unmatched-pattern",
        "--with-node-modules",
        "--single-quote",
        "--jsx-single-quote",
        "--no-semi",
        "--use-tabs",
        "--no-bracket-spacing",
        "--bracket-same-line",
        "--single-attribute-per-line",
        "--vue-indent-script-and-style",
        "--experimental-ternaries",
    }
)
"""Prettier's options taking no value, carried as written."""
_DROPPED = frozenset({"--cache", "--color", "--no-color"})
_DROPPED_VALUES = frozenset({"--log-level", "--loglevel", "--cache-location", "--cache-strategy"})
"""Prettier's options changing how it prints or caches, not what it finds."""
_GRAMMAR = Grammar(_VALUES, _FLAGS, _DROPPED, _DROPPED_VALUES, marks=_CHECKS)


def checks(words: list[str]) -> bool:
    """Whether a prettier command's words check the files (``--check``, ``-c``,
    ``--list-different``, ``-l``), where ``--write`` writes them and fails on none."""
    return any(word.partition("=")[0] in _CHECKS for word in words)


def plan_check(words: list[str], cwd: Path, given: list[str] | None = None) -> Plan[Diagnostic]:
    """``prettier --check [paths] [options]`` (or ``-c``, ``--list-different``) as ``prettier
    --list-different`` with its carried options: each file it would format otherwise an error
    (`parse_list`); ``given``: paths replacing the command's own. One without ``--check``
    (``--write`` writes, a plain ``prettier`` prints the files formatted) is refused, and so
    is an option not carried."""
    found = sort_words(words, _GRAMMAR)
    if found.refused:
        raise Unsupported(f"prettier options qbench cannot carry: {' '.join(found.refused)}")
    if not found.marks:
        raise Unsupported(
            "prettier without --check writes the files (--write) or prints them formatted; "
            "qbench runs only prettier --check"
        )
    executable = project_bin(cwd, "prettier", "prettier")
    command = [executable, "--list-different", *found.carried, *(given or found.paths)]
    return Plan(TOOL, command, OK_CODES, parse_list)
