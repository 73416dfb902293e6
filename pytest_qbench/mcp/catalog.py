"""The test catalog: test cases in SQLite, searched with FTS5 and ranked by BM25.

``<qbench dir>/catalog.sqlite`` holds one row per test case: a pytest test (its node id, the
words of its name, its docstring and ``qbench_case`` fields) or a case imported from a test-case
manager's JSON export. Tags, platforms and markers are rows of ``labels`` for filters and
facets. The full-text table is kept in step with ``cases`` by the code that writes both, in one
transaction. Every statement is fixed text with ``?`` placeholders.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import uuid
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.history import sql


SCHEMA_VERSION = 2
"""2 added ``vectors``; a version 1 catalog gains the table when opened."""
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS cases (
        id INTEGER PRIMARY KEY,
        uid TEXT NOT NULL UNIQUE,
        source TEXT NOT NULL,
        key TEXT,
        title TEXT,
        priority TEXT,
        path TEXT,
        folder TEXT,
        nodeid TEXT,
        record TEXT NOT NULL,
        digest TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS cases_key ON cases (key COLLATE NOCASE)",
    "CREATE INDEX IF NOT EXISTS cases_source ON cases (source)",
    """CREATE TABLE IF NOT EXISTS labels (
        case_id INTEGER NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        value TEXT NOT NULL COLLATE NOCASE,
        PRIMARY KEY (case_id, kind, value)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS labels_value ON labels (kind, value)",
    """CREATE TABLE IF NOT EXISTS vectors (
        case_id INTEGER PRIMARY KEY REFERENCES cases (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        docs BLOB NOT NULL,
        steps BLOB
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS cases_fts USING fts5 (
        name, title, key, description, tags, steps, location,
        tokenize = 'porter unicode61 remove_diacritics 2'
    )""",
)
TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"
FTS_COLUMNS = ("name", "title", "key", "description", "tags", "steps", "location")
WEIGHTS = {
    "name": 4.0,
    "title": 8.0,
    "key": 10.0,
    "description": 3.0,
    "tags": 4.0,
    "steps": 1.5,
    "location": 1.0,
}
"""BM25 weight of each column: a word in the title or key counts most, one in a step least."""
SCOPES = {
    "all": FTS_COLUMNS,
    "docs": ("name", "title", "description", "tags"),
    "steps": ("steps",),
}
FUNCTION_SQL = (
    "CASE WHEN c.nodeid IS NOT NULL AND instr(c.nodeid, '[') > 0 "
    "THEN substr(c.nodeid, 1, instr(c.nodeid, '[') - 1) ELSE c.uid END"
)
"""A case's test function: its node id up to the parameters' ``[``, else its uid."""
LABEL_KINDS = ("tag", "platform", "marker")
MAX_TERMS = 32
WORD = re.compile(r"\w+", re.UNICODE)
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "then",
        "this",
        "to",
        "was",
        "were",
        "when",
        "with",
        "test",
        "tests",
        "py",
    ]
)
"""Words too common to tell test cases apart (every node id says ``test``)."""


@dataclass
class CaseRecord:
    """One test case, as the catalog stores it."""

    uid: str
    source: str
    key: str | None = None
    title: str | None = None
    priority: str | None = None
    path: str | None = None
    line: int | None = None
    folder: str | None = None
    nodeid: str | None = None
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    steps: list[tuple[str, str | None]] = field(default_factory=list)
    """``(action, expected)`` pairs, in order."""

    def digest(self) -> str:
        """A hash of every field, to tell an updated record from an unchanged one."""
        text = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> CaseRecord:
        """The record stored in ``cases.record``."""
        data = json.loads(text)
        data["steps"] = [tuple(step) for step in data["steps"]]
        return cls(**data)


@dataclass(frozen=True)
class Filters:
    """Search filters; each list matches when a case has any of its values (case-insensitive)."""

    tags: Sequence[str] = ()
    priority: Sequence[str] = ()
    markers: Sequence[str] = ()
    platforms: Sequence[str] = ()
    path: str | None = None
    """A glob (``tests/api/*``) or a prefix (``tests/api``) of the file path or the folder."""


@dataclass(frozen=True)
class Ranked:
    """A matching case, before its record is read: its row, its test function, its BM25 rank."""

    case_id: int
    function: str
    """The node id without its parameters (a parametrized case's group); the uid otherwise."""
    rank: float


@dataclass
class Counts:
    """What an ingest changed."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0


@dataclass
class Replacement:
    """What making a source's cases exactly some records takes: ``replace_plan``'s answer."""

    counts: Counts
    changed: list[tuple[CaseRecord, str]]
    """New or changed records, in order, with their digests (to delete, then insert)."""
    removed: list[str]
    """Uids of the source's cases that are gone (and not kept)."""


def replace_plan(
    existing: dict[str, str], records: Iterable[CaseRecord], keep: Sequence[str] = ()
) -> Replacement:
    """How to make a source whose cases are ``existing`` (uid to digest) exactly ``records``:
    unchanged digests stay, new and changed records are written, absent cases are removed
    unless their path starts with one of ``keep``. One rule for both storages."""
    plan = Replacement(Counts(), [], [])
    seen: set[str] = set()
    for record in records:
        seen.add(record.uid)
        digest = record.digest()
        known = existing.get(record.uid)
        if known == digest:
            plan.counts.unchanged += 1
            continue
        if known is None:
            plan.counts.added += 1
        else:
            plan.counts.updated += 1
        plan.changed.append((record, digest))
    for uid in existing.keys() - seen:
        if not any(uid.startswith(prefix) for prefix in keep):
            plan.removed.append(uid)
            plan.counts.removed += 1
    return plan


class Catalog:
    """The catalog file, opened for one operation (``with open_catalog(...) as catalog``)."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self.conn = conn
        self.path = path
        """The file (``None`` for the empty catalog of a missing file)."""

    @property
    def key(self) -> str | None:
        """What the in-memory snapshot of this catalog is kept under (its file); ``None`` for
        the empty catalog of a missing file, which is never kept."""
        return None if self.path is None else str(self.path)

    def generation(self) -> str:
        """A token that changes whenever an ingest changes the cases or their vectors."""
        row = self.conn.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        return "" if row is None else str(row[0])

    def _changed(self) -> None:
        """Give the catalog a new generation (inside the writing transaction)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (uuid.uuid4().hex,)
        )

    def size(self) -> int:
        """Test cases stored."""
        return int(self.conn.execute("SELECT count(*) FROM cases").fetchone()[0])

    def replace_source(
        self, source: str, records: Iterable[CaseRecord], keep: Sequence[str] = ()
    ) -> Counts:
        """Make ``source``'s cases exactly ``records``, in one transaction; cases of that
        source whose path starts with one of ``keep`` stay even when absent."""
        with self.conn:
            existing = dict(
                self.conn.execute("SELECT uid, digest FROM cases WHERE source = ?", (source,))
            )
            plan = replace_plan(existing, records, keep)
            for record, digest in plan.changed:
                self._delete(record.uid)
                self._insert(record, digest)
            for uid in plan.removed:
                self._delete(uid)
            if plan.changed or plan.removed:
                self._changed()
        return plan.counts

    def _insert(self, record: CaseRecord, digest: str, case_id: int | None = None) -> None:
        """Store a record (with its labels and full-text row) as row ``case_id``, or as a new
        row."""
        cursor = self.conn.execute(
            "INSERT OR REPLACE INTO cases (id, uid, source, key, title, priority, path, folder, "
            "nodeid, record, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                case_id,
                record.uid,
                record.source,
                record.key,
                record.title,
                record.priority,
                record.path,
                record.folder,
                record.nodeid,
                json.dumps(asdict(record), ensure_ascii=False),
                digest,
            ),
        )
        case_id = cursor.lastrowid
        labels = [
            (case_id, kind, value)
            for kind, values in zip(
                LABEL_KINDS, (record.tags, record.platforms, record.markers), strict=True
            )
            for value in dict.fromkeys(values)
        ]
        self.conn.executemany("INSERT OR IGNORE INTO labels VALUES (?, ?, ?)", labels)
        self.conn.execute(
            f"INSERT INTO cases_fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (case_id, *fts_texts(record)),
        )

    def _delete(self, uid: str) -> None:
        row = self.conn.execute("SELECT id FROM cases WHERE uid = ?", (uid,)).fetchone()
        if row is not None:
            delete_case(self.conn, int(row[0]))

    def bm25(
        self, query: str, columns: Sequence[str] = FTS_COLUMNS, limit: int | None = None
    ) -> list[tuple[int, float]]:
        """``(case id, BM25 rank)`` of every case matching ``query`` (the rank is negative,
        lower is better), or of the best ``limit``, in no order; every case with rank 0
        without a query."""
        fts = fts_query(query, columns)
        if fts is None:
            return self.conn.execute("SELECT id, 0.0 FROM cases").fetchall()
        weights = ", ".join(str(WEIGHTS[c]) for c in FTS_COLUMNS)
        best = "" if limit is None else f" ORDER BY 2 LIMIT {int(limit)}"
        return self.conn.execute(
            f"SELECT rowid, bm25(cases_fts, {weights}) FROM cases_fts WHERE cases_fts MATCH ?"
            + best,
            (fts,),
        ).fetchall()

    def allowed(self, filters: Filters) -> set[int] | None:
        """The cases that pass ``filters``; ``None`` (all of them) without filters."""
        conditions, params = filter_sql(filters)
        if not conditions:
            return None
        rows = self.conn.execute(
            f"SELECT c.id FROM cases c WHERE {' AND '.join(conditions)}", params
        ).fetchall()
        return {int(i) for (i,) in rows}

    def documents_with(self, word: str) -> int:
        """Cases that hold ``word`` (stemmed as the full-text index does)."""
        fts = fts_query(word)
        if fts is None:
            return 0
        row = self.conn.execute("SELECT count(*) FROM cases_fts WHERE cases_fts MATCH ?", (fts,))
        return int(row.fetchone()[0])

    def index_rows(self) -> list[tuple[int, str, str, str | None]]:
        """``(case id, test function, uid, priority)`` of every case, in the order ties of
        BM25 are broken by (path or folder, then uid)."""
        rows = self.conn.execute(
            f"SELECT c.id, {FUNCTION_SQL}, c.uid, c.priority FROM cases c "
            "ORDER BY coalesce(c.path, c.folder, ''), c.uid"
        ).fetchall()
        return [(int(i), str(f), str(u), p) for i, f, u, p in rows]

    def label_rows(self) -> list[tuple[int, str, str]]:
        """``(case id, kind, value)`` of every tag, platform and marker."""
        rows = self.conn.execute("SELECT case_id, kind, value FROM labels").fetchall()
        return [(int(i), str(k), str(v)) for i, k, v in rows]

    def records(self, case_ids: Sequence[int]) -> dict[int, CaseRecord]:
        """The records of these rows."""
        found: dict[int, CaseRecord] = {}
        for start in range(0, len(case_ids), 500):
            chunk = case_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT id, record FROM cases WHERE id IN ({marks})", list(chunk)
            ).fetchall()
            found.update((int(i), CaseRecord.from_json(text)) for i, text in rows)
        return found

    def unembedded(self, model: str) -> list[tuple[int, CaseRecord]]:
        """Cases without a vector of ``model`` (new, changed, or embedded by another model)."""
        rows = self.conn.execute(
            "SELECT c.id, c.record FROM cases c LEFT JOIN vectors v ON v.case_id = c.id "
            "AND v.model = ? WHERE v.case_id IS NULL ORDER BY c.id",
            (model,),
        ).fetchall()
        return [(int(i), CaseRecord.from_json(text)) for i, text in rows]

    def store_vectors(self, model: str, rows: Sequence[tuple[int, bytes, bytes | None]]) -> None:
        """Keep ``(case id, docs vector, steps vector)`` rows, in one transaction."""
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                [(case_id, model, docs, steps) for case_id, docs, steps in rows],
            )
            self._changed()

    def vector_rows(self, model: str) -> list[tuple[int, bytes, bytes | None]]:
        """``(case id, docs vector, steps vector)`` of every case embedded by ``model``."""
        rows = self.conn.execute(
            "SELECT case_id, docs, steps FROM vectors WHERE model = ? ORDER BY case_id", (model,)
        ).fetchall()
        return [(int(i), d, st) for i, d, st in rows]

    def vector_of(self, model: str, uid: str) -> tuple[bytes, bytes | None] | None:
        """The stored vectors of a case."""
        row = self.conn.execute(
            "SELECT v.docs, v.steps FROM vectors v JOIN cases c ON c.id = v.case_id "
            "WHERE c.uid = ? AND v.model = ?",
            (uid, model),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def embedded(self, model: str) -> int:
        """Cases with a vector of ``model``."""
        row = self.conn.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,))
        return int(row.fetchone()[0])

    def matched_fields(
        self, query: str, columns: Sequence[str], case_ids: Sequence[int]
    ) -> dict[int, list[str]]:
        """For each of ``case_ids``, the columns that hold a word of ``query`` (FTS5 decides,
        stemming included), in ``columns`` order. The cases' texts are copied into a temporary
        full-text table first: matching a long query against the whole catalog once per
        column costs far more than matching it against a page of cases."""
        found: dict[int, list[str]] = {}
        if not case_ids or fts_query(query) is None:
            return found
        names = ", ".join(FTS_COLUMNS)
        self.conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.page_fts USING fts5 ({names}, {TOKENIZE})"
        )
        self.conn.execute("DELETE FROM temp.page_fts")
        marks = sql.marks(len(case_ids))
        self.conn.execute(
            f"INSERT INTO temp.page_fts (rowid, {names}) SELECT rowid, {names} FROM cases_fts "
            f"WHERE rowid IN ({marks})",
            list(case_ids),
        )
        for column in columns:
            rows = self.conn.execute(
                "SELECT rowid FROM temp.page_fts WHERE page_fts MATCH ?",
                [fts_query(query, [column])],
            ).fetchall()
            for (case_id,) in rows:
                found.setdefault(case_id, []).append(column)
        self.conn.execute("DELETE FROM temp.page_fts")
        return found

    def by_key(self, key: str) -> list[CaseRecord]:
        """Cases with this key (case-insensitive), pytest tests first."""
        rows = self.conn.execute(
            "SELECT record FROM cases WHERE key = ? COLLATE NOCASE "
            "ORDER BY source != 'pytest', uid",
            (key,),
        ).fetchall()
        return [CaseRecord.from_json(row[0]) for row in rows]

    def by_uid(self, uid: str) -> CaseRecord | None:
        """The case with this catalog id (a node id, or an imported case's key)."""
        row = self.conn.execute("SELECT record FROM cases WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else CaseRecord.from_json(row[0])

    def keys_like(self, key: str, limit: int = 5) -> list[str]:
        """Keys that begin like ``key`` (for a "did you mean")."""
        stem = key.rsplit("-", 1)[0] if "-" in key else key[:3]
        escaped = re.sub(r"([!%_])", r"!\1", stem)
        rows = self.conn.execute(
            "SELECT DISTINCT key FROM cases WHERE key LIKE ? ESCAPE '!' ORDER BY key LIMIT ?",
            (f"{escaped}%", limit),
        ).fetchall()
        return [row[0] for row in rows]


def delete_case(conn: sqlite3.Connection, case_id: int) -> None:
    """Delete the case of row ``case_id``, its labels, full-text row and vectors (none: no-op)."""
    for table, column in (("cases_fts", "rowid"), ("labels", "case_id"), ("vectors", "case_id")):
        conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (case_id,))
    conn.execute("DELETE FROM cases WHERE id = ?", (case_id,))


def filter_sql(filters: Filters) -> tuple[list[str], list[object]]:
    """SQL conditions on ``cases c`` for the filters, and their parameters."""
    conditions: list[str] = []
    params: list[object] = []
    for kind, values in (
        ("tag", filters.tags),
        ("platform", filters.platforms),
        ("marker", filters.markers),
    ):
        if values:
            marks = sql.marks(len(values))
            conditions.append(
                f"c.id IN (SELECT case_id FROM labels WHERE kind = ? AND value IN ({marks}))"
            )
            params += [kind, *values]
    if filters.priority:
        marks = sql.marks(len(filters.priority))
        conditions.append(f"lower(c.priority) IN ({marks})")
        params += [p.lower() for p in filters.priority]
    if filters.path:
        pattern = filters.path if any(ch in filters.path for ch in "*?[") else f"{filters.path}*"
        conditions.append("(c.path GLOB ? OR c.folder GLOB ? OR c.nodeid GLOB ?)")
        params += [pattern] * 3
    return conditions, params


def fts_query(text: str, columns: Sequence[str] = FTS_COLUMNS) -> str | None:
    """An FTS5 query matching any word of ``text`` (each quoted, so no word is syntax),
    restricted to ``columns``; ``None`` when ``text`` has no word."""
    words = query_words(text)
    if not words:
        return None
    terms = " OR ".join(f'"{w}"' for w in words)
    if tuple(columns) == FTS_COLUMNS:
        return terms
    return f"{{{' '.join(columns)}}} : ({terms})"


def fts_texts(record: CaseRecord) -> tuple[str, ...]:
    """The record's text for each full-text column, in ``FTS_COLUMNS`` order."""
    name = split_words(record.nodeid.split("/")[-1]) if record.nodeid else ""
    steps = "\n".join(f"{action} {expected or ''}".strip() for action, expected in record.steps)
    location = " ".join(part for part in (record.path, record.folder) if part)
    return (
        name,
        record.title or "",
        record.key or "",
        record.description or "",
        " ".join(record.tags),
        steps,
        split_words(location),
    )


def function_of(record: CaseRecord) -> str:
    """The test function of a case, as ``FUNCTION_SQL`` computes it."""
    if record.nodeid and "[" in record.nodeid:
        return record.nodeid.split("[", 1)[0]
    return record.uid


def split_words(text: str) -> str:
    """``TestCart::test_addItem[de]`` -> ``Test Cart test add Item de``: the words of a name."""
    return " ".join(WORD.findall(CAMEL.sub(" ", text.replace("_", " "))))


def query_words(text: str) -> list[str]:
    """The words of a query, lowercased, in order, once each, without stop words."""
    words = (w.lower() for w in WORD.findall(text))
    return list(dict.fromkeys(w for w in words if w not in STOP_WORDS))[:MAX_TERMS]


@contextmanager
def open_catalog(path: Path, *, create: bool = False) -> Iterator[Catalog]:
    """The catalog at ``path``, made with its tables when ``create``; without ``create``, a
    missing file reads as an empty catalog (in memory, so nothing is written).

    Raises:
        ToolFailure: the file is not a catalog, or SQLite lacks FTS5.
    """
    if not create and not path.is_file():
        target = ":memory:"
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        target = str(path)
    try:
        conn = sqlite3.connect(target, timeout=10.0)
    except sqlite3.Error as exc:
        raise ToolFailure(f"cannot open the catalog {path}: {exc}") from None
    try:
        prepare(conn, path)
        yield Catalog(conn, None if target == ":memory:" else path)
    except sqlite3.DatabaseError as exc:
        raise ToolFailure(
            f"the catalog {path} cannot be used ({exc}); delete it and call ingest_tests"
        ) from None
    finally:
        conn.close()


def prepare(conn: sqlite3.Connection, path: Path | str) -> None:
    """Make the catalog's tables in ``conn`` when missing (``path`` names it in messages).

    Raises:
        ToolFailure: a catalog of another schema version, or SQLite lacks FTS5.
    """
    conn.execute("PRAGMA foreign_keys = ON")
    row = None
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
        row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    if row is not None and int(row[0]) == 1:
        row = None  # version 1 lacks only ``vectors``: the statements below add it
    if row is not None and int(row[0]) != SCHEMA_VERSION:
        raise ToolFailure(
            f"the catalog {path} has schema version {row[0]}, this qbench {SCHEMA_VERSION}; "
            "delete it and call ingest_tests"
        )
    if row is None:
        try:
            with conn:
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('generation', ?)", (uuid.uuid4().hex,)
                )
        except sqlite3.OperationalError as exc:
            if "fts5" in str(exc):
                raise ToolFailure(
                    "this Python's SQLite has no FTS5, which the test catalog needs; use a "
                    "Python built with a newer SQLite"
                ) from None
            raise
