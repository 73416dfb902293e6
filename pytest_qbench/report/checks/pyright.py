"""pyright's ``--outputjson`` into diagnostics (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Severity


TOOL = "pyright.typecheck"
OK_CODES = frozenset({0, 1})
"""pyright's documented exit statuses: 0 clean, 1 errors (2 fatal, 3 bad configuration, 4 bad
command line)."""


def pyright_command(executable: str, paths: list[str]) -> list[str]:
    """The command: the project's configuration applies, qbench adds no rules."""
    return [executable, "--outputjson", *paths]


def parse_pyright(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every diagnostic in ``generalDiagnostics`` (its 0-based positions made 1-based); their
    place in the log is not tracked (zeros).

    Raises:
        CheckOutputError: the output is not pyright's JSON report.
    """
    try:
        report = json.loads(decode(raw))
        items = report["generalDiagnostics"]
        snippets = Snippets(cwd)
        return [_diagnostic(item, cwd, snippets) for item in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckOutputError(f"pyright printed no JSON report it documents: {exc}") from None


def _diagnostic(item: Any, cwd: Path, snippets: Snippets) -> Diagnostic:
    file = relative_file(str(item["file"]), cwd)
    where = item.get("range") or {}
    start, end = where.get("start") or {}, where.get("end") or {}
    line = _one_based(start.get("line"))
    return Diagnostic(
        tool=TOOL,
        severity=_severity(str(item["severity"])),
        message=str(item["message"]),
        code=item.get("rule"),
        file=file,
        line=line,
        column=_one_based(start.get("character")),
        end_line=_one_based(end.get("line")),
        end_column=_one_based(end.get("character")),
        code_snippet=snippets.line(file, line),
    )


def _one_based(value: object) -> int | None:
    return value + 1 if isinstance(value, int) and value >= 0 else None


def _severity(given: str) -> Severity:
    """pyright's ``error``, ``warning`` and ``information``."""
    if given in ("error", "warning"):
        return "error" if given == "error" else "warning"
    return "info"
