"""MSBuild's canonical diagnostic lines, read from a build log (``dotnet build``, ``msbuild``)
into ``Diagnostic``s: a pure function of the log's bytes.

The canonical form is ``Origin : [Subcategory] Category Code : Text``, where the origin is a
file with an optional position, ``(line)``, ``(line,col)``, ``(line-line)``, ``(line,col-col)``
or ``(line,col,endline,endcol)``, or a tool name, or nothing; the category is ``error`` or
``warning``. MSBuild appends the project in brackets (``[/src/App/App.csproj]``) and, with
several nodes, prefixes a line with its node (``1>``). Examples::

    Program.cs(12,5): error CS1002: ; expected [/src/App/App.csproj]
    /src/App/App.csproj : warning NU1603: App depends on X (>= 1.0) but X 1.0 was not found.
    CSC : error CS5001: Program does not contain a static 'Main' method [/src/App/App.csproj]
    error MSB1009: Project file does not exist.

MSBuild repeats every diagnostic in its closing summary: a diagnostic is listed once. Fail
closed: a log that says the build failed (``Build FAILED.``, ``N Error(s)`` with N > 0) without
one readable error line, or an empty log, gives an error diagnostic saying so, never a clean run.
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_qbench.core.limits import MAX_MESSAGE
from pytest_qbench.core.text import bound_text
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import LogRange


TOOL = "msbuild"
LOG_SUFFIXES = (".log", ".txt")
"""Files ``qbench ingest-sarif`` reads as MSBuild build logs rather than SARIF."""
CANONICAL = re.compile(
    r"^(?:\s*\d+>)?\s*"  # a node prefix: "1>"
    r"(?:(?P<origin>[^\s:(][^:(]*?|[A-Za-z]:[^:(]*?)(?:\((?P<position>\d+(?:[,-]\d+){0,3})\))?"
    r"\s*:\s*)?"
    r"(?:(?P<sub>[^:]*?)\s+)?(?P<category>error|warning)\s+(?P<code>[A-Za-z]+\d+)\s*:\s*"
    r"(?P<text>.*?)(?:\s+\[(?P<project>[^\]]+)\])?\s*$",
    re.IGNORECASE,
)
FAILED = re.compile(r"^\s*(?:Build FAILED\.|[1-9]\d* Error\(s\))\s*$", re.MULTILINE)


def parse_msbuild(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """The diagnostics of an MSBuild log, each once, in the order met; files relative to
    ``cwd`` when inside it."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    found: list[Diagnostic] = []
    seen: set[tuple[object, ...]] = set()
    for number, line in enumerate(text.split("\n"), 1):
        diagnostic = parse_line(line, cwd, number)
        if diagnostic is None:
            continue
        key = (
            diagnostic.severity,
            diagnostic.code,
            diagnostic.file,
            diagnostic.line,
            diagnostic.column,
            diagnostic.message,
        )
        if key not in seen:
            seen.add(key)
            found.append(diagnostic)
    if not text.strip():
        return [_unreadable("the build log is empty: no verdict can be read from it")]
    if FAILED.search(text) and not any(d.severity == "error" for d in found):
        return [*found, _unreadable("the build failed but no error line of the log was read")]
    return found


def parse_line(line: str, cwd: Path, number: int = 0) -> Diagnostic | None:
    """One canonical line as a ``Diagnostic``; ``None`` for any other line."""
    match = CANONICAL.match(line)
    if match is None:
        return None
    origin = (match["origin"] or "").strip()
    sub = (match["sub"] or "").strip()
    if sub and not origin and ":" in sub:
        return None
    numbers = [int(n) for n in re.split(r"[,-]", match["position"] or "") if n]
    file = (
        _relative(origin, cwd)
        if origin and (match["position"] or _looks_like_path(origin))
        else None
    )
    message = match["text"].strip()
    if origin and file is None:
        message = f"{origin}: {message}"  # a tool name (CSC, cl), not a file
    line_no, column = _position(match["position"] or "", numbers)
    return Diagnostic(
        tool=TOOL,
        severity="error" if match["category"].lower() == "error" else "warning",
        message=bound_text(message, MAX_MESSAGE, keep="head"),
        code=match["code"],
        file=file,
        line=line_no,
        column=column,
        log_range=LogRange(start_line=number, end_line=number),
    )


def _position(text: str, numbers: list[int]) -> tuple[int | None, int | None]:
    """Line and column of ``(line)``, ``(line-line)``, ``(line,col)``, ``(line,col-col)``,
    ``(line,col,endline,endcol)``."""
    if not numbers:
        return None, None
    if "," not in text:
        return numbers[0], None
    return numbers[0], numbers[1]


def _looks_like_path(origin: str) -> bool:
    return "/" in origin or "\\" in origin or bool(re.search(r"\.\w{1,8}$", origin))


def _relative(name: str, cwd: Path) -> str:
    """``name`` relative to ``cwd`` when inside it, with ``/`` separators; else as given."""
    path = Path(name.replace("\\", "/"))
    if path.is_absolute():
        try:
            return path.resolve().relative_to(cwd.resolve()).as_posix()
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def _unreadable(why: str) -> Diagnostic:
    return Diagnostic(tool=TOOL, severity="error", message=why, code="build-log-unreadable")
