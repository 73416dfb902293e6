"""SQLite VM steps of what the flaky rule reads of a run's counts, load-free.

A progress handler called at every opcode counts the steps of the rule's row statements
(``flaky_sequences``, ``recent_results_of``) and of ``WORDED_RUNS`` (a plugin's own words judged
by the results counted under them, once a statement) on an index of 50 runs x 2000 tests (2 % of
results failing), without plugin words and with one in every run (docs/performance.md, "A
plugin's own words in the flaky rule, at no cost to other runs").

Usage::

    python benchmarks/words_judged_steps.py
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from history_data import index_reports
from history_data import report
from history_data import result

from pytest_qbench.history import sql


RUNS = 50
TESTS = 2000


def steps(db: sqlite3.Connection, text: str, params: Any = ()) -> tuple[int, int]:
    """The VM steps of one statement, and its rows."""
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    db.set_progress_handler(tick, 1)
    rows = db.execute(text, params).fetchall()
    db.set_progress_handler(None, 1)
    return count[0], len(rows)


def main() -> None:
    random.seed(1)
    base = Path(tempfile.mkdtemp())
    records = []
    for number in range(RUNS):
        results = [
            result(f"t{i}", "failed" if random.random() < 0.02 else "passed") for i in range(TESTS)
        ]
        records.append(report(f"r{number}", number, results))
    index_reports(base, *records)
    db = sqlite3.connect(base / "index.sqlite")
    refs = [row[0] for row in db.execute(sql.FLAKY_CANDIDATES, (RUNS,)).fetchall()]
    nodeids = [row[0] for row in db.execute("SELECT nodeid FROM tests ORDER BY id LIMIT 200")]
    for label in ("no plugin words", "a plugin word in every run"):
        if label.startswith("a "):
            db.execute("""UPDATE runs SET other_counts = '{"known": 1}'""")
            db.commit()
        seq = steps(db, sql.flaky_sequences(len(refs)), [*refs, RUNS])
        recent = steps(db, sql.recent_results_of(len(nodeids)), [*nodeids, sql.LAST_REF])
        words = steps(db, sql.WORDED_RUNS)
        print(
            f"{label}: flaky_sequences {seq[0]:,} steps ({seq[1]} rows), recent_results_of "
            f"{recent[0]:,} ({recent[1]} rows), WORDED_RUNS {words[0]:,} ({words[1]} runs)"
        )


if __name__ == "__main__":
    main()
