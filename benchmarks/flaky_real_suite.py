"""A real project's test suite with seeded random failures, run many times into qbench's index,
then classified by the flaky monitors: precision and recall of "flaky" as for the simulator.

The suite is any unpacked sdist's tests (e.g. ``pip download --no-deps --no-binary :all:
six==1.16.0``). A plugin (``seeded_failures.py``, written next to the index and loaded with
``-p``) makes chosen tests fail: ``--flaky`` tests fail a run with a probability from 5 % to
30 % (the same failure each time), ``--broken`` tests fail every run from a random run on, and
``--outages`` runs fail 60 % of all tests. Tests that already fail or skip in a clean run are
left out of the choice and of the scores. 4 runs in 10 test the commit of the run before
(``GITHUB_SHA``), as a CI re-run does. With ``--reruns N`` each run uses pytest-rerunfailures
(loaded through its entry point, as in a team's CI): a flaky test's rerun draws again, an outage
or a break fails every attempt. After ``--checkpoints`` runs, ``find_flaky`` over the monitors'
window says which tests are flaky.

Usage::

    python benchmarks/flaky_real_suite.py SUITE_DIR [--runs 60] [--seed 26] [--reruns 2]
        [-- PYTEST_ARGS]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from pytest_qbench.history.compare import find_flaky
from pytest_qbench.history.database import existing_index
from pytest_qbench.history.flakiness import DEFAULT_MONITORS


PLUGIN = """
import json, os, random

import pytest

PLAN = json.loads(os.environ["QBENCH_SEEDED_PLAN"])
RUN = int(os.environ["QBENCH_SEEDED_RUN"])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    rng = random.Random(f"{PLAN['seed']}:{RUN}:{item.nodeid}")
    if RUN in PLAN["outages"] and rng.random() < 0.6:
        raise ConnectionError("seeded outage: the database is down")
    if RUN >= PLAN["broken"].get(item.nodeid, 10**9):
        raise AssertionError("seeded break: wrong total")
    # each attempt draws again (a rerun of pytest-rerunfailures is a new chance to pass); the
    # first attempt draws as a run without reruns does
    attempt = getattr(item, "execution_count", 1)
    if attempt > 1:
        rng = random.Random(f"{PLAN['seed']}:{RUN}:{item.nodeid}:{attempt}")
    if rng.random() < PLAN["flaky"].get(item.nodeid, 0.0):
        raise TimeoutError("seeded flaky failure: the service did not answer")
"""


def pytest_run(suite: Path, qbench_dir: Path, run: int, sha: str, extra: list[str]) -> None:
    """One pytest run of the suite into the index (its exit status is expected to be 1)."""
    env = {
        **os.environ,
        "QBENCH_SEEDED_RUN": str(run),
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": sha,
        "PYTHONPATH": str(qbench_dir),
    }
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "qbench"]
    argv += ["-p", "seeded_failures", f"--qbench-dir={qbench_dir}", f"--qbench-run-id=r{run:03d}"]
    subprocess.run([*argv, *extra], cwd=suite, env=env, capture_output=True, check=False)


def clean_passing(suite: Path, qbench_dir: Path, extra: list[str]) -> list[str]:
    """The tests that pass in a clean run (run 0, nothing seeded)."""
    pytest_run(suite, qbench_dir, 0, "0" * 40, extra)
    report = json.loads((qbench_dir / "runs" / "r000" / "report.json").read_text())
    return sorted(r["nodeid"] for r in report["results"] if r["outcome"] == "passed")


def main() -> None:
    """Run the suite ``--runs`` times, print the precision and recall table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("suite", type=Path)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--flaky", type=int, default=10)
    parser.add_argument("--broken", type=int, default=3)
    parser.add_argument("--outages", type=int, default=4)
    parser.add_argument("--checkpoints", default="20,40,60")
    parser.add_argument("--work-dir", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument(
        "--reruns", type=int, default=0, help="pytest-rerunfailures' --reruns (0: no reruns)"
    )
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    if args.reruns:
        # pytest-rerunfailures is loaded through its entry point, as in a team's CI
        args.pytest_args = [f"--reruns={args.reruns}", *args.pytest_args]
    name = f"real-suite-{args.suite.name}-{args.seed}-reruns{args.reruns}"
    qbench_dir = (args.work_dir / name).resolve()
    qbench_dir.mkdir(parents=True, exist_ok=True)
    (qbench_dir / "seeded_failures.py").write_text(PLUGIN)
    rng = random.Random(args.seed)
    os.environ["QBENCH_SEEDED_PLAN"] = json.dumps(
        {"seed": 0, "outages": [], "flaky": {}, "broken": {}}
    )
    passing = clean_passing(args.suite.resolve(), qbench_dir, args.pytest_args)
    chosen = rng.sample(passing, args.flaky + args.broken)
    flaky = {n: round(rng.uniform(0.05, 0.30), 3) for n in chosen[: args.flaky]}
    broken = {n: rng.randrange(5, args.runs) for n in chosen[args.flaky :]}
    outages = rng.sample(range(1, args.runs + 1), args.outages)
    plan = {"seed": args.seed, "outages": outages, "flaky": flaky, "broken": broken}
    os.environ["QBENCH_SEEDED_PLAN"] = json.dumps(plan)
    checkpoints = {int(c) for c in args.checkpoints.split(",")}
    commit, rows = 0, []
    for run in range(1, args.runs + 1):
        if run == 1 or rng.random() >= 0.4:
            commit += 1
        pytest_run(args.suite.resolve(), qbench_dir, run, f"{commit:040x}", args.pytest_args)
        if run in checkpoints:
            index = existing_index(qbench_dir, None)
            assert index is not None
            try:
                called = {t.nodeid for t in find_flaky(index, DEFAULT_MONITORS.window, 0)}
            finally:
                index.close()
            hit = len(called & set(flaky))
            precision = hit / len(called) if called else 1.0
            rows.append(
                f"| {run} | {precision:.3f} | {hit / len(flaky):.3f} "
                f"| {len(called & set(broken))} | {len(called)} |"
            )
            print(rows[-1], file=sys.stderr)
    print(
        f"{args.suite.name}: {len(passing)} passing tests, {len(flaky)} made flaky (5-30 %), "
        f"{len(broken)} broken, outage runs {sorted(outages)}, --reruns={args.reruns}\n"
    )
    print("| runs | precision | recall | broken called flaky | called flaky |")
    print("|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
