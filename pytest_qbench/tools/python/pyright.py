"""pyright's ``--outputjson`` into diagnostics (issue 13)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import UNKNOWN
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import Span
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import error_warning_or_info
from pytest_qbench.report.checks.spans import json_array_items
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic


TOOL = "pyright.typecheck"
OK_CODES = frozenset({0, 1})
"""pyright's documented exit statuses: 0 clean, 1 errors (2 fatal, 3 bad configuration, 4 bad
command line)."""


def pyright_command(executable: str, paths: list[str]) -> list[str]:
    """The command: the project's configuration applies, qbench adds no rules."""
    return [executable, "--outputjson", *paths]


def parse_pyright(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every diagnostic in ``generalDiagnostics`` (its 0-based positions made 1-based), each
    pointing at its object in the log.

    Raises:
        CheckOutputError: the output is not pyright's JSON report.
    """
    text = decode(raw)
    try:
        report = json.loads(text)
        items = report["generalDiagnostics"]
        snippets = Snippets(cwd)
        found = [_diagnostic(item, cwd, snippets) for item in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckOutputError(f"pyright printed no JSON report it documents: {exc}") from None
    return [
        item.model_copy(update={"log_range": span.log_range(), "byte_offsets": span.byte_offsets()})
        for item, span in zip(found, _item_spans(text, len(found)), strict=True)
    ]


def _item_spans(text: str, count: int) -> list[Span]:
    """Where each item of ``generalDiagnostics`` sits in the log (unknown when not found)."""
    key = re.search(r'"generalDiagnostics"\s*:\s*', text)
    if key is None:
        return [UNKNOWN] * count
    spans = [span for _, span in json_array_items(text, TOOL, key.end())]
    return spans if len(spans) == count else [UNKNOWN] * count


def _diagnostic(item: Any, cwd: Path, snippets: Snippets) -> Diagnostic:
    file = relative_file(str(item["file"]), cwd)
    where = item.get("range") or {}
    start, end = where.get("start") or {}, where.get("end") or {}
    line = _one_based(start.get("line"))
    return Diagnostic(
        tool=TOOL,
        severity=error_warning_or_info(str(item["severity"])),
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
