"""The MCP server's tool-call log in the history index: recording a call, reading the recent
calls back, and the totals per tool (``qbench mcp-log``, ``check_health``).

Each call is one row of ``tool_calls``: when, the tool, its arguments (JSON, secrets already
redacted by the caller), whether it succeeded and else the error's type, how long it took, the
bytes of its response, and the bytes of raw output it replaced (what the assistant did not have
to read). The log is bounded: recording a call drops the calls beyond the newest
``KEEP_TOOL_CALLS``; ``qbench gc --older-than`` drops the older calls too.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from typing import Any

from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index


KEEP_TOOL_CALLS = 10_000
"""Calls the log keeps: recording one drops those beyond the newest this many."""
MAX_ARGUMENT_CHARS = 200
"""Characters of one text argument that are logged (a longer one is cut, marked ``…``)."""


@dataclass(frozen=True)
class ToolCall:
    """One call of an MCP tool, as logged."""

    tool: str
    arguments: Mapping[str, Any]
    """The call's arguments, secrets redacted."""
    success: bool
    error_type: str | None
    """The error's class name (``ToolFailure``, ``ValidationError``...) when it failed."""
    duration: float
    """Seconds."""
    response_bytes: int
    """Bytes of the response (JSON), or of the error message."""
    replaced_bytes: int
    """Bytes of raw output the response stood for (pytest's stdout and stderr of the run)."""
    called_at: datetime

    @property
    def saved_bytes(self) -> int:
        """Raw output the assistant did not read: what the response replaced, less itself."""
        return max(0, self.replaced_bytes - self.response_bytes)


@dataclass(frozen=True)
class ToolTotals:
    """The logged calls of one tool, summed up."""

    tool: str
    calls: int
    succeeded: int
    median_duration: float
    """Seconds."""
    response_bytes: int
    replaced_bytes: int
    saved_bytes: int

    @property
    def success_rate(self) -> float:
        """Share of the calls that succeeded, 0 to 1."""
        return self.succeeded / self.calls if self.calls else 0.0


def bound_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with every text cut to ``MAX_ARGUMENT_CHARS`` (lists and dicts inside
    too), so that a long text argument does not swell the log."""
    return {str(key): _bound(value) for key, value in arguments.items()}


def _bound(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_ARGUMENT_CHARS:
        return value[: MAX_ARGUMENT_CHARS - 1] + "…"
    if isinstance(value, (list, tuple)):
        return [_bound(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _bound(item) for key, item in value.items()}
    return value


def record_call(index: Index, call: ToolCall, keep: int = KEEP_TOOL_CALLS) -> None:
    """Add ``call`` to the log, then drop the calls beyond the newest ``keep``, in one
    transaction."""
    row = (
        to_index_time(call.called_at),
        call.tool,
        json.dumps(bound_arguments(call.arguments), ensure_ascii=False, default=str),
        int(call.success),
        call.error_type,
        float(call.duration),
        int(call.response_bytes),
        int(call.replaced_bytes),
    )

    def work(cursor: Cursor) -> None:
        cursor.execute(sql.INSERT_TOOL_CALL, row)
        cursor.execute(sql.TOOL_CALLS_BEYOND, (keep,))

    index.write(work)


def prune_tool_calls(cursor: Cursor, before: str, *, dry_run: bool = False) -> int:
    """``qbench gc --older-than``: drop the calls made before ``before`` (an index time);
    return how many (with ``dry_run``, only count them)."""
    cursor.execute(sql.COUNT_TOOL_CALLS_BEFORE, (before,))
    count = int(cursor.fetchone()[0])
    if count and not dry_run:
        cursor.execute(sql.TOOL_CALLS_BEFORE, (before,))
    return count


def recent_calls(index: Index, limit: int) -> list[ToolCall]:
    """The ``limit`` most recent calls, newest first."""

    def work(cursor: Cursor) -> list[ToolCall]:
        cursor.execute(sql.RECENT_TOOL_CALLS, (limit,))
        return [_call(row) for row in cursor.fetchall()]

    return index.read(work)


def _call(row: tuple[Any, ...]) -> ToolCall:
    values = dict(zip(sql.TOOL_CALL_COLUMNS, row, strict=True))
    called_at = from_index_time(values["called_at"]) or datetime.now(timezone.utc)
    try:
        arguments = json.loads(values["arguments"])
    except ValueError:
        arguments = {}
    return ToolCall(
        tool=values["tool"],
        arguments=arguments if isinstance(arguments, dict) else {},
        success=bool(values["success"]),
        error_type=values["error_type"],
        duration=float(values["duration"]),
        response_bytes=int(values["response_bytes"]),
        replaced_bytes=int(values["replaced_bytes"]),
        called_at=called_at,
    )


def tool_totals(index: Index) -> list[ToolTotals]:
    """Per tool, over every logged call: calls, successes, median duration, bytes; by tool
    name."""

    def work(cursor: Cursor) -> list[tuple[Any, ...]]:
        cursor.execute(sql.TOOL_CALL_FIGURES)
        return list(cursor.fetchall())

    rows = index.read(work)
    by_tool: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_tool.setdefault(str(row[0]), []).append(row)
    return [_totals(tool, calls) for tool, calls in sorted(by_tool.items())]


def _totals(tool: str, rows: list[tuple[Any, ...]]) -> ToolTotals:
    response = [int(r[3]) for r in rows]
    replaced = [int(r[4]) for r in rows]
    return ToolTotals(
        tool=tool,
        calls=len(rows),
        succeeded=sum(1 for r in rows if r[1]),
        median_duration=float(statistics.median(float(r[2]) for r in rows)),
        response_bytes=sum(response),
        replaced_bytes=sum(replaced),
        saved_bytes=sum(max(0, b - a) for a, b in zip(response, replaced, strict=True)),
    )
