"""mypy's output into diagnostics (issue 13): its JSON lines (``-O json``, mypy 1.11 and later),
or its text format ``file:line:col:end_line:end_col: severity: message  [code]``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import Span
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import error_warning_or_info
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.checks.spans import text_lines
from pytest_qbench.report.models import Diagnostic


TOOL = "mypy.typecheck"
OK_CODES = frozenset({0, 1, 2})
"""mypy's documented exit statuses: 0 clean, 1 errors found, 2 a blocking error (a syntax error:
its messages are read) or a crash (no messages: the runner reports it as crashed)."""
JSON_SINCE = (1, 11)
"""The first mypy version with ``--output json``."""
TEXT_FLAGS = ["--show-column-numbers", "--show-error-end", "--show-error-codes"]
_TEXT_LINE = re.compile(
    r"^(?P<file>[^:]+(?::[\\/][^:]*)?)(?::(?P<line>\d+))?(?::(?P<column>\d+))?"
    r"(?::(?P<end_line>\d+):(?P<end_column>\d+))?: "
    r"(?P<severity>error|warning|note): (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


def supports_json(version_output: str) -> bool:
    """Whether ``mypy --version``'s output names a version with JSON output."""
    found = re.search(r"mypy (\d+)\.(\d+)", version_output)
    return bool(found) and (int(found[1]), int(found[2])) >= JSON_SINCE  # type: ignore[index]


def mypy_command(base: list[str], paths: list[str], json_output: bool) -> list[str]:
    """The command: the project's configuration applies, qbench adds no rules."""
    form = ["-O", "json"] if json_output else TEXT_FLAGS
    return [*base, *form, "--no-error-summary", "--no-pretty", *paths]


def parse_mypy_json(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every message of mypy's JSON lines (its 0-based columns made 1-based, as it prints them),
    and of the text lines mypy writes beside them (its configuration's notes, such as
    ``setup.cfg: note: unused section(s): [mypy-tests.*]``, are text even with ``-O json``).

    Raises:
        CheckOutputError: a line is neither one of mypy's JSON messages nor a text message.
    """
    snippets = Snippets(cwd)
    found = []
    for line, span in text_lines(decode(raw)):
        if not line.strip():
            continue
        text = None if line.startswith("{") else _TEXT_LINE.match(line)
        if text is not None:
            found.append(_from_text(text, cwd, snippets, span))
            continue
        try:
            found.append(_from_json(json.loads(line), cwd, snippets, span))
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckOutputError(
                f"mypy printed a line that is not its JSON: {line:.200}: {exc}"
            ) from None
    return found


def _from_json(item: Any, cwd: Path, snippets: Snippets, span: Span) -> Diagnostic:
    file = relative_file(str(item["file"]), cwd)
    line = int(item["line"])
    column = int(item["column"])
    message = str(item["message"]) + (f" ({item['hint']})" if item.get("hint") else "")
    return Diagnostic(
        tool=TOOL,
        severity=error_warning_or_info(str(item["severity"])),
        message=message,
        code=item.get("code"),
        file=file,
        line=line if line > 0 else None,
        column=column + 1 if column >= 0 else None,
        end_line=item.get("end_line"),
        end_column=item.get("end_column"),
        code_snippet=snippets.line(file, line),
        log_range=span.log_range(),
        byte_offsets=span.byte_offsets(),
    )


def parse_mypy_text(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every message of mypy's text output (``--show-column-numbers --show-error-end``).

    Raises:
        CheckOutputError: a line is not in mypy's message format.
    """
    snippets = Snippets(cwd)
    found = []
    for line, span in text_lines(decode(raw)):
        if not line.strip():
            continue
        match = _TEXT_LINE.match(line)
        if match is None:
            raise CheckOutputError(f"mypy printed a line not in its message format: {line:.200}")
        found.append(_from_text(match, cwd, snippets, span))
    return found


def _from_text(match: re.Match[str], cwd: Path, snippets: Snippets, span: Span) -> Diagnostic:
    file = relative_file(match["file"], cwd)
    line = int(match["line"]) if match["line"] else None
    return Diagnostic(
        tool=TOOL,
        severity=error_warning_or_info(match["severity"]),
        message=match["message"],
        code=match["code"],
        file=file,
        line=line,
        column=int(match["column"]) if match["column"] else None,
        end_line=int(match["end_line"]) if match["end_line"] else None,
        end_column=int(match["end_column"]) if match["end_column"] else None,
        code_snippet=snippets.line(file, line),
        log_range=span.log_range(),
        byte_offsets=span.byte_offsets(),
    )
