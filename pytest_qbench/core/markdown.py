"""Escaping untrusted text for Markdown: table cells, inline code, fenced blocks, plain text.

Test names, messages and output come from the code under test, so none of it may break a table,
close a fence, inject HTML or carry terminal escape codes into the report.
"""

from __future__ import annotations

import re

from pytest_qbench.core.text import strip_ansi


# Tables of str.translate, not patterns: a pattern compiled at import costs every run that
# imports this module (a pytest run writing report.md): the five cost 1.8 M instructions.
_CONTROL = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_MD_SPECIAL = {ord(c): "\\" + c for c in "\\`*_[]<>|~"}
_LINE_START = ("#", "+", "=", "-")


def clean(text: object) -> str:
    """Text without ANSI sequences or control characters (newlines and tabs are kept)."""
    return strip_ansi(str(text)).translate(_CONTROL)


def _escape_ordered_item(text: str) -> str:
    """``12.`` or ``3)`` at the start as ``12\\.``: not read as an ordered list's item."""
    digits = 0
    while digits < len(text) and text[digits].isdecimal():  # as re's \d: Unicode's Nd
        digits += 1
    if digits and text[digits : digits + 1] in (".", ")"):
        return f"{text[:digits]}\\{text[digits:]}"
    return text


def _longest_backtick_run(text: str) -> int:
    if "`" not in text:
        return 0
    return max(len(run) for run in re.findall("`+", text))


def md_text(text: object, limit: int = 500) -> str:
    """Plain Markdown text on one line: specials backslash-escaped, HTML neutralised, cut."""
    one_line = " ".join(clean(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    escaped = one_line.translate(_MD_SPECIAL)
    if escaped.startswith(_LINE_START):
        escaped = "\\" + escaped
    return _escape_ordered_item(escaped)


def md_code(text: object, limit: int = 300) -> str:
    """An inline code span that holds any text: the delimiter outgrows the text's backtick runs.

    Empty (or blank) text gives an empty string rather than an empty code span.
    """
    one_line = " ".join(clean(text).split())
    if not one_line:
        return ""
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    longest = _longest_backtick_run(one_line)
    fence = "`" * (longest + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def md_cell(text: object, limit: int = 200, code: bool = False) -> str:
    """A table cell: one line, pipes escaped (also inside code, as GitHub requires), cut."""
    rendered = md_code(text, limit) if code else md_text(text, limit)
    return rendered.replace("|", "\\|") if code else rendered


def md_fence(text: object, info: str = "text") -> str:
    """A fenced code block that ``text`` cannot close early."""
    body = clean(text).rstrip("\n")
    longest = _longest_backtick_run(body)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def died_unseen(interrupted: bool, exit_code: int | None) -> bool:
    """Whether a run's process died before its session's end with nothing to say when (its
    report rebuilt from a stream without an end record: interrupted, exit status unknown): a
    signal, the out-of-memory killer, pytest-timeout's thread method (``os._exit`` from a
    thread). Its duration runs to its last result's end, not to its death."""
    return interrupted and exit_code is None


def run_duration_text(seconds: float, *, died: bool, short: bool = False) -> str:
    """``format_duration``; for a run that ``died_unseen``, what is known: ``at least 0.29s
    (it died; when is unknown)``, or ``>=0.29s`` (``short``, a table's cell)."""
    shown = format_duration(seconds)
    return died_duration(shown, short=short) if died else shown


def died_duration(shown: str, *, short: bool = False) -> str:
    """``shown``, the duration of a run that ``died_unseen``, as the lower bound it is: ``at
    least 0.29s (it died; when is unknown)``, or ``>=0.29s`` (``short``)."""
    return f">={shown}" if short else f"at least {shown} (it died; when is unknown)"


def format_duration(seconds: float) -> str:
    """``0.42s``, ``12.3s``, ``2m 05s``, ``1h 02m``."""
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"
