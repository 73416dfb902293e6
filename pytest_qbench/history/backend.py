"""What the history code needs from a database: the boundary each backend implements.

``SQLiteIndex`` (``sqlite.py``) is the embedded default; ``PostgresIndex`` (``postgres.py``) the
shared one. Both run the statements of ``sql.py``, and create them with ``build_schema``.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Protocol
from typing import TypeVar

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.history import sql


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

    def claim(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in one short write transaction that does not wait for the writers'
        lock (a queue's claims: rows it selects with ``row_lock`` are locked for it)."""

    row_lock: str
    """What a ``SELECT`` appends to lock the rows it returns and skip rows another
    transaction holds (PostgreSQL: ``FOR UPDATE SKIP LOCKED``; SQLite: nothing, its write
    transactions run one at a time)."""

    clock: str
    """A ``SELECT`` of the database's clock, in seconds since the epoch: a queue's leases are
    read and written by it, never by the process's clock, which a test may have frozen
    (freezegun) and machines may disagree on."""

    def insert_id(self, cursor: Cursor, sql: str, parameters: Sequence[Any]) -> int:
        """Run an ``INSERT`` into a table with an identity column; return the new row's id."""

    def insert_rows(self, cursor: Cursor, sql: str, rows: Sequence[Row]) -> None:
        """Run an ``INSERT ... VALUES (?, ...)`` of one row for each of ``rows``, in as few
        statements as the engine runs best."""

    def insert_passed(self, cursor: Cursor, rows: Sequence[Row]) -> None:
        """Insert ``results`` rows of ``sql.PASSED_ROW`` values (no reruns, fingerprint or
        message), as ``insert_rows`` does."""

    def insert_passes(
        self,
        cursor: Cursor,
        run_ref: int,
        refs: Sequence[int],
        outcomes: Sequence[str] | None,
        times: Sequence[Sequence[float]],
    ) -> None:
        """Insert the ``results`` rows of run ``run_ref`` given as columns (the tests' ids,
        their outcomes, ``None`` when all passed, and their duration, setup and teardown
        ``times``), none with reruns, a fingerprint or a message; in their order."""

    def known_tests(self, cursor: Cursor, nodeids: list[str]) -> dict[str, int]:
        """The ids of those of ``nodeids`` (distinct, at most ``sql.BATCH``) in ``tests``."""

    def insert_tests(self, cursor: Cursor, nodeids: Sequence[str]) -> dict[str, int] | None:
        """Add those of ``nodeids`` (distinct, at most ``sql.BATCH``) that ``tests`` lacks;
        their ids when the engine knows them without a ``SELECT`` (each one was new), else
        ``None``."""

    def close(self) -> None:
        """Release the connection."""


def build_schema(
    cursor: Cursor, version: int | None, types: Mapping[str, str], where: Path | str
) -> None:
    """Create the tables (``version`` is ``None``) or migrate them from ``version``, with the
    backend's column ``types`` (``sql.SCHEMA``'s placeholders); record the new version.

    Called in a write transaction, with the ``version`` read in it: another process may have
    created or migrated the tables since this one looked.

    Raises:
        HistoryError: a newer qbench has migrated the index meanwhile.
    """
    if version is not None and version >= sql.SCHEMA_VERSION:
        check_version(version, where, create=True)
        return
    if version is None:
        for statement in sql.SCHEMA:
            cursor.execute(statement.format_map(types))
        cursor.execute(sql.SET_VERSION, (str(sql.SCHEMA_VERSION),))
        return
    for step in range(version + 1, sql.SCHEMA_VERSION + 1):
        for statement in sql.MIGRATIONS[step]:
            cursor.execute(statement.format_map(types))
    cursor.execute(sql.UPDATE_VERSION, (str(sql.SCHEMA_VERSION),))


def check_version(version: int | None, where: Path | str, create: bool) -> None:
    """Refuse an index this qbench cannot read or should not create.

    Raises:
        HistoryError: the index is newer than this qbench, or has no tables and ``create`` is off.
    """
    if version is not None and version > sql.SCHEMA_VERSION:
        raise HistoryError(
            f"{where} has index schema version {version}; this qbench knows up to "
            f"{sql.SCHEMA_VERSION}. Upgrade pytest-qbench, or delete the index and rebuild it "
            "with 'qbench index'",
            slug="index-newer",
        )
    if version is None and not create:
        raise HistoryError(
            f"{where} holds no qbench index yet; run 'qbench index' to build it",
            slug="index-missing",
        )
