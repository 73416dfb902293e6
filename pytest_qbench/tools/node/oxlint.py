"""oxlint (the Oxc project's linter) run as a script gives it, read from its JSON (``oxlint -f
json``): each diagnostic its severity (``error``, ``warning``), its rule as the code
(``eslint(no-unused-vars)``), its first label's line and column; ``--max-warnings N`` and
``--deny-warnings`` read as eslint's ``--max-warnings`` is (more warnings: one more error)."""

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
from pytest_qbench.tools.node.words import warnings_limit
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported


TOOL = "oxlint.lint"
OK_CODES = frozenset({0, 1})
"""oxlint's exit statuses: 0 no error (nor more warnings than allowed), 1 otherwise."""
CONFIG_FILES = (".oxlintrc.json", ".oxlintrc.jsonc", "oxlint.config.ts")
"""The files an oxlint configuration lives in."""
_REPORT = re.compile(r'\{\s*"diagnostics"\s*:')
"""Where oxlint's JSON begins in its output (its own notes may come before it)."""

_PLUGINS = frozenset(
    f"--{name}-plugin"
    for name in [
        "import",
        "jsdoc",
        "jest",
        "vitest",
        "jsx-a11y",
        "nextjs",
        "react",
        "react-perf",
        "promise",
        "node",
        "vue",
        "disable-unicorn",
        "disable-oxc",
        "disable-typescript",
    ]
)
_GRAMMAR = Grammar(
    values=frozenset(
        {
            "-c",
            "--config",
            "--tsconfig",
            "-A",
            "--allow",
            "-W",
            "--warn",
            "-D",
            "--deny",
            "--ignore-path",
            "--ignore-pattern",
            "--report-unused-disable-directives-severity",
        }
    ),
    flags=_PLUGINS
    | frozenset(
        {
            "--quiet",
            "--no-ignore",
            "--no-error-on-unmatched-pattern",
            "--report-unused-disable-directives",
            "--disable-nested-config",
            "--type-aware",
            "--type-check",
        }
    ),
    dropped=frozenset(),
    dropped_values=frozenset({"-f", "--format", "--threads"}),
    read=frozenset({"--max-warnings"}),
    marks=frozenset({"--deny-warnings"}),
)
"""How qbench reads oxlint's words (``-c X``, ``-D rule``, the plugins carried as written)."""
_FIXES = frozenset({"--fix", "--fix-suggestions", "--fix-dangerously"})
"""oxlint's fixing options, left out of a ``lint`` script's run (qbench fixes nothing)."""


def plan_oxlint(
    words: list[str], cwd: Path, given: list[str] | None = None, fixes: bool = False
) -> Plan[Diagnostic]:
    """``oxlint [paths] [options]`` with its carried options and JSON output (``given``:
    paths replacing the command's own; ``fixes``: ``--fix``... left out, else refused).

    Raises:
        NotInstalled: no oxlint in the project.
        Unsupported: an option qbench cannot carry; the message names it.
    """
    kept = [w for w in words if not (fixes and w in _FIXES)]
    found = sort_words(kept, _GRAMMAR)
    deny = "--deny-warnings" in found.marks
    limit = warnings_limit(found)
    if deny:
        limit = 0
        found.carried.append("--deny-warnings")
    if found.refused:
        raise Unsupported(f"oxlint options qbench cannot carry: {' '.join(found.refused)}")
    executable = project_bin(cwd, "oxlint", "oxlint")
    command = [executable, "-f", "json", *found.carried, *(given or found.paths)]
    parse = parse_limited(limit, parse_oxlint, TOOL, "--deny-warnings allows (0)" if deny else None)
    return Plan(TOOL, command, OK_CODES, parse)


def parse_oxlint(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every diagnostic of oxlint's JSON, in its order.

    Raises:
        CheckOutputError: no JSON report in the output, or one not as oxlint writes it.
    """
    text = decode(raw)
    start = _REPORT.search(text)
    if start is None:
        raise CheckOutputError(f"oxlint printed no JSON report: {text[:200]!r}")
    try:
        report, _ = json.JSONDecoder().raw_decode(text, start.start())
        return [_diagnostic(item, cwd, Snippets(cwd)) for item in report["diagnostics"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckOutputError(f"oxlint printed a report qbench cannot read: {exc}") from None


def _diagnostic(item: Any, cwd: Path, snippets: Snippets) -> Diagnostic:
    labels = item.get("labels") or [{}]
    span = labels[0].get("span") or {}
    file = relative_file(str(item["filename"]), cwd) if item.get("filename") else None
    line = span.get("line")
    return Diagnostic(
        tool=TOOL,
        severity="error" if item["severity"] == "error" else "warning",
        message=str(item["message"]),
        code=item.get("code"),
        file=file,
        line=line,
        column=span.get("column"),
        code_snippet=snippets.line(file, line),
    )
