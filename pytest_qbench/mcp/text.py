"""The text each tool returns next to its structured result: what a person or a model reads.

Many clients hand the model only this text, so it says what matters, most important first, in
a few lines per item. ``fit_lines`` keeps it within a character budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from pytest_qbench.core.summary_words import summary_text
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import first_line
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.mcp.models import BuildResult
from pytest_qbench.mcp.models import FailureDetail
from pytest_qbench.mcp.models import FlakyList
from pytest_qbench.mcp.models import GenerateWorkflowResult
from pytest_qbench.mcp.models import Health
from pytest_qbench.mcp.models import IngestReport
from pytest_qbench.mcp.models import RunList
from pytest_qbench.mcp.models import RunOutputPage
from pytest_qbench.mcp.models import RunResult
from pytest_qbench.mcp.models import SearchHit
from pytest_qbench.mcp.models import SearchResult
from pytest_qbench.mcp.models import SimilarTests
from pytest_qbench.mcp.models import TestCaseDetail
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


def failure_text(detail: FailureDetail, limit: int) -> str:
    """The failure: where, what, the trace, then the captured output."""
    where = f"{detail.file}:{detail.line}" if detail.line else detail.file or "?"
    lines = [
        f"{detail.nodeid} {detail.outcome} in {detail.phase} (run {detail.run_id}): "
        f"{detail.error_type} at {where}",
        detail.error_message,
    ]
    if detail.history:
        lines.append(f"History: {detail.history}")
    lines += [f"qbench: {check}" for check in detail.qbench_checks]
    lines += ["Trace:", detail.stack_trace]
    if detail.falsifying_example:
        lines.append(detail.falsifying_example)
    if detail.teardown_error:
        lines.append(f"Then in teardown: {detail.teardown_error}")
    for name in ("stdout", "stderr", "log"):
        text = getattr(detail, name)
        if text:
            lines += [f"Captured {name}:", text]
    return _cut(lines, limit)


def _cut(lines: Sequence[str], limit: int) -> str:
    text = "\n".join(lines)
    return text if len(text) <= limit else f"{text[: limit - 40]}\n[... cut to {limit} characters]"


def build_text(result: BuildResult, limit: int) -> str:
    """The build workflow in a line per error (issue 13.7)."""
    counts = result.summary
    head = (
        f"{'PASSED' if result.success else 'FAILED'} {result.run_id}: "
        f"{counts.total_errors} error(s) ({counts.type_errors} type, {counts.lint_errors} lint, "
        f"{counts.build_errors} build), {counts.warnings} warning(s) in "
        f"{counts.duration_seconds:.2f}s"
    )
    checks = [
        f"{check.tool}: {check.status}" + (f" ({first_line(check.note)})" if check.note else "")
        for check in result.checks
    ]
    errors = []
    for error in result.errors:
        where = ":".join(str(p) for p in (error.file, error.line, error.column) if p is not None)
        errors.append(
            f"{where or '-'}: {error.severity} {error.error_type}: {first_line(error.message)}"
        )
    more = [f"... {result.truncated} more not listed (size budget)"] if result.truncated else []
    steps = ["Next steps:", *(f"- {s}" for s in result.next_steps)]
    return fit_lines([head, *checks, *errors, *more, *steps], limit, "[... {n} more lines]")


def output_text(page: RunOutputPage, limit: int) -> str:
    """A header, then the lines."""
    end = page.offset + page.lines
    if page.total_lines == 0:
        head = f"Run {page.run.run_id} {page.stream}: empty"
    elif page.lines == 0:
        head = f"Run {page.run.run_id} {page.stream}: no lines from offset {page.offset}"
    else:
        head = (
            f"Run {page.run.run_id} {page.stream}, lines {page.offset + 1}-{end} "
            f"of {page.total_lines}"
        )
    if page.next_offset is not None:
        head += f" (next: offset={page.next_offset})"
    lines = [head, *([page.note] if page.note else []), page.text]
    return _cut(lines, limit)


def runs_text(runs: RunList, limit: int) -> str:
    """One line per run."""
    if not runs.runs:
        return runs.note or "no runs"
    lines = [
        f"{run.run_id}  {run.started_at}  exit {run.exit_code}  "
        f"{counts_text({**run.summary, 'duration': run.duration})}"
        + ("  (interrupted)" if run.interrupted else "")
        + (f"  shard {run.shard}" if run.shard else "")
        for run in runs.runs
    ]
    return fit_lines(lines, limit, "... {n} more runs")


def flaky_text(flaky: FlakyList, limit: int) -> str:
    """One line per flaky test."""
    if not flaky.tests:
        return flaky.note or "no flaky tests"
    lines = [
        f"{t.nodeid}: flaky {t.flaky_indicator:.2f}, {t.flips} flips, failed {t.failed} of "
        f"{t.runs}, {t.trend}"
        + (f" ({t.evidence})" if t.evidence else "")
        + (f"; last: {first_line(t.last_failure)}" if t.last_failure else "")
        for t in flaky.tests
    ]
    return fit_lines(lines, limit, "... {n} more tests")


def _hit_line(number: int, found: SearchHit) -> str:
    label = found.key or found.nodeid or found.uid
    bits = [f"{number}. {found.title or label} [{label}] score {found.score:.3f}"]
    if found.priority:
        bits.append(f"priority {found.priority}")
    if found.tags:
        bits.append(f"tags {', '.join(found.tags)}")
    if found.matched_fields:
        bits.append(f"matched in {', '.join(found.matched_fields)}")
    if found.matched_steps:
        bits.append(f"steps {','.join(map(str, found.matched_steps))}")
    line = "; ".join(bits)
    return f"{line}\n   {found.summary}" if found.summary else line


def search_text(result: SearchResult, limit: int) -> str:
    """The matches, best first, and the facets."""
    if not result.results:
        return result.note or f"no matches among {result.catalog_size} test cases"
    head = f"{result.total} matches among {result.catalog_size} test cases"
    if result.next_cursor:
        head += f"; more with cursor={result.next_cursor}"
    lines = [head, *(_hit_line(n, h) for n, h in enumerate(result.results, start=1))]
    facets = result.facets
    for name in ("tags", "priority", "platforms", "markers"):
        values = getattr(facets, name)
        if values:
            lines.append(f"{name}: " + ", ".join(f"{k} ({v})" for k, v in values.items()))
    return fit_lines(lines, limit, "... {n} more lines in the structured result")


def case_text(case: TestCaseDetail, limit: int) -> str:
    """The case with its steps."""
    lines = [f"{case.title or case.uid} [{case.key or case.uid}] ({case.source})"]
    for name in ("nodeid", "priority", "folder"):
        value = getattr(case, name)
        if value:
            lines.append(f"{name}: {value}")
    for name in ("tags", "platforms", "markers"):
        values = getattr(case, name)
        if values:
            lines.append(f"{name}: {', '.join(values)}")
    if case.description:
        lines.append(case.description)
    for step in case.steps:
        lines.append(f"{step.index}. {step.action}")
        if step.expected:
            lines.append(f"   Expected: {step.expected}")
    if case.steps_omitted:
        lines.append(f"... {case.steps_omitted} more steps")
    lines += [f"Also: {other.uid} ({other.source})" for other in case.linked]
    return _cut(lines, limit)


def similar_text(found: SimilarTests, limit: int) -> str:
    """The similar cases, most similar first."""
    head = (
        f"Tests similar to {found.reference.uid}:"
        if found.reference
        else "Tests similar to the text:"
    )
    if not found.results:
        return f"{head} none"
    lines = [head, *(_hit_line(n, h) for n, h in enumerate(found.results, start=1))]
    return fit_lines(lines, limit, "... {n} more")


def ingest_text(report: IngestReport, limit: int) -> str:
    """The counts, then the rejections."""
    lines = [
        f"Ingested {report.source}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed, {report.rejected_total} "
        f"rejected; catalog: {report.catalog_size} test cases ({report.duration:.1f}s)"
    ]
    lines += [f"Collection error: {error}" for error in report.collection_errors]
    lines += [f"Rejected {r.record}: {r.reason}" for r in report.rejected]
    return fit_lines(lines, limit, "... {n} more")


def _tool_calls_text(health: Health) -> str:
    return "; ".join(
        f"{t.tool} {t.calls} ({t.success_rate:.0%} ok, median {t.median_duration:.2f}s, "
        f"{t.bytes_saved} bytes saved)"
        for t in health.tool_calls
    )


def health_text(health: Health, limit: int) -> str:
    """Status, versions, sizes, limits."""
    lines = [
        f"Status: {health.status}",
        f"pytest-qbench {health.qbench_version}, mcp {health.mcp_version}, Python "
        f"{health.python}, pytest {health.pytest_version or 'not found'}",
        f"Project root: {health.project_root}",
        f"Run store: {health.qbench_dir} ({'writable' if health.store_writable else 'NOT writable'})",
        f"Runs indexed: {health.runs_indexed if health.runs_indexed is not None else 'no index yet'}",
        f"Catalog: {health.catalog_size} test cases (FTS5 {'yes' if health.fts5 else 'NO'})",
        f"Run in progress: {health.run_in_progress or 'none'}",
        "Limits: " + ", ".join(f"{k}={v:g}" for k, v in health.limits.items()),
        "Tool calls logged: " + (_tool_calls_text(health) or "none"),
        *(f"Problem: {p}" for p in health.problems),
    ]
    return _cut(lines, limit)


def generate_text(result: GenerateWorkflowResult, limit: int) -> str:
    """A generation (issue 14.3): coverage before -> after, files, what needs a person."""
    made = result.auto_generated
    goal = (
        "goal met"
        if result.goal_met
        else (f"{result.coverage_gap.percentage_needed:g} points short of the goal")
    )
    head = (
        f"{'SUCCESS' if result.success else 'FAILED'} {result.run_id}: coverage "
        f"{result.coverage_before:.2f}% -> {made.coverage_achieved:.2f}% ({goal}); "
        f"{made.count} tests kept in {result.wall_seconds:.1f}s"
    )
    files = [f"wrote {path}" for path in made.files]
    problems = [f"problem: {first_line(p)}" for p in result.problems]
    review = [
        f"needs a person: {item.file}:{item.line} {item.function}: {first_line(item.reason)}"
        for item in result.needs_llm_review
    ]
    steps = ["Next steps:", *(f"- {s}" for s in result.next_steps)]
    return fit_lines([head, *files, *problems, *review, *steps], limit, "[... {n} more lines]")
