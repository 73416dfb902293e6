"""Escaping untrusted text for Markdown: table cells, inline code, fenced blocks, plain text.

Test names, messages and output come from the code under test, so none of it may break a table,
close a fence, inject HTML or carry terminal escape codes into the report.
"""

from __future__ import annotations

import re

from pytest_qbench.core.text import strip_ansi


_BACKTICK_RUN = re.compile(r"`+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_LINE_START = re.compile(r"^([#+=-])")
_ORDERED_ITEM = re.compile(r"^(\d+)([.)])")


def clean(text: object) -> str:
    """Text without ANSI sequences or control characters (newlines and tabs are kept)."""
    return _CONTROL.sub("", strip_ansi(str(text)))


def md_text(text: object, limit: int = 500) -> str:
    """Plain Markdown text on one line: specials backslash-escaped, HTML neutralised, cut."""
    one_line = " ".join(clean(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    escaped = _MD_SPECIAL.sub(r"\\\1", one_line)
    escaped = _LINE_START.sub(r"\\\1", escaped)
    return _ORDERED_ITEM.sub(r"\1\\\2", escaped)


def md_code(text: object, limit: int = 300) -> str:
    """An inline code span that holds any text: the delimiter outgrows the text's backtick runs.

    Empty (or blank) text gives an empty string rather than an empty code span.
    """
    one_line = " ".join(clean(text).split())
    if not one_line:
        return ""
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    longest = max((len(m) for m in _BACKTICK_RUN.findall(one_line)), default=0)
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
    longest = max((len(m) for m in _BACKTICK_RUN.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


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
