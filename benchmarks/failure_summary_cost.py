"""What pytest's summary of the failures costs at a suite's size: for each failing test it scans
every passing setup and teardown report twice (``TerminalReporter.summary_failures`` ->
``_get_teardown_reports`` over ``getreports("")``): failures x tests, in plain pytest and under
every reporter alike, and left out of ``callgrind_cost.py``'s 200/800 line.

Builds ``--tests`` tests' setup and teardown reports as pytest does (``TestReport``, ``NodeId``),
then runs the two scans for ``--failures`` failing tests: CPU time (``process_time``), and with
``--count`` the instructions and cache misses of the scans alone, counted by cachegrind (this
machine's L1 caches and a 2 MiB L2 as the last level), the run with no failure subtracted.

Usage::

    python benchmarks/failure_summary_cost.py --tests 10000 --failures 500
    python benchmarks/failure_summary_cost.py --tests 10000 --failures 50 --count
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from callgrind_cost import CACHES


def scan(tests: int, failures: int) -> float:
    """The CPU seconds of the scans of ``failures`` failing tests over ``tests`` tests."""
    from _pytest.reports import TestReport

    reports = []
    ids = []
    for i in range(tests):
        nodeid = f"tests/test_mod_{i // 100:04d}.py::test_plain_{i // 100:04d}_{i % 100:03d}"
        for when in ("setup", "teardown"):
            reports.append(TestReport(nodeid, ("x", 1, "y"), {}, "passed", None, when, []))
        ids.append(reports[-1].id)
    stats = {"": reports}

    def getreports(name: str) -> list[TestReport]:  # TerminalReporter.getreports
        return [x for x in stats.get(name, ()) if not hasattr(x, "_pdbshown")]

    started = time.process_time()
    for k in range(failures):  # TerminalReporter._get_teardown_reports, once a failure
        node_id = ids[k * (tests // failures)]
        [r for r in getreports("") if r.when == "teardown" and r.id == node_id]
    return time.process_time() - started


def counted(tests: int, failures: int) -> dict[str, int]:
    """Cachegrind's totals of a run of this script with ``--failures``."""
    with tempfile.TemporaryDirectory() as where:
        out = Path(where) / "cachegrind.out"
        argv = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *CACHES]
        argv += [f"--cachegrind-out-file={out}", sys.executable, __file__]
        argv += ["--tests", str(tests), "--failures", str(failures)]
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run(argv, env=env, capture_output=True, check=True)
        events: list[str] = []
        for line in out.read_text().splitlines():
            if line.startswith("events:"):
                events = line.split()[1:]
            if line.startswith("summary:"):
                return dict(zip(events, map(int, line.split()[1:]), strict=True))
    raise SystemExit("no totals in cachegrind's output")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10000)
    parser.add_argument("--failures", type=int, default=500)
    parser.add_argument("--count", action="store_true", help="Count under cachegrind")
    args = parser.parse_args(argv)
    if not args.count:
        seconds = scan(args.tests, args.failures)
        print(f"{args.failures} failures x {2 * args.tests} reports: {seconds:.3f} s CPU")
        return 0
    base, full = counted(args.tests, 0), counted(args.tests, args.failures)
    visits = args.failures * 2 * args.tests
    print("| event | a failing test | a report visited |")
    print("|---|---:|---:|")
    for event in base:
        extra = full[event] - base[event]
        print(f"| {event} | {extra / args.failures:,.0f} | {extra / visits:,.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
