"""The shard planner's phase times (``queries.phase_timings``, read by ``--qbench-shard``,
``--qbench-queue`` and ``qbench shards``) read each test's newest results in index order, with
no window function and no sort (issue 28): each test's last results from the newest runs, and
older runs only for the tests short of a window there. The same results as ranking every result
(``ROW_NUMBER``), checked against the rule written out in Python."""

from __future__ import annotations

import sqlite3

import pytest
from history_data import index_reports
from history_data import report
from history_data import result
from postgres_server import HistoryDB

from pytest_qbench.core.types import Outcome
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history import sql
from pytest_qbench.history.queries import phase_timings


RUNS = 12
# a: ran in every run; b: skipped in the newest four (its window reaches back); c: never ran;
# d: not in the newest six; e: failed and errored too (they count); f: only in the oldest run
PASSED: Outcome = "passed"
SKIPPED: Outcome = "skipped"


def runs_of(*parts: tuple[Outcome | None, int]) -> list[Outcome | None]:
    """Each outcome (``None``: not in the run) so many runs, oldest first."""
    return [outcome for outcome, count in parts for _ in range(count)]


OUTCOMES: dict[str, list[Outcome | None]] = {
    "a": runs_of((PASSED, RUNS)),
    "b": runs_of((PASSED, RUNS - 4), (SKIPPED, 4)),
    "c": runs_of((SKIPPED, RUNS)),
    "d": runs_of((PASSED, RUNS - 6), (None, 6)),
    "e": runs_of(*[(o, 1) for o in ("failed", "error", "passed", "xfailed", "skipped", "xpassed")])
    * 2,
    "f": runs_of((PASSED, 1), (None, RUNS - 1)),
}
NEXT = {4, 10}
"""Runs of the commit being planned (left out when it is given)."""
MEMBER = 9
"""A run an indexed merged run (the newest) holds: left out whatever the commit."""


def seconds(run: int, name: str) -> float:
    return run + "abcdef".index(name) / 10


@pytest.fixture
def history(history_db: HistoryDB) -> HistoryDB:
    runs = []
    for n in range(RUNS):
        results = [
            result(name, outcome, duration=seconds(n, name))
            for name, outcomes in OUTCOMES.items()
            if (outcome := outcomes[n]) is not None
        ]
        runs.append(report(f"r{n}", n, results, commit="next" if n in NEXT else None))
    index_reports(history_db.qbench_dir, *runs, db=history_db.url)
    index = history_db.open()
    try:
        index.write(
            lambda cursor: cursor.execute(
                "INSERT INTO merge_members (merge_ref, member) VALUES "
                "((SELECT id FROM runs WHERE run_id = ?), ?)",
                (f"r{RUNS - 1}", f"r{MEMBER}"),
            )
        )
    finally:
        index.close()
    return history_db


def expected(runs: int, commit: str | None) -> dict[str, list[float]]:
    """Each test's last ``runs`` results that passed or failed, newest first, in runs of
    another commit that count."""
    found: dict[str, list[float]] = {}
    for name, outcomes in OUTCOMES.items():
        kept = [
            round(seconds(n, name), 6)
            for n in reversed(range(RUNS))
            if outcomes[n] not in (None, SKIPPED)
            and n != MEMBER
            and not (commit == "next" and n in NEXT)
        ][:runs]
        if kept:
            found[f"t.py::{name}"] = kept
    return found


def test_each_tests_last_results_are_read_without_ranking_every_result(
    history: HistoryDB,
) -> None:
    """On both backends; the statement's plan on SQLite."""
    nodeids = [*(f"t.py::{name}" for name in OUTCOMES), "t.py::unknown"]
    index = history.open()
    try:
        for runs in (1, 2, 3, 5, 8, RUNS, RUNS + 3):
            for commit in (None, "next", "other"):
                found = phase_timings(index, nodeids, runs, commit)
                read = {
                    nodeid: [round(t.setup + t.call + t.teardown, 6) for t in timings]
                    for nodeid, timings in found.items()
                }
                assert read == expected(runs, commit), (runs, commit)
        assert phase_timings(index, nodeids, 0) == {}
    finally:
        index.close()
    assert "ROW_NUMBER" not in sql.phase_timings_of(2)
    if history.backend != "sqlite":
        return
    db = sqlite3.connect(history.qbench_dir / INDEX_NAME)
    try:
        statement = sql.phase_timings_of(2)
        params = ["t.py::a", "t.py::b", 1, sql.LAST_REF, "next", 5][: statement.count("?")]
        steps = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {statement}", params)]
    finally:
        db.close()
    assert not [step for step in steps if "TEMP B-TREE" in step], steps
