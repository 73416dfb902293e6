"""The shared backend: the history index in a PostgreSQL database, through psycopg 3.

Imported only when a ``postgresql://`` URL is configured (``database.open_index``), so psycopg
is needed only then (the ``postgres`` extra). The tables live in the schema ``qbench`` of the
database, created on first use, so that their plain names (``runs``, ``tests``, ...) never meet
another application's.

Several CI machines may finish their runs at the same moment, while others read. The index stays
whole and loses no run:

- every write is one transaction that first takes a transaction-level advisory lock, so qbench's
  writers run one after the other, as SQLite's ``BEGIN IMMEDIATE`` makes them: no deadlock
  between them, no test inserted twice, no retention deleting a test another writer is adding.
  ``COMMIT`` or ``ROLLBACK`` frees the lock, and so does the end of a session whose client died;
- writes run in ``READ COMMITTED``, so each statement after the lock sees every run committed
  before it; reads run in ``REPEATABLE READ READ ONLY``: one snapshot, never blocked by a writer
  nor blocking one;
- a serialization failure or a deadlock (with other clients of the database) and a lost
  connection retry the whole transaction with a random back-off. Indexing a run again replaces
  it, so retrying a commit whose acknowledgement was lost is harmless;
- the lock waits at most what is left of ``wait`` (``lock_timeout``), then the write gives up
  with a clear error and changes nothing;
- creating or migrating the tables happens under a session-level advisory lock of its own, in a
  transaction begun once that lock is held: machines starting on an empty database at the same
  time create the tables once, each later one seeing them (a transaction that was already open
  while another session created them would still resolve names in its older view of the
  catalog).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any
from typing import TypeVar

import psycopg
from psycopg import errors

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import build_schema
from pytest_qbench.history.backend import check_version
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.history.dburl import LOCAL
from pytest_qbench.history.dburl import URL_HINT
from pytest_qbench.history.dburl import redact


T = TypeVar("T")
SCHEMA = "qbench"
"""The PostgreSQL schema holding the tables."""
TYPES = {
    "identity": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    "ref": "BIGINT",
    "key": 'TEXT COLLATE "C"',
}
"""``sql.SCHEMA``'s column types. ``C`` collation: sorted and compared byte by byte, as SQLite
does, whatever the database's locale."""
EXTRA_SCHEMA = ("CREATE INDEX metrics_by_test ON metrics (test_ref)",)
"""PostgreSQL checks the foreign keys that SQLite leaves unchecked: deleting a test looks for
its metric rows, which this index finds."""
WRITE_LOCK = 0x716265_6E6368
"""Key of the advisory lock that serialises writers ("qbench" in ASCII)."""
SCHEMA_LOCK = WRITE_LOCK + 1
"""Key of the advisory lock held while the tables are created or migrated."""
# A read of several statements sees one snapshot, though writers commit meanwhile; writers are
# serialised by WRITE_LOCK already, so READ COMMITTED is enough for them and never fails them
# with serialization errors.
READ_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
WRITE_BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED"
DEFAULT_WAIT = 120.0
"""Seconds a transaction is retried for, lock waits included, before giving up."""
CONNECT_TIMEOUT = 10
"""Seconds a connection attempt takes at most (unless the URL or PGCONNECT_TIMEOUT says)."""
_RETRIED = (errors.SerializationFailure, errors.DeadlockDetected)
_IN_LIST = re.compile(r"\bIN \((\?(?:,\s*\?)*)\)")
_INSERT = re.compile(
    r"\s*INSERT INTO (\w+)\s*\(([\w\s,]+)\)\s*VALUES\s*\([?,\s]+\)(.*)", re.DOTALL | re.IGNORECASE
)


class PostgresIndex:
    """The history index in a PostgreSQL database (implements ``backend.Index``)."""

    def __init__(self, url: str, *, create: bool = False, wait: float = DEFAULT_WAIT) -> None:
        """Connect to the database of ``url``; with ``create``, make the tables when missing.

        Raises:
            HistoryError: the URL is malformed, the server cannot be reached or refuses the
                user, the tables are missing (without ``create``), or of a newer schema.
        """
        self.url = url
        self.location = redact(url)
        self.wait = wait
        self._secret = _password(url)
        self._conn = self._connect()
        try:
            self._ensure_schema(create)
        except BaseException:
            self._conn.close()
            raise

    # --- backend.Index ---------------------------------------------------------------------

    def write(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in one transaction holding the writers' lock, retried as a whole on a
        serialization failure, a deadlock or a lost connection."""
        return self._retrying(lambda deadline: self._transaction(work, WRITE_BEGIN, deadline))

    def read(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` on one snapshot (a read-only ``REPEATABLE READ`` transaction)."""
        return self._retrying(lambda _deadline: self._transaction(work, READ_BEGIN, None))

    row_lock = " FOR UPDATE SKIP LOCKED"
    """Rows a claim selects are locked for it; rows another claim holds are skipped."""

    clock = "SELECT extract(epoch FROM clock_timestamp())::float8"
    """The server's clock (``backend.Index.clock``): one clock for every machine."""

    def claim(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in a ``READ COMMITTED`` transaction without the writers' lock: a queue
        machine claiming its next unit never waits for a run being indexed."""
        return self._retrying(lambda _deadline: self._transaction(work, WRITE_BEGIN, None))

    def insert_id(self, cursor: Cursor, sql_text: str, parameters: Sequence[Any]) -> int:
        """``INSERT`` a row and return its identity column (``RETURNING id``)."""
        cursor.execute(f"{sql_text} RETURNING id", parameters)
        return int(cursor.fetchone()[0])

    def insert_rows(self, cursor: Cursor, sql_text: str, rows: Sequence[Sequence[Any]]) -> None:
        """The rows as one JSON parameter (``_PgCursor.executemany``)."""
        cursor.executemany(sql_text, rows)

    def insert_passed(self, cursor: Cursor, rows: Sequence[Sequence[Any]]) -> None:
        """The rows as whole ``sql.INSERT_RESULT`` rows, in one JSON parameter."""
        self.insert_rows(cursor, sql.INSERT_RESULT, [sql.whole_result_row(row) for row in rows])

    def insert_passes(
        self,
        cursor: Cursor,
        run_ref: int,
        refs: Sequence[int],
        outcomes: Sequence[str] | None,
        times: Sequence[Sequence[float]],
    ) -> None:
        """The columns as whole ``sql.INSERT_RESULT`` rows, in one JSON parameter."""
        kinds = repeat("passed") if outcomes is None else outcomes
        rows = [
            (run_ref, ref, outcome, duration, 0, 0, None, None, before, after)
            for ref, outcome, duration, before, after in zip(refs, kinds, *times, strict=False)
        ]
        self.insert_rows(cursor, sql.INSERT_RESULT, rows)

    def known_tests(self, cursor: Cursor, nodeids: list[str]) -> dict[str, int]:
        """The ids of those of ``nodeids`` in ``tests`` (one array parameter: ``_as_arrays``)."""
        cursor.execute(sql.find_tests(len(nodeids)), nodeids)
        return {nodeid: ref for ref, nodeid in cursor.fetchall()}

    def insert_tests(self, cursor: Cursor, nodeids: Sequence[str]) -> dict[str, int] | None:
        """The node ids ``tests`` lacks inserted; ``None``: the caller selects their ids (an
        identity's values need not follow each other)."""
        self.insert_rows(cursor, sql.INSERT_NEW_TEST, [(nodeid,) for nodeid in nodeids])
        return None

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # --- connection and transactions -------------------------------------------------------

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        try:
            given = psycopg.conninfo.conninfo_to_dict(self.url)
        except psycopg.ProgrammingError as exc:
            raise HistoryError(
                f"{self.location} is not a valid PostgreSQL URL: {self._one_line(exc)}; give "
                f"{URL_HINT}",
                slug="db-url",
            ) from None
        defaults: dict[str, Any] = {}
        if "connect_timeout" not in given and not os.environ.get("PGCONNECT_TIMEOUT"):
            defaults["connect_timeout"] = CONNECT_TIMEOUT
        if "application_name" not in given and not os.environ.get("PGAPPNAME"):
            defaults["application_name"] = "pytest-qbench"
        try:
            conn = psycopg.connect(self.url, autocommit=True, **defaults)
            conn.execute(f"SET search_path TO {SCHEMA}")
        except psycopg.Error as exc:
            raise HistoryError(
                f"cannot connect to the history database {self.location}: "
                f"{self._one_line(exc)}; check that the server runs and accepts connections "
                "from this machine, the user, the password (PGPASSWORD or ~/.pgpass) and the "
                f"database name, or set {ENV_VAR}={LOCAL} to use the local index",
                slug="db-connect",
            ) from None
        return conn

    def _transaction(self, work: Callable[[Cursor], T], begin: str, lock_by: float | None) -> T:
        if self._conn.closed:  # lost in an earlier attempt
            self._conn = self._connect()
        with self._conn.cursor() as raw:
            raw.execute(begin)
            try:
                if lock_by is not None:
                    _lock(raw, lock_by)
                result = work(_PgCursor(raw))
                raw.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        return result

    def _rollback(self) -> None:
        if self._conn.closed:
            return
        try:
            if self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self._conn.execute("ROLLBACK")
        except psycopg.Error:  # the connection broke meanwhile: the server rolls back
            self._conn.close()

    def _retrying(self, attempt: Callable[[float], T]) -> T:
        deadline = time.monotonic() + self.wait
        pause = 0.05
        while True:
            try:
                return attempt(deadline)
            except errors.LockNotAvailable:
                raise self._busy("another qbench run held the write lock") from None
            except _RETRIED:
                pass
            except psycopg.OperationalError as exc:
                if not self._conn.closed:
                    raise self._error(exc) from None
            except psycopg.Error as exc:
                raise self._error(exc) from None
            if time.monotonic() + pause > deadline:
                raise self._busy("transactions kept failing (serialization failures, deadlocks)")
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, 1.0)

    # --- errors ----------------------------------------------------------------------------

    def _busy(self, what: str) -> HistoryError:
        return HistoryError(
            f"{self.location}: {what} for {self.wait:.0f}s; try again when the other qbench "
            "runs or commands have finished",
            slug="index-locked",
        )

    def _error(self, exc: psycopg.Error) -> HistoryError:
        if isinstance(exc, errors.InsufficientPrivilege):
            return HistoryError(
                f"{self.location}: {self._one_line(exc)}; the database user needs CREATE on the "
                f"database (or an existing schema {SCHEMA} it may create in) the first time, then "
                f"SELECT, INSERT, UPDATE and DELETE on the tables of schema {SCHEMA} to record "
                "runs (SELECT to read them)",
                slug="db-permission",
            )
        if isinstance(exc, errors.DiskFull):
            return HistoryError(
                f"{self.location}: the database server's disk is full ({self._one_line(exc)}): "
                "nothing was written; free space on the server (or 'qbench gc' old runs), then "
                "run again",
                slug="disk-full",
            )
        return HistoryError(
            f"{self.location}: {self._one_line(exc)} ({type(exc).__name__})", slug="db-error"
        )

    def _one_line(self, exc: BaseException) -> str:
        """The driver's message on one line, without the password."""
        text = " ".join(str(exc).split())
        return text.replace(self._secret, "***") if self._secret else text

    # --- schema ----------------------------------------------------------------------------

    def _ensure_schema(self, create: bool) -> None:
        version = self.read(_version)
        if version == sql.SCHEMA_VERSION:
            return
        check_version(version, self.location, create)
        with self._schema_lock():
            self.write(self._create_or_migrate)

    @contextlib.contextmanager
    def _schema_lock(self) -> Iterator[None]:
        try:
            wait_ms = max(1, int(self.wait * 1000))
            self._conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{wait_ms}ms",))
            self._conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            self._conn.execute("RESET lock_timeout")
        except errors.LockNotAvailable:
            raise self._busy("another qbench held the lock for creating the tables") from None
        except psycopg.Error as exc:
            raise self._error(exc) from None
        try:
            yield
        finally:
            with contextlib.suppress(psycopg.Error):  # a closed session has released it
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))

    def _create_or_migrate(self, cursor: Cursor) -> None:
        version = _version(cursor)  # another machine may have done it meanwhile
        if version is None:
            cursor.execute("SELECT 1 FROM pg_namespace WHERE nspname = ?", (SCHEMA,))
            if cursor.fetchone() is None:  # IF NOT EXISTS would need CREATE on the database
                cursor.execute(f"CREATE SCHEMA {SCHEMA}")
        build_schema(cursor, version, TYPES, self.location)
        if version is None:
            for statement in EXTRA_SCHEMA:
                cursor.execute(statement)


class _PgCursor:
    """A psycopg cursor that takes the shared statements' ``?`` placeholders."""

    def __init__(self, raw: psycopg.Cursor[tuple[Any, ...]]) -> None:
        self._raw = raw

    def execute(self, sql_text: str, parameters: Sequence[Any] = (), /) -> _PgCursor:
        values = [_text_safe(value) for value in parameters]
        if _IN_LIST.search(sql_text):
            sql_text, values = _as_arrays(sql_text, values)
        self._raw.execute(_placeholders(sql_text), values)
        return self

    def executemany(self, sql_text: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> None:
        """An ``INSERT ... VALUES (?, ...)`` of many rows as one statement whose rows travel as
        one JSON parameter (psycopg's statement per row costs 40 µs of Python per row; a
        statement with thousands of placeholders, as much to parse); others row by row."""
        rows = [tuple(map(_text_safe, row)) for row in seq_of_parameters]
        insert = _INSERT.match(sql_text)
        if insert is not None and rows:
            table, columns, rest = insert.groups()
            names = [name.strip() for name in columns.split(",")]
            try:
                payload = json.dumps(
                    [dict(zip(names, row, strict=True)) for row in rows], allow_nan=False
                )
            except ValueError:  # NaN or infinity: JSON has no such numbers
                pass
            else:
                from_json = f"json_populate_recordset(NULL::{table}, ?::json)"
                text = f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {from_json}{rest}"
                self._raw.execute(_placeholders(text), (payload,))
                return
        self._raw.executemany(_placeholders(sql_text), rows)

    def fetchone(self) -> Any:
        return self._raw.fetchone()

    def fetchall(self) -> list[Any]:
        return self._raw.fetchall()


def _as_arrays(sql_text: str, values: list[Any]) -> tuple[str, list[Any]]:
    """Each ``IN (?, ?, ...)`` as ``= ANY(?)`` with its values as one array parameter: one
    statement text whatever the count, which psycopg parses once and the server prepares."""
    pieces, collapsed, done, used = [], [], 0, 0
    for found in _IN_LIST.finditer(sql_text):
        before = sql_text[done : found.start()]
        ahead = before.count("?")
        collapsed += values[used : used + ahead]
        width = found.group(1).count("?")
        collapsed.append(values[used + ahead : used + ahead + width])
        pieces.append(before + "= ANY(?)")
        done, used = found.end(), used + ahead + width
    pieces.append(sql_text[done:])
    return "".join(pieces), collapsed + values[used:]


def _text_safe(value: Any) -> Any:
    """PostgreSQL text cannot hold NUL, which a test's output or message may: U+FFFD instead."""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


@lru_cache(maxsize=256)
def _placeholders(sql_text: str) -> str:
    """``?`` to psycopg's ``%s`` (``sql.py`` has no ``?`` or ``%`` inside its literals)."""
    return sql_text.replace("%", "%%").replace("?", "%s")


def _lock(raw: psycopg.Cursor[tuple[Any, ...]], until: float) -> None:
    """Take the writers' lock, waiting at most until ``until`` (0 would mean forever)."""
    wait_ms = max(1, int((until - time.monotonic()) * 1000))
    raw.execute("SELECT set_config('lock_timeout', %s, true)", (f"{wait_ms}ms",))
    raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))


def _version(cursor: Cursor) -> int | None:
    # From the catalog, which every user may read: for a user without USAGE on the schema,
    # PostgreSQL leaves the schema out of the search path, and meta would seem missing.
    cursor.execute(
        "SELECT has_schema_privilege(n.oid, 'USAGE') FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = ? AND c.relname = 'meta'",
        (SCHEMA,),
    )
    found = cursor.fetchone()
    if found is None:
        return None
    if not found[0]:
        raise errors.InsufficientPrivilege(f"permission denied for schema {SCHEMA}")
    cursor.execute(sql.GET_VERSION)
    row = cursor.fetchone()
    return int(row[0]) if row else None


def _password(url: str) -> str | None:
    try:
        password = psycopg.conninfo.conninfo_to_dict(url).get("password")
    except psycopg.Error:
        return None
    return str(password) if password else None
