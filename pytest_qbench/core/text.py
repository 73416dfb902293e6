"""Small text helpers shared by the collectors and the renderers: bounding and cleaning text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


ANSI_ESCAPE = r"\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]"
"""CSI sequences (colours, the cursor), OSC sequences with their payload up to BEL or ST
(hyperlinks, a terminal's title), and other two-character escapes. Compiled where first used
(re's cache): a run whose text holds no escape compiles none (0.8 M instructions; issue 28)."""
CUT_MARKER = "[... qbench cut {count} characters{hint} ...]"
DEFAULT_MAX_OUTPUT = 10_000
"""Characters kept per captured stream (``--qbench-max-output``, ``qbench ingest-junit``)."""
DEFAULT_MAX_TRACE = 20_000
"""Characters kept per stack trace (``--qbench-max-trace``, ``qbench ingest-junit``)."""


def strip_ansi(text: str) -> str:
    """Remove ANSI colour and cursor escape sequences."""
    return re.sub(ANSI_ESCAPE, "", text) if "\x1b" in text else text


CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F) if chr(code) not in "\t\n\r"}
"""Control characters other than tab and line ends, written as ``\\xNN``."""


def readable(text: str) -> str:
    """``text`` for a reader that is a person or a model: no ANSI escape sequences, other
    control characters (a bell, a NUL, a lone ESC) written as ``\\x07``."""
    return strip_ansi(text).translate(CONTROL)


def bound_text(text: str, limit: int, *, keep: str = "both", option: str | None = None) -> str:
    """Return ``text`` cut to about ``limit`` characters, with a visible marker where it was cut.

    Args:
        text: The text to bound.
        limit: Maximum characters to keep; 0 keeps nothing but the marker.
        keep: ``"head"``, ``"tail"`` or ``"both"`` (a quarter from the start, the rest from the end).
        option: The option that raises the cap, named in the marker (if there is one).
    """
    if len(text) <= limit:
        return text
    hint = f"; raise {option} to keep more" if option else ""
    marker = CUT_MARKER.format(count=len(text) - limit, hint=hint)
    if keep == "head":
        return f"{text[:limit]}\n{marker}"
    if keep == "tail":
        return f"{marker}\n{text[len(text) - limit :]}" if limit else marker
    head = limit // 4
    tail = limit - head
    return (
        f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"
        if tail
        else f"{text[:head]}\n{marker}"
    )


def exception_line(error: BaseException, limit: int | None = None) -> str:
    """``Type: message`` of ``error`` on one line (its whitespace runs made single spaces), cut
    to ``limit`` characters when given."""
    return " ".join(f"{type(error).__name__}: {error}".split())[:limit]


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def message_line(text: str, limit: int = 200) -> str:
    """A failure message on one line: its first non-empty line, and when that line is only a
    heading (it ends with ``:``, as doctest's ``Expected:``), the lines after it folded in
    (``Expected: 3 Got: 2``); cut to ``limit`` characters."""
    line = first_line(text, limit)
    if not line.endswith(":"):
        return line
    return " ".join(text.split())[:limit]


# Patterns compiled at first use (by ``re``'s cache): a run none of whose errors is read never
# compiles them.
_EXCEPTION_LINE = r"^[A-Za-z_][\w.]*(: |$)"
_NAMED_ERROR = (
    r"^(?:INTERNALERROR> )?([A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit|Interrupt)\b.*)"
)


def error_line(text: str, limit: int = 200) -> str:
    """The line of pytest's failure text or output that says what went wrong: the exception of
    its last ``E   `` block (``ModuleNotFoundError: No module named 'x'``); without one, its
    last line naming an exception (a plain traceback, an ``INTERNALERROR>``), else its first
    line.

    A collection error's first line is only pytest's headline ("ImportError while importing
    test module ..."); the cause is at the end of the traceback. With chained exceptions the
    last block is the one pytest's short summary names.
    """
    block: list[str] = []
    last: list[str] = []
    for line in text.splitlines():
        if line.startswith("E ") or line == "E":
            block.append(line[1:].strip())
        elif block:
            last, block = block, []
    last = block or last
    named = [line for line in last if line and re.match(_EXCEPTION_LINE, line)]
    found = named[0] if named else next((line for line in last if line), "")
    if found:
        return found[:limit]
    naming = [m[1] for line in text.splitlines() if (m := re.match(_NAMED_ERROR, line.strip()))]
    return naming[-1][:limit] if naming else first_line(text, limit)


SHORT_MESSAGE = 120
"""A one-line message up to this many characters is left in the traceback too, as pytest does."""


def trace_without_message(trace: str, error_type: str, message: str) -> str:
    """``trace`` without its copy of a long ``message``, for a view that shows the message just
    above the traceback: the traceback's last ``E   Type: message`` lines become one line.

    qbench's traceback ends with the exception, message included; a long assertion explanation
    shown in full twice is noise. A short one-line message, or a traceback that does not end with
    this message (one cut inside it, pytest's own text), is returned as is.
    """
    if not message or ("\n" not in message.strip() and len(message) <= SHORT_MESSAGE):
        return trace
    text = f"{error_type}: {message}" if error_type else message
    block = "\n".join(f"E   {line}" for line in text.splitlines()).rstrip()
    kept = trace.rstrip()
    if not block or not kept.endswith(block[len("E   ") :]):
        return trace
    head = kept[: len(kept) - len(block) + len("E   ")]
    # the traceback names a module's exception module first (``locale.Error``), as pytest does
    last = head[head.rfind("\n") + 1 :]
    named = re.fullmatch(r"E   ((?:[A-Za-z_<][\w.<>]*\.)?)", last) if error_type else None
    if named is None and last != "E   ":
        return trace
    module = named[1] if named is not None else ""
    head = head[: len(head) - len("E   ") - len(module)]
    return f"{head}E   {module}{error_type or 'Error'}: (message shown above)"


def failure_where(failure: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """Where a test's ``failure`` (or its teardown's) happened, as report.md's headings and the
    digest's lines say it: the failure's file, else the test's, then ``:line`` when the
    failure's line is known (the test's own line is not the failure's)."""
    file = failure["file"] or result["file"]
    line = failure["line"]
    return f"{file}:{line}" if line else str(file)
