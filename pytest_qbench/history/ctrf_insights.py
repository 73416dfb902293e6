"""CTRF ``insights`` and ``baseline`` from the history index (CTRF spec, appendix C).

The window is the run and the runs indexed before it (``WINDOW`` in all); each metric's
``baseline`` is the same metric over the window that ends at the run before, and ``change``
the difference. Rates are fractions (0 to 1), durations milliseconds, as CTRF wants them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.database import existing_index
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import run_results
from pytest_qbench.report.ctrf import STATUS
from pytest_qbench.report.ctrf import CtrfHistory
from pytest_qbench.report.ctrf import report_id
from pytest_qbench.report.shapes import iso


WINDOW = 20
"""Runs analysed: the run and the 19 indexed before it."""

RUNS_UP_TO = (
    f"SELECT {sql.RUN_FIELDS} FROM runs r WHERE r.id <= "
    f"(SELECT id FROM runs WHERE run_id = ?) AND (r.run_id = ? OR {sql.COUNTED}) "
    "ORDER BY r.id DESC LIMIT ?"
)
"""The run and the runs indexed before it that count (``sql.COUNTED``: not the shards of an
indexed merged run, whose copy of their results counts): each CI pipeline once."""


@dataclass(frozen=True)
class _Execution:
    status: str
    flaky: bool
    duration_ms: float


def load_ctrf_history(
    qbench_dir: Path | None, db: str | None, run_id: str, nodeids: Iterable[str]
) -> CtrfHistory | None:
    """The insights of run ``run_id`` and of its tests ``nodeids``; ``None`` when there is no
    index or the run is not in it.

    Raises:
        HistoryError: the index exists but cannot be read.
    """
    index = existing_index(qbench_dir, db)
    if index is None:
        return None
    try:
        return ctrf_history(index, run_id, nodeids)
    finally:
        index.close()


def ctrf_history(index: Index, run_id: str, nodeids: Iterable[str]) -> CtrfHistory | None:
    """The insights of run ``run_id`` (``None`` when it is not indexed)."""

    runs = runs_up_to(index, run_id, WINDOW + 1)
    if not runs or runs[0].run_id != run_id:
        return None
    wanted = set(nodeids)
    executions = {run.run_id: _executions(run_results(index, run.run_id), wanted) for run in runs}
    current, before = runs[:WINDOW], runs[1 : WINDOW + 1]
    return CtrfHistory(
        insights=_run_insights(current, before, executions),
        tests=_test_insights(wanted, current, before, executions),
        baseline=_baseline(runs[1]) if len(runs) > 1 else None,
    )


def runs_up_to(index: Index, run_id: str, count: int) -> list[RunInfo]:
    """Run ``run_id`` and the runs indexed before it, but the shards of an indexed merged run,
    newest first, ``count`` at most (none when ``run_id`` is not indexed)."""

    def work(cursor: Cursor) -> list[RunInfo]:
        cursor.execute(RUNS_UP_TO, (run_id, run_id, count))
        return [RunInfo.from_row(row) for row in cursor.fetchall()]

    return index.read(work)


def _executions(results: dict[str, PastResult], wanted: set[str]) -> dict[str, _Execution]:
    return {
        nodeid: _Execution(STATUS.get(r.outcome, "other"), r.flaky, r.duration * 1000)
        for nodeid, r in results.items()
        if nodeid in wanted or not wanted
    }


def _run_insights(
    current: Sequence[RunInfo],
    before: Sequence[RunInfo],
    executions: dict[str, dict[str, _Execution]],
) -> dict[str, Any]:
    def figures(runs: Sequence[RunInfo]) -> dict[str, float | None]:
        done = [e for run in runs for e in executions[run.run_id].values()]
        durations = [run.duration * 1000 for run in runs]
        return {
            **_rates(done),
            "averageRunDuration": _mean(durations),
            "p95RunDuration": p95(durations),
            "averageTestDuration": _mean([e.duration_ms for e in done]),
        }

    insights = _deltas(figures(current), figures(before) if before else {})
    insights["runsAnalyzed"] = len(current)
    return insights


def _test_insights(
    nodeids: set[str],
    current: Sequence[RunInfo],
    before: Sequence[RunInfo],
    executions: dict[str, dict[str, _Execution]],
) -> dict[str, dict[str, Any]]:
    def figures(runs: Sequence[RunInfo], nodeid: str) -> dict[str, float | None]:
        done = [executions[r.run_id][nodeid] for r in runs if nodeid in executions[r.run_id]]
        if not done:
            return {}
        times = [e.duration_ms for e in done]
        return {
            **_rates(done),
            "averageTestDuration": _mean(times),
            "p95TestDuration": p95(times),
        }

    found: dict[str, dict[str, Any]] = {}
    for nodeid in nodeids:
        now = figures(current, nodeid)
        if not now:
            continue
        insights = _deltas(now, figures(before, nodeid))
        insights["executedInRuns"] = sum(1 for r in current if nodeid in executions[r.run_id])
        found[nodeid] = insights
    return found


def _baseline(run: RunInfo) -> dict[str, Any]:
    baseline: dict[str, Any] = {
        "reportId": report_id(run.run_id),
        "timestamp": iso(run.started_at),
        "source": f"qbench run {run.run_id}" + (f" on {run.branch}" if run.branch else ""),
        "extra": {"runId": run.run_id},
    }
    if run.commit:
        baseline["commit"] = run.commit
    if run.build_url and run.build_url.startswith(("http://", "https://")):
        baseline["buildUrl"] = run.build_url
    return baseline


def _deltas(now: dict[str, float | None], then: dict[str, float | None]) -> dict[str, Any]:
    """``{"passRate": {"current", "baseline", "change"}, ...}`` for the figures known now."""
    deltas: dict[str, Any] = {}
    for name, value in now.items():
        if value is None:
            continue
        delta: dict[str, float] = {"current": value}
        old = then.get(name)
        if old is not None:
            delta["baseline"] = old
            delta["change"] = round(value - old, 4)
        deltas[name] = delta
    return deltas


def _rates(done: Sequence[_Execution]) -> dict[str, float | None]:
    """CTRF's ``passRate``, ``failRate`` and ``flakyRate`` of some executions."""
    return {
        "passRate": _share(sum(e.status == "passed" for e in done), len(done)),
        "failRate": _share(sum(e.status == "failed" for e in done), len(done)),
        "flakyRate": _share(sum(e.flaky for e in done), len(done)),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values)) if values else None


def p95(values: Sequence[float]) -> float | None:
    """The 95th percentile by nearest rank, in whole units (``None`` for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)])
