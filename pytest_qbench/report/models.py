"""The report format: pydantic models only (no pytest, no I/O).

These models are the contract between the pytest plugin, the CLI, the MCP server and anyone who
reads ``report.json``. ``TestReport.model_json_schema()`` is checked into ``docs/report-schema.json``.

Schema history (``SCHEMA_VERSION``):

1. First release: results, summary, run metadata, environment, diagnostics, stream records.
   Within 1, the files leave out a test result's fields at their default; not a bump: the
   schema never required those fields, and the models of 1 restore them when they read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from typing import Any
from typing import ClassVar
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import computed_field
from pydantic import model_validator

from pytest_qbench.core.stats import DERIVED_FIELDS
from pytest_qbench.core.stats import add_stats
from pytest_qbench.core.stats import stats_mean
from pytest_qbench.core.stats import stats_pass_rate
from pytest_qbench.core.stats import stats_stdev
from pytest_qbench.core.types import Outcome


SCHEMA_VERSION = 1

Phase = Literal["setup", "call", "teardown", "collect"]
"""The pytest phase a failure happened in."""

Severity = Literal["error", "warning", "info"]
"""How serious a diagnostic is."""

SubtestOutcome = Literal["passed", "failed", "skipped", "xfailed"]
"""A subtest's outcome."""


class QBenchModel(BaseModel):
    """Base class of every model: unknown fields are refused, docstrings document fields."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)
    __test__: ClassVar[bool] = False  # TestReport, TestResult... are not pytest test classes


class ReportMeta(QBenchModel):
    """What wrote this report, and in which format."""

    schema_version: int = SCHEMA_VERSION
    """Version of this format; bumped on every incompatible change."""
    qbench_version: str
    """The pytest-qbench version that wrote the report."""
    created_at: datetime
    """When the report was written (UTC)."""


class ShardInfo(QBenchModel):
    """The run's CI shard (``--qbench-shard``, or ``--qbench-queue``'s)."""

    index: int = Field(ge=1)
    """Which shard, from 1 (for a queue: 1)."""
    count: int | None = None
    """How many shards; ``None`` for a queue."""
    queue: str | None = None
    """The queue's name; ``None`` for a planned shard."""
    worker: str | None = None
    """The machine's name in the queue (a retried one gets its units back)."""
    by_count: bool = False
    """Split by the tests' number, not time (no test had history)."""
    units: int = 0
    """Units this shard ran (modules, or pieces of one)."""
    expected: float | None = None
    """This shard's expected seconds (``None`` when split by count)."""
    plan: list[float] = Field(default_factory=list)
    """Each shard's expected seconds, in order (empty for a queue)."""
    tests: int | None = Field(default=None, ge=0)
    """Tests planned (after deselection), for all shards or queue machines; ``None``: not
    known."""


class RunMeta(QBenchModel):
    """One run of the test tool."""

    run_id: str
    """The run's id (its directory under ``<qbench-dir>/runs/``)."""
    tool: str = "pytest"
    """The tool that ran the tests."""
    started_at: datetime
    """When the session started (UTC)."""
    completed_at: datetime | None = None
    """When the session finished (UTC); ``None``: the process died."""
    exit_code: int | None = None
    """The tool's exit status; ``None``: unknown (the process died)."""
    cwd: str
    """Directory the run was started in."""
    command: list[str]
    """The command line (argv) of the run."""
    interrupted: bool = False
    """Cut short: Ctrl-C, the process died, xdist's workers crashed (not ``-x``)."""
    collect_only: bool = False
    """``--collect-only`` (no test ran): not in the history index."""
    shard: ShardInfo | None = None
    """The CI shard; ``None``: not one."""
    collected: int | None = None
    """Tests a collect-only run kept (N of pytest's "N/M tests collected"); else null."""
    max_failures: int | None = None
    """Failures at which pytest stops (-x, --sw: 1; --maxfail=N; --sw-skip: 2); 0: never."""
    last_failed: bool | None = None
    """pytest ran with --lf (any source); null: unknown."""
    recording_errors: list[str] = Field(default_factory=list)
    """qbench's errors while recording: the report is incomplete."""


class CIInfo(QBenchModel):
    """The CI system a run happened on, when one is detected."""

    provider: str
    """CI provider: github-actions, gitlab-ci, azure-pipelines, jenkins, circleci, buildkite, ..."""
    commit: str | None = None
    """The commit being tested."""
    branch: str | None = None
    """The branch or ref being tested."""
    build_url: str | None = None
    """Link to the CI job, when the provider exposes one."""


class Environment(QBenchModel):
    """Where the tests ran. Never contains the values of secret-looking environment variables."""

    python: str
    """Python version, e.g. ``3.12.4``."""
    implementation: str
    """Python implementation, e.g. ``CPython``."""
    platform: str
    """Operating system and machine, e.g. ``Linux-6.1-x86_64``."""
    pytest_version: str
    """The pytest version."""
    qbench_version: str
    """The pytest-qbench version."""
    plugins: dict[str, str] = Field(default_factory=dict)
    """Installed pytest plugins (distribution name to version)."""
    ci: CIInfo | None = None
    """The CI system, when one is detected."""
    extra: dict[str, str] = Field(default_factory=dict)
    """Free-form values added by other plugins through ``pytest_qbench_modify_report``."""


class Frame(QBenchModel):
    """One frame of a failure's traceback."""

    path: str
    """File path, relative to the rootdir when inside it."""
    line: int | None
    """1-based line number."""
    function: str
    """Function name."""


class Failure(QBenchModel):
    """Why a test failed or errored."""

    error_type: str
    """Exception class name, e.g. ``AssertionError``; pytest's pseudo-types for failures without an
    exception: ``XPASS(strict)`` and ``Failed``."""
    error_message: str
    """``str()`` of the exception, then its notes (``add_note``), one a line, as pytest prints
    them (bounded)."""
    phase: Phase = "call"
    """The phase that failed."""
    file: str | None = None
    """File of the failing frame in the user's code (not pytest's, not site-packages)."""
    line: int | None = None
    """1-based line of the failing frame in the user's code."""
    stack_trace: str = ""
    """The traceback in the shape of pytest's ``--tb=short`` (each frame's ``path:line: in
    function`` and source line, then ``E   `` lines with the exception), bounded; the end is
    kept. Without an exception (strict xpass, failed subtests) it is pytest's own text."""
    frames: list[Frame] = Field(default_factory=list)
    """Traceback frames, outermost first, without pytest's own (bounded; the end is kept)."""
    falsifying_example: str | None = None
    """Hypothesis' falsifying example, when the test used Hypothesis."""


class PhaseDurations(QBenchModel):
    """Seconds spent in each phase."""

    setup: float = 0.0
    """Seconds in setup (fixtures)."""
    call: float = 0.0
    """Seconds in the test function."""
    teardown: float = 0.0
    """Seconds in teardown."""


ATTACHMENT_PATH = r"^attachments/[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)+$"
"""What an attachment's ``path`` may be: below ``attachments/``, plain segments only (no ``..``,
no scheme, no absolute path), so that a report cannot point a reader outside its directory."""


class Attachment(QBenchModel):
    """A file a test attached (``qbench.attach``, or the ``pytest_qbench_attachments`` hook),
    stored in the run directory."""

    name: str
    """The name the test gave (or the file's name, or ``attachment-N``), sanitised: no path
    separators, control characters or leading dots, at most 120 characters."""
    path: Annotated[str, Field(pattern=ATTACHMENT_PATH)] | None = None
    """Where the file is, POSIX, relative to the report's run directory
    (``attachments/<test>/<name>``); ``None`` when it was not stored (``note`` says why)."""
    mime: str
    """Its media type: the one given, else guessed from the name (``text/plain`` for text,
    ``application/octet-stream`` when unknown)."""
    size: int = Field(default=0, ge=0)
    """Its size in bytes (of the data given, also when it was not stored)."""
    note: str | None = None
    """Why it was not stored (over ``qbench_attach_max_size`` or ``qbench_attach_max_total``,
    unreadable, missing when merged), or, with a ``path``, why only its first bytes were
    (``truncated at qbench_attach_max_size ...``: the file held more than its size when
    attached); ``None`` when it was stored whole."""


class Captured(QBenchModel):
    """Output captured while the test ran, all phases, bounded with a visible cut marker."""

    stdout: str = ""
    """Captured standard output."""
    stderr: str = ""
    """Captured standard error."""
    log: str = ""
    """Captured log records, formatted by pytest's logging plugin."""


class Attempt(QBenchModel):
    """An earlier attempt of a test that pytest-rerunfailures ran again."""

    outcome: Literal["failed", "error"]
    """How the attempt ended."""
    duration: float
    """Seconds spent in the attempt."""
    failure: Failure | None = None
    """Why the attempt failed."""


class SubtestResult(QBenchModel):
    """One ``subtests.test(...)`` block of a test (pytest 9's built-in ``subtests`` fixture)."""

    description: str
    """pytest's description of the subtest, e.g. ``[msg] (i=1)``."""
    msg: str | None = None
    """The message passed to ``subtests.test``."""
    params: dict[str, JsonValue] = Field(default_factory=dict)
    """Keyword arguments passed to ``subtests.test`` (values that are not JSON become their repr)."""
    outcome: SubtestOutcome
    """The subtest's outcome."""
    duration: float = 0.0
    """Seconds spent in the subtest."""
    reason: str | None = None
    """Skip or xfail reason."""
    failure: Failure | None = None
    """Why the subtest failed."""


class TestStep(QBenchModel):
    """One step of a test case."""

    index: int
    """1-based position of the step."""
    action: str
    """What to do."""
    expected: str | None = None
    """What should happen."""


class TestCaseMetadata(QBenchModel):
    """Test-case management fields, from ``@pytest.mark.qbench_case(...)`` and the docstring."""

    key: str | None = None
    """External id, e.g. a JIRA key such as ``FRAMED-1390``."""
    title: str | None = None
    """Human title of the test case."""
    priority: str | None = None
    """Priority, e.g. ``High``."""
    tags: list[str] = Field(default_factory=list)
    """Free-form tags."""
    platforms: list[str] = Field(default_factory=list)
    """Platforms the case applies to."""
    folder: str | None = None
    """Folder or suite the case belongs to in the test-case manager."""
    steps: list[TestStep] = Field(default_factory=list)
    """Steps, with action and expected result."""
    description: str | None = None
    """The test's docstring, cleaned."""


class MetricResult(QBenchModel):
    """The result of evaluating one metric on an agent's output."""

    metric_name: str
    """Name of the metric."""
    score: float | None = None
    """The score; ``None`` when evaluation failed."""
    threshold: float | None = None
    """Minimum passing score."""
    passed: bool
    """Whether the score met the threshold."""
    scale: float | None = None
    """Maximum of the score's scale (e.g. 5 for 1-5), when not 0-1."""
    error: str | None = None
    """Why evaluation failed."""
    retry_count: int = 0
    """Retries attempted."""
    evaluation_time_ms: float = 0.0
    """Milliseconds spent evaluating."""
    model_used: str | None = None
    """Model used by an LLM-judged metric."""
    reason: str | None = None
    """The metric's or judge's explanation of the score, or why the metric was skipped."""
    skipped: bool = False
    """True when the metric did not run (a judge metric without a judge, ``enabled=False``);
    ``reason`` says why. A skipped metric has no score, is not ``passed`` and fails no test."""
    fail_on_error: bool = False
    """Whether an error of this metric fails the test."""


HistoryStatus = Literal["new failure", "failing", "broken", "known flaky", "quarantined"]
"""What the run store says about a failing test."""


class TestHistory(QBenchModel):
    """What earlier runs in the run store's index say about a failing test.

    Filled when the run ends, for failed and errored tests only. The window is the test's last
    10 earlier runs in which it passed or failed (skips do not count).
    """

    status: HistoryStatus
    """``known flaky`` on evidence over the window and this run (a pass after reruns, a pass
    and a fail on one commit, single-run failures between passes), never for a failure that
    repeats run after run; else ``new failure`` when the test passed the last time it ran, or
    never ran before; ``broken`` when the monitors find it failing the same way in every run
    since a point (``broken since run <run>``); else ``failing``. ``quarantined`` overrides
    them all for a quarantined test (its summary says ``known failure`` or ``NEW failure``).
    The one label every view (report.md, the HTML page, the digest, MCP) shows."""
    summary: str
    """The status in words, one line: ``new failure``, ``failed 3 of the last 10 runs``..."""
    runs: int
    """Earlier runs in the window."""
    failed: int
    """Earlier runs in the window in which the test failed or errored."""
    flips: int
    """Outcome changes (pass to fail, fail to pass) over the window and this run, plus runs that
    passed only after reruns."""
    flaky_indicator: Annotated[float, Field(ge=0, le=1)]
    """``flips / (n - 1)`` over the window and this run (``n`` outcomes), capped at 1: 0 for a
    test that always fails the same way, 1 for one that alternates (3 decimals)."""
    last_passed_run: str | None = None
    """The last earlier run (of all indexed, not only the window) in which the test passed."""
    last_passed_at: datetime | None = None
    """When that run started (UTC)."""
    first_failed_run: str | None = None
    """The run in which the current streak of failures began (this run for a new failure)."""
    fingerprint: str | None = None
    """This failure's fingerprint: a hash of the error type, the failing ``file:line`` and the
    message without numbers, addresses and paths."""
    same_failure_runs: int = 0
    """Earlier runs in the window in which the test failed with the same fingerprint."""


class TestResult(QBenchModel):
    """One test: its outcome, timing, failure and everything recorded about it."""

    nodeid: str
    """pytest's node id."""
    test_name: str
    """The test's name within its file, e.g. ``TestCart.test_total[2-3]``."""
    file: str
    """Path of the test file, relative to the rootdir."""
    line: int | None = None
    """1-based line of the test definition."""
    outcome: Outcome
    """Final outcome."""
    duration: float = 0.0
    """Seconds in setup + call + teardown (last attempt)."""
    durations: PhaseDurations = Field(default_factory=PhaseDurations)
    """Seconds per phase (last attempt)."""
    started_at: datetime | None = None
    """When the test's setup started (UTC)."""
    failure: Failure | None = None
    """Why the test failed or errored (the first failing phase)."""
    teardown_failure: Failure | None = None
    """A teardown error that followed a failure in the call phase."""
    reason: str | None = None
    """Why the test was skipped, xfailed or xpassed."""
    captured: Captured | None = None
    """Captured output, for the outcomes selected by ``--qbench-capture``."""
    markers: list[str] = Field(default_factory=list)
    """Names of the markers on the test."""
    metadata: TestCaseMetadata | None = None
    """Test-case fields from ``@pytest.mark.qbench_case`` and the docstring."""
    user_properties: list[tuple[str, JsonValue]] = Field(default_factory=list)
    """``record_property`` values; values that are not JSON become their repr."""
    reruns: int = 0
    """How many times pytest-rerunfailures ran the test again."""
    attempts: list[Attempt] = Field(default_factory=list)
    """The earlier attempts, when the test was rerun."""
    flaky: bool = False
    """True when the test failed, was rerun, and finally passed; or when a test the history had
    never seen, run again by ``--qbench-new-tests-repeat``, did not give the same outcome each
    time (see ``new_test_tries``)."""
    new_test_tries: list[str] | None = None
    """For a test the history had never seen, under ``--qbench-new-tests-repeat``: the outcomes
    of its extra runs before the reported one (``passed``, ``failed``... as ``outcome``; empty
    when the time budget left none); ``None`` for every other test. The reported ``outcome`` is
    the last run's."""
    history: TestHistory | None = None
    """What earlier runs say about this test, for a failed or errored test in a run with a run
    store index (``None`` otherwise)."""
    subtests: list[SubtestResult] = Field(default_factory=list)
    """The test's subtests, in order."""
    worker: str | None = None
    """pytest-xdist worker id (``gw0``...) when run under xdist."""
    counted_as: list[str] = Field(default_factory=list)
    """How pytest's closing summary line counted this test's reports (``passed``, ``error``,
    ``rerun``, ``subtests passed``...). The summary is the sum of these over all results."""
    metric_results: list[MetricResult] = Field(default_factory=list)
    """Agent-evaluation metrics recorded by the test."""
    agent_response: str | None = None
    """The agent's response, for agent tests."""
    tool_calls: list[JsonValue] = Field(default_factory=list)
    """Tools the agent called, for agent tests."""
    expected_tools: list[JsonValue] | None = None
    """Tools the agent was expected to call: names, or ``{"name", "arguments"}`` objects."""
    tools_matched: bool | None = None
    """Whether the tool calls matched ``expected_tools``."""
    ground_truth: str | None = None
    """Expected output, for agent tests."""
    test_input: str | None = None
    """What the agent was asked, for agent tests (bounded like ``agent_response``)."""
    repeat: int | None = None
    """Which run of the test this is under ``--qbench-repeat`` (1 to N; ``None`` otherwise)."""
    attachments: list[Attachment] = Field(default_factory=list)
    """Files the test attached, in the order attached (see ``Attachment``)."""
    runner: str = "pytest"
    """The test runner that ran it: ``pytest``, ``vitest``, ``jest`` (``qbench test``)."""


class LogRange(QBenchModel):
    """Lines of a check's stored raw log that a diagnostic came from (issue 13)."""

    start_line: int = 0
    """First line, 1-based; 0 when unknown."""
    end_line: int = 0
    """Last line, 1-based; 0 when unknown."""


class ByteOffsets(QBenchModel):
    """Bytes of a check's stored raw log that a diagnostic came from (issue 13)."""

    start: int = 0
    """Offset of the first byte; 0 when unknown."""
    end: int = 0
    """Offset just past the last byte; 0 when unknown."""


class Diagnostic(QBenchModel):
    """A collection error, a warning, a note from qbench itself, or a static checker's finding."""

    tool: str = "pytest"
    """Who emitted it: ``pytest``, ``qbench``, or a checker such as ``ruff.lint``,
    ``mypy.typecheck``, ``pyright.typecheck``, ``python.build``."""
    severity: Severity
    """How serious it is."""
    message: str
    """What happened (bounded)."""
    code: str | None = None
    """A short code: warning category, ``collection-error``, ``internal-error``..."""
    file: str | None = None
    """File it is about, relative to the rootdir when inside it."""
    line: int | None = None
    """1-based line."""
    column: int | None = None
    """1-based column."""
    nodeid: str | None = None
    """The test or collector it is about."""
    end_line: int | None = None
    """1-based line where the flagged code ends, when the tool says."""
    end_column: int | None = None
    """1-based column where the flagged code ends, as the tool prints it."""
    code_snippet: str | None = None
    """The source line at ``line`` (bounded), when the file could be read."""
    log_range: LogRange = Field(default_factory=LogRange)
    """The lines of the check's stored raw log this came from (zeros when unknown)."""
    byte_offsets: ByteOffsets = Field(default_factory=ByteOffsets)
    """The bytes of the check's stored raw log this came from (zeros when unknown)."""
    history: str | None = None
    """In a test run's report: ``new`` (no earlier run of the checker had it) or ``existing
    since <run id>``; ``None`` when the run was not indexed, and in ``qbench check`` reports."""


class MetricStats(QBenchModel):
    """One metric's scores over a run. Sums and counts are stored; ``mean``, ``stdev`` and
    ``pass_rate`` are derived, so stats of shards add up (``a + b``)."""

    n: int = 0
    """Evaluations with a score (errors and skips excluded)."""
    passed: int = 0
    """Scored evaluations that met their threshold."""
    errors: int = 0
    """Evaluations that ended in an error."""
    skipped: int = 0
    """Evaluations that did not run (no judge, ``enabled=False``)."""
    score_sum: float = 0.0
    """Sum of the scores (accumulated exactly, rounded once)."""
    sum_sq_dev: float = 0.0
    """Sum of squared deviations of the scores from their mean (for ``stdev``)."""
    min: float | None = None
    """Lowest score."""
    max: float | None = None
    """Highest score."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(name in data for name in DERIVED_FIELDS):
            data = {k: v for k, v in data.items() if k not in DERIVED_FIELDS}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        """Mean score, zeros included (``None`` without scores)."""
        return stats_mean(self.score_sum, self.n)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stdev(self) -> float | None:
        """Sample standard deviation of the scores (``None`` below 2 scores)."""
        return stats_stdev(self.sum_sq_dev, self.n)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float:
        """Percent of ``passed`` among scored and errored evaluations, 2 decimals."""
        return stats_pass_rate(self.passed, self.n, self.errors)

    def __add__(self, other: MetricStats) -> MetricStats:
        if not isinstance(other, MetricStats):
            return NotImplemented
        return MetricStats(**add_stats(self.model_dump(), other.model_dump()))


class ReportSummary(QBenchModel):
    """Counts for a run, equal to pytest's own closing line.

    Counts are raw; ``pass_rate`` is derived. Summaries add up (``a + b``, ``sum(...)``), which is
    how shard reports are merged.
    """

    total: int = 0
    """Tests with a result (including modules skipped at collection, as pytest counts them)."""
    passed: int = 0
    """pytest's ``passed``."""
    failed: int = 0
    """pytest's ``failed`` (pytest 9 counts failed subtests here too)."""
    errors: int = 0
    """pytest's ``errors``: setup/teardown errors and collection errors."""
    skipped: int = 0
    """pytest's ``skipped``."""
    xfailed: int = 0
    """pytest's ``xfailed``."""
    xpassed: int = 0
    """pytest's ``xpassed``."""
    reruns: int = 0
    """pytest-rerunfailures' ``rerun`` count."""
    flaky: int = 0
    """Tests that failed, were rerun, and finally passed, and new tests whose runs under
    ``--qbench-new-tests-repeat`` did not all give the same outcome."""
    subtests_passed: int = 0
    """pytest's ``subtests passed`` (pytest shows it only at verbosity -1 or 1 and above)."""
    subtests_failed: int = 0
    """Failed subtests (pytest 9 counts them inside ``failed``)."""
    subtests_skipped: int = 0
    """pytest's ``subtests skipped``."""
    deselected: int = 0
    """pytest's ``deselected`` (pytest shows none under xdist)."""
    warnings: int = 0
    """pytest's ``warnings``."""
    other: dict[str, int] = Field(default_factory=dict)
    """Counts of categories added by other plugins, as pytest prints them."""
    duration: float = 0.0
    """Seconds of the session (summed when merging shards)."""
    metrics_evaluated: dict[str, int] = Field(default_factory=dict)
    """How many times each agent-evaluation metric was scored (errors and skips excluded)."""
    average_scores: dict[str, float] = Field(default_factory=dict)
    """Mean score of each metric (errors excluded, zeros included)."""
    metric_stats: dict[str, MetricStats] = Field(default_factory=dict)
    """Per metric: scores, passes, errors and skips, with mean, stdev, min, max and pass rate."""
    attachments: int = 0
    """Attachments the tests recorded (``TestResult.attachments``), stored or not."""
    diagnostics: dict[str, dict[str, int]] = Field(default_factory=dict)
    """The static checkers' findings (``--qbench-check``) per tool and severity, e.g.
    ``{"ruff.lint": {"error": 2}}`` (every finding, also those the report leaves out)."""
    projects_build_failed: int = 0
    """Workspace packages whose ``build`` script failed (``qbench test --build``): their tests
    did not run."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and "pass_rate" in data:
            data = {k: v for k, v in data.items() if k != "pass_rate"}
        return data

    @model_validator(mode="after")
    def _check_counts(self) -> ReportSummary:
        """Counts are 0 or more (a report saying ``total: -5`` is refused, not summed)."""
        for name, value in self:
            counts = value.items() if name in ("other", "metrics_evaluated") else [(name, value)]
            for key, count in counts:
                if isinstance(count, (int, float)) and count < 0:
                    raise ValueError(f"{key} must be 0 or more, given {count}")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """Percent of passed among passed + failed + errors, rounded to 2 decimals; null when
        no test ran (no result at all, or none that passed, failed or errored)."""
        ran = self.passed + self.failed + self.errors
        return round(100.0 * self.passed / ran, 2) if ran and self.total else None

    def __add__(self, other: ReportSummary) -> ReportSummary:
        if not isinstance(other, ReportSummary):
            return NotImplemented
        return ReportSummary(**_add_fields(self, other))

    def __radd__(self, other: object) -> ReportSummary:
        if other == 0:  # sum() starts with 0
            return self
        if isinstance(other, ReportSummary):
            return other + self
        return NotImplemented


def _add_fields(a: ReportSummary, b: ReportSummary) -> dict[str, Any]:
    """Field-wise sum of two summaries; metric stats add up, and each average is the mean of the
    added scores."""
    out: dict[str, Any] = {}
    for name in ReportSummary.model_fields:
        left, right = getattr(a, name), getattr(b, name)
        if name == "average_scores":
            out[name] = _weighted_means(a, b)
        elif name == "metric_stats":
            out[name] = {k: _add_optional(left.get(k), right.get(k)) for k in {**left, **right}}
        elif name == "diagnostics":
            out[name] = {
                k: _add_counts(left.get(k, {}), right.get(k, {})) for k in {**left, **right}
            }
        elif isinstance(left, dict):
            out[name] = {k: left.get(k, 0) + right.get(k, 0) for k in {**left, **right}}
        else:
            out[name] = left + right
    if isinstance(out["duration"], float):
        out["duration"] = round(out["duration"], 6)
    return out


def _add_counts(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    return {k: left.get(k, 0) + right.get(k, 0) for k in {**left, **right}}


def _add_optional(left: MetricStats | None, right: MetricStats | None) -> MetricStats | None:
    if left is None or right is None:
        return left if right is None else right
    return left + right


def _weighted_means(a: ReportSummary, b: ReportSummary) -> dict[str, float]:
    """Each metric's mean: from the added stats when they hold every score, else the means
    weighted by ``metrics_evaluated``."""
    means: dict[str, float] = {}
    for name in {**a.average_scores, **b.average_scores}:
        na, nb = a.metrics_evaluated.get(name, 0), b.metrics_evaluated.get(name, 0)
        stats = _add_optional(a.metric_stats.get(name), b.metric_stats.get(name))
        if stats is not None and stats.n == na + nb and stats.mean is not None:
            means[name] = stats.mean  # exact: from the summed scores
            continue
        total = na * a.average_scores.get(name, 0.0) + nb * b.average_scores.get(name, 0.0)
        means[name] = total / (na + nb) if na + nb else 0.0
    return means


class CoverageFile(QBenchModel):
    """Coverage of one measured file, as ``coverage report -m`` shows it."""

    path: str
    """Path relative to the rootdir (POSIX separators); absolute when outside it."""
    statements: int
    """Executable statements."""
    covered: int
    """Statements executed."""
    missing: int
    """Statements never executed."""
    excluded: int = 0
    """Statements excluded by ``exclude_lines`` and ``# pragma: no cover``."""
    branches: int | None = None
    """Branch destinations, when branch coverage was measured."""
    branches_covered: int | None = None
    """Branch destinations taken, when branch coverage was measured."""
    percent: float
    """coverage.py's percentage for the file (statements and branches), unrounded."""
    missing_ranges: list[str] = Field(default_factory=list)
    """coverage.py's "Missing" column: line ranges such as ``3-5``, and ``7->9`` for partial
    branches."""


class CoverageReport(QBenchModel):
    """The run's coverage, with totals equal to coverage.py's own report on the same data."""

    percentage: float
    """Total percentage covered (statements and branches), unrounded, as coverage.py computes."""
    lines_covered: int
    """Statements executed, all files."""
    lines_total: int
    """Executable statements, all files."""
    branches_covered: int | None = None
    """Branch destinations taken, when branch coverage was measured."""
    branches_total: int | None = None
    """Branch destinations, when branch coverage was measured."""
    files: list[CoverageFile] = Field(default_factory=list)
    """Every measured file, sorted by path."""
    missing_files: list[str] = Field(default_factory=list)
    """Files with statements of which none ran (never imported, or never executed)."""
    threshold: float | None = None
    """The required percentage (``--qbench-cov-fail-under``), when one was set."""
    met: bool | None = None
    """Whether ``percentage`` reached ``threshold`` (``None`` without a threshold)."""
    measured_by: Literal["qbench", "pytest-cov"] = "qbench"
    """Who measured: qbench itself (``--qbench-cov``) or pytest-cov (``--cov``)."""
    sources: list[str] = Field(default_factory=list)
    """What was measured (directories or packages), as configured."""
    data_file: str | None = None
    """The coverage.py data file (SQLite), for ``coverage html --data-file=...``."""
    contexts_file: str | None = None
    """``coverage-contexts.json`` (which tests executed which file), with
    ``--qbench-cov-contexts``."""


GateKind = Literal["coverage", "metric_min", "baseline", "max_errors"]
"""What a gate checks."""


class GateResult(QBenchModel):
    """A gate the run had to pass: coverage (``--qbench-cov-fail-under``), a metric's mean
    (``--qbench-metric-min``), a metric against a baseline run (``--qbench-baseline``), or the
    static checkers' errors (``--qbench-max-errors``)."""

    kind: GateKind
    """Which gate."""
    name: str
    """What it checks: ``coverage``, or the metric's name."""
    passed: bool | None
    """Whether the run passed it. A gate that lacks the data to decide fails (``False``,
    ``detail`` says why); ``None``: a metric new since the baseline, nothing to compare it
    with, which fails nothing."""
    detail: str
    """The verdict with its numbers, as the terminal shows it."""
    value: float | None = None
    """The measured value: coverage percentage, the metric's mean, or its drop against the
    baseline."""
    threshold: float | None = None
    """The required coverage or mean, or the tolerated drop."""
    baseline: float | None = None
    """The baseline's mean over the tests in both runs (baseline gate)."""
    ci_low: float | None = None
    """Lower end of the drop's 95% confidence interval (baseline gate)."""
    ci_high: float | None = None
    """Upper end of the drop's 95% confidence interval (baseline gate)."""
    n: int | None = None
    """Scores (metric gate) or tests in both runs (baseline gate) the verdict rests on."""
    newly_failing: list[str] = Field(default_factory=list)
    """Tests whose metric passed in the baseline and fails now (baseline gate, bounded)."""


class RepeatStats(QBenchModel):
    """One agent test run N times with ``--qbench-repeat``."""

    nodeid: str
    """The test's node id without the repeat id (``test_x[repeat-2]`` gives ``test_x``)."""
    runs: int
    """Runs that passed, failed or errored (``n``; skipped runs are left out)."""
    passed: int
    """Runs that passed (``c``)."""
    pass_at_k: list[float] = Field(default_factory=list)
    """pass@k for k = 1 to ``runs`` (item k-1), HumanEval's unbiased estimator
    ``1 - C(n-c, k) / C(n, k)``: the chance that at least one of k runs drawn from these passes.
    ``pass_at_k[0]`` is ``passed / runs``."""
    metric_means: dict[str, float] = Field(default_factory=dict)
    """Each metric's mean score over the runs (errors and skips left out)."""


class ReportSection(QBenchModel):
    """An extra Markdown section contributed by another plugin."""

    title: str
    """Section heading."""
    body: str
    """Markdown body, inserted as is."""


class Shard(QBenchModel):
    """One of the reports ``qbench merge`` combined, as it was before merging."""

    source: str
    """File name of the report (or JUnit XML file) the shard came from."""
    run: RunMeta
    """The shard's run."""
    environment: Environment
    """Where the shard ran."""
    summary: ReportSummary
    """The shard's own counts, before tests present in several shards were resolved."""


CheckStatus = Literal["clean", "failed", "not_run", "crashed"]
"""How a checker ended: no errors, errors found, not installed (or not applicable), or it
crashed."""


class CheckRun(QBenchModel):
    """One checker's run within ``qbench check``, or within a test run with ``--qbench-check``
    (issue 13)."""

    run: RunMeta
    """The checker's own run: ``tool`` such as ``ruff.lint``, its command, exit code, times."""
    status: CheckStatus
    """``clean``, ``failed`` (errors found), ``not_run`` or ``crashed``."""
    note: str | None = None
    """Why it did not run or what went wrong, e.g. ``not run: install mypy``."""
    log: str | None = None
    """File name of its raw output (stdout) in the run directory; the diagnostics' ``log_range``
    and ``byte_offsets`` point into it."""
    stderr_log: str | None = None
    """File name of its standard error in the run directory, when it wrote any."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    """What it found, in its own order."""
    package: str | None = None
    """The workspace package it ran for (a monorepo's per-package build); ``None`` for a
    project-wide checker."""


class TestReport(QBenchModel):
    """A whole run: what ``report.json`` holds."""

    meta: ReportMeta
    """Format and writer."""
    run: RunMeta
    """The run."""
    environment: Environment
    """Where it ran."""
    summary: ReportSummary
    """Counts, equal to pytest's closing line."""
    results: list[TestResult] = Field(default_factory=list)
    """Every test, in the order they finished."""
    collection_errors: list[Diagnostic] = Field(default_factory=list)
    """Files or collectors that failed to collect."""
    warnings: list[Diagnostic] = Field(default_factory=list)
    """Warnings pytest recorded, and qbench's own notes (``tool="qbench"``)."""
    sections: list[ReportSection] = Field(default_factory=list)
    """Extra Markdown sections from other plugins."""
    coverage: CoverageReport | None = None
    """The run's coverage, when measured (``--qbench-cov``, or pytest-cov's ``--cov``)."""
    shards: list[Shard] = Field(default_factory=list)
    """The reports ``qbench merge`` combined into this one, in the order given (empty for a
    single run)."""
    gates: list[GateResult] = Field(default_factory=list)
    """The gates the run was asked to pass: coverage, metric means, metrics against a baseline."""
    repeats: list[RepeatStats] = Field(default_factory=list)
    """Agent tests run several times (``--qbench-repeat``): passes, pass@k and mean scores."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    """What the static checkers found (``--qbench-check``, issue 13): errors first (bounded)."""
    checks: list[CheckRun] = Field(default_factory=list)
    """Each checker asked for with ``--qbench-check``: its run, status, note and raw log's file
    name in the run directory (its diagnostics are in ``diagnostics``)."""


class DigestFailure(QBenchModel):
    """One failure, in the compact shape assistants read."""

    test_name: str
    """The test's node id."""
    outcome: Outcome
    """``failed`` or ``error``."""
    file: str | None
    """File of the failing line."""
    line: int | None
    """1-based failing line."""
    error_type: str
    """Exception class name."""
    error_message: str
    """Exception message (bounded)."""
    stack_trace: str
    """End of the traceback (bounded)."""
    history: str | None = None
    """Its label: new, broken since run X, known flaky or quarantined."""
    runner: str = "pytest"
    """Its test runner."""


class DigestCoverage(QBenchModel):
    """Coverage in the digest: totals and the worst files only."""

    percentage: float
    """Total percentage covered, unrounded."""
    lines_covered: int
    """Statements executed."""
    lines_total: int
    """Executable statements."""
    branches_covered: int | None = None
    """Branches taken (in percentage)."""
    branches_total: int | None = None
    """Branches, if measured."""
    threshold: float | None = None
    """The required percentage, when one was set."""
    met: bool | None = None
    """Whether the threshold was reached."""
    least_covered: list[CoverageFile] = Field(default_factory=list)
    """The least covered files that miss something, worst first (bounded)."""
    missing_files: list[str] = Field(default_factory=list)
    """Files no test executed (bounded)."""
    missing_files_total: int = 0
    """How many files no test executed, in all."""


class FailureDigest(QBenchModel):
    """Failures only, for assistants and CI bots: what ``--qbench-digest`` writes."""

    success: bool
    """True when nothing failed or errored."""
    run_id: str
    """The run this digest is about."""
    exit_code: int | None
    """pytest's exit status."""
    summary: ReportSummary
    """Counts."""
    failures: list[DigestFailure] = Field(default_factory=list)
    """Failed and errored tests, first ones first."""
    collection_errors: list[Diagnostic] = Field(default_factory=list)
    """Collection errors."""
    truncated: int = 0
    """Failures left out to keep the digest small."""
    coverage: DigestCoverage | None = None
    """Coverage totals, the least covered files and the files no test executed (bounded)."""
    next_steps: list[str] = Field(default_factory=list)
    """What to do next, most useful first."""


class StreamStart(QBenchModel):
    """First line of ``results.jsonl``: the run as it started."""

    kind: Literal["start"] = "start"
    """Record type."""
    meta: ReportMeta
    """Format and writer."""
    run: RunMeta
    """The run, as known at start."""
    environment: Environment
    """Where it runs."""


class StreamResult(QBenchModel):
    """One finished test."""

    kind: Literal["result"] = "result"
    """Record type."""
    result: TestResult
    """The test."""


class StreamDiagnostic(QBenchModel):
    """A collection error or a warning."""

    kind: Literal["collection_error", "warning"]
    """Record type."""
    diagnostic: Diagnostic
    """The diagnostic."""


class StreamDeselected(QBenchModel):
    """Tests deselected by ``-k``, ``-m`` or a plugin."""

    kind: Literal["deselected"] = "deselected"
    """Record type."""
    count: int
    """How many."""


class StreamEnd(QBenchModel):
    """Last line, written when the session finishes normally."""

    kind: Literal["end"] = "end"
    """Record type."""
    run: RunMeta
    """The run, complete."""
    environment: Environment | None = None
    """The environment as other plugins left it (``pytest_qbench_modify_report``)."""
    sections: list[ReportSection] = Field(default_factory=list)
    """Extra Markdown sections other plugins added."""
    coverage: CoverageReport | None = None
    """The run's coverage, when measured."""
    gates: list[GateResult] = Field(default_factory=list)
    """The gates the run was asked to pass."""


class CheckReport(QBenchModel):
    """A ``qbench check`` run: what ``check.json`` in its run directory holds (issue 13)."""

    meta: ReportMeta
    """Format and writer."""
    run: RunMeta
    """The ``qbench check`` run itself (``tool="qbench.check"``)."""
    paths: list[str] = Field(default_factory=list)
    """The paths checked, as given (empty: the project's own configuration decides)."""
    checks: list[CheckRun] = Field(default_factory=list)
    """Each checker asked for, in the order asked."""


StreamRecord = Annotated[
    StreamStart | StreamResult | StreamDiagnostic | StreamDeselected | StreamEnd,
    Field(discriminator="kind"),
]
"""One line of ``results.jsonl``."""


def field_shapes() -> dict[str, dict[str, object]]:
    """Every model's fields in order, with their JSON defaults (``"<required>"`` when none).

    Written to ``pytest_qbench/report/shapes.json`` (``python -m pytest_qbench.report.shapes``) so that the
    pytest plugin can build records of exactly these shapes without importing pydantic.
    """
    from pydantic_core import to_jsonable_python

    shapes: dict[str, dict[str, object]] = {}
    for name, model in sorted(_all_models().items()):
        fields: dict[str, object] = {}
        for field_name, info in model.model_fields.items():
            if info.is_required():
                fields[field_name] = REQUIRED
            else:
                default = info.get_default(call_default_factory=True)
                fields[field_name] = to_jsonable_python(default)
        shapes[name] = fields
    return shapes


REQUIRED = "<required>"
"""Marks a field without default in ``field_shapes``."""


def _all_models() -> dict[str, type[QBenchModel]]:
    return {
        name: obj
        for name, obj in globals().items()
        if isinstance(obj, type) and issubclass(obj, QBenchModel) and obj is not QBenchModel
    }
