"""A mixed run's stream indexed at the end of a run, and every row it leaves in the index.

``tests/data/history/index-rows.json`` holds what the indexer of an earlier release wrote for
these runs (``python tests/index_rows_data.py OUT.json`` with that release first on
``PYTHONPATH``): the index's rows, and the failing tests' histories, must not change when
indexing gets cheaper.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from history_data import report
from history_data import result

from pytest_qbench.core.types import Outcome
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history.session_end import record_run
from pytest_qbench.report import store
from pytest_qbench.report.records import TestReportRecord
from pytest_qbench.report.records import TestResultRecord


TABLES = {
    "runs": "SELECT * FROM runs ORDER BY id",
    "tests": "SELECT * FROM tests ORDER BY id",
    "results": "SELECT * FROM results ORDER BY run_ref, test_ref",
    "fingerprints": "SELECT * FROM fingerprints ORDER BY fingerprint",
    "metrics": "SELECT * FROM metrics ORDER BY run_ref, test_ref, metric, seq",
}
"""The tables indexing a run writes (``runs.indexed_at``, the time of indexing, left out)."""


def _results(run: int) -> list[TestResultRecord]:
    """More results than one statement of rows and one batch take, of every kind."""
    found: list[TestResultRecord] = []
    for n in range(230):
        name = f"test_{n:03d}" if n % 50 else f'odd_{n},"outcome":"failed" \\ ü\t\U0001f600'
        outcomes: tuple[Outcome, ...] = (
            "passed",
            "failed",
            "error",
            "skipped",
            "xfailed",
            "xpassed",
        )
        outcome = outcomes[0 if n % 9 else (n // 9 + run) % 6]
        record = result(name, outcome, duration=n * 1e-5 + run, message=f"assert {n} == {run}")
        record["durations"] = {"setup": n * 1e-6, "call": 0.5, "teardown": 1.25e-05 * run}
        found.append(record)
    rerun = result(f"rerun_{run}", flaky=True)
    failure = result("x", "failed", message="flaky one")["failure"]
    rerun["attempts"] = [{"outcome": "failed", "duration": 0.1, "failure": failure}]
    found.append(rerun)
    found.append(result("scored", metrics={"m": 0.25 * run, "n": None}))
    found.append(result("scored", "failed", metrics={"m": 0.75}))  # --keep-duplicates
    found.append(result("test_007", "failed", message=f"now failing {run}"))
    return found


def runs() -> list[tuple[TestReportRecord, list[TestResultRecord]]]:
    """Three runs: one, a second of mostly the same tests, the first indexed again."""
    first = report("r1", 0, _results(1))
    second = report("r2", 5, _results(2), commit="abc123-r1")
    return [(first, first["results"]), (second, second["results"]), (first, first["results"])]


def index_rows(qbench_dir: Path) -> dict[str, Any]:
    """Index ``runs()`` as pytest's session end does (the stream written, then read back);
    the index's rows and the histories each run's failing tests got."""
    histories = []
    for number, (record, results) in enumerate(runs()):
        stream = qbench_dir / f"stream-{number}.jsonl"
        writer = store.StreamWriter(stream)
        for item in results[:-2]:
            writer.write_result(item)
        writer.close()
        head: TestReportRecord = {**record, "results": []}
        done = record_run(qbench_dir, head, stream, results[-2:], keep_runs=0)
        histories.append(done.histories)
    with sqlite3.connect(qbench_dir / INDEX_NAME) as db:
        tables = {}
        for table, query in TABLES.items():
            cursor = db.execute(query)
            names = [d[0] for d in cursor.description]
            tables[table] = [
                {k: v for k, v in zip(names, row, strict=True) if k != "indexed_at"}
                for row in cursor.fetchall()
            ]
    return {"tables": tables, "histories": histories}


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        rows = index_rows(Path(where))
    Path(sys.argv[1]).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
