"""The ``--json`` output of the history commands (``qbench runs``, ``show``, ``diff``, ``index``,
``history``, ``gc``, ``mcp-log``) as models: each command builds one and prints its dump, and
``qbench schema --model NAME`` exports its JSON Schema (checked into ``docs/schemas/``).

Times are the index's text (ISO 8601, UTC), written as they are read.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING
from typing import Any

from pydantic import Field

from pytest_qbench.history.compare import MetricChange
from pytest_qbench.history.compare import Slower
from pytest_qbench.history.diagnostics import IndexedDiagnostic
from pytest_qbench.history.queries import FailureInfo
from pytest_qbench.history.thresholds import Thresholds
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.shapes import iso


if TYPE_CHECKING:
    from pytest_qbench.history.analysis import ExecutionSummary
    from pytest_qbench.history.compare import Change
    from pytest_qbench.history.compare import RunDiff
    from pytest_qbench.history.compare import Selection
    from pytest_qbench.history.diagnostics import DiagnosticDiff
    from pytest_qbench.history.files import StoreUsage
    from pytest_qbench.history.queries import PastResult
    from pytest_qbench.history.queries import RunInfo
    from pytest_qbench.history.toollog import ToolCall
    from pytest_qbench.history.toollog import ToolTotals


def _omitted_when_none(default: Any = None) -> Any:
    """A field left out of the JSON, not written ``null``, when it is ``None``."""
    return Field(default=default, exclude_if=lambda value: value is None)


class StoreUsageJson(QBenchModel):
    """What the qbench directory takes on disk."""

    path: str
    """The qbench directory."""
    bytes: int
    """Bytes of every file in it (the index included)."""
    run_dirs: int
    """Run directories in ``runs/``."""
    coverage_bytes: int
    """Bytes of the runs' coverage data files."""

    @classmethod
    def of(cls, usage: StoreUsage | None) -> StoreUsageJson | None:
        """The model of ``usage`` (``None`` without a qbench directory)."""
        if usage is None:
            return None
        return cls(
            path=str(usage.path),
            bytes=usage.total,
            run_dirs=usage.run_dirs,
            coverage_bytes=usage.coverage,
        )


class RunJson(QBenchModel):
    """An indexed run: the report's ``run`` fields, ``summary`` counts, environment bits."""

    run_id: str
    tool: str
    """The test tool (``pytest``)."""
    started_at: str | None
    completed_at: str | None
    """``None`` when the run did not end."""
    exit_code: int | None
    interrupted: bool
    cwd: str
    command: list[str]
    summary: dict[str, int | float]
    """pytest's counts (``passed``, ``failed``...) and ``duration`` in seconds;
    ``subtests_passed``, ``subtests_failed`` (counted in ``failed`` too) and
    ``subtests_skipped`` only where known (absent for a run indexed before the index kept
    them)."""
    branch: str | None
    commit: str | None
    ci_provider: str | None
    build_url: str | None
    python: str | None
    platform: str | None
    qbench_version: str | None
    shard: str | None = None
    """The CI shard the run was (``2/4``, ``queue NAME``); ``None`` for a whole run."""
    recording_errors: int | None = None
    """qbench's errors while recording the run: not 0, its results are incomplete; null: not
    known (indexed before schema 10)."""
    other: dict[str, int] = Field(default_factory=dict)
    """The counts pytest's closing line gave under plugins' own words (a conftest's
    ``pytest_report_teststatus`` counting a failure as ``known``: ``{"known": 1}``), in the
    line's order; empty when none, or not known (indexed before schema 12)."""

    @classmethod
    def of(cls, run: RunInfo) -> RunJson:
        """The model of an indexed run."""
        return cls(**_run_fields(run))


def _run_fields(run: RunInfo) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "tool": run.tool,
        "started_at": iso(run.started_at),
        "completed_at": iso(run.completed_at),
        "exit_code": run.exit_code,
        "interrupted": run.interrupted,
        "cwd": run.cwd,
        "command": run.command,
        "summary": {**run.counts, "duration": run.duration},
        "branch": run.branch,
        "commit": run.commit,
        "ci_provider": run.ci_provider,
        "build_url": run.build_url,
        "python": run.python,
        "platform": run.platform,
        "qbench_version": run.qbench_version,
        "shard": run.shard,
        "recording_errors": run.recording_errors,
        "other": dict(run.other),
    }


class RunsOutput(QBenchModel):
    """``qbench runs --json``."""

    runs: list[RunJson]
    """Newest first."""
    store: StoreUsageJson | None
    """``None`` when the history is a database with no qbench directory here."""


class IndexedRunJson(QBenchModel):
    """A run ``qbench index`` indexed."""

    run_id: str
    source: str
    """The run directory or report file it was read from."""
    results: int
    """Results indexed."""
    replaced: bool
    """Whether the run was in the index already (indexing is idempotent)."""


class IndexOutput(QBenchModel):
    """``qbench index --json``."""

    index: str
    """Where the index is (a file, or a database URL without its password)."""
    indexed: list[IndexedRunJson]
    removed: list[str]
    """Runs removed by ``--keep-runs``."""


class ShownFailure(QBenchModel):
    """A failed or errored test of a run (the failure's fields are absent when unknown)."""

    nodeid: str
    outcome: str
    error_type: str | None = _omitted_when_none()
    location: str | None = _omitted_when_none()
    message: str | None = _omitted_when_none()


class ShowOutput(RunJson):
    """``qbench show --json``: the run, its Markdown report and its failures."""

    report: str | None
    """The run's ``report.md`` when the qbench directory has it."""
    failures: list[ShownFailure]

    @classmethod
    def build(
        cls,
        run: RunInfo,
        failures: list[tuple[str, str, FailureInfo | None]],
        report: str | None,
    ) -> ShowOutput:
        """The model of ``qbench show``."""
        shown = [
            ShownFailure(nodeid=n, outcome=o, **(asdict(i) if i else {})) for n, o, i in failures
        ]
        return cls(**_run_fields(run), report=report, failures=shown)


class ChangeJson(QBenchModel):
    """A test whose outcome differs, or stays failing, between the two runs."""

    nodeid: str
    before: str | None
    """Outcome in the base run; ``None`` when it was not there."""
    after: str | None
    """Outcome in the other run; ``None`` when it is not there."""
    failure: FailureInfo | None
    same_failure: bool | None = _omitted_when_none()
    """For a test failing in both: whether with the same fingerprint (absent otherwise)."""
    history: str | None = _omitted_when_none()
    """For a new failure: its history's summary (absent otherwise)."""
    reruns: int | None = _omitted_when_none()
    """For a test that passed only after reruns: how many (absent otherwise)."""

    @classmethod
    def of(cls, change: Change) -> ChangeJson:
        """The model of a change."""
        return cls(
            nodeid=change.nodeid,
            before=change.before,
            after=change.after,
            failure=change.failure,
            same_failure=change.same_failure,
            history=change.history,
            reruns=change.reruns,
        )


class SelectionJson(QBenchModel):
    """What one run selected, as far as the index knows."""

    ran: int
    deselected: int
    files: int
    """Files its tests are in."""
    deselected_known: bool
    """Whether the index knows every test it left out of the files it collected."""

    @classmethod
    def of(cls, selection: Selection | None) -> SelectionJson | None:
        """The model of ``selection`` (``None`` when unknown)."""
        if selection is None:
            return None
        return cls(
            ran=selection.ran,
            deselected=selection.deselected,
            files=len(selection.files),
            deselected_known=selection.known,
        )


class SelectionsJson(QBenchModel):
    """What each run selected, and whether the two may differ."""

    same: bool
    base: SelectionJson | None
    head: SelectionJson | None


class DiagnosticsDiffJson(QBenchModel):
    """New and fixed diagnostics, for the checkers both runs ran."""

    compared: list[str]
    only_in_base: list[str]
    only_in_head: list[str]
    new: list[IndexedDiagnostic]
    fixed: list[IndexedDiagnostic]

    @classmethod
    def of(cls, diff: DiagnosticDiff) -> DiagnosticsDiffJson:
        """The model of a diagnostics diff."""
        return cls(
            compared=diff.compared,
            only_in_base=diff.only_base,
            only_in_head=diff.only_head,
            new=diff.new,
            fixed=diff.fixed,
        )


class DiffOutput(QBenchModel):
    """``qbench diff --json``: two runs compared."""

    base: RunJson
    head: RunJson
    thresholds: Thresholds
    new_failures: list[ChangeJson]
    known_flaky: list[ChangeJson]
    undecided: list[str]
    head_incomplete: str | None = None
    """Why the later run's results are incomplete (interrupted, or pytest's internal error),
    which fails the comparison: the tests it did not reach may fail; null when it finished."""
    fixed: list[ChangeJson]
    passed_after_reruns: list[ChangeJson]
    """Failing in the base run; passing in the other only after reruns: flaky, not fixed."""
    still_failing: list[ChangeJson]
    new_tests: list[str]
    removed_tests: list[str]
    selection: SelectionsJson
    not_selected_in_head: list[str]
    not_selected_in_base: list[str]
    slower: list[Slower]
    metric_changes: list[MetricChange]
    diagnostics: DiagnosticsDiffJson

    @classmethod
    def of(cls, diff: RunDiff) -> DiffOutput:
        """The model of a run comparison."""
        from pytest_qbench.history.compare import selections_differ

        def changes(items: list[Change]) -> list[ChangeJson]:
            return [ChangeJson.of(c) for c in items]

        return cls(
            base=RunJson.of(diff.base),
            head=RunJson.of(diff.head),
            thresholds=diff.thresholds,
            new_failures=changes(diff.new_failures),
            known_flaky=changes(diff.known_flaky),
            undecided=diff.undecided,
            head_incomplete=diff.head_incomplete,
            fixed=changes(diff.fixed),
            passed_after_reruns=changes(diff.passed_after_reruns),
            still_failing=changes(diff.still_failing),
            new_tests=diff.new_tests,
            removed_tests=diff.removed_tests,
            selection=SelectionsJson(
                same=not selections_differ(diff),
                base=SelectionJson.of(diff.base_selection),
                head=SelectionJson.of(diff.head_selection),
            ),
            not_selected_in_head=diff.not_selected_in_head,
            not_selected_in_base=diff.not_selected_in_base,
            slower=diff.slower,
            metric_changes=diff.metric_changes,
            diagnostics=DiagnosticsDiffJson.of(diff.diagnostics),
        )


class TestExecutionJson(QBenchModel):
    """A test over several runs, with Azure DevOps' ``ExecutionSummary`` names (times in
    seconds)."""

    nodeid: str
    totalRuns: int
    """Runs with a result of the test (skips included)."""
    passedRuns: int
    failedRuns: int
    skippedRuns: int
    lastRunDate: str | None
    lastRunId: str
    lastOutcome: str
    averageExecutionTime: float
    """Mean seconds over the runs it was not skipped in."""
    flakyIndicator: float
    """Flips / (results - 1), 0 to 1."""
    flips: int
    executionTrend: str
    """``Improving``, ``Stable`` or ``Declining``."""

    @classmethod
    def fields_of(cls, nodeid: str, summary: ExecutionSummary) -> dict[str, Any]:
        """The fields of a test's execution summary, checked by this model."""
        fields = {"nodeid": nodeid, **summary.to_json()}
        return dict(TestExecutionJson.model_validate(fields))


class PastResultJson(QBenchModel):
    """One result of a test in an indexed run."""

    run_id: str
    started_at: str | None
    outcome: str
    duration: float
    rerun_passed: bool
    """It failed, was rerun, and passed."""
    fingerprint: str | None
    message: str | None

    @classmethod
    def of(cls, result: PastResult) -> PastResultJson:
        """The model of a past result."""
        from pytest_qbench.core.timefmt import from_index_time

        return cls(
            run_id=result.run_id,
            started_at=iso(from_index_time(result.started_at)),
            outcome=result.outcome,
            duration=result.duration,
            rerun_passed=result.flaky,
            fingerprint=result.fingerprint,
            message=result.message,
        )


class HistoryOutput(TestExecutionJson):
    """``qbench history --json``: the execution summary, every result, and the flaky verdict."""

    results: list[PastResultJson]
    """Oldest first."""
    flaky: bool
    verdict: str
    """The evidence (or why not flaky), in words."""


class GcOutput(QBenchModel):
    """``qbench gc --json``."""

    index: str
    dry_run: bool
    removed: list[str]
    """The runs taken out of the index (or that would be, with ``--dry-run``)."""
    freed_bytes: int
    tool_calls_removed: int
    """MCP tool calls logged before ``--older-than``."""
    store: StoreUsageJson | None


class ToolCallJson(QBenchModel):
    """One logged call of an MCP tool."""

    called_at: str
    tool: str
    arguments: dict[str, Any]
    """The call's arguments, secrets redacted."""
    success: bool
    error_type: str | None
    duration: float
    """Seconds."""
    response_bytes: int
    replaced_bytes: int
    """Bytes of raw output the response stood for."""
    saved_bytes: int

    @classmethod
    def of(cls, call: ToolCall) -> ToolCallJson:
        """The model of a logged call."""
        return cls(
            called_at=call.called_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            tool=call.tool,
            arguments=dict(call.arguments),
            success=call.success,
            error_type=call.error_type,
            duration=call.duration,
            response_bytes=call.response_bytes,
            replaced_bytes=call.replaced_bytes,
            saved_bytes=call.saved_bytes,
        )


class ToolTotalsJson(QBenchModel):
    """The logged calls of one tool, summed up."""

    tool: str
    calls: int
    succeeded: int
    success_rate: float
    """0 to 1."""
    median_duration: float
    """Seconds."""
    response_bytes: int
    replaced_bytes: int
    saved_bytes: int

    @classmethod
    def of(cls, totals: ToolTotals) -> ToolTotalsJson:
        """The model of a tool's totals."""
        return cls(
            tool=totals.tool,
            calls=totals.calls,
            succeeded=totals.succeeded,
            success_rate=round(totals.success_rate, 4),
            median_duration=round(totals.median_duration, 6),
            response_bytes=totals.response_bytes,
            replaced_bytes=totals.replaced_bytes,
            saved_bytes=totals.saved_bytes,
        )


class McpLogOutput(QBenchModel):
    """``qbench mcp-log --json``."""

    calls: list[ToolCallJson]
    """Newest first."""
    totals: list[ToolTotalsJson]


class PostedComment(QBenchModel):
    """The pull-request comment ``qbench pr-comment --post`` wrote."""

    action: str
    """``created`` or ``updated``."""
    comment_id: int
    """GitHub's id of the comment."""
    pull_request: int
    """The pull request's number."""


class PrCommentOutput(QBenchModel):
    """``qbench pr-comment --json``."""

    head: str
    """The run the comment is about."""
    base: str | None
    """The run it is compared with; ``None`` when there is none."""
    body: str
    """The comment's Markdown."""
    length: int
    """Characters of ``body``."""
    posted: PostedComment | None = None
    """With ``--post``: the comment created or updated."""
