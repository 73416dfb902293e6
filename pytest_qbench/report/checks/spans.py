"""Where a diagnostic sits in a checker's raw output, and in the checked source (issue 13)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.models import ByteOffsets
from pytest_qbench.report.models import LogRange
from pytest_qbench.report.models import Severity


SNIPPET_MAX = 240
"""Characters kept of a diagnostic's source line."""
SOURCE_READ_MAX = 8 * 1024 * 1024
"""Bytes of a checked file read for its snippets: a line past them has none."""


@dataclass(frozen=True)
class Span:
    """A stretch of the raw output: its lines (1-based) and bytes (end exclusive)."""

    start_line: int
    end_line: int
    start: int
    end: int

    def log_range(self) -> LogRange:
        """The span's lines as the model's ``log_range``."""
        return LogRange(start_line=self.start_line, end_line=self.end_line)

    def byte_offsets(self) -> ByteOffsets:
        """The span's bytes as the model's ``byte_offsets``."""
        return ByteOffsets(start=self.start, end=self.end)


UNKNOWN = Span(0, 0, 0, 0)
"""A span the parser cannot tell."""


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ``…`` marking the cut."""
    return text if len(text) <= limit else text[:limit] + "…"


def error_warning_or_info(given: str) -> Severity:
    """A checker's ``error`` or ``warning`` as is; anything else (mypy's ``note``, pyright's
    ``information``) is ``info``."""
    if given == "error":
        return "error"
    if given == "warning":
        return "warning"
    return "info"


def span_of(text: str, start: int, end: int) -> Span:
    """The span of ``text[start:end]`` (character indices) in lines and UTF-8 bytes."""
    first = text.count("\n", 0, start) + 1
    last = first + text.count("\n", start, max(start, end - 1))
    offset = len(text[:start].encode())
    return Span(first, last, offset, offset + len(text[start:end].encode()))


def decode(raw: bytes) -> str:
    """A checker's output as text (undecodable bytes replaced, so offsets stay close)."""
    return raw.decode("utf-8", errors="replace")


def json_array_items(text: str, tool: str, start: int = 0) -> Iterator[tuple[Any, Span]]:
    """Each item of the JSON array at ``text[start:]``, with its span in ``text``.

    Raises:
        CheckOutputError: ``text`` is not a JSON array.
    """
    decoder = json.JSONDecoder()
    index = _skip_space(text, start)
    if not text.startswith("[", index):
        raise CheckOutputError(f"{tool} printed no JSON array (starts with {text[:40]!r})")
    index = _skip_space(text, index + 1)
    while not text.startswith("]", index):
        try:
            item, end = decoder.raw_decode(text, index)
        except ValueError as exc:
            raise CheckOutputError(f"{tool} printed malformed JSON: {exc}") from None
        yield item, span_of(text, index, end)
        index = _skip_space(text, end)
        if text.startswith(",", index):
            index = _skip_space(text, index + 1)
        elif not text.startswith("]", index):
            raise CheckOutputError(f"{tool} printed malformed JSON at character {index}")


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def text_lines(text: str) -> Iterator[tuple[str, Span]]:
    """Each line of ``text`` (without its newline), with its span."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield text[start:end], span_of(text, start, end)
        start = end + 1


def relative_file(name: str, cwd: Path) -> str:
    """``name`` relative to ``cwd`` when inside it, with ``/`` separators; else as given."""
    path = Path(name)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(cwd.resolve())
        except ValueError:
            return name
    return path.as_posix()


class Snippets:
    """Source lines of the checked files, each file read once: only regular files inside
    ``cwd`` (a path or link leading out of it, a device, a FIFO has no snippet), at most
    ``SOURCE_READ_MAX`` bytes of each."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._root = cwd.resolve()
        self._files: dict[str, list[str] | None] = {}

    def line(self, file: str | None, line: int | None) -> str | None:
        """Line ``line`` (1-based) of ``file``, bounded; ``None`` when unknown or unreadable."""
        if not file or not line or line < 1:
            return None
        lines = self._lines(file)
        if lines is None or line > len(lines):
            return None
        return cut(lines[line - 1].rstrip("\r\n"), SNIPPET_MAX)

    def _lines(self, file: str) -> list[str] | None:
        if file not in self._files:
            raw = read_source(self._root, file)
            self._files[file] = None if raw is None else _whole_lines(raw)
        return self._files[file]


def read_source(root: Path, file: str) -> bytes | None:
    """At most ``SOURCE_READ_MAX`` bytes of ``file`` (relative to the resolved ``root``), or
    ``None`` when it is not a regular file inside ``root`` once every link is followed.

    A device or a FIFO is never opened (``stat`` first; opened non-blocking, checked again on
    the open descriptor, in case it was swapped in between)."""
    try:
        path = (root / file).resolve()
        if not path.is_relative_to(root) or not stat.S_ISREG(path.stat().st_mode):
            return None
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a link loop (Python < 3.13)
        return None
    with os.fdopen(descriptor, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            return handle.read(SOURCE_READ_MAX)
        except OSError:
            return None


def _whole_lines(raw: bytes) -> list[str]:
    """The lines of ``raw`` (a line cut by the byte bound is left out)."""
    lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)
    if len(raw) == SOURCE_READ_MAX and lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()
    return lines
