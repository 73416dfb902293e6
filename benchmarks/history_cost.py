"""What the run history costs: indexing a large run, and the history commands on a large index.

Targets (issue 5): indexing one run of 50 000 tests, and ``qbench flaky`` over 100 runs of
10 000 tests, each under 2 seconds. Reports are synthetic records, built directly (no pytest
run): mostly passing tests, 2% failing with messages that vary in numbers only, 5% skipped, 1%
with agent-evaluation metrics. It times:

- ``index_run`` in process: 50 000 results from records in memory, into an empty index;
- the end of a pytest run (``session_end.record_run``): the same run read from its
  ``results.jsonl``, indexed into an index that already holds 5 runs of the same tests, with
  retention, and the history of its 1 000 failing tests;
- ``qbench index RUN_DIR``: the command, from ``report.json`` (CPU time and peak RSS too);
- on an index of 100 runs of 10 000 tests (2% of the tests flaky, 1% always failing):
  ``find_flaky`` in process, and the commands ``qbench flaky --runs 100``, ``qbench diff`` (a
  run with itself, so that it exits 0),
  ``qbench history NODEID`` and ``qbench runs``; ``qbench --version`` is the start-up cost;
- on an index of 120 runs of 5 000 tests (``--plan-runs``, ``--plan-tests``): the shard
  planner's read of every test's phase times (``queries.phase_timings``, the last 5 results of
  each: what ``--qbench-shard I/N``, ``--qbench-queue`` and ``qbench shards`` read), in process.

Commands run through ``_measure.py``'s launcher, like the other benchmarks.

Usage::

    python benchmarks/history_cost.py [--results 50000] [--runs 100] [--tests 10000] \
        [--plan-runs 120] [--plan-tests 5000]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Any

from _measure import MIB
from _measure import exit_on_sigterm
from _measure import measure
from _measure import source_revision
from render_md import Timing
from render_md import table
from render_md import time_call
from render_md import time_command

import pytest_qbench
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history.compare import find_flaky
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.queries import phase_timings
from pytest_qbench.history.session_end import record_run
from pytest_qbench.history.sqlite import SQLiteIndex
from pytest_qbench.report import store
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new
from pytest_qbench.report.shapes import pass_rate


HERE = Path(__file__).resolve().parent
PACKAGE_CHECKOUT = Path(pytest_qbench.__file__).resolve().parent.parent
DEFAULT_WORK_DIR = HERE / ".work"
TARGET_S = 2.0
PLAN_TARGET_S = 0.3
"""The shard planner's read of every test's phase times (issue 28)."""
PLAN_RUNS = 5
"""The results of each test the planner reads (``plugin.shards.HISTORY_RUNS``)."""
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
FILES = 500
"""Test files the synthetic tests are spread over."""


# --- synthetic records -------------------------------------------------------------------------


def test_kind(index: int) -> str:
    """What test ``index`` does in every run: stable, broken, flaky, skipped or agent."""
    slot = index % 100
    if slot < 1:
        return "broken"
    if slot < 3:
        return "flaky"
    if slot < 8:
        return "skipped"
    if slot < 9:
        return "agent"
    return "stable"


def make_result(index: int, outcome: str, rng: random.Random) -> Record:
    """One result record of test ``index``."""
    file = f"tests/test_mod{index % FILES:03d}.py"
    name = f"test_case_{index}"
    failure = None
    if outcome == "failed":
        failure = new(
            "Failure",
            error_type="AssertionError",
            error_message=f"assert {rng.randint(0, 999)} == {index}\n +  where {index} = f()",
            file=file,
            line=10 + index % 40,
        )
    metrics = []
    if test_kind(index) == "agent":
        score = round(rng.uniform(0.4, 1.0), 3)
        metrics = [
            new(
                "MetricResult",
                metric_name="relevance",
                score=score,
                threshold=0.5,
                passed=score >= 0.5,
            )
        ]
    return new(
        "TestResult",
        nodeid=f"{file}::{name}",
        test_name=name,
        file=file,
        line=10 + index % 40,
        outcome=outcome,
        duration=round(rng.uniform(0.001, 0.05), 6),
        failure=failure,
        counted_as=[outcome],
        reason="not here" if outcome == "skipped" else None,
        metric_results=metrics,
    )


def outcome_of(index: int, run: int, rng: random.Random) -> str:
    """The outcome of test ``index`` in run ``run``."""
    kind = test_kind(index)
    if kind == "broken":
        return "failed"
    if kind == "skipped":
        return "skipped"
    if kind == "flaky":
        return "failed" if rng.random() < 0.3 else "passed"
    return "passed"


def make_report(run: int, tests: int, seed: int) -> Record:
    """A report record of run ``run`` of ``tests`` tests, results included."""
    rng = random.Random(seed * 1_000_003 + run)
    results = [make_result(i, outcome_of(i, run, rng), rng) for i in range(tests)]
    counts: dict[str, int] = {}
    for r in results:
        key = "errors" if r["outcome"] == "error" else r["outcome"]
        counts[key] = counts.get(key, 0) + 1
    summary = new("ReportSummary", total=tests, duration=float(tests) / 500, **counts)
    summary["pass_rate"] = pass_rate(summary)
    started = T0 + timedelta(hours=run)
    environment = new(
        "Environment",
        python="3.12.4",
        implementation="CPython",
        platform="Linux",
        pytest_version="9.0.0",
        qbench_version="0.1.0",
        ci=new("CIInfo", provider="github-actions", branch="main", commit=f"{run:040x}"),
    )
    return new(
        "TestReport",
        meta=new("ReportMeta", qbench_version="0.1.0", created_at=iso(started)),
        run=new(
            "RunMeta",
            run_id=f"{started:%Y%m%dT%H%M%SZ}-{run:06x}",
            started_at=iso(started),
            completed_at=iso(started + timedelta(seconds=tests / 500)),
            exit_code=1,
            cwd="/src",
            command=["pytest", "-p", "qbench"],
        ),
        environment=environment,
        summary=summary,
        results=results,
    )


def write_run_dir(record: Record, qbench_dir: Path) -> Path:
    """The run's directory as a finished pytest run leaves it: results.jsonl and report.json."""
    run_dir = store.run_dir(qbench_dir, record["run"]["run_id"])
    shutil.rmtree(run_dir, ignore_errors=True)
    stream = store.StreamWriter(run_dir / store.STREAM_NAME)
    head = {k: record[k] for k in ("meta", "run", "environment")}
    stream.write_start({"kind": "start", **head})
    for result in record["results"]:
        stream.write_result(result)
    stream.close()
    store.write_report_json(run_dir / store.REPORT_JSON, record, None)
    return run_dir


def build_index(qbench_dir: Path, records: Iterable[Record]) -> None:
    """Index ``records`` into a fresh ``<qbench_dir>/index.sqlite``."""
    remove_index(qbench_dir)
    index = SQLiteIndex(qbench_dir / INDEX_NAME, create=True)
    try:
        for record in records:
            index_run(index, record, lambda r=record: r["results"])
    finally:
        index.close()


def remove_index(qbench_dir: Path) -> None:
    """Delete the index and its WAL files."""
    for suffix in ("", "-wal", "-shm"):
        (qbench_dir / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)


# --- steps -------------------------------------------------------------------------------------


def time_fresh(step: str, qbench_dir: Path, func: Any, repeat: int) -> Timing:
    """``func()`` timed into an empty index each time."""
    runs = []
    for _ in range(repeat):
        remove_index(qbench_dir)
        started = time.perf_counter()
        func()
        runs.append(time.perf_counter() - started)
    return Timing(step, runs)


def time_index_command(
    qbench: list[str], run_dir: Path, qbench_dir: Path, repeat: int, log: Path
) -> Timing:
    """``qbench index RUN_DIR`` into an empty index each time (CPU and RSS by the launcher)."""
    runs, cpu, rss = [], [], 0.0
    for _ in range(repeat):
        remove_index(qbench_dir)
        with log.open("wb") as output:
            usage = measure(
                [*qbench, "index", str(run_dir), "--dir", str(qbench_dir)], output=output
            )
        if usage.exit_code != 0:
            raise RuntimeError(f"qbench index exited {usage.exit_code}: {log.read_text()}")
        runs.append(usage.wall_s)
        cpu.append(usage.cpu_s)
        rss = max(rss, usage.max_rss_mib)
    return Timing(f"`qbench index RUN_DIR` ({run_dir.name}, from report.json)", runs, cpu, rss)


def index_one_run(args: argparse.Namespace, qbench: list[str], log: Path) -> list[Timing]:
    """The 50 000-test run: in process, at the end of a pytest run, and by the command."""
    qbench_dir = args.work_dir.resolve() / f"history-one-{args.results}"
    started = time.perf_counter()
    record = make_report(0, args.results, args.seed)
    run_dir = write_run_dir(record, qbench_dir)
    size = (run_dir / store.REPORT_JSON).stat().st_size
    print(
        f"built a run of {args.results} results in {time.perf_counter() - started:.1f}s "
        f"(report.json {size / MIB:.1f} MiB)",
        file=sys.stderr,
    )
    in_memory = time_fresh(
        f"index_run: {args.results} results (records in memory), empty index",
        qbench_dir,
        lambda: build_index(qbench_dir, [record]),
        args.repeat,
    )
    in_memory.target_s = TARGET_S
    timings = [in_memory, session_end_timing(args, qbench_dir, record, run_dir)]
    command = time_index_command(qbench, run_dir, qbench_dir, args.cli_repeat, log)
    command.target_s = TARGET_S
    return [*timings, command]


def session_end_timing(
    args: argparse.Namespace, qbench_dir: Path, record: Record, run_dir: Path
) -> Timing:
    """What a pytest run pays when it ends: index from results.jsonl, retention, history."""
    earlier = [make_report(n, args.results, args.seed) for n in range(1, 6)]
    for n, past in enumerate(earlier, start=1):  # earlier runs start before this one
        past["run"]["started_at"] = iso(T0 - timedelta(hours=n))
    build_index(qbench_dir, earlier)
    seeded = qbench_dir / "seeded.sqlite"
    shutil.copyfile(qbench_dir / INDEX_NAME, seeded)
    head = {**record, "results": []}
    stream = run_dir / store.STREAM_NAME
    runs = []
    for _ in range(args.repeat):
        remove_index(qbench_dir)
        shutil.copyfile(seeded, qbench_dir / INDEX_NAME)
        started = time.perf_counter()
        recorded = record_run(qbench_dir, head, stream, [], keep_runs=200)
        runs.append(time.perf_counter() - started)
    print(f"session end: history of {len(recorded.histories)} failing tests", file=sys.stderr)
    return Timing(
        f"end of a pytest run: {args.results} results from results.jsonl, 5 runs indexed "
        f"before, history of {len(recorded.histories)} failures",
        runs,
    )


def query_many_runs(args: argparse.Namespace, qbench: list[str], log: Path) -> list[Timing]:
    """The commands on an index of ``--runs`` runs of ``--tests`` tests."""
    qbench_dir = args.work_dir.resolve() / f"history-many-{args.runs}x{args.tests}"
    qbench_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    index = None
    remove_index(qbench_dir)
    index = SQLiteIndex(qbench_dir / INDEX_NAME, create=True)
    try:
        for run in range(args.runs):
            record = make_report(run, args.tests, args.seed)
            index_run(index, record, lambda r=record: r["results"])
        built = time.perf_counter() - started
        size = sum(p.stat().st_size for p in qbench_dir.glob(f"{INDEX_NAME}*"))
        print(
            f"indexed {args.runs} runs of {args.tests} tests in {built:.1f}s "
            f"({built / args.runs:.3f}s per run; index {size / MIB:.1f} MiB)",
            file=sys.stderr,
        )
        flaky = find_flaky(index, args.runs, 2)
        in_process = time_call(
            f"find_flaky: {args.runs} runs of {args.tests} tests ({len(flaky)} flaky)",
            lambda: find_flaky(index, args.runs, 2),
            args.repeat,
        )
    finally:
        index.close()
    some_flaky = flaky[0].nodeid if flaky else "tests/test_mod001.py::test_case_1"
    where = ["--dir", str(qbench_dir)]
    flaky_command = time_command(
        f"`qbench flaky --runs {args.runs}` ({args.runs} x {args.tests})",
        [*qbench, "flaky", "--runs", str(args.runs), *where],
        args.cli_repeat,
        log,
    )
    flaky_command.target_s = TARGET_S
    others = [
        ("`qbench flaky --json`", ["flaky", "--runs", str(args.runs), "--json"]),
        # A run with itself: the same work as two runs, and exit status 0 (no new failures).
        (f"`qbench diff last last` (2 x {args.tests} results)", ["diff", "last", "last"]),
        ("`qbench history NODEID`", ["history", some_flaky]),
        ("`qbench runs`", ["runs"]),
    ]
    timings = [in_process, flaky_command]
    timings += [
        time_command(step, [*qbench, *argv, *where], args.cli_repeat, log) for step, argv in others
    ]
    return timings


def plan_read(args: argparse.Namespace) -> list[Timing]:
    """The shard planner's read of every test's phase times on ``--plan-runs`` runs of
    ``--plan-tests`` tests."""
    qbench_dir = args.work_dir.resolve() / f"history-plan-{args.plan_runs}x{args.plan_tests}"
    qbench_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    records = (make_report(run, args.plan_tests, args.seed) for run in range(args.plan_runs))
    build_index(qbench_dir, records)
    print(
        f"indexed {args.plan_runs} runs of {args.plan_tests} tests in "
        f"{time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )
    index = SQLiteIndex(qbench_dir / INDEX_NAME)
    try:
        nodeids = [str(r["nodeid"]) for r in make_report(0, args.plan_tests, args.seed)["results"]]
        runs, cpu = [], []
        for _ in range(args.repeat):
            wall, used = time.perf_counter(), time.process_time()
            phase_timings(index, nodeids, PLAN_RUNS, None)
            cpu.append(time.process_time() - used)
            runs.append(time.perf_counter() - wall)
    finally:
        index.close()
    step = f"shard planner's phase times: {args.plan_tests} tests, {args.plan_runs} runs indexed"
    timing = Timing(f"{step}, the last {PLAN_RUNS} of each", runs, cpu)
    timing.target_s = PLAN_TARGET_S
    return [timing]


# --- main --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=50_000, help="Results of the one run")
    parser.add_argument("--runs", type=int, default=100, help="Runs in the large index")
    parser.add_argument("--tests", type=int, default=10_000, help="Tests per run there")
    parser.add_argument("--plan-runs", type=int, default=120, help="Runs of the planner's index")
    parser.add_argument("--plan-tests", type=int, default=5000, help="Tests per run there")
    parser.add_argument("--plan-only", action="store_true", help="Only the planner's read")
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each in-process step")
    parser.add_argument("--cli-repeat", type=int, default=3, help="Runs of each command")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument(
        "--qbench", default=None, help="The qbench command. Default: python -m pytest_qbench"
    )
    parser.add_argument("--json", type=Path, help="Also write the timings here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 when a target is missed."""
    args = parse_args(argv)
    exit_on_sigterm()
    qbench = args.qbench.split() if args.qbench else [sys.executable, "-m", "pytest_qbench"]
    args.work_dir.mkdir(parents=True, exist_ok=True)
    log = args.work_dir.resolve() / "history-command-output.txt"
    timings = []
    if not args.plan_only:
        timings += [time_command("`qbench --version` (start-up)", [*qbench, "--version"], 3, log)]
        timings += index_one_run(args, qbench, log)
        timings += query_many_runs(args, qbench, log)
    timings += plan_read(args)
    revision = source_revision(PACKAGE_CHECKOUT)
    print(f"### Run history, pytest-qbench at {revision}, Python {sys.version.split()[0]}\n")
    print(table(timings))
    missed = [t.step for t in timings if t.target_s is not None and t.median >= t.target_s]
    if args.json:
        data = {
            "revision": revision,
            "generated_at": datetime.now(timezone.utc).isoformat(),
            "timings": [{**asdict(t), "median": t.median} for t in timings],
            "missed": missed,
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
