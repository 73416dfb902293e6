"""A queue of test units in the history database (``--qbench-queue=NAME``).

Every machine of a CI job runs the same command. The first to get there fills the queue with
the units of the plan (``history.shardplan.plan_units``, longest first); then each machine
claims the next unit, runs it, marks it done, and claims again until none is left. A claim
is one short transaction (``Index.claim``): on PostgreSQL it locks the row it picks and
skips rows other machines are claiming (``FOR UPDATE SKIP LOCKED``); on SQLite write
transactions run one at a time anyway.

Who may take a unit, in this order:

1. a unit this machine (its identity, ``worker``) held in an earlier run: a retried CI job
   runs its own units again, so that its new report has them;
2. a unit nobody took yet;
3. a unit not done whose lease ran out: its machine died (or lost the database). A machine
   renews the leases of the units it holds while their tests run.

Leases are read and written by the database's clock (``Index.clock``), never the process's: a
test may freeze that one and leave it frozen (freezegun), and machines' clocks may differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone

from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.shardplan import Unit


HAS_QUEUE = "SELECT 1 FROM queue_units WHERE queue = ?"
INSERT_UNIT = """INSERT INTO queue_units
    (queue, unit, position, nodeids, expected, created_at, owner, run_id, lease_until, done)
    VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, 0)"""
PICK = "SELECT unit, nodeids, expected FROM queue_units WHERE queue = ? AND {where} ORDER BY position LIMIT 1"
PICK_WHERE = (
    "owner = ? AND (run_id IS NULL OR run_id <> ?)",
    "owner IS NULL",
    "done = 0 AND lease_until < ?",
)
"""The three kinds of unit a machine may take, in the order it takes them (module docstring)."""
TAKE = """UPDATE queue_units SET owner = ?, run_id = ?, lease_until = ?, done = 0
    WHERE queue = ? AND unit = ?"""
RENEW = "UPDATE queue_units SET lease_until = ? WHERE queue = ? AND run_id = ? AND done = 0"
FINISH = "UPDATE queue_units SET done = 1 WHERE queue = ? AND unit = ? AND run_id = ?"
PROGRESS = "SELECT COUNT(*), SUM(done) FROM queue_units WHERE queue = ?"
HELD_UNTIL = """SELECT MIN(lease_until) FROM queue_units
    WHERE queue = ? AND done = 0 AND run_id <> ?"""


@dataclass(frozen=True)
class Claim:
    """A unit a machine took."""

    unit: str
    nodeids: tuple[str, ...]
    expected: float


def create_queue(index: Index, name: str, units: Sequence[Unit]) -> bool:
    """Fill the queue ``name`` with ``units`` (in the order given) unless it exists; return
    whether this call created it."""
    created = to_index_time(datetime.now(timezone.utc))
    rows = [
        (name, unit.key, position, "\n".join(unit.nodeids), unit.expected, created)
        for position, unit in enumerate(units)
    ]

    def work(cursor: Cursor) -> bool:
        cursor.execute(HAS_QUEUE, (name,))
        if cursor.fetchone() is not None:
            return False
        cursor.executemany(INSERT_UNIT, rows)
        return True

    return bool(index.write(work))


def claim_next(
    index: Index, name: str, worker: str, run_id: str, lease: float, now: float | None = None
) -> Claim | None:
    """Take the next unit of the queue for ``worker`` (in its run ``run_id``), leased for
    ``lease`` seconds (by the database's clock, or ``now``); ``None`` when no unit is left
    to take."""

    def work(cursor: Cursor) -> Claim | None:
        at = database_time(index, cursor) if now is None else now
        for where, params in zip(PICK_WHERE, ((worker, run_id), (), (at,)), strict=True):
            cursor.execute(PICK.format(where=where) + index.row_lock, (name, *params))
            row = cursor.fetchone()
            if row is not None:
                unit, nodeids, expected = row
                cursor.execute(TAKE, (worker, run_id, at + lease, name, unit))
                return Claim(str(unit), tuple(str(nodeids).split("\n")), float(expected))
        return None

    return index.claim(work)


def database_time(index: Index, cursor: Cursor) -> float:
    """The database's clock, seconds since the epoch."""
    cursor.execute(index.clock)
    return float(cursor.fetchone()[0])


def renew(index: Index, name: str, run_id: str, lease: float) -> None:
    """Extend the leases of the units ``run_id`` holds and has not finished."""
    index.claim(
        lambda cursor: cursor.execute(RENEW, (database_time(index, cursor) + lease, name, run_id))
    )


def finish(index: Index, name: str, unit: str, run_id: str) -> None:
    """Mark ``unit`` done by ``run_id``."""
    index.claim(lambda cursor: cursor.execute(FINISH, (name, unit, run_id)))


def held_for(index: Index, name: str, run_id: str) -> float | None:
    """Seconds until the earliest lease end of the units other runs than ``run_id`` hold and
    have not finished (by the database's clock); ``None`` when there are none."""

    def work(cursor: Cursor) -> float | None:
        cursor.execute(HELD_UNTIL, (name, run_id))
        row = cursor.fetchone()
        if row is None or row[0] is None:
            return None
        return float(row[0]) - database_time(index, cursor)

    return index.read(work)


def progress(index: Index, name: str) -> tuple[int, int]:
    """Units in the queue, and how many are done."""

    def work(cursor: Cursor) -> tuple[int, int]:
        cursor.execute(PROGRESS, (name,))
        total, done = cursor.fetchone()
        return int(total or 0), int(done or 0)

    return index.read(work)
