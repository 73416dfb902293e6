"""Keeping responses within a size budget: first things first, with counts of what was left out.

Sizes are bytes of compact JSON, as the structured result travels. A list is filled in order
while there is room; an item that does not fit is tried once more in its short form, and when
that does not fit either the rest are counted, not sent.

Names are bounded too (`bound_name`: a node id can be a million characters long), and
`bounded_content` is the last guard of every structured result: should it still be over the
budget, its longest strings are cut until it fits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Generic
from typing import TypeVar

from pydantic import BaseModel

from pytest_qbench.core.text import CUT_MARKER
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import readable


T = TypeVar("T", bound=BaseModel)

NAME_CAP = 500
"""Characters of a name (a node id, a file) in a response: its start and its end are kept."""
NAME_CUT = re.compile(r"^(.*)\[\.\.\. qbench cut \d+ characters \.\.\.\](.*)$", re.DOTALL)
MIN_STRING = 64
"""The shortest cap ``bounded_content`` cuts strings to."""


def json_size(model: BaseModel) -> int:
    """Bytes of ``model``'s compact JSON."""
    return len(model.model_dump_json().encode())


@dataclass
class Fitted(Generic[T]):
    """What ``fit_items`` kept."""

    items: list[T] = field(default_factory=list)
    used: int = 0
    """Bytes the kept items take, commas included."""
    shortened: int = 0
    dropped: int = 0


def fit_items(items: Sequence[T], room: int, shorten: Callable[[T], T]) -> Fitted[T]:
    """Keep ``items`` in order while they fit in ``room`` bytes; an item too big is kept in its
    ``shorten``-ed form if that fits; from the first that fits in neither form on, all are
    dropped (so "the first N" stays true)."""
    fitted: Fitted[T] = Fitted()
    for position, item in enumerate(items):
        size = json_size(item) + 1
        if fitted.used + size > room:
            item = shorten(item)
            size = json_size(item) + 1
            if fitted.used + size > room:
                fitted.dropped = len(items) - position
                break
            fitted.shortened += 1
        fitted.items.append(item)
        fitted.used += size
    return fitted


def bound_trace(trace: str, limit: int, own_file: str | None) -> str:
    """``trace`` (pytest's ``--tb=short`` shape) cut to about ``limit`` characters, keeping the
    test's own frame (the first frame in ``own_file``) and the end, where the exception is."""
    if len(trace) <= limit:
        return trace
    lines = trace.split("\n")
    start = _own_frame(lines, own_file)
    if start is None:
        return bound_text(trace, limit, keep="tail")
    end = start + 1
    if end < len(lines) and lines[end].startswith("    "):
        end += 1  # the frame's source line
    own = "\n".join(lines[start:end])
    rest = "\n".join(lines[end:])
    room = limit - len(own)
    if room < limit // 2:  # a huge source line: the end matters more
        return bound_text(trace, limit, keep="tail")
    before = len("\n".join(lines[:start]))
    parts = [CUT_MARKER.format(count=before + 1, hint="")] if start else []
    parts.append(own)
    parts.append(bound_text(rest, room, keep="tail"))
    return "\n".join(parts)


def _own_frame(lines: list[str], own_file: str | None) -> int | None:
    if not own_file:
        return None
    prefix = f"{own_file}:"
    for position, line in enumerate(lines):
        if line.startswith(prefix) and ": in " in line:
            return position
    return None


def bound_name(name: str, limit: int = NAME_CAP) -> str:
    """``name`` cut to about ``limit`` characters on one line: its first quarter and its end,
    with the marker between (`name_matches` finds the whole name again from it)."""
    if len(name) <= limit:
        return name
    head = limit // 4
    tail = limit - head
    marker = CUT_MARKER.format(count=len(name) - limit, hint="")
    return f"{name[:head]}{marker}{name[len(name) - tail :]}"


def name_matches(given: str, name: str) -> bool:
    """Whether ``given`` is a part of ``name``, or ``name`` as `bound_name` cut it."""
    if given in name:
        return True
    cut = NAME_CUT.match(given)
    return cut is not None and name.startswith(cut[1]) and name.endswith(cut[2])


def bounded_content(content: dict[str, Any], budget: int) -> dict[str, Any]:
    """``content`` (a structured result) within ``budget`` bytes of JSON: when it is over, each
    string (and key) is cut to a quarter of the budget, then to less, until it fits."""
    limit = budget // 4
    while _json_bytes(content) > budget and limit >= MIN_STRING:
        content = _bound_strings(content, limit)
        limit //= 2
    return content


def readable_content(data: Any) -> Any:
    """``data`` (a structured result) with every string readable: ANSI escapes and other
    control characters out of the messages, traces and output it holds."""
    if isinstance(data, str):
        return readable(data)
    if isinstance(data, list):
        return [readable_content(item) for item in data]
    if isinstance(data, dict):
        return {key: readable_content(value) for key, value in data.items()}
    return data


def _json_bytes(data: Any) -> int:
    return len(json.dumps(data, separators=(",", ":")).encode())


def _bound_strings(data: Any, limit: int) -> Any:
    if isinstance(data, str):
        return bound_text(data, limit)
    if isinstance(data, list):
        return [_bound_strings(item, limit) for item in data]
    if isinstance(data, dict):
        return {bound_name(k, limit): _bound_strings(v, limit) for k, v in data.items()}
    return data
