"""Biome's checks (``biome lint``, ``biome check``, ``biome format``, ``biome ci``, none of them
writing) run as a script gives them, read from its JSON reporter (``--reporter=json``, every
diagnostic: ``--max-diagnostics=none``): each diagnostic its severity, its category as the
code (``lint/suspicious/noDebugger``, ``format``: a file Biome would format otherwise), its
place; ``--error-on-warnings`` read as a ``--max-warnings 0``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.node.bins import project_bin
from pytest_qbench.tools.node.eslint import parse_limited
from pytest_qbench.tools.node.words import Grammar
from pytest_qbench.tools.node.words import sort_words
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported


TOOL = "biome.lint"
OK_CODES = frozenset({0, 1})
"""Biome's exit statuses: 0 no error, 1 errors found (or warnings, with
``--error-on-warnings``)."""
CONFIG_FILES = ("biome.json", "biome.jsonc")
"""The files a Biome configuration lives in."""
COMMANDS = frozenset({"lint", "check", "format", "ci"})
"""Biome's commands that check the files; without ``--write`` none writes."""
_REPORT = re.compile(r'\{\s*"summary"\s*:')
"""Where Biome's JSON begins in its output (its note on the reporter comes before it)."""
_GRAMMAR = Grammar(
    values=frozenset(
        {
            "--config-path",
            "--diagnostic-level",
            "--skip",
            "--only",
            "--vcs-enabled",
            "--vcs-client-kind",
            "--vcs-use-ignore-file",
            "--vcs-root",
            "--files-ignore-unknown",
            "--formatter-enabled",
            "--linter-enabled",
            "--assist-enabled",
            "--enforce-assist",
            "--indent-style",
            "--indent-width",
            "--line-width",
            "--line-ending",
        }
    ),
    flags=frozenset({"--no-errors-on-unmatched", "--error-on-warnings"}),
    dropped=frozenset({"--verbose", "--use-server", "--skip-parse-errors"}),
    dropped_values=frozenset(
        {"--reporter", "--colors", "--max-diagnostics", "--log-level", "--log-kind"}
    ),
)
"""How qbench reads Biome's words (an option not known is refused: ``--changed``,
``--staged``, ``--since`` choose files by git)."""
_FIXES = frozenset({"--write", "--fix", "--unsafe", "--apply", "--apply-unsafe"})
"""Biome's writing options, left out of a ``lint`` script's run (qbench fixes nothing)."""


def plan_biome(
    words: list[str], cwd: Path, given: list[str] | None = None, fixes: bool = False
) -> Plan[Diagnostic]:
    """``biome COMMAND [paths] [options]`` (`COMMANDS`) with its carried options and its JSON
    reporter (``given``: paths replacing the command's own; ``fixes``: ``--write``... left
    out, else refused).

    Raises:
        NotInstalled: no biome in the project.
        Unsupported: another command, or an option qbench cannot carry; the message names it.
    """
    if not words or words[0] not in COMMANDS:
        named = words[0] if words else "(none)"
        raise Unsupported(f"biome {named}: qbench runs biome {', '.join(sorted(COMMANDS))} only")
    kept = [w for w in words[1:] if not (fixes and w in _FIXES)]
    found = sort_words(kept, _GRAMMAR)
    if found.refused:
        raise Unsupported(f"biome options qbench cannot carry: {' '.join(found.refused)}")
    executable = project_bin(cwd, "biome", "@biomejs/biome")
    options = ["--reporter=json", "--max-diagnostics=none", "--colors=off"]
    command = [executable, words[0], *options, *found.carried, *(given or found.paths)]
    limit = 0 if "--error-on-warnings" in found.carried else None
    return Plan(
        TOOL,
        command,
        OK_CODES,
        parse_limited(limit, parse_biome, TOOL, "--error-on-warnings allows (0)"),
    )


def parse_biome(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every diagnostic of Biome's JSON, in its order; as many as its summary counts.

    Raises:
        CheckOutputError: no JSON report, one not as Biome writes it, or fewer diagnostics
            than its summary counts.
    """
    text = decode(raw)
    start = _REPORT.search(text)
    if start is None:
        raise CheckOutputError(f"biome printed no JSON report: {text[:200]!r}")
    snippets = Snippets(cwd)
    try:
        report, _ = json.JSONDecoder().raw_decode(text, start.start())
        found = [_diagnostic(item, cwd, snippets) for item in report["diagnostics"]]
        summary = report["summary"]
        counted = int(summary["errors"]) + int(summary["warnings"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckOutputError(f"biome printed a report qbench cannot read: {exc}") from None
    listed = sum(1 for item in found if item.severity in ("error", "warning"))
    if listed < counted:
        raise CheckOutputError(f"biome counted {counted} errors and warnings but listed {listed}")
    return found


def _diagnostic(item: Any, cwd: Path, snippets: Snippets) -> Diagnostic:
    location = item.get("location") or {}
    start = location.get("start") or {}
    path = location.get("path")
    file = relative_file(str(path), cwd) if path else None
    line = start.get("line") or None  # 0: the whole file (a format diagnostic)
    category = item.get("category")
    message = str(item["message"])
    if category == "format":
        message = "not formatted as Biome formats it (biome fails on it)"
    severity = item["severity"]
    return Diagnostic(
        tool=TOOL,
        severity=severity if severity in ("error", "warning") else "info",
        message=message,
        code=category,
        file=file,
        line=line,
        column=start.get("column") if line else None,
        code_snippet=snippets.line(file, line),
    )
