"""The test catalog shared through PostgreSQL, when the history is (``qbench_db``).

The cases and their vectors live in the history database, in tables of their own
(``catalog_meta``, ``catalog_cases``, ``catalog_vectors`` in the schema ``qbench``, created by
the first ingest, with their own schema version), so every CI machine's ``ingest_tests`` and
every assistant's searches see one catalog. Vectors are a plain ``bytea`` column (``float32``
rows); similarity is computed in the process.

The ranking does not care which storage it reads: each process keeps a *mirror* of the shared
catalog, an in-memory SQLite catalog (``catalog.Catalog``, FTS5 included) holding the same rows
under the same ids. Each write that changes the catalog gives it the next *revision*, stored on
the rows it writes, and the ids of the cases it removed are kept (``catalog_removed``) with
it; a mirror behind reads only the rows of later revisions and the ids removed since (another
machine's ingest of one changed case costs a few rows, not the whole catalog). It is read whole
the first time, when the catalog was made anew (its *generation* differs), when it is older
than the removed ids kept (``KEPT_REVISIONS``), and from a catalog of version 1. BM25 is thus computed in the process by the same FTS5 as the local catalog's, and both storages
rank the same. Writes go to PostgreSQL in one transaction holding the history's writers' lock
(``PostgresIndex.write``), then to the mirror.

Fail closed: a database that cannot be reached or read is a ``ToolFailure`` naming the URL
(password hidden) and the fix, never an empty catalog. A database without qbench's tables yet
is an empty catalog (nothing was ingested).
"""

from __future__ import annotations

import atexit
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.catalog import FTS_COLUMNS
from pytest_qbench.mcp.catalog import LABEL_KINDS
from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import Counts
from pytest_qbench.mcp.catalog import delete_case
from pytest_qbench.mcp.catalog import fts_texts
from pytest_qbench.mcp.catalog import open_catalog
from pytest_qbench.mcp.catalog import prepare
from pytest_qbench.mcp.catalog import replace_plan


if TYPE_CHECKING:
    from pytest_qbench.history.backend import Cursor
    from pytest_qbench.history.postgres import PostgresIndex
    from pytest_qbench.mcp.config import ServerConfig


SCHEMA_VERSION = 2
"""Version of the shared catalog's tables (apart from the history's own): 1, the first; 2, each
row's ``revision`` and the removed cases' ids (``catalog_removed``), which a mirror follows. A
writer migrates a catalog of version 1 in place (``MIGRATION``); until then a reader reads it
whole, as version 1 did."""
KNOWN_VERSIONS = (1, SCHEMA_VERSION)
V1_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS catalog_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS catalog_cases (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        uid TEXT COLLATE "C" NOT NULL UNIQUE,
        source TEXT NOT NULL,
        record TEXT NOT NULL,
        digest TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS catalog_cases_source ON catalog_cases (source)",
    """CREATE TABLE IF NOT EXISTS catalog_vectors (
        case_id BIGINT PRIMARY KEY REFERENCES catalog_cases (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        docs BYTEA NOT NULL,
        steps BYTEA
    )""",
)
"""The tables of version 1."""
MIGRATION = (
    "ALTER TABLE catalog_cases ADD COLUMN revision BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE catalog_vectors ADD COLUMN revision BIGINT NOT NULL DEFAULT 0",
    "CREATE INDEX catalog_cases_revision ON catalog_cases (revision)",
    "CREATE INDEX catalog_vectors_revision ON catalog_vectors (revision)",
    """CREATE TABLE catalog_removed (
        case_id BIGINT NOT NULL,
        revision BIGINT NOT NULL
    )""",
    "CREATE INDEX catalog_removed_revision ON catalog_removed (revision)",
    "INSERT INTO catalog_meta VALUES ('revision', '0'), ('pruned', '0')",
    f"UPDATE catalog_meta SET value = '{SCHEMA_VERSION}' WHERE name = 'schema_version'",
)
"""Version 1 to 2: the rows already there are of revision 0."""
KEPT_REVISIONS = 1000
"""The removed ids of the last this many revisions are kept (``pruned``: the revision up to
which they were dropped); a mirror older than that reads the catalog whole."""
FIX = (
    "check that the server runs and the user may read the schema qbench, or set "
    "QBENCH_DB=sqlite to use the local catalog"
)
_LOCK = threading.RLock()
"""One catalog operation at a time per process: the mirror's connection is shared."""


State = tuple[str, int | None]
"""A catalog's generation (made anew with its tables) and revision (``None``: version 1, whose
generation changed with each write)."""


@dataclass
class Mirror:
    """The in-memory copy of one shared catalog, at one state."""

    state: State
    conn: sqlite3.Connection


_MIRRORS: dict[str, Mirror] = {}
"""URL -> its mirror, kept between calls."""
_INDEXES: dict[str, PostgresIndex] = {}
"""URL -> the process's connection to it, kept between calls."""


class SharedCatalog(Catalog):
    """The catalog in a PostgreSQL database, read through its in-memory mirror."""

    def __init__(self, index: PostgresIndex, mirror: Mirror) -> None:
        super().__init__(mirror.conn, None)
        self.index = index
        self.mirror = mirror

    @property
    def key(self) -> str | None:
        """The database (its URL, password hidden): one snapshot per shared catalog."""
        return self.index.location

    def replace_source(
        self, source: str, records: Iterable[CaseRecord], keep: Sequence[str] = ()
    ) -> Counts:
        """As ``Catalog.replace_source``, in the database, then in the mirror when it was up
        to date (else the mirror is read again)."""
        given = list(records)
        change: Change = self._write(lambda cursor: _replace(cursor, source, given, keep))
        if change.before != self.mirror.state:
            self._refresh()
            return change.counts
        if change.after != change.before:
            by_uid = {record.uid: record for record in given}
            with self.conn:
                for uid in change.gone:
                    self._delete(uid)
                rows = [(i, by_uid[uid], digest) for i, uid, digest in change.added]
                fill(self.conn, [(i, r, record_text(r), digest) for i, r, digest in rows])
                _set_state(self.conn, change.after)
            self.mirror.state = change.after
        return change.counts

    def store_vectors(self, model: str, rows: Sequence[tuple[int, bytes, bytes | None]]) -> None:
        """As ``Catalog.store_vectors``, in the database, then in the mirror when it was
        up to date (else the mirror is read again)."""
        before, after = self._write(lambda cursor: _store_vectors(cursor, model, rows))
        if before != self.mirror.state:
            self._refresh()
            return
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO vectors SELECT ?, ?, ?, ? WHERE EXISTS "
                "(SELECT 1 FROM cases WHERE id = ?)",
                [(case_id, model, docs, steps, case_id) for case_id, docs, steps in rows],
            )
            _set_state(self.conn, after)
        self.mirror.state = after

    def _write(self, work: Any) -> Any:
        try:
            return self.index.write(lambda cursor: work(_ensured(cursor)))
        except HistoryError as exc:
            raise failure(self.index.location, "written", exc) from None

    def _refresh(self) -> None:
        self.mirror = mirror_of(self.index)
        self.conn = self.mirror.conn


def _ensured(cursor: Cursor) -> Cursor:
    """The tables made when missing, or migrated from version 1 (writers hold the lock: one
    creates or migrates them)."""
    version = _version(cursor)
    if version is None:
        for statement in V1_SCHEMA:
            cursor.execute(statement)
        cursor.execute(
            "INSERT INTO catalog_meta VALUES ('schema_version', '1'), ('generation', ?)",
            (uuid.uuid4().hex,),
        )
    if version != SCHEMA_VERSION:
        for statement in MIGRATION:
            cursor.execute(statement)
    return cursor


def _version(cursor: Cursor) -> int | None:
    cursor.execute(
        "SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid = c.relnamespace WHERE n.nspname = 'qbench' AND c.relname = 'catalog_meta'"
    )
    if cursor.fetchone() is None:
        return None
    row = cursor.execute("SELECT value FROM catalog_meta WHERE name = 'schema_version'").fetchone()
    version = int(row[0]) if row else None
    if version not in KNOWN_VERSIONS:
        raise ToolFailure(
            f"the shared test catalog has schema version {version}, this qbench "
            f"{SCHEMA_VERSION}; upgrade pytest-qbench on every machine, or drop the tables "
            "catalog_meta, catalog_cases, catalog_vectors and catalog_removed of the schema "
            "qbench and call ingest_tests"
        )
    return version


def _meta(cursor: Cursor) -> dict[str, str]:
    rows = cursor.execute("SELECT name, value FROM catalog_meta").fetchall()
    return {str(name): str(value) for name, value in rows}


def _state(meta: dict[str, str]) -> State:
    revision = meta.get("revision")
    return meta.get("generation", ""), None if revision is None else int(revision)


def _next_revision(cursor: Cursor, before: State) -> State:
    """Give the catalog its next revision (in the writing transaction), dropping the removed
    ids beyond ``KEPT_REVISIONS``."""
    generation, revision = before
    after = (revision or 0) + 1
    cursor.execute("UPDATE catalog_meta SET value = ? WHERE name = 'revision'", (str(after),))
    pruned = after - KEPT_REVISIONS
    if pruned > 0:
        cursor.execute("DELETE FROM catalog_removed WHERE revision <= ?", (pruned,))
        cursor.execute("UPDATE catalog_meta SET value = ? WHERE name = 'pruned'", (str(pruned),))
    return generation, after


@dataclass
class Change:
    """What ``_replace`` did, for the mirror to do the same."""

    counts: Counts
    before: State
    """The state before."""
    after: State
    """The state after (``before`` when nothing changed)."""
    gone: list[str]
    """Uids deleted (changed ones included)."""
    added: list[tuple[int, str, str]]
    """``(case id, uid, digest)`` of the rows inserted."""


def _replace(cursor: Cursor, source: str, records: list[CaseRecord], keep: Sequence[str]) -> Change:
    """``Catalog.replace_source``'s rule, on the database's tables."""
    before = _state(_meta(cursor))
    rows = cursor.execute(
        "SELECT uid, digest FROM catalog_cases WHERE source = ?", (source,)
    ).fetchall()
    plan = replace_plan({str(uid): str(digest) for uid, digest in rows}, records, keep)
    gone = [record.uid for record, _ in plan.changed] + plan.removed
    new = [(r.uid, source, record_text(r), digest) for r, digest in plan.changed]
    if not (gone or new):
        return Change(plan.counts, before, before, [], [])
    after = _next_revision(cursor, before)
    if gone:
        # a uid of another source is replaced too, as SQLite's INSERT OR REPLACE does
        cursor.execute(
            "WITH gone AS (DELETE FROM catalog_cases WHERE uid = ANY(?) RETURNING id) "
            "INSERT INTO catalog_removed (case_id, revision) SELECT id, ? FROM gone",
            (gone, after[1]),
        )
    added: list[tuple[int, str, str]] = []
    if new:
        rows = cursor.execute(
            "INSERT INTO catalog_cases (uid, source, record, digest, revision) "
            "SELECT *, ? FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) "
            "RETURNING id, uid, digest",
            [after[1], *(list(column) for column in zip(*new, strict=True))],
        ).fetchall()
        added = [(int(i), str(uid), str(digest)) for i, uid, digest in rows]
    return Change(plan.counts, before, after, gone, added)


def _store_vectors(
    cursor: Cursor, model: str, rows: Sequence[tuple[int, bytes, bytes | None]]
) -> tuple[State, State]:
    """Keep the vectors of the cases still there; the state before and after."""
    before = _state(_meta(cursor))
    after = _next_revision(cursor, before)
    if rows:
        ids, docs, steps = (list(column) for column in zip(*rows, strict=True))
        cursor.execute(
            "INSERT INTO catalog_vectors (case_id, model, docs, steps, revision) "
            "SELECT v.i, ?, v.d, v.s, ? FROM unnest(?::bigint[], ?::bytea[], ?::bytea[]) "
            "AS v(i, d, s) WHERE EXISTS (SELECT 1 FROM catalog_cases c WHERE c.id = v.i) "
            "ON CONFLICT (case_id) DO UPDATE SET model = EXCLUDED.model, "
            "docs = EXCLUDED.docs, steps = EXCLUDED.steps, revision = EXCLUDED.revision",
            (model, after[1], ids, docs, steps),
        )
    return before, after


def record_text(record: CaseRecord) -> str:
    """The record as ``cases.record`` holds it."""
    return json.dumps(asdict(record), ensure_ascii=False)


def mirror_of(index: PostgresIndex) -> Mirror:
    """The kept mirror of the database's catalog, brought up to date (in one snapshot): the
    rows changed since its revision, or the whole catalog (see the module's text).

    Raises:
        ToolFailure: the database cannot be read (naming it and the fix).
    """
    kept = _MIRRORS.get(index.url)
    try:
        made = index.read(lambda cursor: _up_to_date(cursor, kept))
    except HistoryError as exc:
        raise failure(index.location, "read", exc) from None
    _MIRRORS[index.url] = made
    return made


def _up_to_date(cursor: Cursor, kept: Mirror | None) -> Mirror:
    meta = _meta(cursor) if _version(cursor) is not None else {}
    state = _state(meta)
    if kept is not None and kept.state == state:
        return kept
    if kept is not None and _can_follow(kept.state, state, int(meta.get("pruned", 0))):
        _follow(cursor, kept, state)
        return kept
    return _load(cursor, state)


def _can_follow(mirror: State, state: State, pruned: int) -> bool:
    """Whether a mirror at ``mirror`` can be brought to ``state`` by the rows changed since."""
    (generation, revision), (now, latest) = mirror, state
    return (
        generation == now
        and revision is not None
        and latest is not None
        and pruned <= revision < latest
    )


def _follow(cursor: Cursor, mirror: Mirror, state: State) -> None:
    """Bring ``mirror`` to ``state``: the cases removed, the rows written since its revision."""
    since = mirror.state[1]
    removed = cursor.execute(
        "SELECT case_id FROM catalog_removed WHERE revision > ?", (since,)
    ).fetchall()
    cases = cursor.execute(
        "SELECT id, record, digest FROM catalog_cases WHERE revision > ?", (since,)
    ).fetchall()
    vectors = cursor.execute(
        "SELECT case_id, model, docs, steps FROM catalog_vectors WHERE revision > ?", (since,)
    ).fetchall()
    with mirror.conn:
        for (case_id,) in removed:
            delete_case(mirror.conn, int(case_id))
        fill(mirror.conn, [(int(i), CaseRecord.from_json(t), t, d) for i, t, d in cases])
        mirror.conn.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", _vector_rows(vectors)
        )
        _set_state(mirror.conn, state)
    mirror.state = state


def _memory() -> sqlite3.Connection:
    """An empty in-memory catalog (any thread may use it: ``_LOCK`` serialises them)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    prepare(conn, "the in-memory catalog")
    return conn


def _load(cursor: Cursor, state: State) -> Mirror:
    """The catalog's rows, at ``state``, copied into an in-memory SQLite catalog (one snapshot
    of them)."""
    conn = _memory()
    if state != ("", None):  # else no tables yet
        cases = cursor.execute("SELECT id, record, digest FROM catalog_cases").fetchall()
        vectors = cursor.execute(
            "SELECT case_id, model, docs, steps FROM catalog_vectors"
        ).fetchall()
        with conn:
            fill(conn, [(int(i), CaseRecord.from_json(t), t, d) for i, t, d in cases])
            conn.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?)", _vector_rows(vectors))
    with conn:
        _set_state(conn, state)
    return Mirror(state, conn)


def _vector_rows(rows: Iterable[Any]) -> list[tuple[int, str, bytes, bytes | None]]:
    return [(int(i), m, bytes(d), None if s is None else bytes(s)) for i, m, d, s in rows]


def fill(conn: sqlite3.Connection, rows: Sequence[tuple[int, CaseRecord, str, str]]) -> None:
    """Insert ``(case id, record, its JSON, digest)`` rows into a SQLite catalog as ``Catalog._insert``
    does, each table in one statement (seven times faster than row by row: 0.7 s of CPU for
    20 000 cases)."""
    conn.executemany(
        "INSERT INTO cases (id, uid, source, key, title, priority, path, folder, nodeid, "
        "record, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (i, r.uid, r.source, r.key, r.title, r.priority, r.path, r.folder, r.nodeid, text, d)
            for i, r, text, d in rows
        ],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO labels VALUES (?, ?, ?)",
        [
            (i, kind, value)
            for i, r, _text, _digest in rows
            for kind, values in zip(LABEL_KINDS, (r.tags, r.platforms, r.markers), strict=True)
            for value in dict.fromkeys(values)
        ],
    )
    marks = ", ".join("?" * (len(FTS_COLUMNS) + 1))
    conn.executemany(
        f"INSERT INTO cases_fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES ({marks})",
        [(i, *fts_texts(r)) for i, r, _text, _digest in rows],
    )


def _set_state(conn: sqlite3.Connection, state: State) -> None:
    """The mirror's generation (what the ranking's snapshot is kept by) says its state."""
    generation, revision = state
    token = generation if revision is None else f"{generation}.{revision}"
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (token,))


def failure(location: str, what: str, exc: HistoryError) -> ToolFailure:
    """A database error as the tools report it: where, what, and the fix."""
    return ToolFailure(f"the shared test catalog in {location} cannot be {what}: {exc}; {FIX}")


@contextmanager
def open_shared(url: str, *, create: bool = False) -> Iterator[Catalog]:
    """The catalog of the PostgreSQL database ``url``; an empty one when the database has
    no qbench tables yet (and not ``create``).

    Raises:
        ToolFailure: the database cannot be reached or read.
    """
    with _LOCK:
        index = _index(url, create)
        if index is None:  # no qbench tables: nothing was ingested yet
            empty = _memory()
            try:
                yield Catalog(empty)
            finally:
                empty.close()
            return
        yield SharedCatalog(index, mirror_of(index))


def _index(url: str, create: bool) -> PostgresIndex | None:
    """The process's connection to ``url`` (made once, then kept: connecting cost more than
    a search); ``None`` when the database has no qbench tables and not ``create``.

    Raises:
        ToolFailure: the database cannot be reached, or the user may not read it.
    """
    from pytest_qbench.history.postgres import PostgresIndex

    if url in _INDEXES:  # a lost connection is made again by its next transaction
        return _INDEXES[url]
    try:
        index = PostgresIndex(url, create=create)
    except HistoryError as exc:
        if exc.slug != "index-missing":
            # the history's message names the URL (password hidden) and the fix
            raise ToolFailure(f"the shared test catalog cannot be opened: {exc}") from None
        return None
    if not _INDEXES:
        atexit.register(_close_all)
    _INDEXES[url] = index
    return index


def _close_all() -> None:
    """Close the kept connections (at exit)."""
    for index in _INDEXES.values():
        index.close()
    _INDEXES.clear()


@contextmanager
def open_project_catalog(config: ServerConfig, *, create: bool = False) -> Iterator[Catalog]:
    """The project's catalog: the shared one of the history database that ``QBENCH_DB`` or
    the ini ``qbench_db`` names, else ``<qbench dir>/catalog.sqlite``.

    Raises:
        ToolFailure: the setting is malformed, or the catalog cannot be used.
    """
    from pytest_qbench.history.database import configured_db

    try:
        url = configured_db(None, config.root)
    except HistoryError as exc:
        raise ToolFailure(str(exc)) from None
    if url is None:
        with open_catalog(config.catalog_path, create=create) as catalog:
            yield catalog
    else:
        with open_shared(url, create=create) as catalog:
            yield catalog
