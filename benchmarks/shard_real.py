"""CI shards on a real suite: ``pytest --qbench-shard`` one shard after the other, and
``pytest --qbench-queue`` with 4 concurrent processes, one of them killed mid-run.

The generated suite is ``time.sleep`` tests (sleeps need no cores, so 2 busy cores do) in
modules with module fixtures of 0.3 to 1.5 s. It is run whole twice to build the history;
then as ``--shards`` shards one after the other (their wall time against the plan's expected
time), then as a queue pulled by 4 processes at once, one of which is killed (SIGKILL) a few
seconds in. Checked: the shards together ran exactly the tests of the whole run, each once;
the queue's processes too, each test once (the killed process's finished tests counted from
its stream), the unit it held run by another once its lease ran out.

``--postgres`` runs the queue on a throwaway PostgreSQL server (tests/postgres_server.py's)
instead of the local SQLite index.

Usage::

    python benchmarks/shard_real.py [--shards 4] [--postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


MODULES = 10
LEASE = "3"
"""Seconds of a queue lease here (a killed process's unit waits that long)."""


def make_suite(root: Path, rng: random.Random) -> None:
    """Modules of sleeping tests, some with a module fixture."""
    for m in range(MODULES):
        fixture = rng.choice([0.0, 0.0, 0.3, 0.8, 1.5])
        tests = "\n".join(
            f"def test_{t}(fixture):\n    time.sleep({min(rng.lognormvariate(-2.5, 0.9), 1.0):.3f})\n"
            for t in range(rng.randint(3, 12))
        )
        (root / f"test_m{m:02d}.py").write_text(
            "import time\nimport pytest\n\n"
            f'@pytest.fixture(scope="module")\ndef fixture():\n    time.sleep({fixture * 0.8:.2f})\n'
            f"    yield\n    time.sleep({fixture * 0.2:.2f})\n\n{tests}"
        )


def env(commit: str, **extra: str) -> dict[str, str]:
    """The environment of one pytest run: a CI commit (a pipeline), no outer pytest."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB", "CI"))}
    return {**base, "GITHUB_ACTIONS": "true", "GITHUB_SHA": commit, **extra}


def command(run_id: str, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", "-p", "qbench", "-q", "-p", "no:cacheprovider",
        "-p", "no:randomly", f"--qbench-run-id={run_id}", *args,
    ]  # fmt: skip


def report(root: Path, run_id: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (root / ".qbench/runs" / run_id / "report.json").read_text()
    )
    return data


def nodeids(data: dict[str, object]) -> list[str]:
    return [r["nodeid"] for r in data["results"]]  # type: ignore[attr-defined]


def streamed(root: Path, run_id: str) -> list[str]:
    """The results a run streamed before it died."""
    path = root / ".qbench/runs" / run_id / "results.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [json.loads(line)["result"]["nodeid"] for line in lines if '"kind":"result"' in line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--postgres", action="store_true", help="also the queue on PostgreSQL")
    parser.add_argument("--queue-only", action="store_true", help="skip the planned shards")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="qbench-shards-"))
    make_suite(root, random.Random(25))
    for n in (1, 2):
        subprocess.run(
            command(f"whole-{n}"), cwd=root, env=env(f"base-{n}"), check=True, capture_output=True
        )
    whole = sorted(nodeids(report(root, "whole-2")))
    whole_time = float(report(root, "whole-2")["summary"]["duration"])  # type: ignore[index]
    print(f"suite: {len(whole)} tests in {MODULES} modules; unsharded run {whole_time:.2f}s")

    if not args.queue_only:
        planned_shards(root, whole, args.shards)
    queue_run(root, whole, [], "SQLite")
    if args.postgres:
        postgres_queue(root, whole)
    return 0


def planned_shards(root: Path, whole: list[str], count: int) -> None:
    """``count`` shards run one after the other."""
    print(f"\n{count} shards, one after the other (history: the 2 whole runs)")
    print(
        "| shard | tests | expected | actual (pytest) | wall (process) |\n|---|---:|---:|---:|---:|"
    )
    ran: list[str] = []
    for i in range(1, count + 1):
        start = time.perf_counter()
        subprocess.run(
            command(f"shard-{i}", f"--qbench-shard={i}/{count}"),
            cwd=root, env=env("pipeline-1"), check=True, capture_output=True,
        )  # fmt: skip
        wall = time.perf_counter() - start
        data = report(root, f"shard-{i}")
        shard = data["run"]["shard"]  # type: ignore[index]
        ran += nodeids(data)
        actual = data["summary"]["duration"]  # type: ignore[index]
        print(
            f"| {i}/{count} | {len(nodeids(data))} | {shard['expected']:.2f}s | {actual:.2f}s | {wall:.2f}s |"
        )
    counts = Counter(ran)
    print(
        f"\nshards ran the whole run's tests: {sorted(counts) == whole}; each once: {set(counts.values()) == {1}}"
    )


def postgres_queue(root: Path, whole: list[str]) -> None:
    """The queue on a throwaway PostgreSQL server, its history built first."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from postgres_server import start_server

    server = start_server()
    try:
        db_args = [f"--qbench-db={server.new_database()}"]
        for n in (1, 2):
            subprocess.run(
                command(f"pg-whole-{n}", *db_args),
                cwd=root, env=env(f"base-{n}"), check=True, capture_output=True,
            )  # fmt: skip
        queue_run(root, whole, db_args, "PostgreSQL")
    finally:
        server.stop()


def queue_run(root: Path, whole: list[str], db_args: list[str], engine: str) -> None:
    """4 processes pulling one queue; the last one killed mid-run."""
    print(
        f"\nqueue on {engine}: 4 processes at once, w3 killed (SIGKILL) after its first test; lease {LEASE}s"
    )
    processes = {}
    start = time.perf_counter()
    for w in range(4):
        processes[f"w{w}"] = subprocess.Popen(
            command(f"q-{engine}-w{w}", f"--qbench-queue=pipeline-2-{engine}", *db_args),
            cwd=root, env=env("pipeline-2", QBENCH_QUEUE_WORKER=f"w{w}", QBENCH_QUEUE_LEASE=LEASE),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    victim = root / ".qbench/runs" / f"q-{engine}-w3" / "results.jsonl"
    while processes["w3"].poll() is None:  # kill it once it has run a test of its unit
        if victim.is_file() and '"kind":"result"' in victim.read_text():
            processes["w3"].send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    walls = {}
    for name, process in processes.items():
        process.communicate(timeout=600)
        walls[name] = time.perf_counter() - start
    print("| process | exit | tests | wall |\n|---|---:|---:|---:|")
    ran: list[str] = []
    for name in processes:
        run_id = f"q-{engine}-{name}"
        killed = processes[name].returncode == -signal.SIGKILL
        mine = streamed(root, run_id) if killed else nodeids(report(root, run_id))
        ran += mine
        note = " (killed; its streamed results)" if killed else ""
        print(f"| {name}{note} | {processes[name].returncode} | {len(mine)} | {walls[name]:.2f}s |")
    counts = Counter(ran)
    twice = sorted(n for n, c in counts.items() if c > 1)
    print(
        f"\nqueue ran the whole run's tests: {sorted(counts) == whole}; more than once: "
        f"{len(twice)} (the killed process's unit in progress, rerun by another: {twice})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
