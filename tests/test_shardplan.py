"""The shard planner (``history.shardplan``): units, fixtures counted once, unknown tests,
split units, determinism (issue 25)."""

from __future__ import annotations

import random

import pytest

from pytest_qbench.history.shardplan import Timing
from pytest_qbench.history.shardplan import plan_shards
from pytest_qbench.history.shardplan import plan_units
from pytest_qbench.history.shardplan import split_nodeid


def module(path: str, count: int, call: float, fixture: float = 0.0) -> dict[str, list[Timing]]:
    """A module's tests with one recorded run: ``fixture`` seconds of setup on the first."""
    return {
        f"{path}::test_{i}": [Timing(0.001 + (fixture if i == 0 else 0.0), call, 0.001)]
        for i in range(count)
    }


def test_a_module_fixture_is_counted_once_and_the_module_is_kept_whole() -> None:
    history = {**module("a.py", 10, 0.1, fixture=5.0), **module("b.py", 6, 1.0)}
    plan = plan_shards(list(history), history, 2)
    assert sorted(len(shard) for shard in plan.shards) == [1, 1]  # no module split
    expected = sorted(plan.expected)
    assert expected[0] == pytest.approx(6.012, abs=0.01)  # b: 6 x 1.002
    assert expected[1] == pytest.approx(6.02, abs=0.01)  # a: 5 s fixture once + 10 x 0.102


def test_a_module_bigger_than_its_share_is_split_and_each_piece_pays_its_fixture() -> None:
    history = {**module("big.py", 40, 1.0, fixture=2.0), **module("small.py", 4, 1.0)}
    plan = plan_shards(list(history), history, 4)
    keys = [unit.key for shard in plan.shards for unit in shard]
    pieces = [key for key in keys if key.startswith("big.py#")]
    assert len(pieces) >= 4
    for shard in plan.shards:
        for unit in shard:
            if unit.key.startswith("big.py#"):
                own = sum(1.002 for _ in unit.nodeids)
                assert unit.expected == pytest.approx(own + 2.0, abs=0.01)
    assert max(plan.expected) < 42.0 / 2  # the module whole would take 42 s on one machine


def test_split_prefers_class_boundaries() -> None:
    nodeids = [f"m.py::TestA::test_{i}" for i in range(10)]
    nodeids += [f"m.py::TestB::test_{i}" for i in range(10)]
    history = {n: [Timing(0.0, 1.0, 0.0)] for n in nodeids}
    units, _ = plan_units(nodeids, history, 1 / 2)
    assert sorted(units[0].nodeids + units[1].nodeids) == sorted(nodeids)
    assert {split_nodeid(n)[1] for n in units[0].nodeids} in ({"TestA"}, {"TestB"})


def test_tests_without_history_cost_their_files_median_else_the_suites() -> None:
    history = module("a.py", 3, 2.0)
    nodeids = [*history, "a.py::test_new", "c.py::test_new"]
    plan = plan_shards(nodeids, history, 1)
    assert plan.unknown == 2
    (units,) = plan.shards
    costs = {unit.key: unit.expected for unit in units}
    assert costs["a.py"] == pytest.approx(4 * 2.002, abs=0.01)
    assert costs["c.py"] == pytest.approx(2.002, abs=0.01)
    assert "2 tests without history" in plan.summary(0)


def test_one_test_without_history_and_one_unit_are_said_in_the_singular() -> None:
    """The line read ``1 tests without history`` on a real suite (idna, eleventh round)."""
    history = module("a.py", 3, 2.0)
    plan = plan_shards([*history, "b.py::test_new"], history, 2)
    line = plan.summary(plan.shards.index(min(plan.shards, key=len)))
    assert line.endswith("; 1 test without history")
    one = plan_shards(["a.py::test_0"], history, 1).summary(0)
    assert one.startswith("shard 1/1: 1 of 1 unit, 1 test, expected ")


def test_without_history_the_split_is_by_test_count() -> None:
    nodeids = [f"m{m}.py::test_{t}" for m in range(6) for t in range(m + 1)]
    plan = plan_shards(nodeids, {}, 3)
    assert plan.by_count
    assert sorted(plan.expected) == [7.0, 7.0, 7.0]
    assert plan.summary(1).endswith("no history: split by test count")


def test_every_test_lands_in_exactly_one_shard_and_the_plan_is_deterministic() -> None:
    rng = random.Random(3)
    history: dict[str, list[Timing]] = {}
    for m in range(12):
        history.update(
            module(f"t{m}.py", rng.randint(1, 30), rng.uniform(0.01, 1), rng.uniform(0, 4))
        )
    nodeids = list(history)
    plan = plan_shards(nodeids, history, 5)
    shuffled = dict(sorted(history.items(), key=lambda _: rng.random()))
    again = plan_shards(nodeids, shuffled, 5)
    assert plan == again
    chosen = [n for i in range(5) for n in plan.nodeids(i)]
    assert sorted(chosen) == sorted(nodeids)


def test_median_of_the_recorded_runs() -> None:
    history = {"a.py::test": [Timing(0, 1, 0), Timing(0, 9, 0), Timing(0, 2, 0)]}
    assert plan_shards(list(history), history, 1).expected == (2.0,)


def test_a_parametrized_id_with_colons_stays_in_its_module() -> None:
    assert split_nodeid("a.py::TestX::test[x::y]") == ("a.py", "TestX")
    assert split_nodeid("a.py::test[x::y::z]") == ("a.py", None)


def test_shard_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        plan_shards(["a.py::t"], {}, 0)
