"""The failure digest: failures only, bounded, with next steps, for assistants and CI bots."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_qbench.aggregate import ReportView
from pytest_qbench.models import DigestFailure
from pytest_qbench.models import Failure
from pytest_qbench.models import FailureDigest
from pytest_qbench.models import TestReport
from pytest_qbench.models import TestResult
from pytest_qbench.textutil import bound_text
from pytest_qbench.textutil import first_line


DIGEST_MAX_FAILURES = 20
DIGEST_MAX_MESSAGE = 1000
DIGEST_MAX_TRACE = 2000
MAX_NEXT_STEPS = 8


def build_digest(
    report: TestReport, view: ReportView, max_failures: int = DIGEST_MAX_FAILURES
) -> FailureDigest:
    """Summarise ``report`` as a ``FailureDigest``: failed and errored tests, first ones first."""
    chosen = [*view.failures.items, *view.errors.items][:max_failures]
    total = view.failures.total + view.errors.total
    summary = report.summary
    success = (
        summary.failed == 0
        and summary.errors == 0
        and not report.run.interrupted
        and report.run.exit_code in (0, 5, None)
    )
    return FailureDigest(
        success=success,
        run_id=report.run.run_id,
        exit_code=report.run.exit_code,
        summary=summary,
        failures=[digest_failure(r) for r in chosen],
        collection_errors=report.collection_errors[:max_failures],
        truncated=total - len(chosen),
        next_steps=next_steps(report, chosen, view),
    )


def digest_failure(result: TestResult) -> DigestFailure:
    """One failed test in the digest's compact shape."""
    failure = result.failure
    return DigestFailure(
        test_name=result.nodeid,
        outcome=result.outcome,
        file=(failure.file if failure else None) or result.file,
        line=(failure.line if failure else None) or result.line,
        error_type=failure.error_type if failure else "Failed",
        error_message=bound_text(failure.error_message if failure else "", DIGEST_MAX_MESSAGE),
        stack_trace=bound_text(
            failure.stack_trace if failure else "", DIGEST_MAX_TRACE, keep="tail"
        ),
    )


def next_steps(report: TestReport, chosen: Iterable[TestResult], view: ReportView) -> list[str]:
    """Concrete suggestions, most useful first."""
    steps: list[str] = []
    for diag in report.collection_errors[:3]:
        where = f"{diag.file}:{diag.line}" if diag.line else (diag.file or diag.nodeid or "?")
        steps.append(f"Fix the collection error in {where}: {first_line(diag.message, 120)}")
    for result in chosen:
        steps.append(_step_for(result))
        if len(steps) >= MAX_NEXT_STEPS:
            break
    for result in view.flaky.items[:2]:
        steps.append(
            f"Investigate flaky test {result.nodeid}: passed after {result.reruns} rerun(s)"
        )
    if report.run.interrupted:  # kept even when the list is full: the other steps are partial
        steps = [
            *steps[: MAX_NEXT_STEPS - 1],
            "The run was interrupted; run the tests again for complete results",
        ]
    if not steps:
        steps.append(f"All {report.summary.total} tests passed; nothing to fix")
    return steps[:MAX_NEXT_STEPS]


def _step_for(result: TestResult) -> str:
    failure = result.failure
    if failure is None:
        return f"Look at {result.nodeid}: it {result.outcome} without a traceback"
    where = _where(failure, result)
    kind = failure.error_type
    if kind == "XPASS(strict)":
        return f"{result.nodeid} passes now: remove its xfail marker or make it non-strict"
    if failure.phase in ("setup", "teardown"):
        return f"Fix the {failure.phase} error ({kind}) at {where} used by {result.nodeid}"
    if kind == "AssertionError":
        return f"Fix the assertion at {where} ({result.nodeid})"
    if kind in ("ModuleNotFoundError", "ImportError"):
        return f"Fix the import at {where}: {first_line(failure.error_message, 120)}"
    return f"Fix the {kind} raised at {where} ({result.nodeid})"


def _where(failure: Failure, result: TestResult) -> str:
    file = failure.file or result.file
    line = failure.line or result.line
    return f"{file}:{line}" if line else file
