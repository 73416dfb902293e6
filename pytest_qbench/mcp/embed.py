"""Text embeddings for the test catalog, from the optional ``[search]`` extra (``wordllama``).

WordLlama is a static embedding model (token vectors averaged, then projected) whose 256
dimension weights ship inside its wheel: no network, no server, no GPU. It is imported and
loaded on the first search or ingest that needs it, never when pytest or ``qbench-mcp``
starts. Without it the catalog ranks by BM25 alone.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from typing import Protocol


PROVIDER = "wordllama"
MODEL = "l2_supercat"
DIMENSIONS = 256
BATCH = 256
INSTALL_HINT = "BM25 only: install pytest-qbench[search] for embeddings and hybrid ranking"


class Embedder(Protocol):
    """Turns texts into unit vectors (``float32`` rows of ``dimensions`` values)."""

    def embed(self, texts: Sequence[str]) -> Any:
        """A ``numpy`` array, one unit-length row per text."""


@dataclass(frozen=True)
class EmbedderInfo:
    """What ``check_health`` says about the embedder, without loading it."""

    provider: str | None
    model: str | None
    dimensions: int


def available() -> bool:
    """Whether the ``[search]`` extra is installed (its package found, not imported)."""
    return importlib.util.find_spec("wordllama") is not None


def info() -> EmbedderInfo:
    """The embedder this installation uses, or none."""
    if available():
        return EmbedderInfo(PROVIDER, MODEL, DIMENSIONS)
    return EmbedderInfo(None, None, 0)


class _WordLlama:
    def __init__(self) -> None:
        from pathlib import Path

        import wordllama
        from wordllama import WordLlama

        # The wheel's own directory as the cache: wordllama 0.4 looks for its bundled
        # tokenizer under tokenizer/ but ships it in tokenizers/, which its cache layout
        # uses; downloads off, so a missing file is an error, never a network call.
        self._model = WordLlama.load(
            config=MODEL,
            dim=DIMENSIONS,
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = [
            self._model.embed(list(texts[i : i + BATCH]), norm=True)
            for i in range(0, len(texts), BATCH)
        ]
        return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, DIMENSIONS))


def embedder() -> Embedder | None:
    """The loaded model (loaded once per process), or ``None`` without the extra."""
    return _loaded() if available() else None


@cache
def _loaded() -> Embedder:
    return _WordLlama()
