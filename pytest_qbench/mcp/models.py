"""What the MCP tools return: pydantic models whose JSON Schemas are the tools' output schemas.

Field docstrings become the schema's descriptions, which is what an assistant reads. No field is
computed: a structured result must validate against its own schema, which refuses extra keys.
"""

from __future__ import annotations

from pydantic import Field

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import DigestCoverage
from pytest_qbench.report.models import DigestFailure
from pytest_qbench.report.models import QBenchModel


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
    """The run hit timeout_seconds and was stopped: the results are partial, unless only
    pytest's session end was cut (then partial is false)."""
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
