"""The hybrid ranking's fusion: BM25 weighs more than the vectors, and the shortcut that leaves
BM25's far matches unsorted gives the order a full sort gives."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import Filters
from pytest_qbench.mcp.catalog import function_of
from pytest_qbench.mcp.catalog import open_catalog
from pytest_qbench.mcp.ranking import FUSION
from pytest_qbench.mcp.ranking import Fusion
from pytest_qbench.mcp.ranking import K
from pytest_qbench.mcp.ranking import Matches
from pytest_qbench.mcp.ranking import fused
from pytest_qbench.mcp.search import search
from pytest_qbench.mcp.snapshot import Snapshot


def catalog_of(size: int) -> Snapshot:
    """A snapshot of ``size`` cases, each its own test function."""
    return Snapshot(
        generation="g",
        functions={i: f"tests/test_x.py::test_{i}" for i in range(size)},
        order={i: i for i in range(size)},
        ids={f"u{i}": i for i in range(size)},
        family={i: i for i in range(size)},
        facet_cases=[],
        facet_values=[],
    )


def matches(ranked: list[tuple[int, float]]) -> Matches:
    """BM25's matches, best first."""
    return Matches([case_id for case_id, _r in ranked], dict(ranked))


def test_bm25s_first_match_outranks_a_vector_favourite_that_bm25_ranks_100th() -> None:
    """BM25 weighs twice the vectors: its first match (which the vectors did not find) comes
    before the vectors' first one that BM25 ranks 100th; it scores 2/3, a case only the
    vectors found at most 1/3."""
    memo = catalog_of(200)
    bm25 = [(i, -100.0 + i) for i in range(150)]  # case 0 first, case 99 100th
    nearest = [(99, 0.9), (150, 0.8)]
    ranking = fused(memo, matches(bm25), nearest)
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
        assert fused(memo, matches(bm25), nearest, fusion).order == expected, weights


WORDS = [
    "boolean",
    "flag",
    "option",
    "envvar",
    "default",
    "value",
    "parse",
    "help",
    "page",
    "error",
    "prompt",
    "file",
]


def records(rng: random.Random) -> list[CaseRecord]:
    """Parametrized pytest functions (their cases tie) and imported cases with labels."""
    found = []
    for function in range(40):
        name = f"test_{rng.choice(WORDS)}_{rng.choice(WORDS)}_{function}"
        path = f"tests/test_{function % 7}.py"
        doc = " ".join(rng.choice(WORDS) for _ in range(6))
        for case in range(rng.choice((1, 3, 8))):
            nodeid = f"{path}::{name}[{case}]"
            found.append(
                CaseRecord(nodeid, "pytest", nodeid=nodeid, path=path, description=doc,
                           markers=["parametrize", rng.choice(("slow", "Slow", "fast"))])
            )  # fmt: skip
    for n in range(150):
        found.append(
            CaseRecord(
                f"QA-{n}", "json:cases.json", key=f"QA-{n}", folder=f"Suite {n % 9}",
                title=" ".join(rng.choice(WORDS) for _ in range(4)),
                tags=[rng.choice(WORDS), rng.choice(WORDS).upper()],
                priority=rng.choice(("High", "Low", None)), platforms=[rng.choice(("linux", "mac"))],
            )
        )  # fmt: skip
    rng.shuffle(found)  # rowids in no particular order: ties must still go by path, then uid
    return found


def labels_of(record: CaseRecord) -> dict[tuple[str, str], str]:
    """``(kind, value compared)`` -> the value as given, once per case (the catalog keeps one
    of the values that differ only in case)."""
    found: dict[tuple[str, str], str] = {}
    for kind, values in (
        ("tag", record.tags),
        ("platform", record.platforms),
        ("marker", record.markers),
    ):
        for value in values:
            found.setdefault((kind, value.lower()), value)
    if record.priority:
        found["priority", record.priority] = record.priority
    return found


def expected_search(
    catalog: Catalog, query: str, expand: bool
) -> tuple[int, list[tuple[str, float, int]], dict[str, dict[str, int]]]:
    """What search_tests answers, computed the plain way: every BM25 match sorted by rank,
    ties by path or folder then uid; one hit per test function; labels counted per case."""
    by_id = catalog.records([row[0] for row in catalog.index_rows()])
    place = {i: (r.path or r.folder or "", r.uid) for i, r in by_id.items()}
    ranked = sorted(catalog.bm25(query), key=lambda item: (item[1], place[item[0]]))
    best = -ranked[0][1]
    hits: dict[str, list[tuple[str, float, int]]] = {}
    for case_id, rank in ranked:
        record = by_id[case_id]
        group = record.uid if expand else function_of(record)
        hits.setdefault(group, []).append((record.uid, round(min(1.0, -rank / best), 3), 1))
    page = [(cases[0][0], cases[0][1], len(cases)) for cases in hits.values()]
    spelled: dict[tuple[str, str], str] = {}  # as first stored (the lowest case id)
    for case_id in sorted(by_id):
        for key, value in labels_of(by_id[case_id]).items():
            spelled.setdefault(key, value)
    counts = Counter(key for case_id, _rank in ranked for key in labels_of(by_id[case_id]))
    facets: dict[str, dict[str, int]] = {"tag": {}, "platform": {}, "marker": {}, "priority": {}}
    for (kind, folded), n in sorted(counts.items(), key=lambda item: (-item[1], item[0][1])):
        if len(facets[kind]) < 10:
            facets[kind][spelled[kind, folded]] = n
    return len(page), page, facets


def test_search_answers_as_the_plain_ranking_does(tmp_path: Path) -> None:
    """On a real SQLite catalog, BM25's answers (hits in order, their scores and case counts,
    total, facets, every page) are those of sorting and counting every match the plain way,
    which is what the tools did before keeping less per call."""
    with open_catalog(tmp_path / "catalog.sqlite", create=True) as catalog:
        cases = records(random.Random(24))
        for source in ("pytest", "json:cases.json"):
            catalog.replace_source(source, [r for r in cases if r.source == source])
        for query in ("flag envvar", "help page error", "value", "prompt default file boolean"):
            for expand in (False, True):
                total, page, facets = expected_search(catalog, query, expand)
                got, cursor = [], None
                while True:
                    found = search(catalog, query, Filters(), 20, cursor, 10**6, expand)
                    assert found.total == total
                    assert (found.facets.tags, found.facets.platforms) == (
                        facets["tag"],
                        facets["platform"],
                    )
                    assert (found.facets.markers, found.facets.priority) == (
                        facets["marker"],
                        facets["priority"],
                    )
                    got += [(hit.uid, hit.score, hit.cases) for hit in found.results]
                    if (cursor := found.next_cursor) is None:
                        break
                assert got == page, (query, expand)
