"""The index's SQL, written once for every backend.

Statements use ``?`` placeholders (SQLite's); a backend whose driver wants another style
translates them (``?`` never appears inside these statements' literals). Everything here is
plain SQL that SQLite 3.25+ and PostgreSQL 10+ both run: no ``LIMIT -1``, no ``INSERT OR``,
window functions and ``ON CONFLICT`` only in their standard forms. What differs between engines
(column types, locking, pragmas) lives in the backend modules (``sqlite.py``, ``postgres.py``).

Times are stored as UTC text of one fixed width (``2026-01-02T03:04:05.000000Z``), so that text
order is time order in every engine.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import TypeVar


_T = TypeVar("_T")

BATCH = 500
"""The most values in one ``IN (...)`` list, and the rows written per batch: SQLite before 3.32
takes at most 999 ``?`` in one statement, and a statement with fewer is faster to prepare."""


def marks(count: int) -> str:
    """``?, ?, ?``: the placeholders of an ``IN (...)`` list of ``count`` values (at most
    ``BATCH``: split longer lists with `batches`)."""
    return ", ".join("?" * count)


def batches(items: Iterable[_T], size: int = BATCH) -> Iterator[list[_T]]:
    """``items`` in lists of at most ``size``, in order (an iterable is read lazily)."""
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def rows_per_insert(width: int) -> int:
    """How many rows of ``width`` values one ``INSERT`` of `many_rows` takes (``BATCH``
    placeholders at most)."""
    return max(1, BATCH // width)


@functools.lru_cache(maxsize=32)
def many_rows(insert: str, count: int) -> str:
    """``insert``, an ``INSERT ... VALUES (?, ...)`` of one row, as one statement inserting
    ``count`` rows (``VALUES (?, ...), (?, ...)``): one statement to prepare and run for a
    chunk of rows instead of one run per row (at most `rows_per_insert` rows)."""
    head, _values, tail = insert.partition("VALUES (")
    row, close, rest = tail.partition(")")
    one = f"({row}{close}"
    return f"{head}VALUES {', '.join([one] * count)}{rest}"


SCHEMA_VERSION = 12
"""Version of the tables below. History: 1, first release; 2, ``deselected`` (the tests each
run deselected, so that ``qbench diff`` can tell a deselected test from a removed one); 3,
``tool_calls`` (the MCP server's log of tool calls, ``qbench mcp-log``); 4, ``checked`` and
``diagnostics`` (the static checkers a test run ran with ``--qbench-check``, and the
fingerprints of what they found: issue 13.5); 5, ``deselection_sets`` and ``run_deselection``
(each distinct set of deselected tests once, runs referring to it: ``deselected`` grew by every
deselected id of every run; it is read still for the runs indexed before); 6, a result's
``setup`` and ``teardown`` seconds, a run's ``shard``, and ``queue_units`` (CI shards planned
from the history, and the queue they pull from); 7, ``quarantine`` (the tests ``qbench
quarantine add`` set aside); 8, a run's ``subtests_passed``, ``subtests_failed`` and
``subtests_skipped`` (``NULL`` in runs indexed before: not known); 9, a run's ``max_failures``
and ``last_failed``, as pytest settled them (``NULL``: not known, the command line is read);
10, a run's ``recording_errors`` (qbench's errors while recording it: not 0, its results are
incomplete; ``NULL`` in runs indexed before: not known); 11, ``merge_members`` (the runs each
merged run holds, so that a pipeline whose shards and merge are both indexed counts once); 12, a
run's ``other_counts`` (the counts pytest's closing line gives under a plugin's own words, such
as a conftest's ``pytest_report_teststatus`` counting a failure as ``1 known``: before, the
index kept only pytest's own categories, and read such a run as having fewer tests counted
than its line said)."""

FAILING = ("failed", "error")
"""Outcomes that count as a failure in history."""
PASSING = ("passed", "xfailed", "xpassed")
"""Outcomes that count as a pass in history (skips count as neither)."""

_FAILING_SQL = "('failed', 'error')"
_RAN_SQL = "('passed', 'xfailed', 'xpassed', 'failed', 'error')"
_SKIPPED_SQL = "('skipped')"

DESELECTED_TABLE = """CREATE TABLE deselected (
        run_ref {ref} NOT NULL REFERENCES runs (id),
        nodeid {key} NOT NULL,
        PRIMARY KEY (run_ref, nodeid)
    )"""
"""The node ids a run deselected (``-k``, ``-m``, ``--deselect``, ``--lf``: pytest's
``pytest_deselected``). A run indexed from its files (``qbench index``), or of schema 1, has
none, though its ``deselected`` count may say it deselected some."""

DESELECTION_SETS_TABLE = """CREATE TABLE deselection_sets (
        digest {key} PRIMARY KEY,
        count INTEGER NOT NULL,
        nodeids TEXT NOT NULL
    )"""
"""Each distinct set of deselected node ids, once (``history.deselection``): its digest, how
many ids, and the sorted ids, compressed (base64 text)."""
RUN_DESELECTION_TABLE = """CREATE TABLE run_deselection (
        run_ref {ref} NOT NULL PRIMARY KEY REFERENCES runs (id),
        digest {key} NOT NULL
    )"""
"""The set of node ids each run deselected (since schema 5; before, ``deselected``)."""
RUN_DESELECTION_INDEX = "CREATE INDEX run_deselection_by_digest ON run_deselection (digest)"

TOOL_CALLS_TABLE = """CREATE TABLE tool_calls (
        id {identity},
        called_at {key} NOT NULL,
        tool {key} NOT NULL,
        arguments TEXT NOT NULL,
        success INTEGER NOT NULL,
        error_type TEXT,
        duration DOUBLE PRECISION NOT NULL,
        response_bytes BIGINT NOT NULL,
        replaced_bytes BIGINT NOT NULL
    )"""
"""Every call of an MCP tool (``history.toollog``): when, which tool, its arguments (JSON,
secrets redacted), whether it succeeded and else the error's type, how long it took
(seconds), the bytes of its response, and the bytes of raw output the response replaced."""
TOOL_CALLS_INDEX = "CREATE INDEX tool_calls_by_tool ON tool_calls (tool, id)"

CHECKED_TABLE = """CREATE TABLE checked (
        run_ref {ref} NOT NULL REFERENCES runs (id),
        tool {key} NOT NULL,
        PRIMARY KEY (run_ref, tool)
    )"""
"""The static checkers that ran to the end in a test run (``--qbench-check``: status ``clean``
or ``failed``; not those that did not run or crashed), such as ``ruff.lint``."""
DIAGNOSTICS_TABLE = """CREATE TABLE diagnostics (
        run_ref {ref} NOT NULL REFERENCES runs (id),
        fingerprint {key} NOT NULL,
        tool {key} NOT NULL,
        severity TEXT NOT NULL,
        code TEXT,
        file TEXT,
        line INTEGER,
        message TEXT NOT NULL,
        occurrences INTEGER NOT NULL,
        PRIMARY KEY (run_ref, fingerprint)
    )"""
"""The fingerprints of a test run's static-check diagnostics (``history.fingerprint.
diagnostic_fingerprint``: tool, code, file and message without numbers, not the line), one row
per fingerprint with the first such diagnostic's severity, line and message (bounded) and how
many the run had."""
DIAGNOSTICS_INDEX = "CREATE INDEX diagnostics_by_fingerprint ON diagnostics (fingerprint)"

QUEUE_TABLE = """CREATE TABLE queue_units (
        queue {key} NOT NULL,
        unit {key} NOT NULL,
        position INTEGER NOT NULL,
        nodeids TEXT NOT NULL,
        expected DOUBLE PRECISION NOT NULL,
        created_at {key} NOT NULL,
        owner TEXT,
        run_id TEXT,
        lease_until DOUBLE PRECISION,
        done INTEGER NOT NULL,
        PRIMARY KEY (queue, unit)
    )"""
"""The units of each ``--qbench-queue`` (``history.queue``): their tests (node ids, one a
line), their expected seconds and place in the queue (longest first), and who holds them: the
machine's identity (``owner``), its run, until when its lease runs (seconds since the epoch),
and whether it ran them to the end."""
SHARD_SCHEMA = (
    "ALTER TABLE results ADD COLUMN setup DOUBLE PRECISION",
    "ALTER TABLE results ADD COLUMN teardown DOUBLE PRECISION",
    "ALTER TABLE runs ADD COLUMN shard TEXT",
    QUEUE_TABLE,
)
"""Schema 6: the phase times the shard planner reads (``NULL`` in results indexed before:
their whole ``duration`` counts as the call), the shard a run was (``2/4``, ``queue NAME``),
the queues."""

SUBTEST_COLUMNS = ("subtests_passed", "subtests_failed", "subtests_skipped")
"""A run's subtest counts (pytest 9's ``subtests`` fixture, pytest-subtests): ``ReportSummary``
fields of the same names. ``NULL``: not known (a run indexed before schema 8, or from a report
written before qbench counted subtests), which is never shown as 0."""
SUBTEST_SCHEMA = tuple(f"ALTER TABLE runs ADD COLUMN {name} INTEGER" for name in SUBTEST_COLUMNS)
"""Schema 8: the runs' subtest counts."""

STOP_COLUMNS = ("max_failures", "last_failed")
"""Where pytest was to stop a run and whether it ran with ``--lf``, as pytest settled them from
every source (``RunMeta`` fields of the same names; ``last_failed`` 0 or 1). ``NULL``: not known
(a run indexed before schema 9, another runner's, a report of an older qbench): ``qbench diff``
then reads the run's command line."""
STOP_SCHEMA = tuple(f"ALTER TABLE runs ADD COLUMN {name} INTEGER" for name in STOP_COLUMNS)
"""Schema 9: where pytest was to stop each run."""

RECORDING_SCHEMA = ("ALTER TABLE runs ADD COLUMN recording_errors INTEGER",)
"""Schema 10: how many errors qbench had while recording each run (``RunMeta.recording_errors``,
or the report's ``internal-error`` warnings): not 0, the run's results are incomplete."""

MERGE_MEMBERS_TABLE = """CREATE TABLE merge_members (
        merge_ref {ref} NOT NULL REFERENCES runs (id),
        member {key} NOT NULL,
        PRIMARY KEY (merge_ref, member)
    )"""
"""The runs a merged run holds (``qbench merge``: its report's ``shards``, by run id, indexed
or not), written when the merge is indexed: where the merge is indexed, the verdicts that read a
window of runs leave its members out (``COUNTED``), so that one pipeline counts once whatever
order its shards and its merge were indexed in. A merge indexed before schema 11 has none (index
its report again to record them)."""
MERGE_MEMBERS_INDEX = "CREATE INDEX merge_members_by_member ON merge_members (member)"
MERGE_SCHEMA = (MERGE_MEMBERS_TABLE, MERGE_MEMBERS_INDEX)
"""Schema 11: the runs each merged run holds."""

OTHER_COUNTS_SCHEMA = ("ALTER TABLE runs ADD COLUMN other_counts TEXT",)
"""Schema 12: the counts each run's closing line gives under plugins' own words
(``ReportSummary.other``), a JSON object in the line's order (``{"known": 1}``); ``NULL`` when
there are none, or not known (a run indexed before schema 12: index its report again)."""

QUARANTINE_TABLE = """CREATE TABLE quarantine (
        nodeid {key} PRIMARY KEY,
        reason TEXT NOT NULL,
        added_at {key} NOT NULL
    )"""
"""The quarantined tests (``history.quarantine``): node id, why, when (an index time)."""

SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE runs (
        id {identity},
        run_id {key} NOT NULL UNIQUE,
        tool TEXT NOT NULL,
        started_at {key} NOT NULL,
        completed_at TEXT,
        exit_code INTEGER,
        interrupted INTEGER NOT NULL,
        cwd TEXT NOT NULL,
        command TEXT NOT NULL,
        total INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        skipped INTEGER NOT NULL,
        xfailed INTEGER NOT NULL,
        xpassed INTEGER NOT NULL,
        reruns INTEGER NOT NULL,
        flaky INTEGER NOT NULL,
        deselected INTEGER NOT NULL,
        warnings INTEGER NOT NULL,
        duration DOUBLE PRECISION NOT NULL,
        branch TEXT,
        commit_sha TEXT,
        ci_provider TEXT,
        build_url TEXT,
        python TEXT,
        platform TEXT,
        qbench_version TEXT,
        indexed_at TEXT NOT NULL
    )""",
    "CREATE INDEX runs_by_start ON runs (started_at, id)",
    "CREATE TABLE tests (id {identity}, nodeid {key} NOT NULL UNIQUE)",
    """CREATE TABLE fingerprints (
        fingerprint TEXT PRIMARY KEY,
        error_type TEXT NOT NULL,
        location TEXT NOT NULL,
        message TEXT NOT NULL
    )""",
    """CREATE TABLE results (
        run_ref {ref} NOT NULL REFERENCES runs (id),
        test_ref {ref} NOT NULL REFERENCES tests (id),
        outcome TEXT NOT NULL,
        duration DOUBLE PRECISION NOT NULL,
        reruns INTEGER NOT NULL,
        flaky INTEGER NOT NULL,
        fingerprint TEXT,
        message TEXT,
        PRIMARY KEY (run_ref, test_ref)
    )""",
    "CREATE INDEX results_by_test ON results (test_ref, run_ref)",
    # Only failing (or rerun) results can make a test flaky: `qbench flaky` starts from these.
    f"""CREATE INDEX results_failing ON results (run_ref, test_ref)
        WHERE outcome IN {_FAILING_SQL} OR flaky = 1""",
    "CREATE INDEX results_by_fingerprint ON results (fingerprint) WHERE fingerprint IS NOT NULL",
    DESELECTED_TABLE,
    DESELECTION_SETS_TABLE,
    RUN_DESELECTION_TABLE,
    RUN_DESELECTION_INDEX,
    """CREATE TABLE metrics (
        run_ref {ref} NOT NULL REFERENCES runs (id),
        test_ref {ref} NOT NULL REFERENCES tests (id),
        metric TEXT NOT NULL,
        seq INTEGER NOT NULL,
        score DOUBLE PRECISION,
        threshold DOUBLE PRECISION,
        passed INTEGER NOT NULL,
        PRIMARY KEY (run_ref, test_ref, metric, seq)
    )""",
    TOOL_CALLS_TABLE,
    TOOL_CALLS_INDEX,
    CHECKED_TABLE,
    DIAGNOSTICS_TABLE,
    DIAGNOSTICS_INDEX,
    *SHARD_SCHEMA,
    QUARANTINE_TABLE,
    *SUBTEST_SCHEMA,
    *STOP_SCHEMA,
    *RECORDING_SCHEMA,
    *MERGE_SCHEMA,
    *OTHER_COUNTS_SCHEMA,
)
"""``CREATE`` statements. The backend fills in its column types: ``{identity}``, an
auto-numbered primary key; ``{ref}``, a column referring to one; ``{key}``, text that is sorted
or compared (ids, times, node ids), which must compare byte by byte in every engine."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (DESELECTED_TABLE,),
    3: (TOOL_CALLS_TABLE, TOOL_CALLS_INDEX),
    4: (CHECKED_TABLE, DIAGNOSTICS_TABLE, DIAGNOSTICS_INDEX),
    5: (DESELECTION_SETS_TABLE, RUN_DESELECTION_TABLE, RUN_DESELECTION_INDEX),
    6: SHARD_SCHEMA,
    7: (QUARANTINE_TABLE,),
    8: SUBTEST_SCHEMA,
    9: STOP_SCHEMA,
    10: RECORDING_SCHEMA,
    11: MERGE_SCHEMA,
    12: OTHER_COUNTS_SCHEMA,
}
"""Statements that take the schema from version ``n - 1`` to ``n``."""

GET_VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"
SET_VERSION = "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
UPDATE_VERSION = "UPDATE meta SET value = ? WHERE key = 'schema_version'"

# --- writing a run ---------------------------------------------------------------------------

COUNT_COLUMNS = (
    "total",
    "passed",
    "failed",
    "errors",
    "skipped",
    "xfailed",
    "xpassed",
    "reruns",
    "flaky",
    "deselected",
    "warnings",
)
"""The run's counts: ``ReportSummary`` fields of the same names."""
RUN_COLUMNS = (
    "run_id",
    "tool",
    "started_at",
    "completed_at",
    "exit_code",
    "interrupted",
    "cwd",
    "command",
    *COUNT_COLUMNS,
    "duration",
    "branch",
    "commit_sha",
    "ci_provider",
    "build_url",
    "python",
    "platform",
    "qbench_version",
    "indexed_at",
    "shard",
    *SUBTEST_COLUMNS,
    *STOP_COLUMNS,
    "recording_errors",
    "other_counts",
)
INSERT_RUN = f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({marks(len(RUN_COLUMNS))})"
FIND_RUN_REF = "SELECT id FROM runs WHERE run_id = ?"
DELETE_RESULTS_OF = "DELETE FROM results WHERE run_ref = ?"
DELETE_METRICS_OF = "DELETE FROM metrics WHERE run_ref = ?"
DELETE_RUN = "DELETE FROM runs WHERE id = ?"
DELETE_DESELECTED_OF = "DELETE FROM deselected WHERE run_ref = ?"
DELETE_RUN_DESELECTION_OF = "DELETE FROM run_deselection WHERE run_ref = ?"
DELETE_CHECKED_OF = "DELETE FROM checked WHERE run_ref = ?"
DELETE_DIAGNOSTICS_OF = "DELETE FROM diagnostics WHERE run_ref = ?"
DELETE_MERGE_MEMBERS_OF = "DELETE FROM merge_members WHERE merge_ref = ?"
DELETE_RUN_ROWS = (
    DELETE_RESULTS_OF,
    DELETE_METRICS_OF,
    DELETE_DESELECTED_OF,
    DELETE_RUN_DESELECTION_OF,
    DELETE_CHECKED_OF,
    DELETE_DIAGNOSTICS_OF,
    DELETE_MERGE_MEMBERS_OF,
    DELETE_RUN,
)
"""What deleting a run by its ``id`` takes, in this order (the run's row last: foreign keys)."""
HAS_DESELECTION_SET = "SELECT 1 FROM deselection_sets WHERE digest = ?"
INSERT_DESELECTION_SET = "INSERT INTO deselection_sets (digest, count, nodeids) VALUES (?, ?, ?)"
INSERT_RUN_DESELECTION = "INSERT INTO run_deselection (run_ref, digest) VALUES (?, ?)"
INSERT_MERGE_MEMBER = """INSERT INTO merge_members (merge_ref, member) VALUES (?, ?)
    ON CONFLICT (merge_ref, member) DO NOTHING"""
MEMBERS_OF_RUN = """SELECT m.member FROM merge_members m JOIN runs r ON r.id = m.merge_ref
    WHERE r.run_id = ?"""
OTHER_MERGES = """SELECT r.id, r.run_id, m.member FROM merge_members m
    JOIN runs r ON r.id = m.merge_ref WHERE r.id <> ?"""
"""The members of every indexed merged run but the run ``?``."""
INSERT_CHECKED = "INSERT INTO checked (run_ref, tool) VALUES (?, ?)"
DIAGNOSTIC_COLUMNS = ("fingerprint", "tool", "severity", "code", "file", "line", "message")
INSERT_DIAGNOSTIC = f"""INSERT INTO diagnostics
    (run_ref, {", ".join(DIAGNOSTIC_COLUMNS)}, occurrences)
    VALUES (?, {marks(len(DIAGNOSTIC_COLUMNS))}, ?)"""
INSERT_NEW_TEST = "INSERT INTO tests (nodeid) VALUES (?) ON CONFLICT (nodeid) DO NOTHING"
RESULT_COLUMNS = (
    "run_ref",
    "test_ref",
    "outcome",
    "duration",
    "reruns",
    "flaky",
    "fingerprint",
    "message",
    "setup",
    "teardown",
)
"""The values of a row of ``INSERT_RESULT``, in order."""
PASSED_DEFAULTS: dict[str, tuple[str, Any]] = {
    "reruns": ("0", 0),
    "flaky": ("0", 0),
    "fingerprint": ("NULL", None),
    "message": ("NULL", None),
}
"""The values of a result without reruns, fingerprint or message: in SQL, and as bound."""
PASSED_ROW = tuple(name for name in RESULT_COLUMNS if name not in PASSED_DEFAULTS)
"""The values of a row of ``INSERT_PASSED_RESULT``: the others are ``PASSED_DEFAULTS``."""
INSERT_RESULT = f"""INSERT INTO results
    ({", ".join(RESULT_COLUMNS)})
    VALUES ({marks(len(RESULT_COLUMNS))})
    ON CONFLICT (run_ref, test_ref) DO UPDATE SET
        outcome = excluded.outcome, duration = excluded.duration, reruns = excluded.reruns,
        flaky = excluded.flaky, fingerprint = excluded.fingerprint, message = excluded.message,
        setup = excluded.setup, teardown = excluded.teardown"""
INSERT_PASSED_RESULT = INSERT_RESULT.replace(
    f"VALUES ({marks(len(RESULT_COLUMNS))})",
    f"VALUES ({', '.join(PASSED_DEFAULTS.get(name, ('?',))[0] for name in RESULT_COLUMNS)})",
)
"""``INSERT_RESULT`` of a result without reruns, fingerprint or message (a ``PASSED_ROW``):
SQLite binds no ``None`` (which its driver adapts at a cost) and four values fewer a row."""
_WHOLE = tuple(
    (PASSED_ROW.index(name), None) if name in PASSED_ROW else (-1, PASSED_DEFAULTS[name][1])
    for name in RESULT_COLUMNS
)


@functools.lru_cache(maxsize=8)
def insert_passes(run_ref: int, outcome: str | None) -> str:
    """``INSERT_RESULT`` of one row of run ``run_ref`` without reruns, fingerprint or message,
    the run's ``id`` (and ``outcome``, when given) written in the statement: its values are
    ``test_ref``, ``outcome`` when not given, and the duration, setup and teardown seconds. Two
    bound values fewer a row than ``INSERT_PASSED_RESULT`` when all passed (SQLite's binding
    3.0 k -> 2.8 k instructions a result; a run's statements are prepared once a size)."""
    if type(run_ref) is not int or outcome not in (None, *PASSING, "skipped"):
        raise ValueError(f"not a run's id and a passing outcome: {run_ref!r}, {outcome!r}")
    fixed = {"run_ref": str(run_ref), **{name: value[0] for name, value in PASSED_DEFAULTS.items()}}
    if outcome is not None:
        fixed["outcome"] = f"'{outcome}'"
    values = ", ".join(fixed.get(name, "?") for name in RESULT_COLUMNS)
    return INSERT_RESULT.replace(f"VALUES ({marks(len(RESULT_COLUMNS))})", f"VALUES ({values})")


def whole_result_row(passed: Sequence[Any]) -> tuple[Any, ...]:
    """A ``PASSED_ROW`` as the ``INSERT_RESULT`` row it stands for (``PASSED_DEFAULTS`` filled
    in)."""
    return tuple(passed[at] if at >= 0 else value for at, value in _WHOLE)


INSERT_FINGERPRINT = """INSERT INTO fingerprints (fingerprint, error_type, location, message)
    VALUES (?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING"""
DELETE_METRICS_OF_TEST = "DELETE FROM metrics WHERE run_ref = ? AND test_ref = ?"
INSERT_METRIC = """INSERT INTO metrics (run_ref, test_ref, metric, seq, score, threshold, passed)
    VALUES (?, ?, ?, ?, ?, ?, ?)"""


ANY_RUN = "SELECT 1 FROM runs LIMIT 1"
"""Whether the index holds a run at all."""
ALL_TESTS = "SELECT nodeid FROM tests"
"""Every node id the index has results of."""


def find_tests(count: int) -> str:
    """The ids of ``count`` node ids."""
    return f"SELECT id, nodeid FROM tests WHERE nodeid IN ({marks(count)})"


@functools.lru_cache(maxsize=8)
def find_test_ids(count: int) -> str:
    """The ids of ``count`` node ids, in their order, ``NULL`` for a node id not in ``tests``:
    no node id's text read back (9.4 k -> 7.2 k instructions a node id on SQLite)."""
    values = ", ".join(f"({at}, ?)" for at in range(count))
    return (
        f"WITH wanted (at, nodeid) AS (VALUES {values}) SELECT tests.id FROM wanted "
        "LEFT JOIN tests ON tests.nodeid = wanted.nodeid ORDER BY wanted.at"
    )


TESTS_AT = "SELECT id, nodeid FROM tests WHERE id IN (?, ?)"
"""The node ids of two test ids."""


# --- retention -------------------------------------------------------------------------------

# run_id <> ?: the run being indexed stays (always the newest, unless it was indexed before:
# an older report indexed again keeps its place)
RUNS_BEYOND = """SELECT id, run_id FROM runs WHERE run_id <> ? AND id NOT IN
    (SELECT id FROM runs ORDER BY id DESC LIMIT ?)"""
RUNS_STARTED_BEFORE = "SELECT id, run_id FROM runs WHERE started_at < ?"
DELETE_ORPHAN_TESTS = """DELETE FROM tests WHERE NOT EXISTS
    (SELECT 1 FROM results WHERE results.test_ref = tests.id)"""
DELETE_ORPHAN_FINGERPRINTS = """DELETE FROM fingerprints WHERE NOT EXISTS
    (SELECT 1 FROM results WHERE results.fingerprint = fingerprints.fingerprint)"""
DELETE_ORPHAN_DESELECTION_SETS = """DELETE FROM deselection_sets WHERE NOT EXISTS
    (SELECT 1 FROM run_deselection d WHERE d.digest = deselection_sets.digest)"""
DELETE_OLD_QUEUES = """DELETE FROM queue_units WHERE created_at <
    (SELECT MIN(started_at) FROM runs)"""
"""Queues created before the oldest run still indexed (they go with their runs)."""

# --- the MCP tool-call log ---------------------------------------------------------------------

TOOL_CALL_COLUMNS = (
    "called_at",
    "tool",
    "arguments",
    "success",
    "error_type",
    "duration",
    "response_bytes",
    "replaced_bytes",
)
INSERT_TOOL_CALL = (
    f"INSERT INTO tool_calls ({', '.join(TOOL_CALL_COLUMNS)}) "
    f"VALUES ({marks(len(TOOL_CALL_COLUMNS))})"
)
TOOL_CALLS_BEYOND = """DELETE FROM tool_calls WHERE id <=
    (SELECT id FROM tool_calls ORDER BY id DESC LIMIT 1 OFFSET ?)"""
"""Keep the newest ``?`` calls: the one after them (``OFFSET ?``) and every older one go."""
TOOL_CALLS_BEFORE = "DELETE FROM tool_calls WHERE called_at < ?"
COUNT_TOOL_CALLS_BEFORE = "SELECT COUNT(*) FROM tool_calls WHERE called_at < ?"
RECENT_TOOL_CALLS = (
    f"SELECT {', '.join(TOOL_CALL_COLUMNS)} FROM tool_calls ORDER BY id DESC LIMIT ?"
)
TOOL_CALL_FIGURES = """SELECT tool, success, duration, response_bytes, replaced_bytes
    FROM tool_calls ORDER BY tool, id"""

# --- reading ---------------------------------------------------------------------------------

# Runs are ordered by their id: the order they were first indexed in (a run indexed again keeps
# its row, `indexer.index_run`), never by started_at, which a machine's clock writes: a run
# started while the clock was wrong (moved to the future by a frozen-clock plugin, a VM's bad
# clock) would otherwise stay "last", and every later run would be compared with it. started_at
# is shown, and read for ``qbench gc --older-than``.
RUN_FIELDS = ", ".join(f"r.{name}" for name in RUN_COLUMNS)
COUNTED = "r.run_id NOT IN (SELECT member FROM merge_members)"
"""Whether the run ``r`` counts in a window of runs: it is not held by an indexed merged run
(``MERGE_MEMBERS_TABLE``), whose copy of its results counts instead. Uncorrelated: the engine
reads ``merge_members`` once a statement (no row when no merge is indexed)."""
COUNTED_RUNS = f"SELECT r.id FROM runs r WHERE {COUNTED} ORDER BY r.id DESC LIMIT ?"
"""The last ``?`` runs that count (``COUNTED``): a window of runs, each pipeline once."""
LIST_RUNS = f"SELECT {RUN_FIELDS} FROM runs r ORDER BY r.id DESC LIMIT ?"
RUN_BY_ID = f"SELECT {RUN_FIELDS} FROM runs r WHERE r.run_id = ?"
RUN_IDS_NEWEST_FIRST = "SELECT run_id FROM runs ORDER BY id DESC"
UPDATE_RUN = f"UPDATE runs SET {', '.join(f'{name} = ?' for name in RUN_COLUMNS)} WHERE id = ?"
"""A run indexed again: its row's values (``RUN_COLUMNS``, then its ``id``), its place kept."""
LAST_REF = 9223372036854775807
"""A run ``id`` after every run's (the largest 64-bit integer): "before" a run not indexed."""
REF_OF = f"COALESCE((SELECT id FROM runs WHERE run_id = ?), {LAST_REF})"
"""The ``id`` of the run named (``?``), or one after every run's when it is not indexed."""
COUNT_RUNS = "SELECT COUNT(*) FROM runs"

RESULTS_OF_RUN = """SELECT t.nodeid, res.outcome, res.duration, res.flaky, res.fingerprint,
        res.message, res.reruns
    FROM results res JOIN runs r ON r.id = res.run_ref JOIN tests t ON t.id = res.test_ref
    WHERE r.run_id = ?"""
DESELECTED_OF_RUN = """SELECT d.nodeid FROM deselected d JOIN runs r ON r.id = d.run_ref
    WHERE r.run_id = ?"""
"""The node ids a run indexed before schema 5 deselected."""
DESELECTION_SET_OF_RUN = """SELECT s.nodeids FROM run_deselection d
    JOIN runs r ON r.id = d.run_ref JOIN deselection_sets s ON s.digest = d.digest
    WHERE r.run_id = ?"""
CHECKED_OF_RUN = """SELECT c.tool FROM checked c JOIN runs r ON r.id = c.run_ref
    WHERE r.run_id = ?"""
DIAGNOSTICS_OF_RUN = f"""SELECT {", ".join(f"d.{name}" for name in DIAGNOSTIC_COLUMNS)},
        d.occurrences
    FROM diagnostics d JOIN runs r ON r.id = d.run_ref
    WHERE r.run_id = ? ORDER BY d.tool, d.file, d.line, d.fingerprint"""
CHECKED_BEFORE = f"""SELECT r.id, r.run_id, c.tool FROM checked c JOIN runs r ON r.id = c.run_ref
    WHERE r.id < {REF_OF}
    ORDER BY r.id DESC LIMIT ?"""
"""The checkers of the last runs (``LIMIT``: run and checker pairs) indexed before the run
``?`` (all of them when it is not indexed yet)."""


def diagnostics_of_runs(count: int) -> str:
    """The fingerprints of ``count`` runs' diagnostics (by the runs' ``id``)."""
    return f"SELECT run_ref, fingerprint FROM diagnostics WHERE run_ref IN ({marks(count)})"


METRICS_OF_RUN = """SELECT t.nodeid, m.metric, m.seq, m.score, m.passed
    FROM metrics m JOIN runs r ON r.id = m.run_ref JOIN tests t ON t.id = m.test_ref
    WHERE r.run_id = ?"""
FAILURES_OF_RUN = f"""SELECT t.nodeid, res.outcome, f.error_type, f.location, res.message
    FROM results res JOIN runs r ON r.id = res.run_ref JOIN tests t ON t.id = res.test_ref
    LEFT JOIN fingerprints f ON f.fingerprint = res.fingerprint
    WHERE r.run_id = ? AND res.outcome IN {_FAILING_SQL}
    ORDER BY t.nodeid"""


def fingerprints_in(count: int) -> str:
    """Error type, location and an example message of ``count`` fingerprints."""
    return (
        "SELECT fingerprint, error_type, location, message FROM fingerprints "
        f"WHERE fingerprint IN ({marks(count)})"
    )


def _larger_than_results(line: str, outcomes: str) -> str:
    """The larger of a run's count on pytest's line (``line``) and its results with one of
    ``outcomes``, as ``compare.stopped_at_failures`` counts a ``-x`` run's failures."""
    results = f"(SELECT COUNT(*) FROM results x WHERE x.run_ref = r.id AND x.outcome IN {outcomes})"
    return f"CASE WHEN {results} > {line} THEN {results} ELSE {line} END"


RUN_FAILING = _larger_than_results("r.failed + r.errors", _FAILING_SQL)
"""The tests that failed or errored in a run whose line counts tests under a plugin's own words
(``runs.other_counts``), each word judged by the results counted under it, as the rest of
qbench judges each such result by its own outcome: a conftest's ``pytest_report_teststatus``
that files a failure as ``known`` counts it under no failed test on pytest's line, yet its
result failed (``qbench show``, ``diff``); jest's ``todo`` is a skip."""
RUN_RAN = f"r.total - ({_larger_than_results('r.skipped', _SKIPPED_SQL)})"
"""The tests that passed or failed (``total`` less its skips) in such a run, as ``RUN_FAILING``
judges them: a word whose results were skipped (jest's ``todo``) did not run."""
WORDED_RUNS = (
    f"SELECT r.run_id, {RUN_FAILING}, {RUN_RAN} FROM runs r WHERE r.other_counts IS NOT NULL"
)
"""The runs whose line counts tests under a plugin's own words, with their ``RUN_FAILING`` and
``RUN_RAN``, read once a statement of ``JUDGED_RESULT`` (``queries.worded_runs``): the other
runs' are their line's, so that no result row costs more for words (each run's counts once, not
for each of its results)."""
JUDGED_RESULT = """r.run_id, r.started_at, res.outcome, res.duration, res.flaky,
        res.fingerprint, res.message, r.commit_sha, r.failed + r.errors, r.total - r.skipped"""
"""A test's result in a run, with what a flaky verdict needs of the run: its commit, its failed
and errored tests, and its tests that passed or failed (``queries.judged_result``; a run with a
plugin's own words: ``WORDED_RUNS``)."""

TEST_RESULTS = f"""SELECT {JUDGED_RESULT}
    FROM results res JOIN runs r ON r.id = res.run_ref JOIN tests t ON t.id = res.test_ref
    WHERE t.nodeid = ? AND {COUNTED}
    ORDER BY r.id DESC LIMIT ?"""
SIMILAR_TESTS = (  # lower(): SQLite's LIKE ignores ASCII case, PostgreSQL's does not
    "SELECT nodeid FROM tests WHERE lower(nodeid) LIKE lower(?) ESCAPE '!' ORDER BY nodeid LIMIT 5"
)
ALL_TESTS = "SELECT nodeid FROM tests"

FLAKY_CANDIDATES = f"""SELECT DISTINCT res.test_ref FROM results res
    WHERE res.run_ref IN ({COUNTED_RUNS})
    AND (res.outcome IN {_FAILING_SQL} OR res.flaky = 1)"""


def flaky_sequences(count: int) -> str:
    """Every result of ``count`` tests in the last ``?`` runs, oldest first per test."""
    return f"""SELECT t.nodeid, {JUDGED_RESULT}
        FROM results res JOIN runs r ON r.id = res.run_ref JOIN tests t ON t.id = res.test_ref
        WHERE res.test_ref IN ({marks(count)})
        AND res.run_ref IN ({COUNTED_RUNS})
        ORDER BY res.test_ref, r.id"""


def recent_results_of(count: int) -> str:
    """For ``count`` node ids: their pass-or-fail results in runs indexed before the run of
    ``id`` ``?``, each node id's newest first (``queries.recent_results`` keeps a window of
    them and the last pass). Read in the order of the indexes ``tests`` and ``results_by_test``
    give, no sort and no window function: ranking the rows in SQL (``ROW_NUMBER`` over two
    partitions, three temporary B-trees) cost three times reading them all.

    Columns: nodeid, then ``JUDGED_RESULT``'s.
    """
    return f"""SELECT t.nodeid, {JUDGED_RESULT}
        FROM tests t JOIN results res ON res.test_ref = t.id JOIN runs r ON r.id = res.run_ref
        WHERE t.nodeid IN ({marks(count)}) AND res.run_ref < ? AND {COUNTED}
        AND res.outcome IN {_RAN_SQL}
        ORDER BY t.nodeid, res.run_ref DESC"""


_PHASE_RUN = f"(r.commit_sha IS NULL OR r.commit_sha <> ?) AND {COUNTED}"
"""A run whose phase times the shard planner reads: of another commit than ``?`` (the shards of
one CI pipeline test one commit), counted (``COUNTED``: a pipeline's shards and its indexed
merge hold the same seconds, once)."""
PHASE_WINDOW_START = (
    f"SELECT r.id FROM runs r WHERE {_PHASE_RUN} ORDER BY r.id DESC LIMIT 1 OFFSET ?"
)
"""The ``id`` of the ``?``-th newest run (0 the newest) whose phase times the planner reads
(``_PHASE_RUN``; the commit is the first ``?``): a test's last ``n`` such results are in the
newest ``n`` such runs, unless it did not pass or fail in one of them."""


def phase_timings_of(count: int) -> str:
    """For ``count`` node ids: their results that passed or failed in runs whose ``id`` is at
    least ``?`` and below ``?``, of another commit than ``?`` that count (``_PHASE_RUN``), with
    the phase seconds (``setup`` and ``teardown`` are ``NULL`` before schema 6), each node id's
    newest first. Read in the order of the indexes ``tests`` and ``results_by_test`` give, no
    sort and no window function: ``queries.phase_timings`` reads the newest runs first
    (``PHASE_WINDOW_START``), then older ones for the node ids short of a window. Ranking
    every result in SQL (``ROW_NUMBER`` over each test's, a temporary B-tree) read and sorted
    all 120 of a test's results for its last 5: 1.8 s at 5 000 tests."""
    return f"""SELECT t.nodeid, res.duration, res.setup, res.teardown
        FROM tests t JOIN results res ON res.test_ref = t.id JOIN runs r ON r.id = res.run_ref
        WHERE t.nodeid IN ({marks(count)}) AND res.run_ref >= ? AND res.run_ref < ?
        AND res.outcome IN {_RAN_SQL} AND {_PHASE_RUN}
        ORDER BY t.nodeid, res.run_ref DESC"""


# --- the quarantine --------------------------------------------------------------------------

QUARANTINE_ADD = """INSERT INTO quarantine (nodeid, reason, added_at) VALUES (?, ?, ?)
    ON CONFLICT (nodeid) DO UPDATE SET reason = excluded.reason"""
QUARANTINE_REMOVE = "DELETE FROM quarantine WHERE nodeid = ?"
QUARANTINE_LIST = "SELECT nodeid, reason, added_at FROM quarantine ORDER BY nodeid"
FAILED_BEFORE_WITH = """SELECT 1 FROM results JOIN tests ON tests.id = results.test_ref
    WHERE tests.nodeid = ? AND results.fingerprint = ? AND results.outcome IN ('failed', 'error')
    LIMIT 1"""
"""Whether a test failed with a fingerprint in an indexed run."""
FAILED_BEFORE_RUN_WITH = f"""SELECT 1 FROM results JOIN tests ON tests.id = results.test_ref
    WHERE tests.nodeid = ? AND results.fingerprint = ? AND results.outcome IN ('failed', 'error')
    AND results.run_ref < {REF_OF}
    LIMIT 1"""
"""Whether a test failed with a fingerprint in a run indexed before the run named."""
