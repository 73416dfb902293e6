"""The node ids a run deselected, stored once per distinct set (schema 5).

A suite that deselects the same tens of thousands of tests in every run (by its own
configuration: ``-m "not stress"``, a conftest) would otherwise store them all again per run. A
set is keyed by its digest (SHA-256 of its sorted ids); a run refers to it; a run that deselects
what an indexed run deselected adds one row of a few bytes. The set itself is stored
compressed (zlib, then base64, so that it is text in every engine).
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Iterable

from pytest_qbench.core.records import dataclass


@dataclass(frozen=True)
class DeselectionSet:
    """A set of node ids, as stored."""

    digest: str
    count: int
    nodeids: list[str]
    """Sorted, without duplicates."""

    @classmethod
    def of(cls, nodeids: Iterable[str]) -> DeselectionSet:
        """The set of ``nodeids``."""
        ordered = sorted(set(nodeids))
        digest = hashlib.sha256("\n".join(ordered).encode("utf-8", "surrogatepass")).hexdigest()
        return cls(digest, len(ordered), ordered)

    def encoded(self) -> str:
        """The ids, compressed, as text."""
        raw = "\n".join(self.nodeids).encode("utf-8", "surrogatepass")
        return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def decode(text: str) -> list[str]:
    """The node ids of an encoded set (``DeselectionSet.encoded``)."""
    raw = zlib.decompress(base64.b64decode(text)).decode("utf-8", "surrogatepass")
    return raw.split("\n") if raw else []
