"""What counting a CI pipeline once costs the queries of truths10 (session 42), old and new
side by side on one index.

Builds an index of ``--whole`` whole runs of ``--tests`` tests (``history_cost.make_report``),
then ``--pipelines`` pipelines of two shards each and their indexed merge. On it, it counts
SQLite's virtual-machine steps (``set_progress_handler``, every ``STEP`` opcodes: the same on
any machine, whatever its load) and times (median of ``--rounds`` interleaved rounds):

- the shard planner's read (``queries.phase_timings``, every test, the last 5 results): the
  statement before (both copies of a pipeline's results) and now (``sql.COUNTED``);
- ``merges.unrecorded_merges`` (what ``qbench index``, ``flaky`` and ``history`` now ask);
- ``merges.known_members`` of every merged run (the index's record, one query each).

Usage::

    python benchmarks/pipeline_once_cost.py [--tests 5000] [--whole 60] [--pipelines 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from history_cost import make_report

from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history import sql
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.merges import known_members
from pytest_qbench.history.merges import unrecorded_merges
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import phase_timings
from pytest_qbench.history.sqlite import SQLiteIndex


STEP = 100
"""SQLite opcodes between two calls of the progress handler."""
OLD_PHASE_TIMINGS = sql.phase_timings_of
OLD_WINDOW_START = sql.PHASE_WINDOW_START
"""Replaced below by the statements without ``COUNTED`` for the "before" rows."""


def old_phase_timings_of(count: int) -> str:
    """The planner's statement without ``sql.COUNTED`` (as before truths10; since then read
    without a window function too: both rows are this statement's)."""
    return OLD_PHASE_TIMINGS(count).replace(f" AND {sql.COUNTED}", "")


def pipeline(run: int, tests: int) -> list[Any]:
    """Two shards of run ``run`` (half the tests each) and their merge, records to index."""
    whole = make_report(run, tests, 1)
    merged_id = whole["run"]["run_id"]
    shards = []
    for number, part in enumerate((whole["results"][::2], whole["results"][1::2]), start=1):
        shard = make_report(run, tests, 1)
        shard["run"] = {**shard["run"], "run_id": f"{merged_id}-{number}"}
        shard["run"]["shard"] = {"index": number, "count": 2}
        shard["results"] = part
        shards.append(shard)
    whole["run"] = {**whole["run"], "command": ["qbench", "merge", "s1", "s2"]}
    whole["shards"] = [{"run": {"run_id": s["run"]["run_id"]}} for s in shards]
    return [*shards, whole]


def build(path: Path, tests: int, whole: int, pipelines: int) -> list[str]:
    """The index at ``path``; the node ids of its tests."""
    index = SQLiteIndex(path, create=True)
    try:
        records = [make_report(run, tests, 1) for run in range(whole)]
        for run in range(whole, whole + pipelines):
            records += pipeline(run, tests)
        for record in records:
            index_run(index, record, lambda r=record: r["results"])
        return [r["nodeid"] for r in records[0]["results"]]
    finally:
        index.close()


def counted(index: SQLiteIndex, call: Callable[[], object]) -> int:
    """SQLite opcodes ``call()`` ran (in ``STEP``s)."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    index._conn.set_progress_handler(tick, STEP)
    try:
        call()
    finally:
        index._conn.set_progress_handler(None, STEP)
    return steps[0] * STEP


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=5000)
    parser.add_argument("--whole", type=int, default=60)
    parser.add_argument("--pipelines", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / INDEX_NAME
        nodeids = build(path, args.tests, args.whole, args.pipelines)
        index = SQLiteIndex(path)
        merged = index.read(
            lambda cursor: [
                RunInfo.from_row(row)
                for row in cursor.execute(f"SELECT {sql.RUN_FIELDS} FROM runs r").fetchall()
            ]
        )
        merged = [run for run in merged if run.command[:2] == ["qbench", "merge"]]

        def plan_old() -> object:
            sql.phase_timings_of = old_phase_timings_of  # type: ignore[assignment]
            sql.PHASE_WINDOW_START = OLD_WINDOW_START.replace(f" AND {sql.COUNTED}", "")
            try:
                return phase_timings(index, nodeids, 5, "next")
            finally:
                sql.phase_timings_of = OLD_PHASE_TIMINGS
                sql.PHASE_WINDOW_START = OLD_WINDOW_START

        steps: dict[str, Callable[[], object]] = {
            "phase_timings, before (shard and merge both)": plan_old,
            "phase_timings, now (each pipeline once)": lambda: phase_timings(
                index, nodeids, 5, "next"
            ),
            "unrecorded_merges": lambda: unrecorded_merges(index),
            "known_members of every merged run": lambda: index.read(
                lambda cursor: [known_members(cursor, run, {}) for run in merged]
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(args.rounds):
            for name, call in steps.items():
                started = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - started)
        ops = {name: counted(index, call) for name, call in steps.items()}
        index.close()
    runs = args.whole + 3 * args.pipelines
    print(
        f"index: {runs} runs ({args.whole} whole, {args.pipelines} pipelines of 2 shards and "
        f"their merge) of {args.tests} tests; rounds {args.rounds}\n"
    )
    print("| query | SQLite opcodes | median ms | min ms |")
    print("|---|---:|---:|---:|")
    for name in steps:
        print(
            f"| {name} | {ops[name]:,} | {statistics.median(times[name]) * 1000:.1f} | "
            f"{min(times[name]) * 1000:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
