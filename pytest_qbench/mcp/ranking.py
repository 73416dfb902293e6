"""Ranking the catalog's matches: scores in 0..1 and one hit per test function.

With embeddings, BM25's ranking and the vectors' (cosine similarity) are fused by weighted
reciprocal rank fusion: a case's fused value is the sum over both rankings of
``weight / (K + rank)`` (rank from 1; a ranking without the case adds nothing; BM25 weighs 1,
the vectors 0.5: see ``FUSION``), and its ``score`` is that divided by the value of a case
first in both, so 1.0 means first by words and by meaning; a case found by BM25 only scores at
most 0.667, by the vectors only at most 0.333.

A parametrized test's cases share their words, so they would fill a page with one function:
``grouped`` keeps each function's best case and counts the function's matching cases.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from itertools import compress
from itertools import count
from itertools import filterfalse
from typing import NamedTuple

from pytest_qbench.mcp import vectors
from pytest_qbench.mcp.catalog import FTS_COLUMNS
from pytest_qbench.mcp.catalog import SCOPES
from pytest_qbench.mcp.catalog import STOP_WORDS
from pytest_qbench.mcp.catalog import WORD
from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import Filters
from pytest_qbench.mcp.catalog import function_of
from pytest_qbench.mcp.catalog import query_words
from pytest_qbench.mcp.embed import MODEL
from pytest_qbench.mcp.embed import Embedder
from pytest_qbench.mcp.embed import available
from pytest_qbench.mcp.embed import embedder
from pytest_qbench.mcp.snapshot import Snapshot
from pytest_qbench.mcp.snapshot import snapshot


class Scored(NamedTuple):
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
HEAD = 1000
"""BM25's best matches that the fusion sorts with the vector hits (see ``fused``)."""
LIKE_TERMS = 12
"""Words of a reference case that ``find_similar_tests``' BM25 looks for: its rarest ones
(fewest cases hold them, at least one other), as "more like this" searches do. Matching all of
a long case's words costs 0.3 s at 20 000 cases and adds mostly words every case shares."""
LIKE_MATCHES = 1000
"""BM25 matches of ``find_similar_tests`` that take part in its ranking: it shows at most 50
test functions, so its best 1 000 cases are plenty."""
LIKE_CANDIDATES = 64
"""Words of a reference case considered for ``LIKE_TERMS`` (in the order of its text)."""


class Matches(NamedTuple):
    """BM25's matches: case ids best first (ties by path or folder, then uid), and their
    BM25 ranks (lower is better)."""

    ids: list[int]
    ranks: dict[int, float]


NO_MATCHES = Matches([], {})


class Grouped(NamedTuple):
    """The first hits of a ranking and how many there are in all."""

    hits: list[tuple[int, int]]
    """``(case id, matching cases)``, best first."""
    total: int


@dataclass
class Ranking:
    """Every matching case, best first, scored only when a page shows it."""

    memo: Snapshot
    order: list[int]
    """Case ids, best first."""
    value: dict[int, float]
    """Case id -> what the order sorts by (higher is better): the fused value, or BM25's."""
    best: float
    """The value that scores 1.0."""
    bm25: dict[int, float] = field(default_factory=dict)
    """Case id -> BM25 rank (lower is better), of the cases BM25 matched."""
    similarity: dict[int, float] = field(default_factory=dict)
    """Case id -> cosine similarity, of the most similar cases."""
    sign: float = 1.0
    """-1 when ``value`` holds BM25 ranks (lower is better) rather than fused values."""
    tail: list[int] = field(default_factory=list)
    """BM25's matches after its ``head`` best, in its order (fused ranking): the value of
    those that are not vector hits is computed when a page shows them."""
    head: int = HEAD
    """BM25's matches sorted with the vector hits (fused ranking)."""
    weight: float = 1.0
    """BM25's weight in the fusion."""

    def _value(self, case_id: int) -> float:
        found = self.value.get(case_id)
        if found is None:  # in the tail: only BM25 ranked it
            found = self.weight / (K + self.head + 1 + self.tail.index(case_id))
        return self.sign * found

    def scored(self, case_id: int, cases: int = 1) -> Scored:
        """One case as a ``Scored`` hit standing for ``cases`` matching cases."""
        value = self._value(case_id)
        score = 0.0 if self.best <= 0 else round(min(1.0, value / self.best), 3)
        similarity = self.similarity.get(case_id)
        return Scored(
            case_id,
            self.memo.functions[case_id],
            score,
            -self.bm25.get(case_id, 0.0),
            cases,
            None if similarity is None else round(similarity, 4),
        )

    def without(self, function: str) -> Ranking:
        """The ranking without the cases of ``function``."""
        functions = self.memo.functions
        order = [i for i in self.order if functions[i] != function]
        return replace(self, order=order, tail=[i for i in self.tail if functions[i] != function])

    def grouped(self, expand: bool, stop: int | None = None) -> Grouped:
        """The first ``stop`` hits (all when ``None``): one per test function (its best case,
        with the number of its matching cases) in the order of each function's best case;
        every case when ``expand``. Only the hits asked for are looked for."""
        if expand:
            return Grouped([(case_id, 1) for case_id in self.order[:stop]], len(self.order))
        family = self.memo.family
        counts = Counter(map(family.__getitem__, self.order))
        wanted = len(counts) if stop is None else min(stop, len(counts))
        hits: list[tuple[int, int]] = []
        seen: set[int] = set()
        for case_id in self.order:
            if len(hits) >= wanted:
                break
            number = family[case_id]
            if number not in seen:
                seen.add(number)
                hits.append((case_id, counts[number]))
        return Grouped(hits, len(counts))


@dataclass(frozen=True)
class Fusion:
    """How BM25's ranking and the vectors' are weighed in ``fused``."""

    bm25: float = 1.0
    """Weight of BM25's ``1 / (K + rank)``."""
    vectors: float = 1.0
    """Weight of the vectors' ``1 / (K + rank)``."""
    margin: float = 1.0
    """Vector hits whose cosine is more than this below the best hit's take no part."""

    def head(self, hits: int) -> int:
        """BM25's matches to sort with ``hits`` vector hits: every match whose value can be
        below a vector hit's (a vector hit's is at least ``vectors / (K + hits)``)."""
        if self.vectors <= 0 or not hits:
            return HEAD
        return max(HEAD, math.ceil(self.bm25 / self.vectors * (K + hits)) - K)


FUSION = Fusion(bm25=1.0, vectors=0.5)
"""The tools' weighing: BM25 above the vectors, no margin. Chosen on one suite only
(more-itertools: the largest smallest gain over BM25 of recall@10 and MRR of both tools,
``benchmarks/catalog_quality.py --tune``) and checked unchanged on another (attrs)."""


def fused(
    memo: Snapshot,
    bm25: Matches,
    nearest: Sequence[tuple[int, float]],
    fusion: Fusion = FUSION,
) -> Ranking:
    """BM25's matches and the most similar cases in one ranking, best first."""
    # BM25's matches after its head come after every other case in the fused order (their
    # bm25 / (K + rank) is below any vector hit's value), in BM25's order: only the head and
    # the vector hits are sorted, which is the same order at a fraction of the cost.
    nearest = [item for item in nearest if item[0] in memo.functions]  # see bm25_ranked
    if nearest:
        floor = nearest[0][1] - fusion.margin
        nearest = [item for item in nearest if item[1] >= floor]
    head = fusion.head(len(nearest))
    weight = fusion.bm25
    value = {case_id: weight / (K + rank) for rank, case_id in enumerate(bm25.ids[:head], 1)}
    similar = dict(nearest)
    tail = bm25.ids[head:]
    for place in compress(count(), map(similar.__contains__, tail)):
        value[tail[place]] = weight / (K + head + 1 + place)
    for rank, (case_id, _similarity) in enumerate(nearest, start=1):
        value[case_id] = value.get(case_id, 0.0) + fusion.vectors / (K + rank)
    order = sorted(value, key=value.__getitem__, reverse=True)  # stable: ties keep BM25's order
    order += filterfalse(similar.__contains__, tail)
    best = (fusion.bm25 + fusion.vectors) / (K + 1)
    return Ranking(
        memo, order, value, best, bm25.ranks, similar, tail=tail, head=head, weight=weight
    )


def bm25_only(memo: Snapshot, matches: Matches) -> Ranking:
    """BM25's ranking (best first); scores relative to the best match's."""
    ids, ranks = matches
    best = -ranks[ids[0]] if ids else 0.0
    return Ranking(memo, ids, ranks, best, ranks, sign=-1.0)


def bm25_ranked(
    catalog: Catalog,
    memo: Snapshot,
    query: str,
    columns: Sequence[str] = FTS_COLUMNS,
    allowed: set[int] | None = None,
    exclude: int | None = None,
    limit: int | None = None,
) -> Matches:
    """The matches among ``allowed`` but ``exclude`` (the best ``limit`` only, when given),
    best first; ties by path or folder, then uid."""
    ranks = dict(catalog.bm25(query, columns, limit))
    if exclude is not None:
        ranks.pop(exclude, None)
    # the snapshot's cases in their tie-break order, those that matched: one sort by rank
    # then keeps ties in that order (a case the snapshot lacks was ingested by another
    # process since: left out this time)
    cases = memo.order if allowed is None else filter(allowed.__contains__, memo.order)
    ids = list(filter(ranks.__contains__, cases))
    ids.sort(key=ranks.__getitem__)
    return Matches(ids, ranks)


def for_query(catalog: Catalog, query: str, filters: Filters) -> Ranking:
    """``search_tests``' ranking of every matching case: BM25, fused with the vectors' when
    the catalog has them."""
    memo = snapshot(catalog)
    allowed = catalog.allowed(filters)
    bm25 = bm25_ranked(catalog, memo, query, FTS_COLUMNS, allowed)
    engine = _engine(catalog, memo) if query_words(query) else None
    if engine is None:
        return bm25_only(memo, bm25)
    vector = vectors.query_vector(engine, query)
    found = vectors.nearest(memo.matrix(catalog, MODEL), vector, allowed, "all")
    return fused(memo, bm25, found)


def for_reference(
    catalog: Catalog,
    reference: CaseRecord | None,
    query: str,
    scope: str,
    include_siblings: bool,
) -> Ranking:
    """``find_similar_tests``' ranking, one hit per test function: the cases most like
    ``reference`` (whose words are ``query``) or like the text ``query``; the reference and,
    unless ``include_siblings``, the other cases of its test function left out."""
    memo = snapshot(catalog)
    exclude = memo.ids.get(reference.uid) if reference else None
    words = distinctive(catalog, memo, query)
    bm25 = bm25_ranked(catalog, memo, words, SCOPES[scope], None, exclude, LIKE_MATCHES)
    ranked = bm25_only(memo, bm25)
    if (engine := _engine(catalog, memo)) is not None:
        vector = (
            vectors.reference_vector(catalog, reference.uid, scope)
            if reference is not None
            else vectors.query_vector(engine, query)
        )
        if vector is not None:
            matrix = memo.matrix(catalog, MODEL)
            ranked = fused(memo, bm25, vectors.nearest(matrix, vector, None, scope, exclude))
    if reference is not None and not include_siblings:
        ranked = ranked.without(function_of(reference))
    return ranked


def distinctive(catalog: Catalog, memo: Snapshot, text: str) -> str:
    """The ``LIKE_TERMS`` rarest words of ``text`` that another case holds too (all of a
    short text's words)."""
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(text)))
    words = [w for w in words if w not in STOP_WORDS][:LIKE_CANDIDATES]
    if len(words) <= LIKE_TERMS:
        return " ".join(words)
    counted = [
        (memo.documents_with(catalog, word), place, word) for place, word in enumerate(words)
    ]
    rarest = sorted(item for item in counted if item[0] > 1)[:LIKE_TERMS]
    return " ".join(word for _n, _place, word in sorted(rarest, key=lambda item: item[1]))


def _engine(catalog: Catalog, memo: Snapshot) -> Embedder | None:
    """The embedder, when the catalog holds vectors of its model (loaded on first use)."""
    if not available() or memo.matrix(catalog, MODEL) is None:
        return None
    return embedder()
