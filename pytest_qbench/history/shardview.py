"""``qbench shards [RUN]``: how balanced a sharded run was, shard by shard.

The shards of one CI run are the runs of the history index with a shard (``2/4``, or a queue's
name) of the same kind and, on CI, the same commit; without a commit, the newest runs of that
kind, one per shard number. Each shard's actual time is its run's duration; its expected time
and the plan come from its ``report.json`` when the run directory is here, or from a merged
report (``qbench merge``) given as RUN.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.history.backend import Index
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import list_runs
from pytest_qbench.history.queries import resolve_run
from pytest_qbench.report import store
from pytest_qbench.report.models import QBenchModel


SEARCHED = 1000
"""Newest runs searched for a sharded run and its sibling shards."""


@dataclass(frozen=True)
class ShardRow:
    """One shard of a sharded run."""

    label: str
    run_id: str
    tests: int
    actual: float
    expected: float | None = None


@dataclass(frozen=True)
class Balance:
    """The shards of one run, and the plan's total when known."""

    rows: list[ShardRow]
    planned: float | None
    """The plan's expected seconds for the whole suite (fixtures once), when known."""

    @property
    def slowest(self) -> float:
        """The slowest shard's seconds."""
        return max(row.actual for row in self.rows)

    @property
    def mean(self) -> float:
        """The shards' mean seconds."""
        return sum(row.actual for row in self.rows) / len(self.rows)

    @property
    def ideal(self) -> float | None:
        """The plan's total over the shards: what each would take, perfectly balanced."""
        return None if self.planned is None else self.planned / len(self.rows)


class ShardJson(QBenchModel):
    """One shard of a sharded run."""

    label: str
    """``2/4``, or ``queue NAME`` with the machine's number."""
    run_id: str
    tests: int
    """Tests it ran."""
    actual: float
    """Seconds the shard's session took."""
    expected: float | None = None
    """Seconds the plan expected; ``None`` without a plan."""


class ShardsOutput(QBenchModel):
    """``qbench shards --json``: how balanced a sharded run was."""

    shards: list[ShardJson]
    slowest: float
    """Seconds of the slowest shard."""
    mean: float
    """The shards' mean seconds."""
    ideal: float | None
    """The plan's total over the number of shards; ``None`` without a plan."""
    over_mean: float | None
    """The slowest shard over the mean."""
    over_ideal: float | None
    """The slowest shard over the ideal; ``None`` without a plan."""

    @classmethod
    def of(cls, balance: Balance) -> ShardsOutput:
        """The model of a sharded run's balance."""
        return cls(
            shards=[ShardJson(**asdict(row)) for row in balance.rows],
            slowest=round(balance.slowest, 3),
            mean=round(balance.mean, 3),
            ideal=None if balance.ideal is None else round(balance.ideal, 3),
            over_mean=round(balance.slowest / balance.mean, 4) if balance.mean else None,
            over_ideal=round(balance.slowest / balance.ideal, 4) if balance.ideal else None,
        )


def balance_lines(balance: Balance) -> list[str]:
    """The shards' table and the slowest shard against the mean and the ideal."""
    from pytest_qbench.history.text import table

    rows = [
        (
            row.label,
            row.run_id,
            str(row.tests),
            "-" if row.expected is None else format_duration(row.expected),
            format_duration(row.actual),
        )
        for row in balance.rows
    ]
    lines = table(("SHARD", "RUN", "TESTS", "EXPECTED", "ACTUAL"), rows)
    slowest, mean, ideal = balance.slowest, balance.mean, balance.ideal
    verdict = (
        f"slowest shard {format_duration(slowest)}: {slowest / mean:.2f}x the mean" if mean else ""
    )
    if ideal:
        verdict += (
            f", {slowest / ideal:.2f}x the ideal {format_duration(ideal)} (the plan / {len(rows)})"
        )
    else:
        verdict += "; no plan known (split by test count, or no report.json here)"
    return [*lines, verdict]


def from_report(path: Path) -> Balance:
    """The shards of a merged report (``qbench merge``).

    Raises:
        HistoryError: not a merged report of shards that qbench planned.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        shards = data["shards"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HistoryError(
            f"{path} is not a merged qbench report ({exc})", slug="not-sharded"
        ) from None
    rows, planned = [], None
    for shard in shards:
        info = shard["run"].get("shard") or {}
        planned = planned if planned is not None else _planned(info)
        rows.append(
            ShardRow(
                _label(info) or shard["source"],
                shard["run"]["run_id"],
                int(shard["summary"].get("total", 0)),
                float(shard["summary"].get("duration", 0.0)),
                info.get("expected"),
            )
        )
    if not rows:
        raise HistoryError(
            f"{path} holds no shards: merge the shards' reports first", slug="not-sharded"
        )
    return Balance(rows, planned)


def from_index(index: Index, ref: str | None, qbench_dir: Path | None) -> Balance:
    """The shards of the run ``ref`` names (default: the newest run that was a shard).

    Raises:
        HistoryError: no such run, or it was no shard.
    """
    runs = list_runs(index, SEARCHED)
    target = resolve_run(index, ref) if ref else next((r for r in runs if r.shard), None)
    if target is None or not target.shard:
        what = f"run {target.run_id} was not" if target else "no indexed run was"
        raise HistoryError(
            f"{what} a CI shard; run pytest with --qbench-shard=I/N or --qbench-queue=NAME",
            slug="not-sharded",
        )
    siblings = _siblings(target, runs)
    rows, planned = [], None
    for run in siblings:
        info = _report_shard(qbench_dir, run.run_id)
        planned = planned if planned is not None else _planned(info)
        rows.append(
            ShardRow(
                str(run.shard), run.run_id, run.counts["total"], run.duration, info.get("expected")
            )
        )
    return Balance(sorted(rows, key=lambda row: _order(row.label)), planned)


def _siblings(target: RunInfo, runs: Sequence[RunInfo]) -> list[RunInfo]:
    kind = _kind(str(target.shard))
    same = [r for r in runs if r.shard and _kind(r.shard) == kind]
    if target.commit or kind.startswith("queue "):  # a queue's name is its run's
        return [r for r in same if r.commit == target.commit]
    seen: dict[str, RunInfo] = {}
    for run in same[same.index(target) :] if target in same else same:
        if run.shard in seen:
            break
        seen[str(run.shard)] = run
    return list(seen.values())


def _kind(label: str) -> str:
    return label if label.startswith("queue ") else label.split("/", 1)[-1]


def _order(label: str) -> tuple[int, str]:
    head = label.split("/", 1)[0]
    return (int(head), label) if head.isdigit() else (0, label)


def _label(info: dict[str, Any]) -> str | None:
    if not info:
        return None
    if info.get("queue"):
        return f"queue {info['queue']} ({info.get('worker')})"
    return f"{info.get('index')}/{info.get('count')}"


def _planned(info: dict[str, Any]) -> float | None:
    plan = info.get("plan") or []
    return float(sum(plan)) if plan else None


def _report_shard(qbench_dir: Path | None, run_id: str) -> dict[str, Any]:
    """The ``run.shard`` of a run's report.json in this run store, when there."""
    if qbench_dir is None:
        return {}
    path = store.run_dir(qbench_dir, run_id) / store.REPORT_JSON
    try:
        shard = json.loads(path.read_text(encoding="utf-8"))["run"].get("shard")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return shard if isinstance(shard, dict) else {}
