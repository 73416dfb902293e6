"""The trend the HTML report draws, read from the history index: the last runs' counts and
durations, and the flaky tests among them with their flips."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.history.compare import find_flaky
from pytest_qbench.history.database import existing_index
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import list_runs
from pytest_qbench.report.html.trend import FlakyTest
from pytest_qbench.report.html.trend import Trend
from pytest_qbench.report.html.trend import TrendRun
from pytest_qbench.report.shapes import iso


TREND_RUNS = 30
"""Runs drawn in the trend (the newest)."""
MIN_FLIPS = 2
"""Flips that make a test flaky in the trend, as ``qbench flaky``'s default."""
MAX_FLAKY = 20
"""Flaky tests shown, the flakiest."""


def load_trend(
    qbench_dir: Path | None, db: str | None, runs: int = TREND_RUNS, until: str | None = None
) -> Trend | None:
    """The trend from the index ``db`` names, else ``<qbench_dir>/index.sqlite``; ``None`` when
    there is no index (it is never created here). ``until`` (ISO time): leave out the runs that
    started later (a stored run's page shows the runs up to it).

    Raises:
        HistoryError: the index exists but cannot be read.
    """
    index = existing_index(qbench_dir, db)
    if index is None:
        return None
    try:
        listed = list_runs(index, runs)
        flaky = find_flaky(index, runs, MIN_FLIPS)[:MAX_FLAKY]
    finally:
        index.close()
    drawn = [trend_run(run) for run in reversed(listed)]
    if until is not None:
        drawn = [run for run in drawn if run.started_at <= until]
    return Trend(
        runs=drawn,
        flaky=[FlakyTest(f.nodeid, f.summary.flips) for f in flaky],
    )


def trend_run(run: RunInfo) -> TrendRun:
    """One indexed run as the trend needs it."""
    counts = run.counts
    return TrendRun(
        run_id=run.run_id,
        started_at=iso(run.started_at),
        total=counts.get("total", 0),
        passed=counts.get("passed", 0),
        failed=counts.get("failed", 0) + counts.get("errors", 0),
        duration=run.duration,
    )
