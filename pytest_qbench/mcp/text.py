"""The text each tool returns next to its structured result: what a person or a model reads.

Many clients hand the model only this text, so it says what matters, most important first, in
a few lines per item. ``fit_lines`` keeps it within a character budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from pytest_qbench.core.summary_words import summary_text
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.mcp.models import RunResult
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import DigestCoverage


TRACE_LINES = 4
MESSAGE_LINES = 20
"""Lines of a failure's message in run_test_workflow's text (the rest: get_test_failure)."""
MESSAGE_LINE = 300
"""Characters of one of them."""


def fit_lines(blocks: Iterable[str], limit: int, more: str = "") -> str:
    """Blocks joined by newlines while they fit in ``limit`` characters; then ``more`` with
    the number left out (``{n}`` in it), if any were."""
    listed = list(blocks)
    kept: list[str] = []
    used = 0
    for block in listed:
        if used + len(block) + 1 > limit - len(more) - 8:
            left = len(listed) - len(kept)
            return "\n".join([*kept, more.format(n=left)] if more else kept)
        kept.append(block)
        used += len(block) + 1
    return "\n".join(kept)


def bound_bytes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, with a marker where it was cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    marker = f"\n[... cut to {limit} bytes]"
    return data[: limit - len(marker.encode())].decode(errors="ignore") + marker


COUNTED = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "errors", "reruns")
"""The counts of an answer's first line, in pytest's words and order (`summary_words`)."""


def counts_text(summary: dict[str, int | float]) -> str:
    """``3 failed, 10 passed, 1 error in 2.31s``: pytest's closing line."""
    took = f" in {summary['duration']:.2f}s" if "duration" in summary else ""
    return f"{summary_text(summary, COUNTED)}{took}"


def run_text(result: RunResult, limit: int) -> str:
    """The run in a few lines per failure."""
    status = "PASSED" if result.success else "FAILED"
    if result.success and not result.summary.total:
        status = "NO TESTS RAN"
    head = [
        f"{status}: {counts_text(result.summary.model_dump())} (run {result.run_id}; exit "
        f"{result.exit_code}: {result.exit_meaning})"
    ]
    if result.partial:
        head.append("Partial results: the run did not finish.")
    blocks = [_collection_error_line(d) for d in result.collection_errors]
    shown = len(result.failures) + result.truncated.failures
    if result.failures:
        blocks.append(f"Failures ({len(result.failures)} of {shown} listed):")
    for number, failure in enumerate(result.failures, start=1):
        where = f"{failure.file}:{failure.line}" if failure.line else failure.file or "?"
        trace = trace_without_message(
            failure.stack_trace, failure.error_type, failure.error_message
        )
        block = [
            f"{number}. {failure.test_name} [{failure.outcome}] {failure.error_type} at {where}",
            *(f"   {line}" for line in message_lines(failure.error_message)),
            *(f"   | {line}" for line in _trace_end(trace)),
        ]
        blocks.append("\n".join(block))
    if result.coverage is not None:
        blocks.append(_coverage_line(result.coverage))
    blocks += [f"Next: {step}" for step in result.next_steps]
    if result.failures or result.truncated.failures:
        blocks.append(
            f'Details: get_test_failure(run_id="{result.run_id}", test="<node id>"); raw '
            f'output: get_run_output(run_id="{result.run_id}")'
        )
    return fit_lines([*head, *blocks], limit, "... {n} more lines in the structured result")


def _collection_error_line(diagnostic: Diagnostic) -> str:
    """``Collection error: test_x.py at test_x.py:1: ModuleNotFoundError: ...``: the cause,
    not only pytest's headline."""
    where = f"{diagnostic.file}:{diagnostic.line}" if diagnostic.line else diagnostic.file
    name = diagnostic.nodeid or diagnostic.file or "?"
    at = f" at {where}" if where and where != name else ""
    return f"Collection error: {name}{at}: {error_line(diagnostic.message, 300)}"


def message_lines(message: str) -> list[str]:
    """The message's lines: pytest's assertion explanation in full (``+  where 3 = f(1)``...),
    each line cut at ``MESSAGE_LINE`` characters, at most ``MESSAGE_LINES`` of them."""
    lines = [line for line in message.splitlines() if line.strip()] or [""]
    kept = [line.rstrip()[:MESSAGE_LINE] for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        kept.append(f"... {len(lines) - MESSAGE_LINES} more lines: get_test_failure has them")
    return kept


def _trace_end(trace: str) -> list[str]:
    lines = [line for line in trace.splitlines() if line.strip()]
    return lines[-TRACE_LINES:]


def _coverage_line(coverage: DigestCoverage) -> str:
    gate = ""
    if coverage.threshold is not None:
        gate = f" (threshold {coverage.threshold:g}%: {'met' if coverage.met else 'NOT met'})"
    return (
        f"Coverage: {coverage.percentage:.2f}% ({coverage.lines_covered}/"
        f"{coverage.lines_total} lines){gate}"
    )


def cut_lines(lines: Sequence[str], limit: int) -> str:
    """``lines`` joined, cut to ``limit`` characters with a marker where they were cut."""
    text = "\n".join(lines)
    return text if len(text) <= limit else f"{text[: limit - 40]}\n[... cut to {limit} characters]"
