"""Planning CI shards from the history: which tests each of N machines runs (pure, no I/O).

A shard's time is not the sum of its tests' recorded durations: pytest records a module or class
fixture's setup on the first test that needs it and its teardown on the last, and every shard
that runs some of a module's tests pays that module's fixtures again. So the planner works on
**units** (a module, whole), and counts fixture time once per unit:

- each test's time is the median, per phase, of its recorded results (``Timing``);
- a module's fixture time is what its first known test's setup takes beyond the typical setup
  of the module's other tests, plus what its last known test's teardown takes beyond theirs;
  a class's fixture likewise from the class's own tests;
- a test without history costs the median of the known tests of its file, else of the suite;
  with no history at all, every test costs 1 (a split by test count);
- a module bigger than the largest piece allowed is cut into contiguous pieces, along classes
  where it can, and every piece pays the module's fixture (and its classes') again;
- units go longest first to the shard with the least expected time so far (LPT).

The largest piece allowed is tried at several sizes (a whole module; a shard's ideal share, a
half, a third, a quarter of it) and the plan whose slowest shard is fastest wins. Everything is
a function of the tests (in collection order) and their timings, with ties broken by name and
position: every machine computes the same plan.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from pytest_qbench.core.summary_words import plural


PIECE_FACTORS = (math.inf, 1.0, 1 / 2, 1 / 3, 1 / 4)
"""Largest piece of a module tried, as a fraction of a shard's ideal share."""


@dataclass(frozen=True)
class Timing:
    """Seconds of one recorded result, per phase."""

    setup: float
    call: float
    teardown: float


@dataclass(frozen=True)
class Unit:
    """Tests that run together on one machine: a module, or a piece of one."""

    key: str
    """The module's path, with ``#i/k`` for the i-th of k pieces."""
    nodeids: tuple[str, ...]
    """Its tests, in collection order."""
    expected: float
    """Expected seconds (tests plus fixtures; tests when split by count)."""


@dataclass(frozen=True)
class Plan:
    """The units of each shard, and what each shard is expected to take."""

    shards: tuple[tuple[Unit, ...], ...]
    by_count: bool
    """No test had history: units were weighed by their number of tests."""
    unknown: int = 0
    """Tests without history (costed at their file's or the suite's median)."""

    @property
    def expected(self) -> tuple[float, ...]:
        """Expected seconds (or tests) of each shard."""
        return tuple(sum(unit.expected for unit in shard) for shard in self.shards)

    @property
    def units(self) -> int:
        """Units in all shards."""
        return sum(len(shard) for shard in self.shards)

    def nodeids(self, index: int) -> list[str]:
        """The tests of shard ``index`` (0-based)."""
        return [nodeid for unit in self.shards[index] for nodeid in unit.nodeids]

    def summary(self, index: int) -> str:
        """One line: this shard's units and tests, and every shard's expected time."""
        count = len(self.shards)
        mine = self.shards[index]
        tests = sum(len(unit.nodeids) for unit in mine)
        units = plural(self.units, "unit")
        head = f"shard {index + 1}/{count}: {len(mine)} of {units}, {plural(tests, 'test')}"
        if self.by_count:
            return f"{head}; no history: split by test count"
        shards = " ".join(f"{value:.1f}" for value in self.expected)
        unknown = f"; {plural(self.unknown, 'test')} without history" if self.unknown else ""
        return f"{head}, expected {self.expected[index]:.1f}s; shards (s): {shards}{unknown}"


@dataclass
class _Module:
    """A module's tests with their own times and fixture times."""

    path: str
    nodeids: list[str] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    classes: list[str | None] = field(default_factory=list)
    fixture: float = 0.0
    class_fixture: dict[str, float] = field(default_factory=dict)

    def cost(self, start: int, end: int) -> float:
        """Seconds of tests ``start:end`` run alone: theirs, the module's fixture, and the
        fixtures of the classes they belong to."""
        classes = {name for name in self.classes[start:end] if name is not None}
        return (
            self.fixture
            + sum(self.own[start:end])
            + sum(self.class_fixture.get(name, 0.0) for name in classes)
        )


def split_nodeid(nodeid: str) -> tuple[str, str | None]:
    """The module path and class (``None``: a module-level test) of a node id."""
    parts = nodeid.split("[", 1)[0].split("::")
    return parts[0], parts[1] if len(parts) > 2 else None


def plan_shards(
    nodeids: Sequence[str], history: Mapping[str, Sequence[Timing]], count: int
) -> Plan:
    """Cut ``nodeids`` (in collection order) into ``count`` shards by their ``history``.

    Raises:
        ValueError: ``count`` is below 1.
    """
    if count < 1:
        raise ValueError(f"shard count must be at least 1, given: {count}")
    modules, by_count, unknown = build_modules(nodeids, history)
    total = sum(module.cost(0, len(module.own)) for module in modules)
    share = total / count if total > 0 else 1.0
    best: tuple[tuple[Unit, ...], ...] | None = None
    best_span = math.inf
    # without history the fixtures are unknown: a module is cut only when bigger than a share
    for factor in PIECE_FACTORS[:2] if by_count else PIECE_FACTORS:
        units = cut_units(modules, share * factor)
        shards = assign(units, count)
        span = max((sum(unit.expected for unit in shard) for shard in shards), default=0.0)
        if span < best_span - 1e-9:
            best, best_span = shards, span
    assert best is not None
    return Plan(best, by_count, unknown)


def plan_units(
    nodeids: Sequence[str], history: Mapping[str, Sequence[Timing]], largest: float
) -> tuple[list[Unit], bool]:
    """The units of ``nodeids``, modules cut into pieces of at most ``largest`` (a fraction of
    the whole suite's time, e.g. ``1/16``), longest first; and whether they were weighed by
    test count (no history)."""
    modules, by_count, _unknown = build_modules(nodeids, history)
    total = sum(module.cost(0, len(module.own)) for module in modules)
    units = cut_units(modules, total * largest if total > 0 else math.inf)
    return sorted(units, key=lambda unit: (-unit.expected, unit.key)), by_count


def build_modules(
    nodeids: Sequence[str], history: Mapping[str, Sequence[Timing]]
) -> tuple[list[_Module], bool, int]:
    """The modules of ``nodeids`` (in order of first appearance) with each test's own time and
    the fixture times; whether no test had history; how many tests had none."""
    medians = {n: _median_timing(history[n]) for n in dict.fromkeys(nodeids) if history.get(n)}
    by_count = not medians
    modules: dict[str, _Module] = {}
    for nodeid in nodeids:
        path, klass = split_nodeid(nodeid)
        module = modules.setdefault(path, _Module(path))
        module.nodeids.append(nodeid)
        module.classes.append(klass)
    unknown = 0
    for module in modules.values():
        if by_count:
            module.own = [1.0] * len(module.nodeids)
            continue
        timings = [medians.get(nodeid) for nodeid in module.nodeids]
        unknown += sum(1 for timing in timings if timing is None)
        _fixture_times(module, timings)
    if not by_count:
        _cost_unknown(modules.values())
    return list(modules.values()), by_count, unknown


def _median_timing(samples: Sequence[Timing]) -> Timing:
    return Timing(
        statistics.median(s.setup for s in samples),
        statistics.median(s.call for s in samples),
        statistics.median(s.teardown for s in samples),
    )


def _fixture_times(module: _Module, timings: list[Timing | None]) -> None:
    """Each known test's own time (unknown ones: NaN for now), the module's fixture time and
    its classes', taken off the tests that recorded them."""
    own = [math.nan if t is None else t.setup + t.call + t.teardown for t in timings]
    known = [i for i, t in enumerate(timings) if t is not None]
    setups = {i: timings[i].setup for i in known}  # type: ignore[union-attr]
    teardowns = {i: timings[i].teardown for i in known}  # type: ignore[union-attr]
    module.fixture = _excess(known, setups, own) + _excess(known[::-1], teardowns, own)
    taken = set(known[:1] + known[-1:])
    for klass in dict.fromkeys(c for c in module.classes if c is not None):
        members = [i for i in known if module.classes[i] == klass]
        first = [i for i in members if i not in taken]
        last = [i for i in members[::-1] if i not in taken]
        fixture = 0.0
        if first and first[0] == members[0]:
            fixture += _excess(members, setups, own)
        if last and last[0] == members[-1]:
            fixture += _excess(members[::-1], teardowns, own)
        if fixture:
            module.class_fixture[klass] = fixture
    module.own = own


def _excess(order: list[int], phase: dict[int, float], own: list[float]) -> float:
    """What the first test of ``order`` spends in ``phase`` beyond the median of the others
    (a fixture of a wider scope), taken off its own time."""
    if len(order) < 2:
        return 0.0
    first = order[0]
    extra = max(0.0, phase[first] - statistics.median(phase[i] for i in order[1:]))
    own[first] -= extra
    return extra


def _cost_unknown(modules: Iterable[_Module]) -> None:
    """Tests without history cost the median own time of their file's known tests, else of
    the suite's."""
    modules = list(modules)
    everything = [v for module in modules for v in module.own if not math.isnan(v)]
    suite = statistics.median(everything) if everything else 0.0
    for module in modules:
        mine = [v for v in module.own if not math.isnan(v)]
        fallback = statistics.median(mine) if mine else suite
        module.own = [fallback if math.isnan(v) else v for v in module.own]


def cut_units(modules: Sequence[_Module], largest: float) -> list[Unit]:
    """Every module as one unit, or cut into about equal contiguous pieces of at most
    ``largest`` seconds when it is bigger."""
    units: list[Unit] = []
    for module in modules:
        size = len(module.nodeids)
        whole = module.cost(0, size)
        pieces = 1 if whole <= largest else min(size, math.ceil(whole / largest))
        bounds = _cuts(module, pieces)
        for number, (start, end) in enumerate(itertools.pairwise(bounds), 1):
            key = module.path if len(bounds) == 2 else f"{module.path}#{number}/{len(bounds) - 1}"
            units.append(Unit(key, tuple(module.nodeids[start:end]), module.cost(start, end)))
    return units


def _cuts(module: _Module, pieces: int) -> list[int]:
    """Boundaries of ``pieces`` contiguous pieces of about equal time, at class boundaries
    where one is near enough (within a quarter of a piece), else between any two tests."""
    size = len(module.own)
    if pieces <= 1:
        return [0, size]
    prefix = [0.0]
    for value in module.own:
        prefix.append(prefix[-1] + value)
    step = prefix[-1] / pieces
    boundaries = [
        i
        for i in range(1, size)
        if module.classes[i] is None or module.classes[i] != module.classes[i - 1]
    ]
    cuts = [0]
    for number in range(1, pieces):
        target = step * number
        near = [i for i in boundaries if i > cuts[-1] and abs(prefix[i] - target) <= step / 4]
        candidates = near or [i for i in range(cuts[-1] + 1, size)]
        if not candidates:
            break
        best = min(candidates, key=lambda i: (abs(prefix[i] - target), i))
        if size - best < pieces - number:  # leave a test for every later piece
            best = size - (pieces - number)
        if best <= cuts[-1]:
            continue
        cuts.append(best)
    cuts.append(size)
    return cuts


def assign(units: Sequence[Unit], count: int) -> tuple[tuple[Unit, ...], ...]:
    """Longest unit first, each to the shard with the least expected time so far (the lowest
    numbered on a tie); each shard's units then in the order given."""
    order = {unit.key: position for position, unit in enumerate(units)}
    loads = [0.0] * count
    shards: list[list[Unit]] = [[] for _ in range(count)]
    for unit in sorted(units, key=lambda unit: (-unit.expected, order[unit.key])):
        target = min(range(count), key=lambda i: (loads[i], i))
        shards[target].append(unit)
        loads[target] += unit.expected
    return tuple(tuple(sorted(shard, key=lambda unit: order[unit.key])) for shard in shards)
