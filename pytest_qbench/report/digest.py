"""The failure digest: failures only, bounded, with next steps, for assistants and CI bots.

Works on records (``shapes``); ``FailureDigest.model_validate(build_digest(...))`` gives the
model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.exit_codes import PYTEST_MEANINGS
from pytest_qbench.core.exit_codes import RAN_CLEAN
from pytest_qbench.core.exit_codes import WROTE_RESULTS
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.summary_words import OUTCOME_FIELDS
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.summary_words import summary_text
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import failure_where
from pytest_qbench.core.text import first_line
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.report.aggregate import ReportView
from pytest_qbench.report.aggregate import as_record
from pytest_qbench.report.checks.intest import diagnostic_steps
from pytest_qbench.report.coverage.view import digest_coverage
from pytest_qbench.report.coverage.view import gate_step
from pytest_qbench.report.coverage.view import untested_steps
from pytest_qbench.report.gates.text import gate_step as metric_gate_step
from pytest_qbench.report.metric_text import result_failures
from pytest_qbench.report.shapes import new
from pytest_qbench.report.verdict import Verdict
from pytest_qbench.report.verdict import verdict_of


if TYPE_CHECKING:
    from pytest_qbench.report.records import DigestFailureRecord
    from pytest_qbench.report.records import FailureDigestRecord
    from pytest_qbench.report.records import FailureRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


DIGEST_MAX_FAILURES = 20
DIGEST_MAX_MESSAGE = 1000
DIGEST_MAX_TRACE = 2000
MAX_NEXT_STEPS = 8


def build_digest(
    value: TestReportRecord | Any, view: ReportView, max_failures: int = DIGEST_MAX_FAILURES
) -> FailureDigestRecord:
    """Summarise ``report`` as a ``FailureDigest`` record: failed and errored tests, first first."""
    report: TestReportRecord = as_record(value)
    chosen = [*view.failures.items, *view.errors.items][:max_failures]
    total = view.failures.total + view.errors.total
    summary, run, coverage = report["summary"], report["run"], report["coverage"]
    verdict = verdict_of(report)
    return new(
        "FailureDigest",
        success=verdict.green,
        run_id=run["run_id"],
        exit_code=run["exit_code"],
        summary=summary,
        failures=[digest_failure(r) for r in chosen],
        collection_errors=report["collection_errors"][:max_failures],
        truncated=total - len(chosen),
        coverage=digest_coverage(coverage) if coverage else None,
        next_steps=next_steps(report, chosen, view, verdict),
    )


def digest_failure(result: TestResultRecord) -> DigestFailureRecord:
    """One failed test in the digest's compact shape; failing metrics and tool checks the
    message does not name yet are added to it, one line."""
    failure = result["failure"]
    message = failure["error_message"] if failure else ""
    trace = failure["stack_trace"] if failure else ""
    if failure and len(message) <= DIGEST_MAX_MESSAGE:  # shown whole: not twice
        trace = trace_without_message(trace, failure["error_type"], message)
    missing = [line for line in result_failures(result) if line not in message]
    if missing:
        message = f"{message}\nqbench: {'; '.join(missing)}".lstrip("\n")
    teardown = result.get("teardown_failure")
    if teardown:  # pytest's line counts it as an error of its own
        message = f"{message}{_teardown_line(teardown, result)}".lstrip("\n")
    return new(
        "DigestFailure",
        test_name=result["nodeid"],
        outcome=result["outcome"],
        file=(failure and failure["file"]) or result["file"],
        line=(failure and failure["line"]) or result["line"],
        error_type=failure["error_type"] if failure else "Failed",
        error_message=bound_text(message, DIGEST_MAX_MESSAGE),
        stack_trace=bound_text(trace, DIGEST_MAX_TRACE, keep="tail"),
        history=history["summary"] if (history := result.get("history")) else None,
        runner=result.get("runner", "pytest"),
    )


def next_steps(
    report: TestReportRecord,
    chosen: Iterable[TestResultRecord],
    view: ReportView,
    verdict: Verdict | None = None,
) -> list[str]:
    """Concrete suggestions, most useful first (``verdict``: `verdict_of` the report, when the
    caller has it)."""
    verdict = verdict or verdict_of(report)
    steps: list[str] = []
    chosen = list(chosen)
    broken = _broken_run_step(report) if chosen else None
    if broken:
        steps.append(broken)
    incomplete = verdict.incomplete
    if incomplete:  # before anything else: the rest of the digest is not all there is
        steps.insert(0, incomplete)
    for diag in report["collection_errors"][:3]:
        where = _location(diag["file"], diag["line"]) if diag["file"] else diag["nodeid"]
        where = f" in {where}" if where else ""  # a runner's own error names no file
        steps.append(f"Fix the collection error{where}: {error_line(diag['message'], 160)}")
    for result in chosen:
        steps.append(_step_for(result))
        teardown = result.get("teardown_failure")
        if teardown:
            steps.append(
                f"Fix the teardown error ({teardown['error_type']}) at "
                f"{failure_where(teardown, result)} used by {result['nodeid']}"
            )
        if len(steps) >= MAX_NEXT_STEPS:
            break
    steps.extend(diagnostic_steps(report["diagnostics"]))
    coverage = report["coverage"]
    gate = gate_step(coverage) if coverage else None
    if gate:
        steps.append(gate)
    gates = [step for gate in report["gates"] if (step := metric_gate_step(gate))]
    steps.extend(gates)
    steps.extend(untested_steps(coverage) if coverage else [])
    steps.extend(_flaky_step(result) for result in view.flaky.items[:2])
    interrupted = None
    for reason in verdict.reasons:  # the words of every output's verdict (report/verdict.py)
        fix = {
            "interrupted": ": run the tests again for complete results",
            "undecided": "; report it as a bug in qbench, with this message",
        }.get(reason.kind)
        if fix and interrupted is None:
            interrupted = f"{reason.text[:1].upper()}{reason.text[1:]}{fix}"
            steps.append(interrupted)
    if not steps:
        steps.append(_nothing_failed(report))
    # a failed gate and a partial run are kept even when the list is full
    kept = {s for s in (incomplete, broken, gate, interrupted, *gates) if s}
    return _fit(steps, kept, MAX_NEXT_STEPS)


def _broken_run_step(report: TestReportRecord) -> str | None:
    """What to do first when pytest ended with an internal or usage error after tests had
    failed: the failures listed are not all there is. (An interruption has its own step; a
    run without failures says so in ``_nothing_failed``.)"""
    code, run = report["run"]["exit_code"], report["run"]
    if code is None or code in WROTE_RESULTS or code == PytestExit.INTERRUPTED:
        return None
    if run["interrupted"]:
        return None
    meaning = PYTEST_MEANINGS.get(code, "an unknown status")
    return (
        f"pytest exited with status {code} ({meaning}): the results are incomplete; "
        "read its output, fix the cause and run the tests again"
    )


def _fit(steps: list[str], keep: set[str], limit: int) -> list[str]:
    """``steps`` cut to ``limit`` by dropping from the end, except the steps in ``keep``."""
    fitted = list(steps)
    droppable = [i for i, step in enumerate(fitted) if step not in keep]
    while len(fitted) > limit and droppable:
        del fitted[droppable.pop()]
    return fitted[:limit]


def _nothing_failed(report: TestReportRecord) -> str:
    summary, exit_code = report["summary"], report["run"]["exit_code"]
    if report["run"]["collect_only"]:
        collected = report["run"]["collected"] or 0
        return f"Collected {plural(collected, 'test')} without running them (--collect-only)"
    if exit_code not in (*RAN_CLEAN, None):
        return f"pytest exited with status {exit_code} without a failing test: read its output"
    if summary["total"] == 0:
        return "No tests ran: check the test paths and the -k/-m selection"
    counts = summary_text(summary, OUTCOME_FIELDS)
    if summary["passed"] == 0:
        return f"No test passed or failed ({counts})"
    return f"No test failed ({counts}); nothing to fix"


def _flaky_step(result: TestResultRecord) -> str:
    tries = result.get("new_test_tries")
    if tries:
        outcomes = ", ".join([*tries, result["outcome"]])
        return (
            f"Investigate flaky new test {result['nodeid']}: not the same outcome in its "
            f"{len(tries) + 1} runs ({outcomes}); make it deterministic before it merges"
        )
    return f"Investigate flaky test {result['nodeid']}: passed after {result['reruns']} rerun(s)"


def _step_for(result: TestResultRecord) -> str:
    failure, nodeid = result["failure"], result["nodeid"]
    history = result.get("history")
    if history and history["status"] == "quarantined" and KNOWN_QUARANTINED in history["summary"]:
        return (
            f"Do not fix {nodeid}: a quarantined flaky test's known failure (its fingerprint is "
            "not new); change it only if the failure's fingerprint is new"
        )
    if failure is None:
        return f"Look at {nodeid}: it {result['outcome']} without a traceback"
    where = _location(failure["file"] or result["file"], failure["line"] or result["line"])
    kind, phase = failure["error_type"], failure["phase"]
    if kind == "XPASS(strict)":
        return f"{nodeid} passes now: remove its xfail marker or make it non-strict"
    if phase in ("setup", "teardown"):
        return f"Fix the {phase} error ({kind}) at {where} used by {nodeid}"
    if kind == "AssertionError":
        return f"Fix the assertion at {where} ({nodeid})"
    if kind == "MetricFailure":
        return (
            f"Improve the agent's result in {nodeid}: {first_line(failure['error_message'], 120)}"
        )
    if kind == "DocTestFailure":
        return (
            f"Fix the doctest example at {where}: its output is not the one the docstring "
            f"expects ({nodeid})"
        )
    if kind in ("ModuleNotFoundError", "ImportError"):
        return f"Fix the import at {where}: {first_line(failure['error_message'], 120)}"
    return f"Fix the {kind} raised at {where} ({nodeid})"


KNOWN_QUARANTINED = "quarantined (known failure"
"""How a quarantined test's known failure's history begins (``history/failure_history.py``)."""


THEN_IN_TEARDOWN = "\nThen in teardown: "
"""What begins the line a failure's message ends with when a teardown error followed it."""


def _teardown_line(teardown: FailureRecord, result: TestResultRecord) -> str:
    """``\nThen in teardown: RuntimeError at conftest.py:6: server did not shut down``: the
    teardown error that followed a test's failure (`TestResult.teardown_failure`)."""
    said = first_line(teardown["error_message"], 160)
    where = failure_where(teardown, result)
    return f"{THEN_IN_TEARDOWN}{teardown['error_type']} at {where}" + (f": {said}" if said else "")


def _location(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line else file
