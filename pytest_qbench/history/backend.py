"""What the history code needs from a database: the boundary a second backend implements.

``SQLiteIndex`` (``sqlite.py``) is the embedded default. A PostgreSQL backend provides the same
methods over its driver; the statements in ``sql.py`` are shared.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Protocol
from typing import TypeVar


T = TypeVar("T")
Row = tuple[Any, ...]


class Cursor(Protocol):
    """The part of a DB-API cursor the history code uses (``?`` placeholders)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any:
        """Run one statement."""

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement for each parameter set."""

    def fetchone(self) -> Any:
        """The next row, or ``None``."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""


class Index(Protocol):
    """A history index: transactions over a cursor, and the one engine-specific insert."""

    location: str
    """Where the index is (a file path, or a URL without its password)."""

    def write(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in one write transaction, retried as a whole while the index is busy."""

    def read(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` on one consistent snapshot."""

    def insert_id(self, cursor: Cursor, sql: str, parameters: Sequence[Any]) -> int:
        """Run an ``INSERT`` into a table with an identity column; return the new row's id."""

    def close(self) -> None:
        """Release the connection."""
