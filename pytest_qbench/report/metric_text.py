"""How failing metrics and tool checks are written: in a test's failure and in the digest.

Standard library only, on ``MetricResult`` records (plain JSON), so the pytest side and the
report readers (digest, CLI) say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.text import first_line


if TYPE_CHECKING:
    from pytest_qbench.report.records import MetricResultRecord
    from pytest_qbench.report.records import TestResultRecord


MAX_CALL_TEXT = 80


def score_pair(score: float, threshold: float) -> tuple[str, str]:
    """Score and threshold with 2 decimals, more when needed to tell them apart (``0.695`` is
    not shown as ``0.70 < 0.70``)."""
    for digits in (2, 3, 4, 6):
        left, right = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if left != right:
            return left, right
    return repr(score), repr(threshold)


def metric_failure(result: MetricResultRecord, *, strict: bool = False) -> str | None:
    """Why a metric fails its test, e.g. ``metric token_f1: score 0.42 < threshold 0.70``;
    ``None`` when it does not. An error fails with ``fail_on_error`` (always when ``strict``, as
    in ``qbench.check``); a skipped metric never fails."""
    name = result["metric_name"]
    if result["skipped"]:
        return None
    if result["error"] is not None:
        if strict or result["fail_on_error"]:
            return f"metric {name}: error: {first_line(result['error'], 300)}"
        return None
    if result["passed"] or result["score"] is None or result["threshold"] is None:
        return None
    score, threshold = score_pair(result["score"], result["threshold"])
    return f"metric {name}: score {score} < threshold {threshold}"


def tools_failure(called: Sequence[Any], expected: Sequence[Any]) -> str:
    """The tool check's failure: ``tools: called [search], expected [search, open_page]``."""
    return f"tools: called {calls_text(called)}, expected {calls_text(expected)}"


def calls_text(calls: Iterable[Any]) -> str:
    """Tool calls (names, or ``{"name", "arguments"}`` objects) as ``[search, open(url=...)]``."""
    return "[" + ", ".join(call_text(call) for call in calls) + "]"


def call_text(call: Any) -> str:
    """One tool call: its name, with its arguments as JSON when it has some."""
    if not isinstance(call, dict):
        return str(call)
    arguments = call.get("arguments")
    if not arguments:
        return str(call.get("name"))
    text = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    if len(text) > MAX_CALL_TEXT:
        text = text[: MAX_CALL_TEXT - 1] + "…"
    return f"{call.get('name')}({text})"


def failure_message(lines: Sequence[str]) -> str:
    """One line for one failure; a count and an indented list for several."""
    if len(lines) == 1:
        return lines[0]
    return f"{len(lines)} qbench checks failed:\n" + "\n".join(f"  {line}" for line in lines)


def result_failures(result: TestResultRecord) -> list[str]:
    """Every failing metric and tool check of a ``TestResult`` record."""
    lines = [line for m in result["metric_results"] if (line := metric_failure(m))]
    if result["tools_matched"] is False:
        lines.append(tools_failure(result["tool_calls"], result["expected_tools"] or []))
    return lines
