"""TypeScript's ``tsc --noEmit --pretty false`` into diagnostics: its lines
``file(line,col): error TS2345: message`` (a message's further lines indented below it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import Span
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import error_warning_or_info
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.checks.spans import text_lines
from pytest_qbench.report.models import Diagnostic


TOOL = "tsc.typecheck"
OK_CODES = frozenset({0, 1, 2})
"""tsc's exit statuses: 0 clean, 1 errors (outputs skipped), 2 errors (outputs generated);
any other is a crash, and 1 or 2 without a single message is one too."""
_LINE = re.compile(
    r"^(?:(?P<file>.+?)\((?P<line>\d+),(?P<column>\d+)\): )?"
    r"(?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$"
)


_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_REFERENCES = re.compile(r'"references"\s*:\s*\[\s*\{')
BUILD_NO_EMIT = (5, 6)
"""The first TypeScript whose build mode takes ``--noEmit`` (5.5 refuses it: TS5094)."""


def tsc_command(executable: str, build: bool = False, no_emit: bool = True) -> list[str]:
    """The command: the project's ``tsconfig.json`` applies, qbench adds no rule. ``build``:
    ``tsc -b``, for a ``tsconfig.json`` with ``references`` (a "solution" one such as
    create-vite's ``{"files": [], "references": [...]}``, on which ``tsc --noEmit`` checks
    nothing); ``no_emit`` there only where the build mode takes it (TypeScript 5.6 and later)."""
    if build:
        return [executable, "-b", *(["--noEmit"] if no_emit else []), "--pretty", "false"]
    return [executable, "--noEmit", "--pretty", "false"]


def has_references(tsconfig: Path) -> bool:
    """Whether ``tsconfig`` (JSON with comments and trailing commas) lists project
    ``references``; a file that cannot be read has none (tsc then says what is wrong)."""
    try:
        text = tsconfig.read_text(encoding="utf-8-sig")
    except (OSError, ValueError):
        return False
    plain = _COMMENT_OR_STRING.sub(lambda m: m[0] if m[0].startswith('"') else " ", text)
    try:
        data = json.loads(_TRAILING_COMMA.sub(r"\1", plain))
    except ValueError:
        return _REFERENCES.search(plain) is not None
    return isinstance(data, dict) and bool(data.get("references"))


def version_at_least(package_json: Path, wanted: tuple[int, int]) -> bool:
    """Whether the installed package's ``version`` is ``wanted`` or later (unreadable: yes, so
    an old tsc refuses the option itself, in an error diagnostic, never a clean run)."""
    try:
        version = str(json.loads(package_json.read_text(encoding="utf-8"))["version"])
        major, minor = (int(part) for part in version.split(".")[:2])
    except (OSError, ValueError, KeyError, TypeError):
        return True
    return (major, minor) >= wanted


def parse_tsc(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every message tsc printed, in its order, with its further lines joined to it.

    Raises:
        CheckOutputError: a line that is neither a message nor the indented rest of one.
    """
    snippets = Snippets(cwd)
    found: list[Diagnostic] = []
    for line, span in text_lines(decode(raw)):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is not None:
            found.append(_diagnostic(match, cwd, snippets, span))
        elif line[0].isspace() and found:
            found[-1] = found[-1].model_copy(
                update={"message": f"{found[-1].message} {line.strip()}"}
            )
        else:
            raise CheckOutputError(f"tsc printed a line not in its message format: {line:.200}")
    return found


def _diagnostic(match: re.Match[str], cwd: Path, snippets: Snippets, span: Span) -> Diagnostic:
    file = relative_file(match["file"], cwd) if match["file"] else None
    line = int(match["line"]) if match["line"] else None
    severity = "info" if match["severity"] == "message" else match["severity"]
    return Diagnostic(
        tool=TOOL,
        severity=error_warning_or_info(severity),
        message=match["message"],
        code=match["code"],
        file=file,
        line=line,
        column=int(match["column"]) if match["column"] else None,
        code_snippet=snippets.line(file, line),
        log_range=span.log_range(),
        byte_offsets=span.byte_offsets(),
    )
