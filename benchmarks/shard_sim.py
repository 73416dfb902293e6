"""How evenly CI shards finish: qbench's planner and queue against pytest-split's two algorithms,
on the same simulated suites and the same recorded durations.

A seeded model of a suite: 30 to 90 modules of 3 to 60 tests each, test times lognormal
(median 0.15 s, sigma 1.2), and a quarter of the modules with a module fixture of 1 to 8 s
(four fifths of it in setup, the rest in teardown). Three earlier runs of the whole suite in one
process are "recorded" with 10% noise per test: the fixture's setup lands on the module's first
test and its teardown on the last, as pytest records them. Then:

- pytest-split (installed; its ``LeastDurationAlgorithm`` and ``DurationBasedChunksAlgorithm``
  called on the items and on the last run's per-test totals, as its ``.test_durations`` holds);
- qbench's ``plan_shards`` on the three runs' phase durations;
- qbench's queue (``plan_units``, longest first; each machine pulls the next unit when free).

A shard's real time is then computed from a fresh run (new noise): its tests' own times plus,
once per module it touches, that module's fixture. "Over ideal" is the slowest shard over the
whole suite's time divided by the shards (with one machine 1.6x slower: divided by the machines'
total speed). Medians over ``--suites`` seeded suites.

Usage::

    python benchmarks/shard_sim.py [--suites 30] [--shards 2 4 8] [--markdown]
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import sys
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_qbench.history.shardplan import Timing
from pytest_qbench.history.shardplan import plan_shards
from pytest_qbench.history.shardplan import plan_units


SLOW = 1.6
"""How much slower the slow machine is."""
RUNS = 3
"""Recorded runs of the history."""
QUEUE_PIECE = 1 / 2
"""The queue's largest unit, as a fraction of the suite (``plugin.queue``'s default)."""


@dataclass
class Suite:
    """A simulated suite: its tests in collection order, each test's own time, the fixtures."""

    nodeids: list[str]
    own: dict[str, float]
    fixture: dict[str, tuple[float, float]]
    """Module path to (setup, teardown) seconds of its module fixture."""


@dataclass(frozen=True)
class Item:
    """What pytest-split's algorithms read of an item."""

    nodeid: str


def make_suite(rng: random.Random) -> Suite:
    """A suite as the module docstring describes."""
    nodeids: list[str] = []
    own: dict[str, float] = {}
    fixture: dict[str, tuple[float, float]] = {}
    for m in range(rng.randint(30, 90)):
        path = f"tests/test_m{m:03d}.py"
        if rng.random() < 0.25:
            seconds = rng.uniform(1, 8)
            fixture[path] = (0.8 * seconds, 0.2 * seconds)
        for t in range(rng.randint(3, 60)):
            nodeid = f"{path}::test_{t}"
            nodeids.append(nodeid)
            own[nodeid] = rng.lognormvariate(-1.9, 1.2)
    return Suite(nodeids, own, fixture)


def record(suite: Suite, rng: random.Random) -> dict[str, Timing]:
    """One run of the whole suite in one process, as pytest records it (noise 10%)."""
    timings: dict[str, Timing] = {}
    firsts: dict[str, str] = {}
    lasts: dict[str, str] = {}
    for nodeid in suite.nodeids:
        module = nodeid.split("::")[0]
        firsts.setdefault(module, nodeid)
        lasts[module] = nodeid
    for nodeid in suite.nodeids:
        module = nodeid.split("::")[0]
        setup, teardown = suite.fixture.get(module, (0.0, 0.0))
        noise = rng.lognormvariate(0, 0.1)
        timings[nodeid] = Timing(
            0.001 + (setup * noise if firsts[module] == nodeid else 0.0),
            suite.own[nodeid] * noise,
            0.001 + (teardown * noise if lasts[module] == nodeid else 0.0),
        )
    return timings


def actual(suite: Suite, shard: Sequence[str], run: dict[str, Timing]) -> float:
    """Real seconds of running ``shard``: each test's own, each module's fixture once."""
    modules = {nodeid.split("::")[0] for nodeid in shard}
    fixtures = sum(sum(suite.fixture.get(module, (0.0, 0.0))) for module in modules)
    return fixtures + sum(run[n].call + 0.002 for n in shard)


def pytest_split_groups(
    algorithm: Callable[..., list[object]], suite: Suite, durations: dict[str, float], count: int
) -> list[list[str]]:
    """pytest-split's groups for the same items and durations."""
    items = [Item(nodeid) for nodeid in suite.nodeids]
    groups = algorithm(count, items, durations)
    return [[item.nodeid for item in group.selected] for group in groups]  # type: ignore[attr-defined]


def queue_span(
    units: Sequence[Sequence[str]], times: Sequence[float], speeds: list[float]
) -> float:
    """When the last machine finishes, each pulling the next unit (in the order given) when free."""
    free = [(0.0, i) for i in range(len(speeds))]
    heapq.heapify(free)
    end = 0.0
    for unit_time in times:
        at, machine = heapq.heappop(free)
        done = at + unit_time * speeds[machine]
        end = max(end, done)
        heapq.heappush(free, (done, machine))
    del units
    return end


def simulate(seed: int, count: int) -> dict[str, float]:
    """Percent over the ideal of each method, for one seeded suite at ``count`` shards."""
    from pytest_split import algorithms

    rng = random.Random(seed)
    suite = make_suite(rng)
    runs = [record(suite, rng) for _ in range(RUNS)]
    history = {n: [run[n] for run in runs] for n in suite.nodeids}
    durations = {n: t.setup + t.call + t.teardown for n, t in runs[-1].items()}
    now = record(suite, rng)
    whole = actual(suite, suite.nodeids, now)
    ideal = whole / count
    speeds = [SLOW] + [1.0] * (count - 1)
    ideal_slow = whole / sum(1 / s for s in speeds)
    static = {
        "least_duration": pytest_split_groups(
            algorithms.LeastDurationAlgorithm(), suite, durations, count
        ),
        "duration_based_chunks": pytest_split_groups(
            algorithms.DurationBasedChunksAlgorithm(), suite, durations, count
        ),
        "qbench": [
            list(plan.nodeids(i))
            for plan in [plan_shards(suite.nodeids, history, count)]
            for i in range(count)
        ],
    }
    out: dict[str, float] = {}
    for name, shards in static.items():
        times = [actual(suite, shard, now) for shard in shards]
        out[name] = 100 * (max(times) / ideal - 1)
        slow = [t * s for t, s in zip(times, speeds, strict=True)]
        out[f"{name} slow"] = 100 * (max(slow) / ideal_slow - 1)
    units, _by_count = plan_units(suite.nodeids, history, QUEUE_PIECE / count)
    unit_times = [actual(suite, unit.nodeids, now) for unit in units]
    out["queue"] = 100 * (queue_span(units and [], unit_times, [1.0] * count) / ideal - 1)
    out["queue slow"] = 100 * (queue_span([], unit_times, speeds) / ideal_slow - 1)
    return out


METHODS = ("least_duration", "duration_based_chunks", "qbench", "queue")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of medians (and worst cases)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=30)
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args(argv)
    try:
        import pytest_split  # noqa: F401
    except ImportError:
        print("needs pytest-split: python -m pip install pytest-split", file=sys.stderr)
        return 2
    print(
        f"slowest shard over the ideal, median (max) over {args.suites} seeded suites; "
        f"'slow': one machine {SLOW}x slower"
    )
    header = ["shards", *METHODS, *(f"{m} slow" for m in METHODS)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for count in args.shards:
        rows = [simulate(seed, count) for seed in range(args.suites)]
        cells = [str(count)]
        for key in (*METHODS, *(f"{m} slow" for m in METHODS)):
            values = [row[key] for row in rows]
            cells.append(f"{statistics.median(values):+.1f}% ({max(values):+.1f}%)")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
