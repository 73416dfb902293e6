"""What flaky classification adds at the start of a pytest session, on a large history.

Goal (issue 26): under 50 ms added with 10 000 tests and 1 000 stored runs. qbench reads the
history, only when asked:

- ``--qbench-quarantine=auto``: at session start, the quarantine list
  (``quarantine.quarantined_tests``); at the end, which of the run's failures the flaky monitors
  call flaky (``quarantine.flaky_among``, over the monitors' window, for the failing tests only).
  Beside it, "before": every test that failed or was rerun in the window classified at session
  start, as qbench did until it judged the failures only;
- ``--qbench-new-tests-repeat``: which of the collected tests the history has never seen
  (``queries.known_tests`` over every collected node id).

The index is ``history_cost.py``'s synthetic history (1 % of the tests always failing, 2 % flaky
at 30 %, 5 % skipped), ``--runs`` runs of ``--tests`` tests indexed through ``index_run`` with
no retention (the first 10 through ``index_run``, the others copies of them through SQL with
their own run id, start time and commit), built once into the work directory and kept. Each step opens the index as the
plugin does (``existing_index``) and is timed ``--repeat`` times; the table gives the median
and the worst.

Usage::

    python benchmarks/flaky_start_cost.py [--runs 1000] [--tests 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from history_cost import T0
from history_cost import make_report
from history_cost import remove_index

from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history.database import existing_index
from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import examine
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.quarantine import flaky_among
from pytest_qbench.history.quarantine import quarantined_tests
from pytest_qbench.history.queries import flaky_candidates
from pytest_qbench.history.queries import known_tests
from pytest_qbench.history.sqlite import SQLiteIndex


HERE = Path(__file__).resolve().parent
TARGET_MS = 50.0


DISTINCT_RUNS = 10
"""Runs indexed through ``index_run``; the others repeat them through SQL, with their own run
id, start time and commit (indexing 1 000 runs of 10 000 tests one by one takes most of an
hour on a loaded 2-core machine)."""


def build(qbench_dir: Path, runs: int, tests: int, seed: int) -> None:
    """Index ``runs`` synthetic runs of ``tests`` tests, unless the index is there already."""
    done = qbench_dir / "built"
    if done.exists() and done.read_text() == f"{runs} {tests} {seed}":
        return
    qbench_dir.mkdir(parents=True, exist_ok=True)
    remove_index(qbench_dir)
    started = time.perf_counter()
    index = SQLiteIndex(qbench_dir / INDEX_NAME, create=True)
    try:
        for run in range(min(runs, DISTINCT_RUNS)):
            record = make_report(run, tests, seed)
            index_run(index, record, lambda r=record: r["results"])
    finally:
        index.close()
    repeat_runs(qbench_dir / INDEX_NAME, runs)
    took = time.perf_counter() - started
    print(f"indexed {runs} runs of {tests} tests in {took:.0f}s", file=sys.stderr)
    done.write_text(f"{runs} {tests} {seed}")


def repeat_runs(path: Path, runs: int) -> None:
    """Runs ``DISTINCT_RUNS`` to ``runs - 1``: copies of the indexed ones, one hour apart."""
    db = sqlite3.connect(path)
    try:
        run_columns = [row[1] for row in db.execute("PRAGMA table_info(runs)") if row[1] != "id"]
        result_columns = [row[1] for row in db.execute("PRAGMA table_info(results)")]
        changed = {"run_id", "started_at", "commit_sha"}
        kept = ", ".join(c for c in run_columns if c not in changed)
        copied = ", ".join(c for c in result_columns if c != "run_ref")
        sources = [row[0] for row in db.execute("SELECT id FROM runs ORDER BY started_at")]
        for run in range(len(sources), runs):
            when = (T0 + timedelta(hours=run)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
            cursor = db.execute(
                f"INSERT INTO runs (run_id, started_at, commit_sha, {kept}) "
                f"SELECT ?, ?, ?, {kept} FROM runs WHERE id = ?",
                (f"copy-{run:06d}", when, f"{run:040x}", sources[run % len(sources)]),
            )
            db.execute(
                f"INSERT INTO results (run_ref, {copied}) SELECT ?, {copied} FROM results "
                "WHERE run_ref = ?",
                (cursor.lastrowid, sources[run % len(sources)]),
            )
            if run % 100 == 99:
                db.commit()
                print(f"{run + 1} runs", file=sys.stderr)
        db.commit()
    finally:
        db.close()


def timed(step: Callable[[], Any], repeat: int) -> tuple[float, float, float, Any]:
    """Median and worst wall-clock milliseconds of ``step``, its median CPU milliseconds (the
    machine may be shared), and its last answer."""
    times, cpu, answer = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        answer = step()
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(times), max(times), statistics.median(cpu), answer


def main() -> None:
    """Build the index if needed, time the two session-start reads, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--work-dir", type=Path, default=HERE / ".work")
    parser.add_argument("--window", type=int, help="the monitors' window (default: theirs)")
    args = parser.parse_args()
    monitors = Monitors(window=args.window) if args.window else DEFAULT_MONITORS
    qbench_dir = args.work_dir.resolve() / f"flaky-start-{args.runs}x{args.tests}"
    build(qbench_dir, args.runs, args.tests, args.seed)
    results = make_report(0, args.tests, args.seed)["results"]
    nodeids = [r["nodeid"] for r in results]
    failing = [r["nodeid"] for r in results if r["outcome"] in ("failed", "error")]

    def whole_window() -> dict[str, str]:
        index = existing_index(qbench_dir, None)
        assert index is not None
        try:
            found = {}
            for nodeid, past in flaky_candidates(index, monitors.window).items():
                if examine(past, monitors).status == "flaky":
                    found[nodeid] = "flaky"
            return found
        finally:
            index.close()

    def listed() -> dict[str, str]:
        index = existing_index(qbench_dir, None)
        assert index is not None
        try:
            return quarantined_tests(index, None)
        finally:
            index.close()

    def failures_judged() -> dict[str, str]:
        index = existing_index(qbench_dir, None)
        assert index is not None
        try:
            return flaky_among(index, failing, monitors)
        finally:
            index.close()

    def new_tests() -> set[str] | None:
        index = existing_index(qbench_dir, None)
        assert index is not None
        try:
            return known_tests(index, [*nodeids, "tests/test_new.py::test_added"])
        finally:
            index.close()

    print(
        f"{args.runs} runs of {args.tests} tests, window {monitors.window}; "
        f"target {TARGET_MS:.0f} ms each\n"
    )
    print("| step | median ms | worst ms | median CPU ms | answer |")
    print("|---|---:|---:|---:|---|")
    median, worst, cpu, found = timed(whole_window, args.repeat)
    step = "`auto`, before: every candidate classified at session start"
    print(f"| {step} | {median:.1f} | {worst:.1f} | {cpu:.1f} | {len(found)} flaky |")
    median, worst, cpu, found = timed(listed, args.repeat)
    step = "`auto`, session start: the quarantine list"
    print(f"| {step} | {median:.1f} | {worst:.1f} | {cpu:.1f} | {len(found)} listed |")
    median, worst, cpu, found = timed(failures_judged, args.repeat)
    step = f"`auto`, session end: the run's {len(failing)} failures judged"
    print(f"| {step} | {median:.1f} | {worst:.1f} | {cpu:.1f} | {len(found)} flaky |")
    median, worst, cpu, known = timed(new_tests, args.repeat)
    new = args.tests + 1 - len(known or ())
    step = "`--qbench-new-tests-repeat`: new tests"
    print(f"| {step} | {median:.1f} | {worst:.1f} | {cpu:.1f} | {new} new |")


if __name__ == "__main__":
    main()
