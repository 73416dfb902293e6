"""Escaping untrusted text for Markdown: one-line text, code spans, table cells, fences."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_qbench.core.markdown import clean
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.markdown import md_cell
from pytest_qbench.core.markdown import md_code
from pytest_qbench.core.markdown import md_fence
from pytest_qbench.core.markdown import md_text


NASTY_PIECES = [
    "|",
    "\\|",
    "\\",
    "`",
    "``",
    "```",
    "````",
    "~~~",
    "<script>alert(1)</script>",
    "</details>",
    "<!--",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b]0;title\x07",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "# ",
    "\n## Injected\n",
    "1. ",
    "- ",
    "> ",
    "*",
    "_",
    "[x](javascript:alert(1))",
    "&lt;",
    "\x00",
    "\x7f",
    "é€😀",
]
nasty_text = st.lists(
    st.one_of(st.text(max_size=8), st.sampled_from(NASTY_PIECES)), max_size=12
).map("".join)
"""Arbitrary text, rich in what breaks Markdown."""


def unescaped(text: str, char: str) -> int:
    """How many ``char`` in ``text`` are preceded by an even number of backslashes."""
    return len(re.findall(rf"(?<!\\)(?:\\\\)*{re.escape(char)}", text))


def strip_code_spans(line: str) -> str:
    """``line`` with its CommonMark code spans removed (backslash escapes do not open spans)."""
    out: list[str] = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
            continue
        if line[i] == "`":
            run = re.match(r"`+", line[i:])
            assert run is not None
            n = len(run.group())
            close = re.compile(rf"(?<!`)`{{{n}}}(?!`)").search(line, i + n)
            if close is None:
                out.append(run.group())
                i += n
            else:
                i = close.end()
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def code_span_content(span: str) -> str:
    """The text a one-span string such as ``md_code`` output shows, per CommonMark."""
    match = re.fullmatch(r"(`+)(.*)\1", span, re.DOTALL)
    assert match is not None, span
    inner = match.group(2)
    if len(inner) >= 2 and inner[0] == inner[-1] == " " and inner.strip(" "):
        inner = inner[1:-1]
    return inner


def test_clean_strips_ansi_and_controls_but_keeps_lines_and_tabs() -> None:
    """clean() removes colour codes and control characters, keeping newlines and tabs."""
    assert clean("\x1b[31mred\x1b[0m\tx\ny\x00\x07\x7f") == "red\tx\ny"


def test_clean_strips_an_operating_system_command_whole() -> None:
    """An OSC sequence (a hyperlink from rich or ``ls --hyperlink``, a terminal title) goes with
    its payload, ended by BEL or ST: only its ESC and BEL went, leaving ``8;;http://x`` in the
    captured output of report.md and the HTML page."""
    link = "\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b]0;title\x1b\\done"
    assert clean(link) == "link done"
    assert clean("\x1b]8;;unterminated") == "8;;unterminated"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a|b", "a\\|b"),
        ("# title", "\\# title"),
        ("- item", "\\- item"),
        ("1. item", "1\\. item"),
        ("<script>", "\\<script\\>"),
        ("a_b*c", "a\\_b\\*c"),
        ("two\nlines\r\nthree", "two lines three"),
        ("\x1b[1mbold\x1b[0m", "bold"),
    ],
)
def test_md_text_escapes(text: str, expected: str) -> None:
    """md_text backslash-escapes Markdown specials, neutralises line starts, joins lines."""
    assert md_text(text) == expected


def test_md_text_cuts_before_escaping() -> None:
    """A long text is cut with an ellipsis, and the cut never splits an escape."""
    out = md_text("|" * 600, limit=10)
    assert out == "\\|" * 9 + "…"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x", "`x`"),
        ("a`b", "``a`b``"),
        ("`start", "`` `start ``"),
        ("end``", "``` end`` ```"),
        ("", ""),
        (" \n ", ""),
    ],
)
def test_md_code(text: str, expected: str) -> None:
    """md_code's delimiter outgrows the text's backtick runs; blank text gives no span."""
    assert md_code(text) == expected


def test_md_cell_escapes_pipes_inside_code() -> None:
    """md_cell escapes pipes in code spans too, as GitHub tables require."""
    assert md_cell("a|b", code=True) == "`a\\|b`"
    assert md_cell("a|b") == "a\\|b"


def test_md_fence_outgrows_backtick_runs() -> None:
    """md_fence uses a fence longer than any backtick run of the body."""
    assert md_fence("print(1)\n") == "```text\nprint(1)\n```"
    assert md_fence("a\n````\nb", info="pytb") == "`````pytb\na\n````\nb\n`````"


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0.0, "0.00s"), (0.423, "0.42s"), (12.34, "12.3s"), (125, "2m 05s"), (3720, "1h 02m")],
)
def test_format_duration(seconds: float, expected: str) -> None:
    """Durations read like pytest's: seconds, then minutes, then hours."""
    assert format_duration(seconds) == expected


@given(nasty_text)
def test_md_text_is_one_safe_line(text: str) -> None:
    """md_text output is one line, with no raw pipe, backtick, HTML opener or escape code."""
    out = md_text(text)
    assert not re.search(r"[\r\n\x1b\x00]", out)
    for char in "|`<>*_[":
        assert unescaped(out, char) == 0, (char, out)
    assert not re.match(r"[#+=>-]|\d+[.)]", out)


@given(nasty_text)
def test_md_code_is_one_span_holding_the_text(text: str) -> None:
    """md_code output is a single code span that shows the (cleaned, one-line) text."""
    out = md_code(text)
    shown = " ".join(clean(text).split())
    if not shown:
        assert out == ""
        return
    assert "\n" not in out and "\r" not in out
    assert strip_code_spans(out) == ""
    assert code_span_content(out) == shown


@given(nasty_text)
def test_md_cell_has_no_unescaped_pipe(text: str) -> None:
    """Neither kind of table cell holds a pipe that could split the row."""
    for code in (False, True):
        cell = md_cell(text, code=code)
        assert re.search(r"(?<!\\)\|", cell) is None, cell
        assert "\n" not in cell and "\r" not in cell


@given(nasty_text, st.sampled_from(["text", "pytb", "python"]))
def test_md_fence_cannot_be_closed_early(text: str, info: str) -> None:
    """Only md_fence's own last line closes the block it opens, and the body survives."""
    out = md_fence(text, info)
    lines = re.split(r"\r\n|\r|\n", out)
    opening = re.fullmatch(r"(`{3,})(\w+)", lines[0])
    assert opening is not None
    fence = opening.group(1)
    assert lines[-1] == fence
    for line in lines[1:-1]:
        closing = re.fullmatch(r" {0,3}(`+)[ \t]*", line)
        assert closing is None or len(closing.group(1)) < len(fence), line
    assert "\x1b" not in out
    assert out[len(lines[0]) + 1 : -len(fence) - 1] == clean(text).rstrip("\n")


LINE_END = re.compile(r"\r\n|\r|\n")
OPENING_FENCE = re.compile(r" {0,3}(`{3,})([^`]*)")
CLOSING_FENCE = re.compile(r" {0,3}(`{3,})[ \t]*")
DELIMITER_ROW = re.compile(r"\|(?: *:?-+:? *\|)+")
HTML_TAG = re.compile(r"(?<!\\)(?:\\\\)*<(/?[A-Za-z][A-Za-z0-9-]*)")
TEMPLATE_TAGS = {"details", "/details", "summary", "/summary"}


def markdown_structure(md: str) -> dict[int, list[str]]:
    """Check ``md``'s structure and return its ATX headings by level.

    Checks, reading lines as CommonMark does (``\\r`` ends a line too): every opening code fence is
    closed by a fence of the same length; every table row has as many unescaped ``|`` as its
    header; outside code there is no HTML but the template's ``<details>``/``<summary>``; and no
    terminal escape code appears anywhere.
    """
    assert "\x1b" not in md
    headings: dict[int, list[str]] = {}
    fence: str | None = None
    table_pipes: int | None = None
    lines = LINE_END.split(md)
    for number, line in enumerate(lines):
        where = f"line {number + 1}: {line!r}"
        if fence is not None:
            closing = CLOSING_FENCE.fullmatch(line)
            if closing is not None and len(closing.group(1)) >= len(fence):
                assert closing.group(1) == fence, where
                fence = None
            continue
        opening = OPENING_FENCE.fullmatch(line)
        if opening is not None:
            fence = opening.group(1)
            table_pipes = None
            continue
        pipes = len(re.findall(r"(?<!\\)\|", line))
        if table_pipes is not None and line.startswith("|"):
            assert pipes == table_pipes, where
        elif line.startswith("|"):
            following = lines[number + 1] if number + 1 < len(lines) else ""
            assert DELIMITER_ROW.fullmatch(following), f"row outside a table, {where}"
            table_pipes = pipes
            assert following.count("|") == pipes, where
        else:
            table_pipes = None
        heading = re.match(r"(#{1,6})(?: (.*))?$", line)
        if heading is not None:
            headings.setdefault(len(heading.group(1)), []).append(heading.group(2) or "")
        tags = set(HTML_TAG.findall(strip_code_spans(line)))
        assert tags <= TEMPLATE_TAGS, where
    assert fence is None, "a code fence is never closed"
    return headings


def test_markdown_structure_catches_breakage() -> None:
    """The structure check itself rejects an early-closed fence, a torn row and raw HTML."""
    markdown_structure("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n````\n```\n````\n")
    for broken in (
        "```\nx\n",
        "````\nx\n```\n",
        "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n",
        "text <script>x</script>\n",
        "\\\\<img src=x>\n",
        "\x1b[31m\n",
    ):
        with pytest.raises(AssertionError):
            markdown_structure(broken)
    assert markdown_structure("`<script>` and \\<script> are not HTML\n") == {}
