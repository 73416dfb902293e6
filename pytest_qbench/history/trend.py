"""The trend the HTML report draws, read from the history index: the last runs' counts and
durations, and the flaky tests among them with their flips."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.history import sql
from pytest_qbench.history.compare import find_flaky
from pytest_qbench.history.database import existing_index
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import list_runs
from pytest_qbench.report.html.trend import FlakyTest
from pytest_qbench.report.html.trend import Trend
from pytest_qbench.report.html.trend import TrendRun
from pytest_qbench.report.shapes import iso


if TYPE_CHECKING:
    from pytest_qbench.history.backend import Cursor
    from pytest_qbench.history.backend import Index


TREND_RUNS = 30
"""Runs drawn in the trend (the newest)."""
MIN_FLIPS = 2
"""Flips that make a test flaky in the trend, as ``qbench flaky``'s default."""
MAX_FLAKY = 20
"""Flaky tests shown, the flakiest."""


RUNS_UP_TO = (
    f"SELECT {sql.RUN_FIELDS} FROM runs r WHERE r.id <= (SELECT id FROM runs WHERE run_id = ?) "
    "ORDER BY r.id DESC LIMIT ?"
)
"""The runs indexed up to a run (it included), newest first: the index's one order."""


def load_trend(
    qbench_dir: Path | None,
    db: str | None,
    runs: int = TREND_RUNS,
    until: tuple[str, str] | None = None,
) -> Trend | None:
    """The trend from the index ``db`` names, else ``<qbench_dir>/index.sqlite``; ``None`` when
    there is no index (it is never created here). ``until`` (a run id and its start, ISO time):
    a stored run's page shows the runs up to it: those indexed up to it (the index's one order,
    never the start times runs recorded), or, for a run the index does not hold, those that
    started no later.

    Raises:
        HistoryError: the index exists but cannot be read.
    """
    index = existing_index(qbench_dir, db)
    if index is None:
        return None
    try:
        listed = _up_to(index, until[0], runs) if until is not None else []
        if not listed:
            listed = list_runs(index, runs)
        flaky = find_flaky(index, runs, MIN_FLIPS)[:MAX_FLAKY]
        failing = _failing_of_worded(index, listed)
    finally:
        index.close()
    drawn = [trend_run(run, failing.get(run.run_id)) for run in reversed(listed)]
    if until is not None and listed and listed[0].run_id != until[0]:  # not indexed: by start
        drawn = [run for run in drawn if run.started_at <= until[1]]
    return Trend(
        runs=drawn,
        flaky=[FlakyTest(f.nodeid, f.summary.flips) for f in flaky],
    )


def _up_to(index: Index, run_id: str, runs: int) -> list[RunInfo]:
    """The ``runs`` runs indexed up to ``run_id``, newest first; none when it is not indexed."""

    def work(cursor: Cursor) -> list[RunInfo]:
        cursor.execute(RUNS_UP_TO, (run_id, runs))
        return [RunInfo.from_row(row) for row in cursor.fetchall()]

    return index.read(work)


def _failing_of_worded(index: Index, listed: list[RunInfo]) -> dict[str, int]:
    """The failed and errored tests (``sql.WORDED_RUNS``) of the runs whose line counts tests
    under a plugin's own words, by run id (none read when ``listed`` has none): the others'
    are their line's."""
    if not any(run.other for run in listed):
        return {}
    from pytest_qbench.history.queries import worded_runs

    return {run_id: failing for run_id, (failing, _ran) in index.read(worded_runs).items()}


def trend_run(run: RunInfo, failing: int | None = None) -> TrendRun:
    """One indexed run as the trend needs it; ``failing``: its failed and errored tests when
    its line's count is not all of them (``sql.RUN_FAILING``: a plugin's own words)."""
    counts = run.counts
    if failing is None:
        failing = counts.get("failed", 0) + counts.get("errors", 0)
    return TrendRun(
        run_id=run.run_id,
        started_at=iso(run.started_at),
        total=counts.get("total", 0),
        passed=counts.get("passed", 0),
        failed=failing,
        duration=run.duration,
    )
