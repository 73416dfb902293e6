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
BUILD = Path(__file__).with_name("tsc_build.js")
"""``node tsc_build.js TSC TSCONFIG``: ``tsc -b``'s own builder (TypeScript's
``createSolutionBuilder``, every project rebuilt, no earlier ``.tsbuildinfo`` read) with every
file it writes kept in memory: its order, its diagnostics (``--pretty false`` lines), a
referenced project's declarations read by the projects that import it, its exit status; nothing
written into the project (``tsc -b`` writes the referenced projects' output and
``.tsbuildinfo`` files; TypeScript 5.5 and older refuse ``tsc -b --noEmit``, and 5.6 and later
still write an incremental project's ``.tsbuildinfo`` with it). TypeScript 7 (the native
compiler) has no JavaScript API and so no builder to load: each project of the references is
then checked by ``tsc -p`` on a configuration in the scratch directory extending the project's,
references first, everything it writes (outputs, ``.tsbuildinfo``) into a mirror of the
project's paths there, so that a project importing a reference's declarations reads the ones
just built, as under ``tsc -b``."""


def tsc_command(executable: str, buildinfo: Path | None = None) -> list[str]:
    """The command: the project's ``tsconfig.json`` applies, qbench adds no rule. ``--noEmit``
    writes no output; an incremental or composite project would still write its
    ``.tsbuildinfo`` into the user's tree, so ``buildinfo`` (a file in qbench's scratch
    directory) takes it (``--incremental`` makes that valid for any project and changes no
    diagnostic)."""
    command = [executable, "--noEmit"]
    if buildinfo is not None:
        command += ["--incremental", "--tsBuildInfoFile", str(buildinfo)]
    return [*command, "--pretty", "false"]


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


def emits_nothing(tsconfig: Path) -> bool:
    """Whether ``tsconfig`` itself says ``"noEmit": true`` (in ``compilerOptions``): tsc on it
    writes no output. A file that cannot be read, or whose ``noEmit`` would come from the
    configuration it ``extends``, is not known to (``False``)."""
    try:
        text = tsconfig.read_text(encoding="utf-8-sig")
        plain = _COMMENT_OR_STRING.sub(lambda m: m[0] if m[0].startswith('"') else " ", text)
        data = json.loads(_TRAILING_COMMA.sub(r"\1", plain))
    except (OSError, ValueError):
        return False
    options = data.get("compilerOptions") if isinstance(data, dict) else None
    return isinstance(options, dict) and options.get("noEmit") is True


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
