"""``get_test_failure``: one failed test of a stored run, in full but bounded; its result
model (``FailureDetail``) and its text.

The test is named by its node id, or by any part of it that names one failing test only. The
response is cut in levels until it fits the budget: captured output first, then the trace
(which keeps the test's own frame and its end), then the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import cast

from pydantic import Field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import first_line
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.budget import bound_name
from pytest_qbench.mcp.budget import bound_trace
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.budget import name_matches
from pytest_qbench.mcp.text import cut_lines
from pytest_qbench.report.metric_text import result_failures
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult


if TYPE_CHECKING:
    from pytest_qbench.mcp.service import RunService
    from pytest_qbench.report.records import TestResultRecord


class FailureDetail(QBenchModel):
    """One failed or errored test in full (bounded), with its captured output."""

    run_id: str
    """The run."""
    nodeid: str
    """pytest's node id."""
    outcome: str
    """``failed`` or ``error``."""
    phase: str
    """The phase that failed: setup, call, teardown or collect."""
    file: str | None = None
    """File of the failing line in the user's code."""
    line: int | None = None
    """1-based failing line."""
    error_type: str
    """Exception class name."""
    error_message: str
    """The exception's message (bounded)."""
    stack_trace: str
    """The traceback: the test's own frame, then the end (bounded)."""
    falsifying_example: str | None = None
    """Hypothesis' falsifying example."""
    teardown_error: str | None = None
    """A teardown error that followed the failure, one line."""
    qbench_checks: list[str] = Field(default_factory=list)
    """Failing agent-evaluation metrics and tool checks of the test."""
    stdout: str = ""
    """Captured standard output (its end)."""
    stderr: str = ""
    """Captured standard error (its end)."""
    log: str = ""
    """Captured log records (their end)."""
    duration: float = 0.0
    """Seconds the test took."""
    reruns: int = 0
    """How many times it was rerun."""
    markers: list[str] = Field(default_factory=list)
    """Marker names on the test."""
    key: str | None = None
    """Test-case key from qbench_case (e.g. a JIRA key)."""
    title: str | None = None
    """Test-case title from qbench_case."""
    history: str | None = None
    """What earlier runs say: ``new failure``, ``failed 3 of the last 10 runs``..."""
    cut: list[str] = Field(default_factory=list)
    """Fields cut shorter than usual to fit the size budget."""


FAILING = ("failed", "error")


@dataclass(frozen=True)
class Caps:
    """Characters kept of each text field."""

    message: int
    trace: int
    captured: int


LEVELS = (
    Caps(4000, 8000, 3000),
    Caps(2000, 5000, 1000),
    Caps(1000, 3000, 300),
    Caps(500, 1500, 0),
    Caps(300, 600, 0),
)


def failure_detail(report: TestReport, test: str, budget: int) -> FailureDetail:
    """The failure of ``test`` in ``report``, within ``budget`` bytes of JSON.

    Raises:
        ToolFailure: no such failing test, several match, or it did not fail.
    """
    found = find_result(report, test)
    detail = _detail(report, found, LEVELS[0], [])
    for level in LEVELS[1:]:
        if json_size(detail) <= budget:
            break
        detail = _detail(report, found, level, _cut(found, level))
    return detail


def find_result(report: TestReport, test: str) -> TestResult | Diagnostic:
    """The result (or collection error) ``test`` names.

    Raises:
        ToolFailure: naming the candidates, or the outcome of a test that did not fail.
    """
    test = test.strip()
    if not report.results and not report.collection_errors:
        from pytest_qbench.core.exit_codes import pytest_meaning

        code = report.run.exit_code
        meaning = pytest_meaning(code, report.run.interrupted)
        status = "no exit status" if code is None else f"pytest's exit status {code}"
        raise ToolFailure(
            f"run {report.run.run_id} ran no test ({status}{': ' + meaning if meaning else ''})"
            ": there is no failure to show; list_runs lists the runs that did"
        )
    exact = [r for r in report.results if r.nodeid == test]
    if not exact and not test.isascii():
        test = as_pytest_writes_it(test)
        exact = [r for r in report.results if r.nodeid == test]
    if exact:
        if exact[-1].outcome not in FAILING:
            raise ToolFailure(
                f"{bound_name(test)} {exact[-1].outcome} in run {report.run.run_id}: there is no failure "
                "to show"
            )
        return exact[-1]
    failing = [r for r in report.results if r.outcome in FAILING]
    matches = [r for r in failing if test and name_matches(test, r.nodeid)]
    if len(matches) == 1:
        return matches[0]
    errors = [d for d in report.collection_errors if test and test in (d.nodeid or d.file or "")]
    if not matches and len(errors) == 1:
        return errors[0]
    listed = matches or failing
    shown = ", ".join(bound_name(r.nodeid) for r in listed[:10]) or "none"
    more = f" (and {len(listed) - 10} more)" if len(listed) > 10 else ""
    what = "names several failing tests" if matches else "names no failing test"
    raise ToolFailure(
        f"{bound_name(test)!r} {what} in run {report.run.run_id}; failing tests: {shown}{more}. "
        "Give a node id."
    )


def as_pytest_writes_it(test: str) -> str:
    """``test`` with its parameters' non-ASCII characters escaped as pytest writes them in node
    ids (``test_x[日本語]`` is ``test_x[\\u65e5\\u672c\\u8a9e]``, ``café`` ``caf\\xe9``): an
    assistant reading the source names the parameters as written there; a name before the
    brackets stays (pytest does not escape identifiers)."""
    head, bracket, params = test.partition("[")
    return head + bracket + params.encode("unicode_escape").decode("ascii")


def _detail(
    report: TestReport, found: TestResult | Diagnostic, caps: Caps, cut: list[str]
) -> FailureDetail:
    if isinstance(found, Diagnostic):
        return FailureDetail(
            run_id=report.run.run_id,
            nodeid=bound_name(found.nodeid or found.file or ""),
            outcome="error",
            phase="collect",
            file=found.file,
            line=found.line,
            error_type=found.code or "CollectionError",
            error_message=bound_text(error_line(found.message, caps.message), caps.message),
            stack_trace=bound_text(found.message, caps.trace, keep="tail"),
            cut=cut,
        )
    failure = found.failure
    captured = found.captured
    metadata = found.metadata
    teardown = found.teardown_failure
    return FailureDetail(
        run_id=report.run.run_id,
        nodeid=bound_name(found.nodeid),
        outcome=found.outcome,
        phase=failure.phase if failure else "call",
        file=(failure.file if failure else None) or found.file,
        line=(failure.line if failure else None) or found.line,
        error_type=failure.error_type if failure else "Failed",
        error_message=bound_text(failure.error_message if failure else "", caps.message),
        stack_trace=bound_trace(_trace(failure, caps), caps.trace, found.file),
        falsifying_example=failure.falsifying_example if failure else None,
        teardown_error=(
            f"{teardown.error_type}: {first_line(teardown.error_message)}" if teardown else None
        ),
        qbench_checks=result_failures(cast("TestResultRecord", found.model_dump(mode="json"))),
        stdout=_tail(captured.stdout if captured else "", caps.captured),
        stderr=_tail(captured.stderr if captured else "", caps.captured),
        log=_tail(captured.log if captured else "", caps.captured),
        duration=found.duration,
        reruns=found.reruns,
        markers=found.markers,
        key=metadata.key if metadata else None,
        title=metadata.title if metadata else None,
        history=found.history.summary if found.history else None,
        cut=cut,
    )


def _trace(failure: Failure | None, caps: Caps) -> str:
    """The failure's traceback, without its copy of a long message shown whole just above."""
    if failure is None:
        return ""
    if len(failure.error_message) > caps.message:
        return failure.stack_trace
    return trace_without_message(failure.stack_trace, failure.error_type, failure.error_message)


def _tail(text: str, limit: int) -> str:
    return bound_text(text, limit, keep="tail") if text else ""


def _cut(found: TestResult | Diagnostic, caps: Caps) -> list[str]:
    """The fields longer than ``caps`` allows, which this level cuts shorter than usual."""
    if isinstance(found, Diagnostic):
        return ["stack_trace"] if len(found.message) > caps.trace else []
    cut = []
    failure, captured = found.failure, found.captured
    if failure and len(failure.error_message) > caps.message:
        cut.append("error_message")
    if failure and len(failure.stack_trace) > caps.trace:
        cut.append("stack_trace")
    for name in ("stdout", "stderr", "log"):
        if captured and len(getattr(captured, name)) > caps.captured:
            cut.append(name)
    return cut


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
    return cut_lines(lines, limit)


def get_test_failure(tools: RunService, run_id: str, test: str) -> FailureDetail:
    """One failure of a stored run, in full (bounded)."""
    report = runs.require_report(runs.find_run(tools.config, run_id))
    return failure_detail(report, test, tools.config.budget)
