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
from pytest_qbench.history.flakiness import is_outage
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


@dataclass
class History:
    """A simulated history: per test, its attempts in each run; the runs' commits; the flaky
    tests with their failure probability; the broken tests; the outage runs."""

    tests: list[list[Attempt]]
    commits: list[str]
    rates: dict[int, float]
    broken: set[int]
    outages: set[int]

    @property
    def flaky(self) -> set[int]:
        """The truly flaky tests."""
        return set(self.rates)


def simulate(seed: int, stable_blips: bool = False) -> History:
    """A seeded history; ``stable_blips``: a healthy test's rare failure has the same
    fingerprint each time (its own), instead of a different one each time."""
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
                if fp is None:
                    blip = rng.random()  # drawn either way: the same history otherwise
                    fp = f"blip-{t}" if stable_blips else f"blip-{blip}"
                again = rng.random() < p
                row.append(Attempt(again, not again, fp))
        tests.append(row)
    return History(tests, commits, rate, broken, outages)


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


@dataclass
class Score:
    """One history at one checkpoint: qbench's figures, then the two simple rules'."""

    runs: int
    precision: float
    recall: float
    failed_once: float
    """Recall over the flaky tests that failed at least once (an attempt) in those runs."""
    broken_called: int
    allure: tuple[float, float]
    window: tuple[float, float]


def checkpoint_scores(seed: int, stable_blips: bool = False) -> list[Score]:
    """Each checkpoint's figures on the history of ``seed``."""
    history = simulate(seed, stable_blips)
    past = histories(history.tests, history.commits)
    flaky = history.flaky
    rows = []
    for n in CHECKPOINTS:
        ours = {t for t, p in enumerate(past) if assess(p[:n]).status == "flaky"}
        failed = {t for t in flaky if any(_failed(r) for r in past[t][:n])}
        allure_called = {t for t, p in enumerate(past) if allure(p[:n])}
        window_called = {t for t, p in enumerate(past) if rate_window(p[:n])}
        precision, recall = scores(ours, flaky)
        reached = len(ours & failed) / len(failed) if failed else 1.0
        rows.append(
            Score(
                n,
                precision,
                recall,
                reached,
                len(ours & history.broken),
                scores(allure_called, flaky),
                scores(window_called, flaky),
            )
        )
    return rows


def _failed(result: PastResult) -> bool:
    """Whether an attempt failed in a run that is no outage."""
    return (result.outcome == "failed" or result.flaky) and not is_outage(
        result.run_failing, result.run_ran
    )


def broken_ever_flaky(seeds: range) -> None:
    """Whether a broken test is called flaky (so could be quarantined by ``auto``) after any
    run, not only at the checkpoints: each broken test after each of the runs."""
    checked, called = 0, []
    for seed in seeds:
        history = simulate(seed)
        past = histories(history.tests, history.commits)
        for t in sorted(history.broken):
            for n in range(1, RUNS + 1):
                checked += 1
                if assess(past[t][:n]).status == "flaky":
                    called.append(f"seed {seed} t{t} after {n} runs")
    print(f"broken tests judged after every run: {checked} times, called flaky {len(called)}")
    print("\n".join(called))


def missed(seed: int, runs: int) -> None:
    """Each truly flaky test the monitors do not call flaky after ``runs`` runs: its failure
    probability, failures and rerun passes, and why no monitor fired."""
    history = simulate(seed)
    past = histories(history.tests, history.commits)
    print(f"seed {seed}, after {runs} runs: flaky tests not called flaky\n")
    print("| test | failure probability | runs failed | passed on rerun | status: why |")
    print("|---:|---:|---:|---:|---|")
    for t in sorted(history.flaky, key=history.rates.__getitem__):
        found = assess(past[t][:runs])
        if found.status == "flaky":
            continue
        kept = [r for r in past[t][:runs] if not is_outage(r.run_failing, r.run_ran)]
        failed = sum(r.outcome == "failed" for r in kept)
        rerun = sum(r.flaky for r in kept)
        why = f"{found.status}: {found.reason or 'never failed'}"
        print(f"| t{t} | {history.rates[t]:.3f} | {failed} | {rerun} | {why} |")


def main() -> None:
    """Print the tables: one per seed with ``--seed``, or with ``--seeds A-B`` the worst and
    mean figures over those seeds."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--seeds", help="a range of seeds, e.g. 1-20: their worst and mean")
    parser.add_argument("--missed", type=int, metavar="RUNS", help="list the missed flaky tests")
    parser.add_argument(
        "--stable-blips",
        action="store_true",
        help="a healthy test's rare failure has the same fingerprint each time",
    )
    parser.add_argument(
        "--broken-every-run", action="store_true", help="judge each broken test after every run"
    )
    args = parser.parse_args()
    if args.broken_every_run:
        first, _, last = (args.seeds or str(args.seed)).partition("-")
        broken_ever_flaky(range(int(first), int(last or first) + 1))
        return
    if args.missed:
        missed(args.seed, args.missed)
        return
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        over_seeds(range(int(first), int(last or first) + 1), args.stable_blips)
        return
    print(
        f"seed {args.seed}: {FLAKY} flaky, {BROKEN} broken, {OUTAGES} outage runs\n\n"
        "| runs | qbench precision | qbench recall | recall, failed once | broken called flaky "
        "| Allure precision | Allure recall | rate window precision | rate window recall |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in checkpoint_scores(args.seed, args.stable_blips):
        (ap, ar), (wp, wr) = row.allure, row.window
        print(
            f"| {row.runs} | {row.precision:.3f} | {row.recall:.3f} | {row.failed_once:.3f} "
            f"| {row.broken_called} | {ap:.3f} | {ar:.3f} | {wp:.3f} | {wr:.3f} |"
        )
    cost()


def over_seeds(seeds: range, stable_blips: bool) -> None:
    """qbench's worst and mean precision and recall at each checkpoint over ``seeds``, beside
    the simple rules' means."""
    table = [checkpoint_scores(seed, stable_blips) for seed in seeds]
    print(
        f"seeds {seeds.start}-{seeds.stop - 1} ({len(seeds)} histories)\n\n"
        "| runs | precision: worst | mean | seeds below 0.95 | recall: worst | mean "
        "| seeds below 0.85 | recall, failed once: worst | broken called flaky "
        "| Allure P / R (mean) | rate window P / R (mean) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for i, n in enumerate(CHECKPOINTS):
        rows = [per_seed[i] for per_seed in table]
        precision, recall = [r.precision for r in rows], [r.recall for r in rows]
        print(
            f"| {n} | {min(precision):.3f} | {_mean(precision):.3f} "
            f"| {sum(p < 0.95 for p in precision)} | {min(recall):.3f} "
            f"| {_mean(recall):.3f} | {sum(r < 0.85 for r in recall)} "
            f"| {min(r.failed_once for r in rows):.3f} | {sum(r.broken_called for r in rows)} "
            f"| {_mean([r.allure[0] for r in rows]):.3f} / {_mean([r.allure[1] for r in rows]):.3f} "
            f"| {_mean([r.window[0] for r in rows]):.3f} / {_mean([r.window[1] for r in rows]):.3f} |"
        )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def cost() -> None:
    """Classifying 10 000 tests of 50 results each (the monitors' default window)."""
    seven = simulate(7)
    one = histories(seven.tests, seven.commits)
    sample = [p[:50] for p in one] * 10
    start = time.perf_counter()
    for results in sample:
        assess(results)
    took = time.perf_counter() - start
    print(f"\nassess() on {len(sample)} tests x 50 results: {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
