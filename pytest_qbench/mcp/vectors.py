"""Vectors of the catalog's cases: embedding the ones that lack one, and cosine similarity.

Each case has two vectors: ``docs`` (its name split into words, title, description or
docstring, tags) and ``steps`` (its steps' actions and expected results; none without steps).
The ``all`` scope compares their normalized sum. Vectors are stored as ``float32`` bytes in the
catalog's ``vectors`` table; similarity is computed in this process (numpy, one matrix
product) over the matrices a ``Snapshot`` keeps between calls.
"""

from __future__ import annotations

from typing import Any

from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import split_words
from pytest_qbench.mcp.embed import MODEL
from pytest_qbench.mcp.embed import Embedder
from pytest_qbench.mcp.snapshot import Matrix


CHUNK = 2048
CANDIDATES = 200
"""Most similar cases that take part in a hybrid ranking (BM25 matches always do)."""
MIN_SIMILARITY = 0.25
"""Below this cosine a case is not taken as similar: with this model unrelated test texts
score about 0.05 to 0.2, texts about the same behaviour 0.5 and more."""


def docs_text(record: CaseRecord) -> str:
    """What a case is about: its name in words, title, description, tags."""
    name = split_words(record.nodeid.split("::", 1)[-1]) if record.nodeid else ""
    parts = (name, record.title or "", record.description or "", " ".join(record.tags))
    return "\n".join(part for part in parts if part)


def steps_text(record: CaseRecord) -> str:
    """What a case does: its steps and their expected results."""
    return "\n".join(f"{action} {expected or ''}".strip() for action, expected in record.steps)


def embed_missing(catalog: Catalog, embedder: Embedder) -> int:
    """Embed the cases without a vector (in batches); how many were embedded."""
    pending = catalog.unembedded(MODEL)
    for start in range(0, len(pending), CHUNK):
        chunk = pending[start : start + CHUNK]
        docs = embedder.embed([docs_text(record) for _id, record in chunk])
        with_steps = [i for i, (_id, record) in enumerate(chunk) if record.steps]
        steps = embedder.embed([steps_text(chunk[i][1]) for i in with_steps])
        step_rows = dict(zip(with_steps, steps, strict=True))
        catalog.store_vectors(
            MODEL,
            [
                (case_id, docs[i].tobytes(), _bytes(step_rows.get(i)))
                for i, (case_id, _record) in enumerate(chunk)
            ],
        )
    return len(pending)


def _bytes(vector: Any) -> bytes | None:
    return None if vector is None else bytes(vector.tobytes())


def scoped(docs: bytes, steps: bytes | None, scope: str) -> Any:
    """The vector a scope compares: ``docs``, ``steps`` or (``all``) their normalized sum."""
    import numpy as np

    doc = np.frombuffer(docs, dtype=np.float32)
    step = np.frombuffer(steps, dtype=np.float32) if steps is not None else None
    if scope == "docs":
        return doc
    if scope == "steps":
        return step if step is not None else np.zeros_like(doc)
    both = doc + step if step is not None else doc
    norm = float(np.linalg.norm(both))
    return both / norm if norm else both


def nearest(
    matrix: Matrix | None,
    vector: Any,
    allowed: set[int] | None,
    scope: str,
    exclude: int | None = None,
) -> list[tuple[int, float]]:
    """``(case id, cosine)`` of the cases most similar to ``vector`` among ``allowed`` (all
    when ``None``) but ``exclude``, best first, at most ``CANDIDATES``."""
    import numpy as np

    if matrix is None or vector is None or not len(matrix.ids):
        return []
    similarity = matrix.scopes[scope] @ np.asarray(vector, dtype=np.float32)
    if allowed is not None:
        keep = np.isin(matrix.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
        similarity = np.where(keep, similarity, -np.inf)
    if exclude is not None:
        similarity = np.where(matrix.ids == exclude, -np.inf, similarity)
    count = min(CANDIDATES, len(similarity))
    best = np.argpartition(-similarity, count - 1)[:count]
    # ties by case id, so the order never depends on argpartition's
    best = best[np.lexsort((matrix.ids[best], -similarity[best]))]
    return [
        (int(matrix.ids[i]), float(similarity[i])) for i in best if similarity[i] >= MIN_SIMILARITY
    ]


def query_vector(embedder: Embedder, text: str) -> Any:
    """The unit vector of a query text."""
    return embedder.embed([text])[0]


def reference_vector(catalog: Catalog, uid: str, scope: str) -> Any:
    """A stored case's vector for ``scope``, or ``None`` when it has none yet."""
    stored = catalog.vector_of(MODEL, uid)
    return None if stored is None else scoped(*stored, scope)
