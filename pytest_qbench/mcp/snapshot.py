"""What the catalog tools keep in memory between calls of one server process.

Reading every case's test function, labels and vectors from SQLite on each call cost most of a
search at 20 000 cases (0.4 s for the vectors alone). A ``Snapshot`` holds them, built on the
first call and kept until the catalog's generation changes: every ingest that adds, updates or
removes a case, or stores vectors, gives the catalog a new generation (in the same
transaction), so a call after it, in this process or another one, reads the catalog again.
Only the catalog's file (or its shared database) is a key: the empty catalog of a missing file
is never kept.

Facets count each label's matching cases as one AND of two integers used as bit sets (the
cases holding the label, the matching cases) and a bit count: counting every label of every
matching case in Python cost more than the ranking at 20 000 cases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from pytest_qbench.mcp.catalog import LABEL_KINDS
from pytest_qbench.mcp.catalog import Catalog


@dataclass
class Matrix:
    """The vectors of one model: case ids (ascending) and one row each per scope."""

    ids: Any
    """``numpy`` array of case ids."""
    scopes: dict[str, Any]
    """``docs``, ``steps`` (zero rows for cases without steps) and ``all`` matrices."""


@dataclass
class Snapshot:
    """The catalog's cases as the ranking needs them, for one generation."""

    generation: str
    functions: dict[int, str]
    """Case id -> its test function (``FUNCTION_SQL``)."""
    order: dict[int, int]
    """Case id -> its place when BM25 ties (path or folder, then uid)."""
    ids: dict[str, int]
    """Uid -> case id."""
    family: dict[int, int]
    """Case id -> a number for its test function (counting in integers is cheaper)."""
    facet_cases: list[int]
    """For each label or priority (number), the cases holding it: bit ``case id`` set."""
    facet_values: list[tuple[str, str, str]]
    """``(kind, value lowercased, value as first stored)`` of each number."""
    frequencies: dict[str, int] = field(default_factory=dict)
    """Word -> cases that hold it, filled as queries ask."""
    matrices: dict[str, Matrix] = field(default_factory=dict)
    """Model -> its vectors, loaded when a ranking first needs them."""

    def documents_with(self, catalog: Catalog, word: str) -> int:
        """Cases holding ``word``, counted once per generation."""
        if word not in self.frequencies:
            self.frequencies[word] = catalog.documents_with(word)
        return self.frequencies[word]

    def matrix(self, catalog: Catalog, model: str) -> Matrix | None:
        """The vectors of ``model``, read once per generation; ``None`` when there are none."""
        if model not in self.matrices:
            rows = catalog.vector_rows(model)
            if not rows:
                return None
            self.matrices[model] = _matrix(rows)
        return self.matrices[model]

    def facets(self, case_ids: Iterable[int]) -> dict[str, dict[str, int]]:
        """The 10 commonest tags, platforms, markers and priorities among these cases
        (labels compared case-insensitively, as the catalog stores them)."""
        # one bit per case: each value's count is one AND and a bit count, far cheaper in
        # Python than counting every label of every matching case
        matching = bits(case_ids)
        counts = [
            (code, (matching & cases).bit_count()) for code, cases in enumerate(self.facet_cases)
        ]
        counts = [item for item in counts if item[1]]
        values = self.facet_values
        found: dict[str, dict[str, int]] = {kind: {} for kind in (*LABEL_KINDS, "priority")}
        for code, n in sorted(counts, key=lambda item: (-item[1], values[item[0]][1])):
            kind, _folded, spelled = values[code]
            if len(found[kind]) < 10:
                found[kind][spelled] = n
        return found


def bits(case_ids: Iterable[int]) -> int:
    """An integer with bit ``case id`` set for each of ``case_ids``."""
    ids = list(case_ids)
    found = bytearray((max(ids) >> 3) + 1 if ids else 0)
    for case_id in ids:
        found[case_id >> 3] |= 1 << (case_id & 7)
    return int.from_bytes(found, "little")


LOADS = Counter[str]()
"""Snapshots built, per catalog file (what the tests check: kept between calls, built again
after an ingest)."""
_KEPT: dict[str, Snapshot] = {}


def snapshot(catalog: Catalog) -> Snapshot:
    """The catalog's snapshot: the kept one while the generation is the same."""
    generation = catalog.generation()
    key = catalog.key
    kept = _KEPT.get(key) if key is not None else None
    if kept is not None and kept.generation == generation:
        return kept
    made = _load(catalog, generation)
    if key is not None:
        _KEPT[key] = made
        LOADS[key] += 1
    return made


def _load(catalog: Catalog, generation: str) -> Snapshot:
    rows = catalog.index_rows()
    codes: dict[tuple[str, str], int] = {}
    values: list[tuple[str, str, str]] = []
    holders: list[list[int]] = []

    def code(kind: str, value: str) -> int:
        folded = (kind, value.lower() if kind != "priority" else value)
        if folded not in codes:
            codes[folded] = len(values)
            values.append((*folded, value))
            holders.append([])
        return codes[folded]

    for case_id, kind, value in catalog.label_rows():
        holders[code(kind, value)].append(case_id)
    for case_id, _f, _uid, priority in rows:
        if priority is not None:
            holders[code("priority", priority)].append(case_id)
    functions = {case_id: function for case_id, function, _uid, _p in rows}
    numbers = {name: n for n, name in enumerate(dict.fromkeys(functions.values()))}
    return Snapshot(
        generation=generation,
        functions=functions,
        family={case_id: numbers[name] for case_id, name in functions.items()},
        order={row[0]: place for place, row in enumerate(rows)},
        ids={uid: case_id for case_id, _f, uid, _p in rows},
        facet_cases=[bits(cases) for cases in holders],
        facet_values=values,
    )


def _matrix(rows: list[tuple[int, bytes, bytes | None]]) -> Matrix:
    import numpy as np

    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    docs = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
    docs = docs.reshape(len(rows), -1)
    blank = bytes(docs.shape[1] * 4)
    steps = np.frombuffer(b"".join(row[2] or blank for row in rows), dtype=np.float32)
    steps = steps.reshape(len(rows), -1)
    both = docs + steps
    norms = np.linalg.norm(both, axis=1, keepdims=True)
    both = both / np.where(norms == 0, 1, norms)
    return Matrix(ids, {"docs": docs, "steps": steps, "all": both.astype(np.float32)})
