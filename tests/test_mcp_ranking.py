"""The hybrid ranking's fusion: BM25 weighs more than the vectors, and the shortcut that leaves
BM25's far matches unsorted gives the order a full sort gives."""

from __future__ import annotations

import random

from pytest_qbench.mcp.ranking import FUSION
from pytest_qbench.mcp.ranking import Fusion
from pytest_qbench.mcp.ranking import K
from pytest_qbench.mcp.ranking import fused
from pytest_qbench.mcp.snapshot import Snapshot


def catalog_of(size: int) -> Snapshot:
    """A snapshot of ``size`` cases, each its own test function."""
    return Snapshot(
        generation="g",
        functions={i: f"tests/test_x.py::test_{i}" for i in range(size)},
        order={i: i for i in range(size)},
        ids={f"u{i}": i for i in range(size)},
        family={i: i for i in range(size)},
        facet_keys={},
        facet_values=[],
    )


def test_bm25s_first_match_outranks_a_vector_favourite_that_bm25_ranks_100th() -> None:
    """BM25 weighs twice the vectors: its first match (which the vectors did not find) comes
    before the vectors' first one that BM25 ranks 100th; it scores 2/3, a case only the
    vectors found at most 1/3."""
    memo = catalog_of(200)
    bm25 = [(i, -100.0 + i) for i in range(150)]  # case 0 first, case 99 100th
    nearest = [(99, 0.9), (150, 0.8)]
    ranking = fused(memo, bm25, nearest)
    assert ranking.order.index(0) < ranking.order.index(99)
    assert ranking.scored(0).score == 0.667
    assert ranking.scored(150).score <= 0.333
    assert FUSION.bm25 > FUSION.vectors


def test_the_unsorted_tail_keeps_the_full_sorts_order() -> None:
    """Whatever the weights, the fused order is that of sorting every case by its weighted
    reciprocal ranks (ties in BM25's order), though only BM25's head is sorted."""
    rng = random.Random(24)
    memo = catalog_of(3000)
    for weights in ((1.0, 1.0), (1.0, 0.5), (1.0, 0.1), (1.0, 0.02)):
        fusion = Fusion(*weights)
        bm25 = [(i, -3000.0 + i) for i in rng.sample(range(3000), 2500)]
        bm25.sort(key=lambda item: item[1])
        nearest = [(i, 0.9 - n / 1000) for n, i in enumerate(rng.sample(range(3000), 200))]
        value: dict[int, float] = {}
        for rank, (case_id, _r) in enumerate(bm25, start=1):
            value[case_id] = fusion.bm25 / (K + rank)
        for rank, (case_id, _s) in enumerate(nearest, start=1):
            value[case_id] = value.get(case_id, 0.0) + fusion.vectors / (K + rank)
        expected = sorted(value, key=value.__getitem__, reverse=True)
        assert fused(memo, bm25, nearest, fusion).order == expected, weights
