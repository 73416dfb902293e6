"""What the MCP tools return: pydantic models whose JSON Schemas are the tools' output schemas.

Field docstrings become the schema's descriptions, which is what an assistant reads. No field is
computed: a structured result must validate against its own schema, which refuses extra keys.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import DigestCoverage
from pytest_qbench.report.models import DigestFailure
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestStep


OutputStream = str
"""Which raw output of a run ``get_run_output`` pages through: ``stdout``, ``stderr`` or
``markdown`` of a test run; a checker's log (``ruff.lint``, ``mypy.typecheck.stderr``) of a
check run (issue 13.7)."""

CheckType = Literal["lint", "typecheck", "build", "all"]
"""What ``run_build_workflow`` checks (issue 13.7)."""

SimilarityScope = Literal["all", "docs", "steps"]
"""What ``find_similar_tests`` compares: everything, the descriptive text, or the steps."""


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
    reruns: int = 0
    """Reruns by pytest-rerunfailures."""
    flaky: int = 0
    """Tests that passed only after reruns."""
    deselected: int = 0
    """Tests deselected by -k/-m."""
    warnings: int = 0
    """pytest warnings."""
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
    """The run hit timeout_seconds and was stopped: the results are partial."""
    partial: bool = False
    """The run did not finish: tests after the cut never ran."""
    timeout_seconds: float
    """The timeout the run had (the server's maximum caps what was asked)."""
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


class RunOutputPage(QBenchModel):
    """A page of a run's raw output, by lines."""

    run: RunMeta
    """The run: id, tool, start and end, exit status, working directory, command."""
    stream: OutputStream
    """Which output."""
    offset: int
    """0-based line the page starts at."""
    text: str
    """The lines (each cut at 2000 characters)."""
    lines: int
    """Lines in this page."""
    total_lines: int
    """Lines in the whole output."""
    next_offset: int | None = None
    """Where the next page starts; ``None`` at the end."""
    note: str | None = None
    """Why the page is empty or short, when it is."""


class BuildSummary(QBenchModel):
    """Counts of a build workflow run (issue 13.7)."""

    total_errors: int = 0
    """All errors (a crashed checker is one)."""
    type_errors: int = 0
    """mypy, pyright."""
    lint_errors: int = 0
    """ruff."""
    build_errors: int = 0
    """Build or compile."""
    warnings: int = 0
    """Listed only when strict."""
    duration_seconds: float = 0.0
    """Seconds."""


class BuildError(QBenchModel):
    """One error (or, when strict, warning) of a checker."""

    file: str | None = None
    """Relative to the project root."""
    line: int | None = None
    """1-based line."""
    column: int | None = None
    """1-based column."""
    error_type: str
    """The code (``arg-type``, ``F401``)."""
    severity: Literal["error", "warning"]
    """How serious it is."""
    message: str
    """Bounded."""
    code_snippet: str | None = None
    """The source line."""
    tool: str
    """``ruff.lint``, ``mypy.typecheck``..."""


class CheckerStatus(QBenchModel):
    """How one checker ended."""

    tool: str
    """Also the get_run_output stream of its log."""
    status: str
    """clean, failed, crashed, not_run."""
    note: str | None = None
    """What went wrong."""


class BuildResult(QBenchModel):
    """A build workflow run (issue 13.7): errors only, never raw logs."""

    run_id: str
    """The check run's id, for get_run_output."""
    success: bool
    """No error (nor, when strict, warning), no checker crashed or missing."""
    summary: BuildSummary
    """Counts."""
    errors: list[BuildError] = Field(default_factory=list)
    """Errors, then warnings when strict."""
    checks: list[CheckerStatus] = Field(default_factory=list)
    """How each checker ended."""
    next_steps: list[str] = Field(default_factory=list)
    """What to do next, most useful first."""
    truncated: int = 0
    """Errors not listed (size budget)."""


class RunEntry(QBenchModel):
    """One indexed run."""

    run_id: str
    """The run's id."""
    started_at: str
    """When it started (ISO 8601, UTC)."""
    completed_at: str | None = None
    """When it ended; ``None`` when it died."""
    exit_code: int | None = None
    """pytest's exit status."""
    interrupted: bool = False
    """Cut short (Ctrl-C, a timeout, a crash)."""
    summary: dict[str, int] = Field(default_factory=dict)
    """Counts: total, passed, failed, errors, skipped, ..."""
    duration: float = 0.0
    """Seconds."""
    branch: str | None = None
    """The branch, on CI."""
    commit: str | None = None
    """The commit, on CI."""
    has_output: bool = False
    """Whether its raw output is stored (runs started by this server)."""


class RunList(QBenchModel):
    """The most recent runs, newest first."""

    runs: list[RunEntry] = Field(default_factory=list)
    """The runs."""
    note: str | None = None
    """Why the list is empty, when it is."""


class FlakyEntry(QBenchModel):
    """A test whose outcome flips across recent runs."""

    nodeid: str
    """pytest's node id."""
    flaky_indicator: float
    """flips / (results - 1), 0 to 1: 1 alternates every run."""
    flips: int
    """Outcome changes (a pass after reruns counts as one)."""
    runs: int
    """Results looked at."""
    failed: int
    """Of which failed or errored."""
    trend: str
    """Improving, Stable or Declining."""
    last_failure: str | None = None
    """The last failure: error type, location and message, one line."""


class FlakyList(QBenchModel):
    """Flaky tests, flakiest first."""

    runs_window: int
    """Runs looked at."""
    tests: list[FlakyEntry] = Field(default_factory=list)
    """The tests."""
    note: str | None = None
    """Why the list is empty, when it is."""


class TestCaseRef(QBenchModel):
    """A test case in the catalog, briefly."""

    uid: str
    """Catalog id: the node id of a pytest test, the key of an imported case."""
    source: str
    """``pytest`` or ``json:<file>`` (an imported export)."""
    key: str | None = None
    """External key (JIRA...)."""
    title: str | None = None
    """Title."""
    nodeid: str | None = None
    """pytest node id (pytest tests)."""


class CaseFields(QBenchModel):
    """What every view of a test case shows."""

    uid: str
    """Catalog id: the node id of a pytest test, the key of an imported case."""
    source: str
    """``pytest`` or ``json:<file>`` (an imported export)."""
    key: str | None = None
    """External key (JIRA...)."""
    title: str | None = None
    """Title."""
    nodeid: str | None = None
    """pytest node id (pytest tests)."""
    path: str | None = None
    """Test file."""
    line: int | None = None
    """Line of the test."""
    folder: str | None = None
    """Folder in the test-case manager."""
    priority: str | None = None
    """Priority."""
    tags: list[str] = Field(default_factory=list)
    """Tags."""
    platforms: list[str] = Field(default_factory=list)
    """Platforms."""
    markers: list[str] = Field(default_factory=list)
    """pytest markers."""


class SearchHit(CaseFields):
    """A test case that matched, with its score."""

    score: float
    """Relevance to the query relative to its best match: 1 for the best, 0.5 for half its BM25
    score; 0 when no query was given."""
    bm25: float = 0.0
    """Raw BM25 score (higher is better), comparable within one query only."""
    matched_fields: list[str] = Field(default_factory=list)
    """Fields holding a word of the query: key, title, name, description, tags, steps, location."""
    summary: str = ""
    """The start of the description or docstring."""
    matched_steps: list[int] = Field(default_factory=list)
    """Steps (1-based) that hold a word of the query."""


class Facets(QBenchModel):
    """Counts of values among all matches (top 10 each)."""

    tags: dict[str, int] = Field(default_factory=dict)
    """Tag -> matches."""
    priority: dict[str, int] = Field(default_factory=dict)
    """Priority -> matches."""
    platforms: dict[str, int] = Field(default_factory=dict)
    """Platform -> matches."""
    markers: dict[str, int] = Field(default_factory=dict)
    """Marker -> matches."""


class SearchResult(QBenchModel):
    """Ranked matches from the test catalog."""

    total: int
    """Matches in all."""
    results: list[SearchHit] = Field(default_factory=list)
    """This page of matches, best first."""
    facets: Facets = Field(default_factory=Facets)
    """Values among all matches, to narrow the search."""
    next_cursor: str | None = None
    """Pass it as cursor for the next page; ``None`` at the end."""
    catalog_size: int = 0
    """Test cases in the catalog."""
    note: str | None = None
    """Why there are no results, when there are none."""


class TestCaseDetail(CaseFields):
    """One test case in full."""

    description: str | None = None
    """Description or docstring (bounded)."""
    steps: list[TestStep] = Field(default_factory=list)
    """Steps with action and expected result (bounded)."""
    steps_omitted: int = 0
    """Steps left out to fit the size budget."""
    linked: list[TestCaseRef] = Field(default_factory=list)
    """Other catalog records with the same key (the pytest test and its imported case)."""


class SimilarTests(QBenchModel):
    """Test cases like a given one (or like a text), most similar first."""

    reference: TestCaseRef | None = None
    """The test compared with (``None`` when a text was given)."""
    results: list[SearchHit] = Field(default_factory=list)
    """Similar test cases."""


class Rejection(QBenchModel):
    """A record that was not taken into the catalog, or only partly."""

    record: str
    """Which record: its key, node id or position in the file."""
    reason: str
    """Why."""


class IngestReport(QBenchModel):
    """What an ingest did to the catalog."""

    source: str
    """``pytest`` or ``json:<file>``."""
    added: int = 0
    """New records."""
    updated: int = 0
    """Records that changed."""
    unchanged: int = 0
    """Records as they were."""
    removed: int = 0
    """Records of this source that are gone."""
    rejected: list[Rejection] = Field(default_factory=list)
    """Records refused or taken in part, with reasons (bounded)."""
    rejected_total: int = 0
    """Rejections in all."""
    collection_errors: list[str] = Field(default_factory=list)
    """pytest collection errors (their files' tests were kept as they were)."""
    catalog_size: int = 0
    """Records in the catalog afterwards."""
    duration: float = 0.0
    """Seconds."""


class ToolCallTotals(QBenchModel):
    """One tool's calls in the server's tool-call log."""

    tool: str
    calls: int
    """Calls logged."""
    success_rate: float
    """Share of them that succeeded, 0 to 1."""
    median_duration: float
    """Seconds."""
    bytes_saved: int
    """Raw output the responses replaced, less the responses."""


class Health(QBenchModel):
    """The server's state and limits."""

    status: Literal["ok", "degraded"]
    """``degraded`` when something below is not usable."""
    qbench_version: str
    """pytest-qbench version."""
    mcp_version: str
    """MCP SDK version."""
    python: str
    """Python version of the interpreter that runs pytest."""
    pytest_version: str | None = None
    """pytest version, as installed for that interpreter."""
    interpreter: str
    """The interpreter that runs pytest (``--python``; by default the server's own)."""
    project_root: str
    """Every test path resolves inside this directory."""
    qbench_dir: str
    """The run store."""
    store_writable: bool
    """Whether the run store can be written."""
    runs_indexed: int | None = None
    """Runs in the history index (``None`` without one)."""
    catalog_size: int = 0
    """Test cases in the catalog."""
    fts5: bool
    """Whether SQLite has FTS5 (the catalog needs it)."""
    run_in_progress: str | None = None
    """The run going on now, if any."""
    limits: dict[str, float] = Field(default_factory=dict)
    """Timeouts (seconds) and response budgets (bytes)."""
    tool_calls: list[ToolCallTotals] = Field(default_factory=list)
    """The tool-call log's totals per tool (``qbench mcp-log`` lists the calls)."""
    problems: list[str] = Field(default_factory=list)
    """What is wrong, when degraded."""
