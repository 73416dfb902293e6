"""The catalog's tools: ``search_tests``, ``get_test_by_key`` and ``find_similar_tests``, their
result models and their text. The catalog itself (``catalog``: SQLite FTS5) is imported when one
of them is first called.

Each hit has its raw BM25 score (``bm25``: the negated FTS5 rank, higher is better) and
``score`` in 0..1 (``ranking``): BM25 alone, that divided by the best match's of the same
query; with embeddings (the ``[search]`` extra), weighted reciprocal rank fusion of BM25 and vector
similarity. A hit stands for a test function: its best case, with the number of its matching
parametrized cases (``expand`` lists them one by one). ``matched_fields`` says which fields
hold a word of the query. A page's order is the ranking's. A cursor is opaque to the caller: it holds the next offset and
a hash of the query and filters, so it cannot be replayed on another search.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from pydantic import Field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import bound_text
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.text import cut_lines
from pytest_qbench.mcp.text import fit_lines
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.models import TestStep


if TYPE_CHECKING:
    from pytest_qbench.mcp.catalog import CaseRecord
    from pytest_qbench.mcp.catalog import Catalog
    from pytest_qbench.mcp.catalog import Filters
    from pytest_qbench.mcp.ranking import Scored
    from pytest_qbench.mcp.service import RunService


SimilarityScope = Literal["all", "docs", "steps"]
"""What ``find_similar_tests`` compares: everything, the descriptive text, or the steps."""


class TestCaseRef(QBenchModel):
    """A test case in the catalog, briefly."""

    uid: str
    """Catalog id: a pytest node id, or an imported case's key."""
    source: str
    """``pytest`` or ``json:<file>`` (an imported export)."""
    key: str | None = None
    """External key (JIRA...)."""
    title: str | None = None
    """Title."""
    nodeid: str | None = None
    """pytest node id (pytest tests)."""


class CaseFields(QBenchModel):
    """What every view of a test case shows."""

    uid: str
    """Catalog id: a pytest node id, or an imported case's key."""
    source: str
    """``pytest`` or ``json:<file>`` (an imported export)."""
    key: str | None = None
    """External key (JIRA...)."""
    title: str | None = None
    """Title."""
    nodeid: str | None = None
    """pytest node id (pytest tests)."""
    path: str | None = None
    """Test file."""
    line: int | None = None
    """Line of the test."""
    folder: str | None = None
    """Folder in the test-case manager."""
    priority: str | None = None
    """Priority."""
    tags: list[str] = Field(default_factory=list)
    """Tags."""
    platforms: list[str] = Field(default_factory=list)
    """Platforms."""
    markers: list[str] = Field(default_factory=list)
    """pytest markers."""


class SearchHit(CaseFields):
    """A test case that matched, with its score."""

    score: float
    """Relevance 0..1 (1: the best; 0: no query given)."""
    bm25: float = 0.0
    """Raw BM25 score (higher is better), comparable within one query only."""
    similarity: float | None = None
    """Cosine similarity of the embeddings, if any."""
    cases: int = 1
    """Matching parametrized cases of this test function."""
    matched_fields: list[str] = Field(default_factory=list)
    """Fields matching the query: key, title, name, description, tags, steps, location."""
    summary: str = ""
    """The start of the description or docstring."""
    matched_steps: list[int] = Field(default_factory=list)
    """Steps (1-based) that hold a word of the query."""


class Facets(QBenchModel):
    """Counts of values among all matches (top 10 each)."""

    tags: dict[str, int] = Field(default_factory=dict)
    """Tag -> matches."""
    priority: dict[str, int] = Field(default_factory=dict)
    """Priority -> matches."""
    platforms: dict[str, int] = Field(default_factory=dict)
    """Platform -> matches."""
    markers: dict[str, int] = Field(default_factory=dict)
    """Marker -> matches."""


class SearchResult(QBenchModel):
    """Ranked matches from the test catalog."""

    total: int
    """Matches in all."""
    results: list[SearchHit] = Field(default_factory=list)
    """This page of matches, best first."""
    facets: Facets = Field(default_factory=Facets)
    """Values among all matches, to narrow the search."""
    next_cursor: str | None = None
    """Pass it as cursor for the next page; ``None`` at the end."""
    catalog_size: int = 0
    """Test cases in the catalog."""
    note: str | None = None
    """Why there are no results, when there are none."""


class TestCaseDetail(CaseFields):
    """One test case in full."""

    description: str | None = None
    """Description or docstring (bounded)."""
    steps: list[TestStep] = Field(default_factory=list)
    """Steps with action and expected result (bounded)."""
    steps_omitted: int = 0
    """Steps left out to fit the size budget."""
    linked: list[TestCaseRef] = Field(default_factory=list)
    """Other catalog records with the same key (the pytest test and its imported case)."""


class SimilarTests(QBenchModel):
    """Test cases like a given one (or like a text), most similar first."""

    reference: TestCaseRef | None = None
    """The test compared with (``None`` when a text was given)."""
    results: list[SearchHit] = Field(default_factory=list)
    """Similar test cases."""


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
    expand: bool = False,
) -> SearchResult:
    """A page of matches (one per test function unless ``expand``), the facets of all
    matches, and the next cursor.

    Raises:
        ToolFailure: a limit out of range, too many filter values, or a cursor of another search.
    """
    from pytest_qbench.mcp.catalog import FTS_COLUMNS
    from pytest_qbench.mcp.ranking import for_query

    _check(limit, filters)
    fingerprint = _fingerprint(query, filters, expand)
    offset = decode_cursor(cursor, fingerprint) if cursor else 0
    size = catalog.size()
    ranking = for_query(catalog, query, filters)
    grouped = ranking.grouped(expand, offset + limit)
    base = SearchResult(
        total=grouped.total,
        facets=_facets(ranking.memo.facets(ranking.order)),
        catalog_size=size,
        note=None if size else EMPTY_NOTE,
    )
    page = [ranking.scored(case_id, n) for case_id, n in grouped.hits[offset : offset + limit]]
    hits = hits_of(catalog, page, query, FTS_COLUMNS)
    fitted = fit_items(hits, budget - json_size(base) - 200, _brief)
    end = offset + len(fitted.items)
    return base.model_copy(
        update={
            "results": fitted.items,
            "next_cursor": encode_cursor(end, fingerprint) if end < grouped.total else None,
        }
    )


def hits_of(
    catalog: Catalog, page: Sequence[Scored], query: str, columns: Sequence[str]
) -> list[SearchHit]:
    """The page's cases as the tools return them, with the fields and steps that matched."""
    from pytest_qbench.mcp.catalog import query_words

    ids = [item.case_id for item in page]
    records = catalog.records(ids)
    fields = catalog.matched_fields(query, columns, ids)
    words = query_words(query)
    return [hit(records[item.case_id], item, fields.get(item.case_id, []), words) for item in page]


def _check(limit: int, filters: Filters) -> None:
    if not 1 <= limit <= MAX_RESULTS:
        raise ToolFailure(f"limit must be from 1 to {MAX_RESULTS}, given: {limit}")
    for name in ("tags", "priority", "markers", "platforms"):
        if len(getattr(filters, name)) > MAX_FILTER_VALUES:
            raise ToolFailure(f"{name} takes at most {MAX_FILTER_VALUES} values")


def hit(
    record: CaseRecord, scored: Scored, fields: Sequence[str], words: Sequence[str]
) -> SearchHit:
    """A ranked case as the tools return it."""
    return SearchHit(
        **case_fields(record),
        score=scored.score,
        bm25=float(f"{max(0.0, scored.bm25):.4g}"),
        similarity=scored.similarity,
        cases=scored.cases,
        matched_fields=list(fields),
        summary=bound_text(record.description or "", SUMMARY_CHARS, keep="head"),
        matched_steps=matched_steps(record, words),
    )


def case_fields(record: CaseRecord) -> dict[str, Any]:
    """The ``CaseFields`` of a record; a pytest test without a title is titled by its name."""
    fields = {name: getattr(record, name) for name in CaseFields.model_fields}
    fields["title"] = record.title or (record.nodeid or "").rsplit("::", 1)[-1] or None
    return fields


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


def _fingerprint(query: str, filters: Filters, expand: bool) -> str:
    text = json.dumps([query, asdict(filters), expand], sort_keys=True, default=list)
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
    include_siblings: bool = False,
) -> SimilarTests:
    """Cases most like ``test`` (a key or a node id) or like ``text``, one per test function;
    the reference's own parametrized siblings only when ``include_siblings``.

    Raises:
        ToolFailure: neither or both given, a blank one, ``include_siblings`` with a text,
            or no such test.
    """
    from pytest_qbench.mcp.catalog import SCOPES
    from pytest_qbench.mcp.catalog import Filters
    from pytest_qbench.mcp.ranking import for_reference

    if test is not None and text is not None:
        raise ToolFailure("give either test (a key or a node id) or text, not both")
    if test is None and text is None:
        raise ToolFailure("give either test (a key or a node id) or text to compare with")
    for name, value in (("test", test), ("text", text)):
        if value is not None and not value.strip():
            raise ToolFailure(f"{name} is empty; give a key or a node id, or a text")
    if include_siblings and test is None:
        raise ToolFailure(
            "include_siblings keeps a reference test's own parametrized cases, and text has "
            "none; leave include_siblings out, or give test instead of text"
        )
    _check(limit, Filters())
    reference = None
    query = text or ""
    if test is not None:
        reference = catalog.by_uid(test.strip()) or next(iter(catalog.by_key(test.strip())), None)
        if reference is None:
            raise ToolFailure(f"no test {test!r} in the catalog; search_tests finds its key")
        query = reference_text(reference, scope)
    ranking = for_reference(catalog, reference, query, scope, include_siblings)
    ranked = [ranking.scored(case_id, n) for case_id, n in ranking.grouped(False, limit).hits]
    base = SimilarTests(reference=ref(reference) if reference else None)
    hits = hits_of(catalog, ranked, query, SCOPES[scope])
    fitted = fit_items(hits, budget - json_size(base) - 64, _brief)
    return base.model_copy(update={"results": fitted.items})


def reference_text(record: CaseRecord, scope: SimilarityScope) -> str:
    """The words of a case that its look-alikes should share."""
    from pytest_qbench.mcp.catalog import split_words

    steps = " ".join(f"{a} {e or ''}" for a, e in record.steps)
    if scope == "steps":
        return steps
    parts = [record.title or "", record.description or "", " ".join(record.tags)]
    if record.nodeid:
        # the whole name, class included, as the vectors embed it (``vectors.docs_text``)
        parts.append(split_words(record.nodeid.split("::", 1)[-1]))
    if scope == "all":
        parts.append(steps)
    return " ".join(parts)


def _hit_line(number: int, found: SearchHit) -> str:
    label = found.key or found.nodeid or found.uid
    bits = [f"{number}. {found.title or label} [{label}] score {found.score:.3f}"]
    if found.cases > 1:
        bits.append(f"{found.cases} parametrized cases (expand lists them)")
    if found.priority:
        bits.append(f"priority {found.priority}")
    if found.tags:
        bits.append(f"tags {', '.join(found.tags)}")
    if found.matched_fields:
        bits.append(f"matched in {', '.join(found.matched_fields)}")
    if found.matched_steps:
        bits.append(f"steps {','.join(map(str, found.matched_steps))}")
    line = "; ".join(bits)
    return f"{line}\n   {found.summary}" if found.summary else line


def search_text(result: SearchResult, limit: int) -> str:
    """The matches, best first, and the facets."""
    if not result.results:
        return result.note or f"no matches among {result.catalog_size} test cases"
    head = f"{result.total} matches among {result.catalog_size} test cases"
    if result.next_cursor:
        head += f"; more with cursor={result.next_cursor}"
    lines = [head, *(_hit_line(n, h) for n, h in enumerate(result.results, start=1))]
    facets = result.facets
    for name in ("tags", "priority", "platforms", "markers"):
        values = getattr(facets, name)
        if values:
            lines.append(f"{name}: " + ", ".join(f"{k} ({v})" for k, v in values.items()))
    return fit_lines(lines, limit, "... {n} more lines in the structured result")


def case_text(case: TestCaseDetail, limit: int) -> str:
    """The case with its steps."""
    lines = [f"{case.title or case.uid} [{case.key or case.uid}] ({case.source})"]
    for name in ("nodeid", "priority", "folder"):
        value = getattr(case, name)
        if value:
            lines.append(f"{name}: {value}")
    for name in ("tags", "platforms", "markers"):
        values = getattr(case, name)
        if values:
            lines.append(f"{name}: {', '.join(values)}")
    if case.description:
        lines.append(case.description)
    for step in case.steps:
        lines.append(f"{step.index}. {step.action}")
        if step.expected:
            lines.append(f"   Expected: {step.expected}")
    if case.steps_omitted:
        lines.append(f"... {case.steps_omitted} more steps")
    lines += [f"Also: {other.uid} ({other.source})" for other in case.linked]
    return cut_lines(lines, limit)


def similar_text(found: SimilarTests, limit: int) -> str:
    """The similar cases, most similar first."""
    head = (
        f"Tests similar to {found.reference.uid}:"
        if found.reference
        else "Tests similar to the text:"
    )
    if not found.results:
        return f"{head} none"
    lines = [head, *(_hit_line(n, h) for n, h in enumerate(found.results, start=1))]
    return fit_lines(lines, limit, "... {n} more")


def search_tests(
    tools: RunService,
    query: str = "",
    tags: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    markers: Sequence[str] | None = None,
    platforms: Sequence[str] | None = None,
    path: str | None = None,
    limit: int = 10,
    cursor: str | None = None,
    expand: bool = False,
) -> SearchResult:
    """Ranked search over the catalog, one hit per test function unless ``expand``.

    Raises:
        ToolFailure: a filter that is an empty list or holds an empty value, a blank or
            outside ``path``, a blank cursor (or one of :func:`search`'s).
    """
    from pytest_qbench.mcp.catalog import Filters
    from pytest_qbench.mcp.shared_catalog import open_project_catalog

    given = {"tags": tags, "priority": priority, "markers": markers, "platforms": platforms}
    for name, values in given.items():
        _check_values(name, values)
    _check_path_filter(tools.config.root, path)
    if cursor is not None and not cursor.strip():
        raise ToolFailure("cursor is empty; leave it out for the first page")
    filters = Filters(
        tuple(tags or ()), tuple(priority or ()), tuple(markers or ()), tuple(platforms or ()), path
    )
    with open_project_catalog(tools.config) as catalog:
        return search(catalog, query, filters, limit, cursor, tools.config.budget, expand)


def _check_values(name: str, values: Sequence[str] | None) -> None:
    """A filter given as an empty list, or with an empty value, is refused (it would match
    everything, or nothing)."""
    if values is None:
        return
    if not values:
        raise ToolFailure(f"{name} is an empty list; leave it out, or give values to match")
    if any(not value.strip() for value in values):
        raise ToolFailure(f"{name} holds an empty value, given: {list(values)[:5]}; leave it out")


def _check_path_filter(root: Path, path: str | None) -> None:
    """``path`` filters the catalog's paths (relative to the project root) and folders: blank,
    ``..``, or a directory of this machine outside the root is refused (it would match every
    test, or none)."""
    if path is None:
        return
    if not path.strip():
        raise ToolFailure("path is empty; leave it out, or give a glob or prefix like tests/api")
    given = PurePosixPath(path)
    if ".." in given.parts:
        raise ToolFailure(f"path {path!r} holds '..'; give a path inside the project root")
    if given.is_absolute():
        absolute = Path(path)
        if absolute.is_relative_to(root):
            relative = absolute.relative_to(root).as_posix()
            raise ToolFailure(
                f"path {path!r} is absolute; the catalog's paths are relative to the project "
                f"root: give {relative!r}"
            )
        if absolute.exists():
            raise ToolFailure(f"path {path!r} is outside the project root {root}")


def get_test_by_key(tools: RunService, key: str) -> TestCaseDetail:
    """One test case by its key."""
    from pytest_qbench.mcp.shared_catalog import open_project_catalog

    with open_project_catalog(tools.config) as catalog:
        return case_detail(catalog, key, tools.config.budget)


def find_similar_tests(
    tools: RunService,
    test: str | None = None,
    text: str | None = None,
    limit: int = 10,
    scope: SimilarityScope = "all",
    include_siblings: bool = False,
) -> SimilarTests:
    """Test cases like a given one, or like a text."""
    from pytest_qbench.mcp.shared_catalog import open_project_catalog

    with open_project_catalog(tools.config) as catalog:
        budget = tools.config.budget
        return similar(catalog, test, text, limit, scope, budget, include_siblings)
