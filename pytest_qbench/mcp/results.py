"""A finished run into a ``RunResult``: failures only, bounded; pytest's exit status mapped.

Failed tests and collection errors are data. A usage error (4), an internal error (3), an
interruption this server did not cause (2 without collection errors) and a crash (a signal,
or a status pytest never uses) are tool errors: the message carries the end of pytest's output
and what to do.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.exit_codes import PYTEST_MEANINGS
from pytest_qbench.core.exit_codes import WROTE_RESULTS
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.text import bound_text
from pytest_qbench.mcp.budget import bound_name
from pytest_qbench.mcp.budget import bound_trace
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.command import RunPlan
from pytest_qbench.mcp.models import RunCounts
from pytest_qbench.mcp.models import RunResult
from pytest_qbench.mcp.models import Truncation
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.digest import build_digest
from pytest_qbench.report.digest import digest_failure
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import DigestCoverage
from pytest_qbench.report.models import DigestFailure
from pytest_qbench.report.models import TestReport


if TYPE_CHECKING:
    from pytest_qbench.report.records import DigestCoverageRecord
    from pytest_qbench.report.records import ReportSummaryRecord
    from pytest_qbench.report.records import TestResultRecord


TRACE_CAP = 2000
VERBOSE_TRACE_CAP = 5000
SHORT_MESSAGE = 300
SHORT_TRACE = 600
SLACK = 64
MIN_STEPS = 2
"""Bytes kept free for the truncation counts, written after the lists are fitted."""
TAIL_LINES = 30
STEP_CAP = 1000
"""Characters of a next step."""
TAIL_CHARS = 1500


def exit_meaning(code: int | None, stopped_by: str | None, timeout: float) -> str:
    """pytest's exit status in words."""
    if stopped_by == "timeout":
        return f"stopped after the timeout of {timeout:g}s"
    if stopped_by == "cancelled":
        return "cancelled by the client"
    if code is None:
        return "unknown"
    if code < 0:
        return f"killed by signal {_signal_name(-code)}"
    return PYTEST_MEANINGS.get(code, f"exit status {code}, which pytest does not use")


def check_exit(
    plan: RunPlan, code: int, report: TestReport | None, stopped_by: str | None
) -> TestReport:
    """The run's report when its exit status means data; else the tool error it means.

    Raises:
        ToolFailure: usage error, internal error, an interruption, a crash, or no results.
    """
    # pytest exits 2 (interrupted) after collection errors too: then the results say why
    if report is not None and (
        stopped_by is not None
        or code in WROTE_RESULTS
        or (code == PytestExit.INTERRUPTED and report.collection_errors)
    ):
        return report
    raise ToolFailure(failure_message(plan, code, report, stopped_by))


def failure_message(
    plan: RunPlan, code: int, report: TestReport | None, stopped_by: str | None
) -> str:
    """What went wrong, what to do, and the end of pytest's output."""
    meaning = exit_meaning(code, stopped_by, plan.timeout)
    ran = f"{len(report.results)} test(s) had finished" if report else "no results were written"
    lines = [
        f"pytest exited with status {code} ({meaning}) in run {plan.run_id}; {ran}.",
        f"What to do: {_advice(code, report, stopped_by, plan.argv[0])}",
    ]
    for stream in ("stderr", "stdout"):
        tail = output_tail(plan.run_dir / OUTPUT_NAMES[stream])
        if tail:
            lines += [f"--- end of pytest's {stream} ---", tail]
    lines.append(
        f'The whole output: get_run_output(run_id="{plan.run_id}", stream="stdout" or "stderr").'
    )
    return "\n".join(lines)


def _advice(code: int, report: TestReport | None, stopped_by: str | None, python: str) -> str:
    if stopped_by is not None:
        return "pytest stopped before it wrote any result; run again with a longer timeout."
    if code == PytestExit.USAGE_ERROR:
        return (
            "pytest refused its command line or the project's configuration: check test_path, "
            "keyword and markers, and the configuration or conftest.py it names below."
        )
    if code == PytestExit.INTERNAL_ERROR:
        return (
            "a plugin or conftest.py raised inside pytest (INTERNALERROR below); fix it, or "
            "run pytest yourself to see the whole traceback."
        )
    if code == PytestExit.INTERRUPTED:
        return "the run was interrupted from outside this server (Ctrl-C, a signal); run again."
    if code in WROTE_RESULTS:
        return (
            "pytest ran, but qbench wrote no results: check that pytest-qbench is installed "
            f"for {python}, the interpreter the server runs pytest with (--python)."
        )
    return (
        "the pytest process died (a test killed it, ran out of memory, or called os._exit); "
        "the tests that finished are in get_test_failure; run the rest again."
    )


def output_tail(path: Path) -> str:
    """The last lines of an output file, bounded."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 16 * TAIL_CHARS))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    tail = Redactor(os.environ)("\n".join(data.rstrip().split("\n")[-TAIL_LINES:]))
    return bound_text(tail, TAIL_CHARS, keep="tail")


def build_result(
    plan: RunPlan,
    code: int,
    report: TestReport,
    stopped_by: str | None,
    budget: int,
    complete: bool = False,
) -> RunResult:
    """The run's ``RunResult``, within ``budget`` bytes of JSON; ``complete`` when every test
    had its result before this server stopped the run (in its session end): not partial."""
    record = report.model_dump(mode="json")
    view = aggregate(record["results"], max_items=plan.max_failures).view()
    digest = build_digest(record, view, plan.max_failures)
    chosen = [*view.failures.items, *view.errors.items][: plan.max_failures]
    trace_cap = VERBOSE_TRACE_CAP if plan.verbose else TRACE_CAP
    failures = [_failure(result, trace_cap) for result in chosen]
    errors = [Diagnostic.model_validate(d) for d in record["collection_errors"]]
    base = RunResult(
        run_id=plan.run_id,
        success=digest["success"] and stopped_by is None,
        exit_code=code,
        exit_meaning=_run_meaning(code, report, stopped_by, plan.timeout, complete),
        timed_out=stopped_by == "timeout",
        partial=(report.run.interrupted or stopped_by is not None) and not complete,
        timeout_seconds=plan.timeout,
        summary=_counts(record["summary"]),
        coverage=_coverage(digest["coverage"]),
        next_steps=_steps(digest["next_steps"], stopped_by, plan.timeout),
    )
    return fit_result(base, failures, errors, view.failures.total + view.errors.total, budget)


def _run_meaning(
    code: int, report: TestReport, stopped_by: str | None, timeout: float, complete: bool
) -> str:
    """The exit status in words; status 2 after collection errors is no interruption."""
    if code == 2 and stopped_by is None and report.collection_errors and not report.run.interrupted:
        return "errors during collection; no tests ran"
    if complete:
        return (
            f"every test had its result, but pytest's session end outlasted the timeout of "
            f"{timeout:g}s and its grace, and was stopped (reports and coverage may be missing)"
        )
    return exit_meaning(code, stopped_by, timeout)


def fit_result(
    base: RunResult,
    failures: list[DigestFailure],
    errors: list[Diagnostic],
    failing: int,
    budget: int,
) -> RunResult:
    """``base`` with as many collection errors, then failures, as fit in ``budget`` bytes.

    The first failure (short, if need be) always gets room: the coverage's file lists and the
    later next steps give way to it, so a failed run never lists no failure.
    """
    first = [_short_failure(failures[0])] if failures else errors[:1]
    reserve = sum(json_size(item) + 1 for item in first)
    base = _fit_base(base, budget - reserve)
    room = budget - json_size(base) - SLACK
    fitted_errors = fit_items(errors, room, _short_diagnostic)
    fitted = fit_items(failures, room - fitted_errors.used, _short_failure)
    result = base.model_copy(
        update={
            "collection_errors": fitted_errors.items,
            "failures": fitted.items,
            "truncated": Truncation(
                failures=failing - len(fitted.items),
                collection_errors=len(errors) - len(fitted_errors.items),
                shortened=fitted.shortened + fitted_errors.shortened,
                budget_bytes=budget,
            ),
        }
    )
    while json_size(result) > budget and result.failures:  # cannot happen; kept as a guard
        result.failures.pop()
        result.truncated.failures += 1
    return result


def _fit_base(base: RunResult, budget: int) -> RunResult:
    """``base`` within ``budget``: first without the coverage's file lists (their counts
    stay), then with the first next steps only."""
    if json_size(base) + SLACK <= budget:
        return base
    if base.coverage is not None:
        coverage = base.coverage.model_copy(update={"least_covered": [], "missing_files": []})
        base = base.model_copy(update={"coverage": coverage})
    while json_size(base) + SLACK > budget and len(base.next_steps) > MIN_STEPS:
        base = base.model_copy(update={"next_steps": base.next_steps[:-1]})
    return base


def _failure(result: TestResultRecord, trace_cap: int) -> DigestFailure:
    shape = digest_failure(result)
    shape["test_name"] = bound_name(shape["test_name"])
    if shape["file"]:
        shape["file"] = bound_name(shape["file"])
    failure = result["failure"]
    trace = failure["stack_trace"] if failure else ""
    shape["stack_trace"] = bound_trace(trace, trace_cap, result["file"])
    return DigestFailure.model_validate(shape)


def _short_failure(failure: DigestFailure) -> DigestFailure:
    own = failure.test_name.split("::", 1)[0]
    return failure.model_copy(
        update={
            "error_message": bound_text(failure.error_message, SHORT_MESSAGE),
            "stack_trace": bound_trace(failure.stack_trace, SHORT_TRACE, own),
        }
    )


def _short_diagnostic(diagnostic: Diagnostic) -> Diagnostic:
    return diagnostic.model_copy(
        update={"message": bound_text(diagnostic.message, SHORT_TRACE, keep="tail")}
    )


def _counts(summary: ReportSummaryRecord) -> RunCounts:
    fields: Mapping[str, object] = summary
    return RunCounts.model_validate({k: fields[k] for k in RunCounts.model_fields})


def _coverage(coverage: DigestCoverageRecord | None) -> DigestCoverage | None:
    return DigestCoverage.model_validate(coverage) if coverage else None


def _steps(steps: list[str], stopped_by: str | None, timeout: float) -> list[str]:
    steps = [bound_name(step, STEP_CAP) for step in steps]  # they quote node ids
    if stopped_by != "timeout":
        return steps
    first = (
        f"The run hit its timeout of {timeout:g}s and was stopped: run fewer tests (test_path, "
        "keyword, markers) or give a longer timeout_seconds"
    )
    return [first, *steps]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
