"""A seeded simulated history fed through qbench's flaky monitors (``flakiness.assess``), with
precision and recall of "flaky" after 20, 50, 100 and 200 runs, beside two simple rules computed
on the same history: Allure's ("a pass newer than a fail among the last 5 runs") and a
failure-rate window (failed in at least 2 of the last 30 runs, not in all of them).

The history: 1 000 tests over 200 CI runs. 40 flaky tests fail an attempt with a probability
from 2% to 30% (the same failure each time); 10 tests break for good at a random run; the others
are healthy and fail an attempt 0.1% of the time (a different failure each time); 12 outage runs
fail 60% of all tests. Each run reruns a failed test once (pytest-rerunfailures ``--reruns 1``);
4 runs in 10 test the same commit as the run before (a CI re-run). Also the cost of classifying
10 000 tests of 50 results each (the monitors alone, no database).

Usage: ``python benchmarks/flaky_sim.py [--seed N]`` (one history) or ``--seeds 1-20`` (the
worst and mean over several); prints Markdown tables.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from pytest_qbench.history.flakiness import assess
from pytest_qbench.history.queries import PastResult


RUNS, TESTS, FLAKY, BROKEN, OUTAGES = 200, 1000, 40, 10, 12
HEALTHY_RATE, OUTAGE_RATE, RERUN_COMMIT = 0.001, 0.6, 0.4
CHECKPOINTS = (20, 50, 100, 200)


@dataclass
class Attempt:
    """One test in one run: its final outcome, whether it passed on rerun, its failure."""

    failed: bool
    rerun_passed: bool
    fingerprint: str | None


def simulate(seed: int) -> tuple[list[list[Attempt]], list[str], set[int], set[int], set[int]]:
    """Per test, its attempts in each run; the runs' commits; the flaky, broken tests; the
    outage runs."""
    rng = random.Random(seed)
    kinds = list(range(TESTS))
    rng.shuffle(kinds)
    flaky, broken = set(kinds[:FLAKY]), set(kinds[FLAKY : FLAKY + BROKEN])
    rate = {t: rng.uniform(0.02, 0.30) for t in flaky}
    breaks = {t: rng.randrange(1, RUNS) for t in broken}
    outages = set(rng.sample(range(RUNS), OUTAGES))
    commits, commit = [], 0
    for run in range(RUNS):
        if run == 0 or rng.random() >= RERUN_COMMIT:
            commit += 1
        commits.append(f"c{commit:04d}")
    tests: list[list[Attempt]] = []
    for t in range(TESTS):
        row = []
        for run in range(RUNS):
            if run in outages and rng.random() < OUTAGE_RATE:
                row.append(Attempt(True, False, "outage"))
            elif t in broken and run >= breaks[t]:
                row.append(Attempt(True, False, f"broken-{t}"))
            else:
                p, fp = (rate[t], f"flaky-{t}") if t in flaky else (HEALTHY_RATE, None)
                if rng.random() >= p:
                    row.append(Attempt(False, False, None))
                    continue
                fp = fp or f"blip-{rng.random()}"
                again = rng.random() < p
                row.append(Attempt(again, not again, fp))
        tests.append(row)
    return tests, commits, flaky, broken, outages


def histories(tests: list[list[Attempt]], commits: list[str]) -> list[list[PastResult]]:
    """The results each test would have in the index, oldest first."""
    failing = [sum(row[run].failed for row in tests) for run in range(RUNS)]
    return [
        [
            PastResult(
                f"r{run + 1}",
                "",
                "failed" if a.failed else "passed",
                0.1,
                a.rerun_passed,
                a.fingerprint,
                None,
                commits[run],
                failing[run],
                TESTS,
            )
            for run, a in enumerate(row)
        ]
        for row in tests
    ]


def allure(results: list[PastResult]) -> bool:
    """A pass newer than a fail among the last 5 results."""
    last = [r.outcome == "failed" for r in results[-5:]]
    return any(f and not later for i, f in enumerate(last) for later in last[i + 1 :])


def rate_window(results: list[PastResult]) -> bool:
    """Failed in at least 2 of the last 30 results, and not in all of them."""
    last = [r.outcome == "failed" for r in results[-30:]]
    return 2 <= sum(last) < len(last)


def scores(called: set[int], flaky: set[int]) -> tuple[float, float]:
    """Precision and recall of ``called`` against the truly flaky tests."""
    hit = len(called & flaky)
    return (hit / len(called) if called else 1.0), hit / len(flaky)


def checkpoint_scores(seed: int) -> list[tuple[int, float, float, int, float, float, float, float]]:
    """For each checkpoint: runs, qbench's precision, recall and broken tests called flaky,
    then Allure's and the rate window's precision and recall."""
    tests, commits, flaky, broken, _outages = simulate(seed)
    past = histories(tests, commits)
    rows = []
    for n in CHECKPOINTS:
        judged = [assess(p[:n]) for p in past]
        ours = {t for t, a in enumerate(judged) if a.status == "flaky"}
        allure_called = {t for t, p in enumerate(past) if allure(p[:n])}
        window_called = {t for t, p in enumerate(past) if rate_window(p[:n])}
        (qp, qr), (ap, ar), (wp, wr) = (
            scores(s, flaky) for s in (ours, allure_called, window_called)
        )
        rows.append((n, qp, qr, len(ours & broken), ap, ar, wp, wr))
    return rows


def main() -> None:
    """Print the tables: one per seed with ``--seed``, or with ``--seeds A-B`` the worst and
    mean figures over those seeds."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--seeds", help="a range of seeds, e.g. 1-20: their worst and mean")
    args = parser.parse_args()
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        over_seeds(range(int(first), int(last or first) + 1))
        return
    print(
        f"seed {args.seed}: {FLAKY} flaky, {BROKEN} broken, {OUTAGES} outage runs\n\n"
        "| runs | qbench precision | qbench recall | broken called flaky | Allure precision "
        "| Allure recall | rate window precision | rate window recall |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, qp, qr, bad, ap, ar, wp, wr in checkpoint_scores(args.seed):
        print(f"| {n} | {qp:.3f} | {qr:.3f} | {bad} | {ap:.3f} | {ar:.3f} | {wp:.3f} | {wr:.3f} |")
    cost()


def over_seeds(seeds: range) -> None:
    """qbench's worst and mean precision and recall at each checkpoint over ``seeds``."""
    table = [checkpoint_scores(seed) for seed in seeds]
    print(
        f"seeds {seeds.start}-{seeds.stop - 1} ({len(seeds)} histories)\n\n"
        "| runs | precision: worst | mean | seeds below 0.95 | recall: worst | mean "
        "| seeds below 0.85 | broken called flaky |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, n in enumerate(CHECKPOINTS):
        rows = [per_seed[i] for per_seed in table]
        precision, recall = [r[1] for r in rows], [r[2] for r in rows]
        print(
            f"| {n} | {min(precision):.3f} | {sum(precision) / len(rows):.3f} "
            f"| {sum(p < 0.95 for p in precision)} | {min(recall):.3f} "
            f"| {sum(recall) / len(rows):.3f} | {sum(r < 0.85 for r in recall)} "
            f"| {sum(r[3] for r in rows)} |"
        )


def cost() -> None:
    """Classifying 10 000 tests of 50 results each (the monitors' default window)."""
    one = histories(*simulate(7)[:2])
    sample = [p[:50] for p in one] * 10
    start = time.perf_counter()
    for results in sample:
        assess(results)
    took = time.perf_counter() - start
    print(f"\nassess() on {len(sample)} tests x 50 results: {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
