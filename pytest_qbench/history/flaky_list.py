"""``qbench flaky``'s data: each test that failed or was rerun in the runs looked at, its status
(broken, flaky, healthy), the monitor that decided it, its evidence and its score, as pydantic
models (the ``--json`` output)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from pytest_qbench.history.backend import Index
from pytest_qbench.history.compare import FlakyTest
from pytest_qbench.history.compare import find_flaky
from pytest_qbench.history.flakiness import Monitor
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import Status
from pytest_qbench.history.flakiness import examine
from pytest_qbench.report.models import QBenchModel


class MonitorSettings(QBenchModel):
    """The monitors' settings the statuses were decided with."""

    window: int
    """Newest results of a test looked at (outage runs and skips left out)."""
    min_evidence: int
    """Runs of evidence a flaky monitor needs."""
    min_runs: int
    """Results the failure-rate monitor needs."""
    min_rate: float
    """Failure share from which the failure-rate monitor calls a test flaky."""
    recovery: int
    """Results without evidence after which a flaky test is healthy again."""
    outage_share: float
    """Share of a run's tests failing above which the run is an outage, set aside."""
    outage_min_failing: int
    """Failing tests a run needs to be an outage."""


class FailureSeen(QBenchModel):
    """The test's newest failure."""

    error_type: str
    location: str
    message: str


class FlakyStatus(QBenchModel):
    """One test's status, with the monitor that decided it and the evidence."""

    nodeid: str
    status: Status
    """``broken`` (failing every run since a point, same failure), ``flaky`` or ``healthy``."""
    monitor: Monitor
    """``broken``, ``pass-on-retry``, ``same-commit``, ``failure-rate``; empty when no monitor
    decided (healthy)."""
    evidence: str
    """The decision in words: the evidence, or why the test is not flaky."""
    evidence_runs: list[str]
    """The runs that are the evidence (for a broken test: the runs it failed in a row)."""
    evidence_commits: list[str]
    """The commits that are the evidence (``same-commit``)."""
    score: Annotated[float, Field(ge=0, le=1)]
    """Share of the results looked at where the test failed at least once (a failure, or a
    pass after a rerun)."""
    results: int
    """Results looked at (outage runs and skips left out)."""
    broken_since: str | None
    """For a broken test, the first run of its failures in a row."""
    flips: int
    """Outcome changes between consecutive results, plus passes after reruns."""
    flaky_indicator: Annotated[float, Field(ge=0, le=1)]
    """``flips / (results - 1)``, capped at 1."""
    failed_runs: int
    """Runs it failed or errored in, among the runs looked at."""
    trend: str
    """``Improving``, ``Stable`` or ``Declining``."""
    last_failure: FailureSeen | None
    error: str | None
    """The internal error that kept the monitors from deciding (then the test is healthy)."""


class FlakyStatusList(QBenchModel):
    """``qbench flaky --json``."""

    runs: int
    """Newest runs of the index looked at."""
    min_flips: int
    """Flips a test needed to be listed."""
    monitors: MonitorSettings
    tests: list[FlakyStatus]
    """Flaky tests first (flakiest first), then broken ones, then (with ``--all``) the healthy
    tests that failed or were rerun, with why they are not flaky."""


def list_statuses(
    index: Index, runs: int, min_flips: int, monitors: Monitors, everything: bool = False
) -> FlakyStatusList:
    """The statuses of the tests that failed or were rerun in the last ``runs`` runs: the
    flaky and broken ones, and with ``everything`` the healthy ones too."""
    statuses: tuple[Status, ...] = (
        ("flaky", "broken", "healthy") if everything else ("flaky", "broken")
    )
    found = find_flaky(index, runs, min_flips, monitors, statuses)
    settings = MonitorSettings(**vars(monitors))
    return FlakyStatusList(
        runs=runs, min_flips=min_flips, monitors=settings, tests=[status_of(f) for f in found]
    )


def status_of(test: FlakyTest) -> FlakyStatus:
    """The model of one test ``find_flaky`` found."""
    found = test.assessment or examine([])
    failure = test.last_failure
    return FlakyStatus(
        nodeid=test.nodeid,
        status=found.status,
        monitor=found.monitor,
        evidence=found.reason,
        evidence_runs=list(found.runs),
        evidence_commits=list(found.commits),
        score=found.score,
        results=found.looked_at,
        broken_since=found.since,
        flips=test.summary.flips,
        flaky_indicator=test.summary.flaky_indicator,
        failed_runs=test.summary.failed_runs,
        trend=test.summary.trend,
        last_failure=None if failure is None else FailureSeen(**vars(failure)),
        error=found.error,
    )
