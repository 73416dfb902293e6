"""ruff's ``check --output-format json`` into diagnostics (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import json_array_items
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Severity


TOOL = "ruff.lint"
OK_CODES = frozenset({0, 1})
"""ruff's documented exit statuses: 0 clean, 1 violations found (2 is an abnormal end)."""


def ruff_command(executable: str, paths: list[str]) -> list[str]:
    """The command: the project's configuration applies, qbench adds no rules."""
    return [executable, "check", "--output-format", "json", "--no-fix", *paths]


def parse_ruff(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every violation ruff printed, in its order.

    Raises:
        CheckOutputError: the output is not ruff's JSON array.
    """
    text = decode(raw)
    snippets = Snippets(cwd)
    found = []
    for item, span in json_array_items(text, "ruff"):
        try:
            found.append(_diagnostic(item, cwd, snippets, span.log_range(), span.byte_offsets()))
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckOutputError(f"ruff printed an item without {exc}: {item!r:.200}") from None
    return found


def _diagnostic(item: Any, cwd: Path, snippets: Snippets, *where: Any) -> Diagnostic:
    file = relative_file(str(item["filename"]), cwd)
    start, end = item["location"], item.get("end_location") or {}
    line = int(start["row"])
    return Diagnostic(
        tool=TOOL,
        severity=_severity(item.get("severity")),
        message=str(item["message"]),
        code=item.get("code"),
        file=file,
        line=line,
        column=int(start["column"]),
        end_line=end.get("row"),
        end_column=end.get("column"),
        code_snippet=snippets.line(file, line),
        log_range=where[0],
        byte_offsets=where[1],
    )


def _severity(given: object) -> Severity:
    """ruff's own severity when it prints one (newer versions); a violation is an error."""
    if given in ("warning", "info"):
        return "warning" if given == "warning" else "info"
    return "error"
