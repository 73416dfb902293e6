"""Builders of reports and run directories for the history tests (no pytest run needed)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

from pytest_qbench.core.types import Outcome
from pytest_qbench.history import sql
from pytest_qbench.history.database import open_index
from pytest_qbench.history.indexer import index_run
from pytest_qbench.report import store
from pytest_qbench.report.models import CIInfo
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import MetricResult
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.shapes import Record


if TYPE_CHECKING:
    from postgres_server import HistoryDB

    from pytest_qbench.history.backend import Cursor
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def result(
    name: str,
    outcome: Outcome = "passed",
    *,
    duration: float = 0.01,
    message: str = "assert 1 == 2",
    line: int = 3,
    error_type: str = "AssertionError",
    metrics: dict[str, float | None] | None = None,
    flaky: bool = False,
) -> TestResultRecord:
    """A result record of ``t.py::<name>``; failed and errored ones get a failure."""
    failure = None
    if outcome in ("failed", "error"):
        failure = Failure(error_type=error_type, error_message=message, file="t.py", line=line)
    metric_results = [
        MetricResult(
            metric_name=metric,
            score=score,
            threshold=0.5,
            passed=score is not None and score >= 0.5,
        )
        for metric, score in (metrics or {}).items()
    ]
    model = TestResult(
        nodeid=f"t.py::{name}",
        test_name=name,
        file="t.py",
        outcome=outcome,
        duration=duration,
        failure=failure,
        metric_results=metric_results,
        flaky=flaky,
        reruns=1 if flaky else 0,
    )
    return cast("TestResultRecord", model.model_dump(mode="json"))


def report(
    run_id: str,
    minutes: float,
    results: list[TestResultRecord],
    *,
    branch: str | None = "main",
    commit: str | None = None,
) -> TestReportRecord:
    """A report record of ``results``, started ``minutes`` after T0, in CI on ``branch`` (none
    without one) and ``commit`` (default: ``abc123-<run_id>``, each run its own commit, as
    when each CI run tests a new push)."""
    counts: dict[str, int] = {}
    for r in results:
        outcome: str = r["outcome"]
        field = {"error": "errors"}.get(outcome, outcome)
        counts[field] = counts.get(field, 0) + 1
    started = T0 + timedelta(minutes=minutes)
    failing = counts.get("failed", 0) + counts.get("errors", 0)
    sha = commit or f"abc123-{run_id}"
    ci = CIInfo(provider="github-actions", branch=branch, commit=sha) if branch else None
    model = TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=started),
        run=RunMeta(
            run_id=run_id,
            started_at=started,
            completed_at=started + timedelta(seconds=2),
            exit_code=1 if failing else 0,
            cwd="/src",
            command=["pytest", "-p", "qbench"],
        ),
        environment=Environment(
            python="3.12.4",
            implementation="CPython",
            platform="Linux",
            pytest_version="9.0.0",
            qbench_version="0.1.0",
            ci=ci,
        ),
        summary=ReportSummary.model_validate({"total": len(results), "duration": 2.0, **counts}),
        results=[TestResult.model_validate(r) for r in results],
    )
    return cast("TestReportRecord", model.model_dump(mode="json"))


def writer_runs(
    writer: int, runs: int, results: int, *, own_test: bool = False
) -> list[TestReportRecord]:
    """The runs that process ``writer`` indexes in a test of concurrent writers: ``results``
    results each, of tests every writer shares (some failing); with ``own_test``, the last one is
    a test of that run only, with a metric score."""
    return [
        report(
            f"w{writer}-r{n}",
            n + writer / 10,
            [
                result(f"test_{i}", "failed" if (i + n) % 7 == 0 else "passed")
                for i in range(results - own_test)
            ]
            + ([result(f"only_w{writer}_r{n}", metrics={"m": 0.5})] if own_test else []),
        )
        for n in range(runs)
    ]


def run_at_once(start: Any, procs: list[Any]) -> list[int | None]:
    """Start the processes ``procs``, let them go at the same moment (``start``, the event they
    wait for), wait for them; return their exit codes."""
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
    return [proc.exitcode for proc in procs]


def write_run(qbench_dir: Path, record: TestReportRecord) -> Path:
    """Write ``record`` as ``<qbench_dir>/runs/<run id>/report.json``; return the run directory."""
    run_dir = store.run_dir(qbench_dir, record["run"]["run_id"])
    store.write_report_json(run_dir / store.REPORT_JSON, record, None)
    return run_dir


def index_reports(
    qbench_dir: Path, *records: TestReportRecord, keep_runs: int = 0, db: str | None = None
) -> list[Any]:
    """Index report records in ``<qbench_dir>/index.sqlite`` (or the PostgreSQL database
    ``db``), one transaction each."""
    index = open_index(qbench_dir, db, create=True)
    try:
        return [index_run(index, *index_args(r), keep_runs=keep_runs) for r in records]
    finally:
        index.close()


def index_args(record: TestReportRecord) -> tuple[Record, Callable[[], list[Record]]]:
    """The report ``record`` and its results, as ``index_run`` takes them (plain records, as
    ``session_end`` casts them; the results as a callable)."""
    results = cast("list[Record]", record["results"])
    return cast("Record", record), lambda: results


TABLES_SINCE = {
    2: ("deselected",),
    3: ("tool_calls",),
    4: ("diagnostics", "checked"),
    5: ("deselection_sets", "run_deselection"),
    6: ("queue_units",),
    7: ("quarantine",),
    11: ("merge_members",),
}
"""The tables each schema version of the index added (for tests of its migrations)."""
COLUMNS_SINCE = {
    6: (("results", "setup"), ("results", "teardown"), ("runs", "shard")),
    8: tuple(("runs", name) for name in sql.SUBTEST_COLUMNS),
    9: tuple(("runs", name) for name in sql.STOP_COLUMNS),
    10: (("runs", "recording_errors"),),
    12: (("runs", "other_counts"),),
}
"""The columns each schema version added to older tables."""


def make_index_of_schema(history_db: HistoryDB, version: int) -> None:
    """Turn ``history_db``'s index into one of schema ``version``: drop the tables later
    versions added and write the old version number (the rows of older tables stay)."""

    def downgrade(cursor: Cursor) -> None:
        for since, tables in TABLES_SINCE.items():
            if since > version:
                for table in tables:
                    cursor.execute(f"DROP TABLE {table}")
        for since, columns in COLUMNS_SINCE.items():
            if since > version:
                for table, column in columns:
                    cursor.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        cursor.execute(sql.UPDATE_VERSION, (str(version),))

    index = history_db.open()
    try:
        index.write(downgrade)
    finally:
        index.close()


def indexed_items(stream: Path) -> list[dict[str, Any]]:
    """What indexing reads of each result of ``stream`` (``session_end.index_items``), a
    ``Passed`` tuple as the record of what it holds: node id, outcome, duration and the phase
    seconds in it (setup, teardown)."""
    from pytest_qbench.history.session_end import index_items

    records = []
    for item in index_items(stream, []):
        if not isinstance(item, tuple):
            records.append(item)
            continue
        nodeid, outcome, seconds, setup, teardown = item
        phases = {"setup": setup, "teardown": teardown}
        durations = {k: v for k, v in phases.items() if v is not None}
        records.append(
            {"nodeid": nodeid, "outcome": outcome, "duration": seconds, "durations": durations}
        )
    return records
