"""The embedded backend: ``<qbench dir>/index.sqlite`` through the standard library's sqlite3.

Several pytest processes may finish at the same moment (xdist is one process, but CI jobs
sharing a workspace, or two terminals, are not). The index stays whole and loses no run:

- WAL journal mode: readers never block the writer, nor the writer the readers;
- every write is one ``BEGIN IMMEDIATE`` transaction, so a writer takes the write lock before
  it reads anything and never has to upgrade a read lock (the deadlock SQLite answers with an
  immediate "database is locked");
- a busy index is waited for (``busy_timeout``), and the whole transaction is retried with a
  random back-off until ``wait`` seconds have passed.

WAL needs a local file system (not NFS or SMB), as SQLite documents.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sqlite3
import time
import zlib
from collections.abc import Callable
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any
from typing import TypeVar
from urllib.parse import quote

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import build_schema
from pytest_qbench.history.backend import check_version


T = TypeVar("T")
TYPES = {"identity": "INTEGER PRIMARY KEY", "ref": "INTEGER", "key": "TEXT"}
"""``sql.SCHEMA``'s column types (SQLite compares text byte by byte)."""
BUSY_TIMEOUT = 5.0
"""Seconds SQLite itself waits for a lock before one attempt fails."""
DEFAULT_WAIT = 120.0
"""Seconds a transaction is retried for, in all, before giving up."""
_BUSY_WORDS = ("locked", "busy")
SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN = 10, 13, 14
"""SQLite's primary result codes (``sqlite3`` has them as constants from Python 3.11 only)."""
CACHE_KIB = 512
"""SQLite's page cache per connection (its default is 2 000 KiB). Indexing a run holds the
pages it writes until the commit: beyond this many, they spill to the WAL file instead of
growing the test run's peak memory (10 000 results: about 2 MiB less); the operating system
caches the file anyway."""
FULL_MARGIN = 1 << 20
"""Free bytes under which an I/O error of the index is taken for a full disk."""
KEPT_EMPTY = "index-empty-{:08x}.bin"
"""A new index's file as creating its tables leaves it, kept in ``$XDG_CACHE_HOME/qbench``
(``~/.cache/qbench``) under a key of the tables' statements and SQLite's version: the next new
index is a copy of it (1.5 M instructions, against 13.6 M for SQLite to parse and run the
statements). Its first four bytes are the CRC-32 of the rest; a damaged or missing copy is
ignored, and the tables are created as before (and the copy made again)."""
_SQLITE_HEADER = b"SQLite format 3\x00"
_FREE_IDS = 1 << 62
"""Ids of new rows below it follow each other; SQLite picks ids at random only once a table
holds the largest one (``2**63 - 1``)."""


class SQLiteIndex:
    """The history index in one SQLite file (implements ``backend.Index``)."""

    def __init__(self, path: Path, *, create: bool = False, wait: float = DEFAULT_WAIT) -> None:
        """Open the index at ``path``; with ``create``, make it (and its tables) when missing.

        Raises:
            HistoryError: the file is missing (without ``create``), not an index, damaged,
                or of a newer schema than this qbench knows.
        """
        self.path = path
        self.location = str(path)
        self.wait = wait
        if path.exists() and not path.is_file():
            raise HistoryError(
                f"{path} is not a file (a directory?), so it cannot be the index; move it "
                "away, then run 'qbench index' to build the index from the run directories",
                slug="index-broken",
            )
        if not create and not path.is_file():
            raise HistoryError(
                f"no history index at {path}; run pytest with qbench to create it, or "
                f"'qbench index' to index the run directories already there",
                slug="index-missing",
            )
        if create and not path.exists():
            _copy_kept_empty(path)
        try:
            self._conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot open {path}: {exc}", slug="index-broken") from None
        try:
            self._retrying(self._refuse_foreign)  # before WAL mode changes the file
            self._retrying(self._set_pragmas)
            self._retrying(lambda: self._ensure_schema(create))
        except HistoryError as exc:
            self._conn.close()
            if create or exc.slug not in _NOT_WRITABLE or not self._open_read_only():
                raise
        except BaseException:
            self._conn.close()
            raise

    read_only = False
    """Opened read-only (``mode=ro``): this user may not write the index or its directory, so a
    command that only reads (``qbench runs``, ``history``, ``flaky``, MCP ``list_runs``) reads
    it as it is; a write fails with ``index-read-only``."""

    # --- backend.Index ---------------------------------------------------------------------

    def write(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction, retried while the index is busy."""
        return self._retrying(lambda: self._transaction(work, "BEGIN IMMEDIATE"))

    def read(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in one read transaction (one snapshot of the index)."""
        return self._retrying(lambda: self._transaction(work, "BEGIN"))

    row_lock = ""
    """SQLite's write transactions run one at a time: no row locks needed."""

    clock = "SELECT (julianday('now') - 2440587.5) * 86400.0"
    """The C library's clock (``backend.Index.clock``), which no Python test can patch."""

    def claim(self, work: Callable[[Cursor], T]) -> T:
        """A write transaction (``BEGIN IMMEDIATE``, as ``write``)."""
        return self.write(work)

    def insert_id(self, cursor: Cursor, sql_text: str, parameters: Sequence[Any]) -> int:
        """``INSERT`` a row; its ``INTEGER PRIMARY KEY`` is the cursor's ``lastrowid``."""
        cursor.execute(sql_text, parameters)
        row_id = getattr(cursor, "lastrowid", None)
        if not isinstance(row_id, int):  # cannot happen for an INSERT that succeeded
            raise HistoryError(f"{self.path}: the insert returned no row id", slug="index-broken")
        return row_id

    def insert_rows(self, cursor: Cursor, sql_text: str, rows: Sequence[Sequence[Any]]) -> None:
        """The rows in statements of many rows each (``sql.many_rows``): a statement run per
        row costs SQLite's preparing, binding and resetting again each time (14 k instructions
        of a result's 58 k)."""
        if not rows:
            return
        for part in sql.batches(rows, sql.rows_per_insert(len(rows[0]))):
            cursor.execute(sql.many_rows(sql_text, len(part)), list(chain.from_iterable(part)))

    def insert_passed(self, cursor: Cursor, rows: Sequence[Sequence[Any]]) -> None:
        """``sql.INSERT_PASSED_RESULT``'s rows, many a statement."""
        self.insert_rows(cursor, sql.INSERT_PASSED_RESULT, rows)

    def insert_passes(
        self,
        cursor: Cursor,
        run_ref: int,
        refs: Sequence[int],
        outcomes: Sequence[str] | None,
        times: Sequence[Sequence[float]],
    ) -> None:
        """The rows by ``sql.insert_passes``'s statement (the run's ``id``, and the outcome
        when all passed, written in it), many a statement, their values interleaved by
        ``zip`` (no tuple of Python a row)."""
        if outcomes is None:
            columns: tuple[Sequence[Any], ...] = (refs, *times)
            text = sql.insert_passes(run_ref, "passed")
        else:
            columns = (refs, outcomes, *times)
            text = sql.insert_passes(run_ref, None)
        count, width = len(refs), len(columns)
        per = sql.rows_per_insert(width)
        for start in range(0, count, per):
            part = [column[start : start + per] for column in columns] if count > per else columns
            rows = min(per, count - start)
            cursor.execute(
                sql.many_rows(text, rows), list(chain.from_iterable(zip(*part, strict=False)))
            )

    def known_tests(self, cursor: Cursor, nodeids: list[str]) -> dict[str, int]:
        """The ids of those of ``nodeids`` in ``tests``, in their order (``sql.find_test_ids``):
        the node ids' text is not read back."""
        cursor.execute(sql.find_test_ids(len(nodeids)), nodeids)
        found = cursor.fetchall()
        return {
            nodeid: row[0] for nodeid, row in zip(nodeids, found, strict=True) if row[0] is not None
        }

    def insert_tests(self, cursor: Cursor, nodeids: Sequence[str]) -> dict[str, int] | None:
        """The node ids ``tests`` lacks inserted by one statement; their ids, when every one
        was new, without selecting them (``None``: some were there, select them).

        A row inserted without an id gets the table's largest ``INTEGER PRIMARY KEY`` plus one
        (SQLite's documented rowid choice, short of the largest possible id), so one
        ``INSERT`` of many rows numbers them in order, the last one ``lastrowid``: 9.8 k
        instructions a new test less than a ``SELECT`` of them (issue 28). The two ends are
        checked (one statement of two rows); an id near the largest one (then SQLite picks
        ids at random) selects them as before.
        """
        count = len(nodeids)
        cursor.execute(sql.many_rows(sql.INSERT_NEW_TEST, count), list(nodeids))
        last = getattr(cursor, "lastrowid", None)
        if getattr(cursor, "rowcount", -1) != count or not isinstance(last, int):
            return None
        if not count <= last < _FREE_IDS:
            return None
        first = last - count + 1
        cursor.execute(sql.TESTS_AT, (first, last))
        if dict(cursor.fetchall()) != {first: nodeids[0], last: nodeids[-1]}:
            return None
        return dict(zip(nodeids, range(first, last + 1), strict=True))

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # --- internals -------------------------------------------------------------------------

    def _open_read_only(self) -> bool:
        """Open the index read-only (``mode=ro``), for a command that only reads it when this
        user may not write it or its directory; whether it could. Without a writable directory
        SQLite cannot make the shared-memory file a WAL index is read with: when no write-ahead
        log holds committed pages (none is there, or it is empty), the file holds the whole
        index, and is read as ``immutable``. An index of an older schema is refused: it would
        have to be migrated (a write) to be read.

        Raises:
            HistoryError: an index of another schema (``index-read-only``, ``index-newer``).
        """
        uri = f"file:{quote(str(self.path.absolute()))}?mode=ro"
        wal = Path(f"{self.path}-wal")
        for extra in ("", "&immutable=1"):
            if extra and _holds_pages(wal):
                return False
            try:
                conn = sqlite3.connect(uri + extra, uri=True, timeout=BUSY_TIMEOUT)
            except sqlite3.Error:
                continue
            conn.isolation_level = None
            try:
                self._conn = conn
                self._retrying(self._refuse_foreign)
                version = self._version(conn.cursor())
            except HistoryError:
                conn.close()
                continue
            except BaseException:
                conn.close()
                raise
            if version != sql.SCHEMA_VERSION:
                conn.close()
                check_version(version, self.path, create=False)
                raise HistoryError(
                    f"{self.path} is read-only and of index schema {version}: this qbench "
                    f"reads it once migrated to schema {sql.SCHEMA_VERSION}, which writes to "
                    "the index and its directory; make both writable (or run as their owner) "
                    "once, then it can be read-only again",
                    slug="index-read-only",
                )
            self.read_only = True
            return True
        return False

    def _transaction(self, work: Callable[[Cursor], T], begin: str) -> T:
        cursor = self._conn.cursor()
        cursor.execute(begin)
        try:
            result = work(cursor)
            cursor.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (a full disk or I/O error ends the
            # transaction), and a ROLLBACK outside one fails, hiding the real error
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        return result

    def _retrying(self, attempt: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.wait
        pause = 0.02
        while True:
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                busy = any(word in str(exc).lower() for word in _BUSY_WORDS)
                if not busy:
                    raise self._error(exc) from None
                if time.monotonic() + pause > deadline:
                    raise HistoryError(
                        f"{self.path} stayed locked by another process for {self.wait:.0f}s; "
                        "try again when the other qbench run or command has finished",
                        slug="index-locked",
                    ) from None
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from None
            # jitter: processes that collided on the lock retry apart, not together again
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, 0.5)

    def _error(self, exc: sqlite3.Error) -> HistoryError:
        code = _primary_code(exc)
        text = str(exc).lower()
        if "readonly" in text:  # a healthy index this user may not change
            return HistoryError(
                f"{self.path} is read-only ({exc}): qbench needs to write to the index and "
                "its directory to record a run or change the index (reading needs neither); "
                "make both writable, or run as their owner",
                slug="index-read-only",
            )
        if code == SQLITE_FULL or "disk is full" in text or (code == SQLITE_IOERR and self._full()):
            return HistoryError(
                f"the disk of {self.path} is full ({exc}): nothing was written, and the index "
                "is unchanged; free some space (qbench gc removes old runs), then run again",
                slug="disk-full",
            )
        if code in (SQLITE_IOERR, SQLITE_CANTOPEN):
            return HistoryError(
                f"{self.path} could not be read or written ({exc}); the index itself may be "
                "whole: check its disk and directory, then run again",
                slug="index-io",
            )
        return HistoryError(
            f"{self.path} is not a usable qbench index ({exc}); delete it and run "
            "'qbench index' to rebuild it from the run directories",
            slug="index-broken",
        )

    def _full(self) -> bool:
        """Whether the index's file system has (almost) no space left."""
        try:
            return shutil.disk_usage(self.path.parent).free < FULL_MARGIN
        except OSError:
            return False

    def _set_pragmas(self) -> None:
        self._conn.execute("PRAGMA journal_mode=WAL").fetchall()
        # NORMAL is durable across crashes of the process in WAL mode, and much faster than FULL.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")

    def _ensure_schema(self, create: bool) -> None:
        version = self._version(self._conn.cursor())
        if version == sql.SCHEMA_VERSION:
            return
        check_version(version, self.path, create)
        self.write(self._create_or_migrate)
        if version is None:
            _keep_empty()

    def _create_or_migrate(self, cursor: Cursor) -> None:
        build_schema(cursor, self._version(cursor), TYPES, self.path)

    def _refuse_foreign(self) -> None:
        """An SQLite database with tables but no qbench ``meta`` table is someone else's."""
        cursor = self._conn.cursor()
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
        tables = [str(row[0]) for row in cursor.fetchall()]
        if tables and "meta" not in tables:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise HistoryError(
                f"{self.path} is an SQLite database of something else (tables: {shown}), not a "
                "qbench index; move it away (qbench keeps its index there), then run "
                "'qbench index' to build the index from the run directories",
                slug="index-broken",
            )

    @staticmethod
    def _version(cursor: Cursor) -> int | None:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
        if cursor.fetchone() is None:
            return None
        cursor.execute(sql.GET_VERSION)
        row = cursor.fetchone()
        return int(row[0]) if row else None


_NOT_WRITABLE = ("index-read-only", "index-io")
"""The errors of opening an index this user may not write (the file read-only; its directory
read-only, where SQLite cannot make the WAL index's files): a command that only reads opens it
read-only instead (``SQLiteIndex._open_read_only``)."""


def _holds_pages(wal: Path) -> bool:
    """Whether the write-ahead log ``wal`` may hold committed pages the index file lacks."""
    try:
        return wal.stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _kept_empty() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    statements = [sqlite3.sqlite_version, str(sql.SCHEMA_VERSION), repr(TYPES), *sql.SCHEMA]
    return Path(base, "qbench", KEPT_EMPTY.format(zlib.crc32("\n".join(statements).encode())))


def _copy_kept_empty(path: Path) -> bool:
    """Make the new index at ``path`` a copy of the kept empty one (`KEPT_EMPTY`); ``False``
    when there is none, it is damaged, or ``path`` appeared meanwhile (never an error)."""
    try:
        data = _kept_empty().read_bytes()
    except OSError:
        return False
    body = data[4:]
    if int.from_bytes(data[:4], "big") != zlib.crc32(body) or not body.startswith(_SQLITE_HEADER):
        return False
    temporary = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # SQLite's mode
        with open(fd, "wb") as file:
            file.write(body)
            file.flush()
            os.fsync(file.fileno())
        os.link(temporary, path)  # never over an index another process made meanwhile
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return True


def _keep_empty() -> None:
    """Keep a new index's file, its tables created and nothing else, for `_copy_kept_empty`:
    made apart (never a copy of a live index), written whole or not at all."""
    target = _kept_empty()
    scratch = target.with_name(f"{target.name}.{os.getpid()}.sqlite")
    with contextlib.suppress(Exception):
        target.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(scratch, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            cursor = conn.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            build_schema(cursor, None, TYPES, scratch)
            cursor.execute("COMMIT")
        finally:
            conn.close()  # the WAL is checkpointed into the file and removed
        body = scratch.read_bytes()
        written = target.with_name(f"{target.name}.{os.getpid()}.new")
        written.write_bytes(zlib.crc32(body).to_bytes(4, "big") + body)
        os.replace(written, target)
    for leftover in (scratch, target.with_name(f"{target.name}.{os.getpid()}.new")):
        with contextlib.suppress(OSError):
            leftover.unlink()


def _primary_code(exc: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``exc`` (Python 3.11+), else ``None``; an I/O error is
    also recognised by its message before that."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    return SQLITE_IOERR if "disk i/o error" in str(exc).lower() else None
