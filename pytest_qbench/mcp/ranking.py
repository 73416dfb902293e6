"""Ranking the catalog's matches: scores in 0..1 and one hit per test function.

With embeddings, BM25's ranking and the vectors' (cosine similarity) are fused by reciprocal
rank fusion: a case's fused value is the sum over both rankings of ``1 / (K + rank)`` (rank
from 1; a ranking without the case adds nothing), and its ``score`` is that divided by the
value of a case first in both, so 1.0 means first by words and by meaning, and a case found
by one ranking only scores at most 0.5.

A parametrized test's cases share their words, so they would fill a page with one function:
``grouped`` keeps each function's best case and counts the function's matching cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace

from pytest_qbench.mcp import vectors
from pytest_qbench.mcp.catalog import SCOPES
from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import Filters
from pytest_qbench.mcp.catalog import Ranked
from pytest_qbench.mcp.catalog import function_of
from pytest_qbench.mcp.catalog import query_words
from pytest_qbench.mcp.embed import MODEL
from pytest_qbench.mcp.embed import Embedder
from pytest_qbench.mcp.embed import embedder


@dataclass(frozen=True)
class Scored:
    """A matching case with its score (0..1, higher is better)."""

    case_id: int
    function: str
    score: float
    bm25: float = 0.0
    """The raw BM25 score (the negated FTS5 rank; 0 when BM25 did not match it)."""
    cases: int = 1
    """Matching cases of the test function this hit stands for."""
    similarity: float | None = None
    """Cosine similarity of the vectors (``None`` without embeddings or outside the most
    similar)."""


K = 60
"""Reciprocal rank fusion's constant (the value of its paper, Cormack et al. 2009)."""


def fused(bm25: Sequence[Ranked], nearest: Sequence[tuple[Ranked, float]]) -> list[Scored]:
    """BM25's matches and the most similar cases in one ranking, best first."""
    value: dict[int, float] = {}
    found: dict[int, Scored] = {}
    for rank, item in enumerate(bm25, start=1):
        value[item.case_id] = 1 / (K + rank)
        found[item.case_id] = Scored(item.case_id, item.function, 0.0, -item.rank)
    for rank, (item, similarity) in enumerate(nearest, start=1):
        value[item.case_id] = value.get(item.case_id, 0.0) + 1 / (K + rank)
        known = found.get(item.case_id) or Scored(item.case_id, item.function, 0.0)
        found[item.case_id] = replace(known, similarity=round(similarity, 4))
    best = 2 / (K + 1)
    order = sorted(value, key=lambda case_id: -value[case_id])
    return [replace(found[i], score=round(min(1.0, value[i] / best), 3)) for i in order]


def bm25_scored(ranked: Sequence[Ranked]) -> list[Scored]:
    """BM25 ranks (negative, lower is better, best first) as scores relative to the best."""
    best = ranked[0].rank if ranked else 0.0
    return [Scored(r.case_id, r.function, relative(r.rank, best), -r.rank) for r in ranked]


def relative(rank: float, best: float) -> float:
    """BM25's rank relative to the query's best, 0..1: 1.0 for the best match; 0 without a
    query (every rank 0)."""
    if best >= 0:
        return 0.0
    return round(min(1.0, rank / best), 3)


def grouped(scored: Sequence[Scored], expand: bool) -> list[Scored]:
    """One hit per test function (its best case, with the number of its matching cases), in
    the order of each function's best case; every case when ``expand``."""
    if expand:
        return list(scored)
    order: dict[str, Scored] = {}
    counts: dict[str, int] = {}
    for hit in scored:
        order.setdefault(hit.function, hit)
        counts[hit.function] = counts.get(hit.function, 0) + 1
    return [replace(hit, cases=counts[name]) for name, hit in order.items()]


def for_query(catalog: Catalog, query: str, filters: Filters) -> list[Scored]:
    """``search_tests``' ranking of every matching case (before ``grouped``): BM25, fused
    with the vectors' when the catalog has them."""
    bm25 = catalog.ranked(query, filters)
    engine = _engine(catalog)
    if engine is None or not query_words(query):
        return bm25_scored(bm25)
    found = vectors.nearest(catalog, vectors.query_vector(engine, query), filters, "all")
    return fused(bm25, found)


def for_reference(
    catalog: Catalog,
    reference: CaseRecord | None,
    query: str,
    scope: str,
    include_siblings: bool,
) -> list[Scored]:
    """``find_similar_tests``' ranking, one hit per test function: the cases most like
    ``reference`` (whose words are ``query``) or like the text ``query``; the reference and,
    unless ``include_siblings``, the other cases of its test function left out."""
    exclude = reference.uid if reference else None
    bm25 = catalog.ranked(query, Filters(), SCOPES[scope], exclude)
    vector = None
    if (engine := _engine(catalog)) is not None:
        vector = (
            vectors.reference_vector(catalog, reference.uid, scope)
            if reference is not None
            else vectors.query_vector(engine, query)
        )
    ranked = bm25_scored(bm25)
    if vector is not None:
        ranked = fused(bm25, vectors.nearest(catalog, vector, Filters(), scope, exclude))
    if reference is not None and not include_siblings:
        family = function_of(reference)
        ranked = [r for r in ranked if r.function != family]
    return grouped(ranked, expand=False)


def _engine(catalog: Catalog) -> Embedder | None:
    """The embedder, when the catalog holds vectors of its model (loaded on first use)."""
    return embedder() if catalog.embedded(MODEL) else None
