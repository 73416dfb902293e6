"""``search_tests``, ``get_test_by_key`` and ``find_similar_tests`` over the catalog.

Each hit has its raw BM25 score (``bm25``: the negated FTS5 rank, higher is better) and
``score``, that divided by the best match's of the same query, so the best match is 1.0 and the
others keep BM25's spread (rather than a squashing such as ``x / (1 + x)``, which put the top
ten of 83 matches between 0.928 and 0.932). ``matched_fields`` says which fields hold a word of
the query. A page's order is the ranking's. A cursor is opaque to the caller: it holds the next offset and
a hash of the query and filters, so it cannot be replayed on another search.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import bound_text
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.catalog import SCOPES
from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import Filters
from pytest_qbench.mcp.catalog import Match
from pytest_qbench.mcp.catalog import query_words
from pytest_qbench.mcp.models import CaseFields
from pytest_qbench.mcp.models import Facets
from pytest_qbench.mcp.models import SearchHit
from pytest_qbench.mcp.models import SearchResult
from pytest_qbench.mcp.models import SimilarityScope
from pytest_qbench.mcp.models import SimilarTests
from pytest_qbench.mcp.models import TestCaseDetail
from pytest_qbench.mcp.models import TestCaseRef
from pytest_qbench.report.models import TestStep


MAX_RESULTS = 50
MAX_FILTER_VALUES = 20
SUMMARY_CHARS = 200
DESCRIPTION_CHARS = 3000
STEP_CHARS = 500
EMPTY_NOTE = "the catalog is empty: call ingest_tests (source='pytest') to build it"


def search(
    catalog: Catalog,
    query: str,
    filters: Filters,
    limit: int,
    cursor: str | None,
    budget: int,
) -> SearchResult:
    """A page of matches, the facets of all matches, and the next cursor.

    Raises:
        ToolFailure: a limit out of range, too many filter values, or a cursor of another search.
    """
    _check(limit, filters)
    fingerprint = _fingerprint(query, filters)
    offset = decode_cursor(cursor, fingerprint) if cursor else 0
    size = catalog.size()
    matches, total = catalog.search(query, filters, limit, offset)
    best = catalog.best_rank(query, filters)
    words = query_words(query)
    base = SearchResult(
        total=total,
        facets=_facets(catalog.facets(query, filters)),
        catalog_size=size,
        note=None if size else EMPTY_NOTE,
    )
    hits = [hit(m, words, best) for m in matches]
    fitted = fit_items(hits, budget - json_size(base) - 200, _brief)
    end = offset + len(fitted.items)
    return base.model_copy(
        update={
            "results": fitted.items,
            "next_cursor": encode_cursor(end, fingerprint) if end < total else None,
        }
    )


def _check(limit: int, filters: Filters) -> None:
    if not 1 <= limit <= MAX_RESULTS:
        raise ToolFailure(f"limit must be from 1 to {MAX_RESULTS}, given: {limit}")
    for name in ("tags", "priority", "markers", "platforms"):
        if len(getattr(filters, name)) > MAX_FILTER_VALUES:
            raise ToolFailure(f"{name} takes at most {MAX_FILTER_VALUES} values")


def hit(match: Match, words: Sequence[str], best: float) -> SearchHit:
    """A match as the tools return it; ``best`` is the rank of the query's best match."""
    record = match.record
    return SearchHit(
        **case_fields(record),
        score=score(match.rank, best),
        bm25=float(f"{max(0.0, -match.rank):.4g}"),
        matched_fields=list(match.fields),
        summary=bound_text(record.description or "", SUMMARY_CHARS, keep="head"),
        matched_steps=matched_steps(record, words),
    )


def case_fields(record: CaseRecord) -> dict[str, Any]:
    """The ``CaseFields`` of a record; a pytest test without a title is titled by its name."""
    fields = {name: getattr(record, name) for name in CaseFields.model_fields}
    fields["title"] = record.title or (record.nodeid or "").rsplit("::", 1)[-1] or None
    return fields


def score(rank: float, best: float) -> float:
    """BM25's rank (negative, lower is better) relative to the query's best, 0..1, higher is
    better: 1.0 for the best match; 0 without a query."""
    if best >= 0:
        return 0.0
    return round(min(1.0, rank / best), 3)


def matched_steps(record: CaseRecord, words: Sequence[str]) -> list[int]:
    """Steps (1-based) whose text holds one of the query's words (3 letters or more)."""
    wanted = [w for w in words if len(w) >= 3]
    return [
        index
        for index, (action, expected) in enumerate(record.steps, start=1)
        if any(w in f"{action} {expected or ''}".lower() for w in wanted)
    ]


def _brief(found: SearchHit) -> SearchHit:
    return found.model_copy(
        update={"summary": "", "matched_steps": [], "matched_fields": [], "markers": []}
    )


def _facets(raw: dict[str, dict[str, int]]) -> Facets:
    return Facets(
        tags=raw["tag"], platforms=raw["platform"], markers=raw["marker"], priority=raw["priority"]
    )


def _fingerprint(query: str, filters: Filters) -> str:
    text = json.dumps([query, asdict(filters)], sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(offset: int, fingerprint: str) -> str:
    """The cursor of the page starting at ``offset``."""
    raw = json.dumps({"o": offset, "f": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, fingerprint: str) -> int:
    """The offset a cursor holds.

    Raises:
        ToolFailure: not a cursor, or one of another search.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        offset, owner = data["o"], data["f"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise ToolFailure("cursor is not one search_tests returned; leave it out") from None
    if owner != fingerprint or not isinstance(offset, int) or offset < 0:
        raise ToolFailure(
            "cursor belongs to another search (the query or filters changed); leave it out "
            "to start again"
        )
    return offset


def case_detail(catalog: Catalog, key: str, budget: int) -> TestCaseDetail:
    """The case with ``key`` in full (bounded), and the other records with the same key.

    Raises:
        ToolFailure: no case has the key (similar keys are named).
    """
    found = catalog.by_key(key.strip()) or _by_uid(catalog, key.strip())
    if not found:
        similar = catalog.keys_like(key.strip())
        hint = f"; similar keys: {', '.join(similar)}" if similar else ""
        empty = f"; {EMPTY_NOTE}" if not catalog.size() else ""
        raise ToolFailure(f"no test case with key {key!r}{hint}{empty}")
    return detail(found[0], found[1:], budget)


def _by_uid(catalog: Catalog, uid: str) -> list[CaseRecord]:
    record = catalog.by_uid(uid)
    return [record] if record else []


def detail(record: CaseRecord, linked: Sequence[CaseRecord], budget: int) -> TestCaseDetail:
    """A record in full: description and steps bounded, steps fitted to ``budget``."""
    base = TestCaseDetail(
        **case_fields(record),
        description=bound_text(record.description, DESCRIPTION_CHARS)
        if record.description
        else None,
        linked=[ref(other) for other in linked[:10]],
    )
    steps = [
        TestStep(
            index=i,
            action=bound_text(action, STEP_CHARS),
            expected=bound_text(expected, STEP_CHARS) if expected else None,
        )
        for i, (action, expected) in enumerate(record.steps, start=1)
    ]
    fitted = fit_items(steps, budget - json_size(base) - 64, lambda step: step)
    return base.model_copy(update={"steps": fitted.items, "steps_omitted": fitted.dropped})


def ref(record: CaseRecord) -> TestCaseRef:
    """A record, briefly."""
    return TestCaseRef(
        uid=record.uid,
        source=record.source,
        key=record.key,
        title=record.title,
        nodeid=record.nodeid,
    )


def similar(
    catalog: Catalog,
    test: str | None,
    text: str | None,
    limit: int,
    scope: SimilarityScope,
    budget: int,
) -> SimilarTests:
    """Cases most like ``test`` (a key or a node id) or like ``text``.

    Raises:
        ToolFailure: neither or both given, or no such test.
    """
    if (test is None) == (text is None):
        raise ToolFailure("give either test (a key or a node id) or text, not both")
    _check(limit, Filters())
    reference = None
    query = text or ""
    if test is not None:
        reference = catalog.by_uid(test.strip()) or next(iter(catalog.by_key(test.strip())), None)
        if reference is None:
            raise ToolFailure(f"no test {test!r} in the catalog; search_tests finds its key")
        query = reference_text(reference, scope)
    exclude = reference.uid if reference else None
    matches, _total = catalog.search(query, Filters(), limit, 0, SCOPES[scope], exclude)
    best = min((m.rank for m in matches), default=0.0)  # the first page holds the best
    words = query_words(query)
    base = SimilarTests(reference=ref(reference) if reference else None)
    hits = [hit(m, words, best) for m in matches]
    fitted = fit_items(hits, budget - json_size(base) - 64, _brief)
    return base.model_copy(update={"results": fitted.items})


def reference_text(record: CaseRecord, scope: SimilarityScope) -> str:
    """The words of a case that its look-alikes should share."""
    steps = " ".join(f"{a} {e or ''}" for a, e in record.steps)
    if scope == "steps":
        return steps
    parts = [record.title or "", record.description or "", " ".join(record.tags)]
    if record.nodeid:
        parts.append(record.nodeid.rsplit("::", 1)[-1].replace("_", " "))
    if scope == "all":
        parts.append(steps)
    return " ".join(parts)
