"""``run_test_workflow``: a run request started as a pytest child, the finished run into a
``RunResult`` (failures only, bounded; pytest's exit status mapped), the result model and its
text. The report's aggregation and digest are imported when a run is first finished.

Failed tests and collection errors are data. A usage error (4), an internal error (3), an
interruption this server did not cause (2 without collection errors) and a crash (a signal,
or a status pytest never uses) are tool errors: the message carries the end of pytest's output
and what to do.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import Field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.exit_codes import PYTEST_MEANINGS
from pytest_qbench.core.exit_codes import STOPPED_EARLY_OK
from pytest_qbench.core.exit_codes import WROTE_RESULTS
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.markdown import died_duration
from pytest_qbench.core.markdown import died_unseen
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.budget import bound_name
from pytest_qbench.mcp.budget import bound_trace
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.command import RunPlan
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.command import plan_run
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.mcp.runs import output_tail
from pytest_qbench.mcp.text import counts_text
from pytest_qbench.mcp.text import fit_lines
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import DigestCoverage
from pytest_qbench.report.models import DigestFailure
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.models import TestReport


if TYPE_CHECKING:
    from pytest_qbench.mcp.process import PytestProcess
    from pytest_qbench.mcp.service import RunService
    from pytest_qbench.report.records import DigestCoverageRecord
    from pytest_qbench.report.records import ReportSummaryRecord
    from pytest_qbench.report.records import TestResultRecord


class RunCounts(QBenchModel):
    """A run's counts, as pytest's closing line gives them."""

    total: int = 0
    """Tests with a result."""
    passed: int = 0
    """Passed tests."""
    failed: int = 0
    """Failed tests."""
    errors: int = 0
    """Setup/teardown errors and collection errors."""
    skipped: int = 0
    """Skipped tests."""
    xfailed: int = 0
    """Expected failures."""
    xpassed: int = 0
    """Unexpected passes."""
    subtests_passed: int = 0
    """As pytest's line (verbose runs)."""
    subtests_failed: int = 0
    """Also counted in failed, as pytest does."""
    subtests_skipped: int = 0
    """As pytest's line."""
    reruns: int = 0
    """Reruns by pytest-rerunfailures."""
    flaky: int = 0
    """Tests that passed only after reruns."""
    deselected: int = 0
    """Tests deselected by -k/-m."""
    warnings: int = 0
    """pytest warnings."""
    other: dict[str, int] = Field(default_factory=dict)
    """Other words (todo)."""
    duration: float = 0.0
    """Seconds the session took."""
    pass_rate: float | None = None
    """Percent passed among passed, failed and errors; null when no test ran."""


class Truncation(QBenchModel):
    """What was left out or shortened to keep a response within its size budget."""

    failures: int = 0
    """Failed or errored tests not listed (ask get_test_failure for any of them)."""
    collection_errors: int = 0
    """Collection errors not listed."""
    shortened: int = 0
    """Listed items whose message or trace was cut shorter than usual to fit."""
    budget_bytes: int = 0
    """The budget of the structured result, in bytes of JSON."""


class RunResult(QBenchModel):
    """One run of the test suite: failures only, never passing tests or raw output."""

    run_id: str
    """The run's id: get_test_failure and get_run_output take it."""
    success: bool
    """True when nothing failed or errored, the run finished and every configured gate held."""
    exit_code: int | None
    """pytest's exit status (negative: killed by that signal)."""
    exit_meaning: str
    """pytest's exit status in words."""
    timed_out: bool = False
    """Stopped at timeout_seconds: results partial, unless only the session end was cut."""
    partial: bool = False
    """The run did not finish: tests after the cut never ran."""
    died: bool = False
    """Died, when unknown: duration is to its last result."""
    timeout_seconds: float
    """The timeout the run had (the server's maximum caps what was asked)."""
    tool: str = "pytest"
    """Runners: pytest+vitest sums both."""
    summary: RunCounts
    """Counts of the tests that ran."""
    failures: list[DigestFailure] = Field(default_factory=list)
    """Failed and errored tests, first ones first: where, what, and the end of the trace."""
    collection_errors: list[Diagnostic] = Field(default_factory=list)
    """Files that could not be collected (their tests did not run)."""
    coverage: DigestCoverage | None = None
    """Coverage totals and the least covered files, when measured."""
    next_steps: list[str] = Field(default_factory=list)
    """What to do next, most useful first."""
    truncated: Truncation = Field(default_factory=Truncation)
    """What the size budget left out."""


TRACE_CAP = 2000
VERBOSE_TRACE_CAP = 5000
SHORT_MESSAGE = 300
SHORT_TRACE = 600
SLACK = 64
MIN_STEPS = 2
"""Bytes kept free for the truncation counts, written after the lists are fitted."""
STEP_CAP = 1000
"""Characters of a next step."""


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


def check_coverage_sources(plan: RunPlan, report: TestReport) -> None:
    """Refuse a run whose ``coverage_source`` was not measured: when the project's
    configuration has pytest-cov measure (``--cov`` in ``addopts``), qbench reads pytest-cov's
    data and ``--qbench-cov`` is not used, so a source pytest-cov does not measure got no
    coverage, and pytest-cov's total is not its.

    Raises:
        ToolFailure: a source named was not measured; the message names the run's results.
    """
    coverage = report.coverage
    if coverage is None or coverage.measured_by != "pytest-cov":
        return
    asked = [arg.split("=", 1)[1] for arg in plan.argv if arg.startswith("--qbench-cov=")]
    measured = {_source_key(plan, source) for source in coverage.sources}
    missed = [source for source in asked if _source_key(plan, source) not in measured]
    if not missed:
        return
    shown = ", ".join(_source_shown(plan, source) for source in missed)
    theirs = ", ".join(coverage.sources) or "coverage.py's configured source"
    raise ToolFailure(
        f"coverage source {shown} (coverage_source, else the server's --coverage-source) was "
        "not measured: the project's pytest configuration has "
        f"pytest-cov measure this run (--cov: {theirs}), and qbench then reports pytest-cov's "
        f"data, not --qbench-cov's. The run itself: {counts_text(report.summary.model_dump())} "
        f"(run {plan.run_id}; get_test_failure and get_run_output read it). Ask again without "
        "coverage_source for pytest-cov's coverage, or name the sources pytest-cov measures."
    )


def _source_key(plan: RunPlan, source: str) -> str:
    """A coverage source compared by what it names: a directory by its resolved path."""
    path = plan.cwd / source
    return str(path.resolve()) if path.is_dir() else source


def _source_shown(plan: RunPlan, source: str) -> str:
    path = plan.cwd / source
    return path.relative_to(plan.cwd).as_posix() if path.is_relative_to(plan.cwd) else source


def failure_message(
    plan: RunPlan, code: int, report: TestReport | None, stopped_by: str | None
) -> str:
    """What went wrong, what to do, and the end of pytest's output."""
    meaning = exit_meaning(code, stopped_by, plan.timeout)
    ran = "no results were written"
    if report is not None:
        from pytest_qbench.report.readers import DIED_TYPE  # readers: not at the server's start

        died = [r for r in report.results if r.failure and r.failure.error_type == DIED_TYPE]
        ran = f"{len(report.results) - len(died)} test(s) had finished"
        if died and died[0].failure is not None:
            phase = died[0].failure.phase
            where = "" if phase == "call" else f", in its {phase}"
            ran += f", and it died in {died[0].nodeid} ({died[0].outcome}{where})"
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
        return (
            "pytest stopped the run: a test raised KeyboardInterrupt or called pytest.exit, "
            "--sw (or -x under pytest-xdist) stopped it at a failure, or Ctrl-C or a signal "
            "came from outside this server; pytest's output below says which. Running again "
            "stops the same way unless the cause was outside."
        )
    if code in WROTE_RESULTS:
        return (
            "pytest ran, but qbench wrote no results: check that pytest-qbench is installed "
            f"for {python}, the interpreter the server runs pytest with (--python)."
        )
    return (
        "the pytest process died (a test killed it, ran out of memory, or called os._exit); "
        "the tests that finished are in get_test_failure; run the rest again."
    )


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
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.digest import build_digest

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
        died=died_unseen(report.run.interrupted, report.run.exit_code),
        timeout_seconds=plan.timeout,
        tool=report.run.tool,
        summary=_counts(record["summary"]),
        coverage=_coverage(digest["coverage"]),
        next_steps=_steps(digest["next_steps"], stopped_by, plan.timeout),
    )
    return fit_result(base, failures, errors, view.failures.total + view.errors.total, budget)


def _run_meaning(
    code: int, report: TestReport, stopped_by: str | None, timeout: float, complete: bool
) -> str:
    """The exit status in words; status 2 after collection errors is no interruption, status 1
    with no failed test names the gate that failed."""
    if code == 2 and stopped_by is None and report.collection_errors and not report.run.interrupted:
        return "errors during collection; no tests ran"
    failed_gates = [gate for gate in report.gates if not gate.passed]
    summary = report.summary
    if code == 1 and stopped_by is None and failed_gates and not (summary.failed or summary.errors):
        said = "; ".join(f"the {gate.name} gate did: {gate.detail}" for gate in failed_gates)
        return f"no test failed, but {said}"
    if (
        stopped_by is None
        and code >= 0
        and died_unseen(report.run.interrupted, report.run.exit_code)
    ):
        return (  # os._exit(0) in a conftest: the process's status, not pytest's verdict
            f"the process ended with status {code} before pytest's session did (os._exit, a "
            "crash): not pytest's verdict"
        )
    if stopped_by is None and code == 0 and report.run.interrupted:
        return STOPPED_EARLY_OK  # pytest.exit("...", returncode=0) in a test or a hook
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
    from pytest_qbench.report.digest import digest_failure

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


def _subtests_note(result: RunResult) -> str:
    """How the failures listed agree with ``failed`` when it counts failed subtests too."""
    counts = result.summary
    if not counts.subtests_failed:
        return ""
    return f"; pytest's {counts.failed} failed count their {counts.subtests_failed} failed subtests too"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


TRACE_LINES = 4


MESSAGE_LINES = 20
"""Lines of a failure's message in run_test_workflow's text (the rest: get_test_failure)."""


MESSAGE_LINE = 300
"""Characters of one of them."""


def run_text(result: RunResult, limit: int) -> str:
    """The run in a few lines per failure."""
    from pytest_qbench.report.digest import THEN_IN_TEARDOWN

    status = "PASSED" if result.success else "FAILED"
    if result.success and not result.summary.total:
        status = "NO TESTS RAN"
    counts = counts_text(result.summary.model_dump(exclude={"duration"}))
    runners = result.tool.split("+")
    if len(runners) > 1:  # the summary adds the runners' counts up, as report.json's does
        counts += f" ({', '.join(runners[:-1])} and {runners[-1]} together)"
    took = f"{result.summary.duration:.2f}s"
    if result.died:
        took = died_duration(took)
    head = [
        f"{status}: {counts} in {took} (run {result.run_id}; exit "
        f"{result.exit_code}: {result.exit_meaning})"
    ]
    if result.partial:
        head.append("Partial results: the run did not finish.")
    blocks = [_collection_error_line(d) for d in result.collection_errors]
    shown = len(result.failures) + result.truncated.failures
    if result.failures:
        blocks.append(
            f"Failures ({len(result.failures)} of {shown} listed{_subtests_note(result)}):"
        )
    for number, failure in enumerate(result.failures, start=1):
        where = f"{failure.file}:{failure.line}" if failure.line else failure.file or "?"
        own = failure.error_message.partition(THEN_IN_TEARDOWN)[0]  # the exception's alone
        trace = trace_without_message(failure.stack_trace, failure.error_type, own)
        runner = "" if failure.runner == "pytest" else f"{failure.runner} "
        block = [
            f"{number}. {runner}{failure.test_name} [{failure.outcome}] {failure.error_type} "
            f"at {where}",
            *([f"   History: {failure.history}"] if failure.history else []),
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
    name = diagnostic.nodeid or diagnostic.file
    at = f" at {where}" if where and where != name else ""
    named = f" {name}{at}:" if name else ""  # a runner's own error names no file
    return f"Collection error:{named} {error_line(diagnostic.message, 300)}"


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
    from pytest_qbench.report.coverage.view import total_text

    return f"Coverage: {total_text(vars(coverage))}{gate}"


def start_run(tools: RunService, request: RunRequest) -> PytestProcess:
    """Check ``request`` and start pytest.

    Raises:
        ToolFailure: a refused argument, or a run already going on.
    """
    plan = plan_run(tools.config, request)
    return tools.start(plan)


def finish_run(
    tools: RunService,
    process: PytestProcess,
    extend: Callable[[RunPlan, TestReport], TestReport] | None = None,
) -> RunResult:
    """The ended run's result; ``extend`` adds to its report what other runners (vitest,
    jest) found, unless the run was stopped.

    Raises:
        ToolFailure: pytest ended with a usage error, an internal error or a crash.
    """
    try:
        code, run_dir = tools.wrap_up(process)
        report = check_exit(process.plan, code, runs.load_report(run_dir), process.stopped_by)
        check_coverage_sources(process.plan, report)
        if extend is not None and process.stopped_by is None:
            report = extend(process.plan, report)
            code = report.run.exit_code if report.run.exit_code is not None else code
        return build_result(
            process.plan,
            code,
            report,
            process.stopped_by,
            tools.config.budget,
            complete=process.complete_when_stopped,
        )
    finally:
        tools.release(process)
