"""The session end indexes its own plain passing lines from what its stream writer kept
(``store.Written``), not by reading them back; the index's rows are those a stream read back
gives (issue 28). A stream written otherwise, or changed since, is read back."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Any
from typing import cast

import pytest
from history_data import report
from history_data import result

from pytest_qbench.core.types import Outcome
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history import session_end
from pytest_qbench.history.session_end import record_run
from pytest_qbench.history.sqlite import SQLiteIndex
from pytest_qbench.report import store
from pytest_qbench.report.records import TestReportRecord
from pytest_qbench.report.shapes import compact

from conftest import RunQBench


ROWS = """SELECT tests.nodeid, results.outcome, results.duration, results.reruns, results.flaky,
    results.fingerprint, results.message, results.setup, results.teardown
    FROM results JOIN tests ON tests.id = results.test_ref ORDER BY results.test_ref"""
"""Each result's row, with its node id (the tests in the order they were first indexed)."""
TABLES = ("SELECT * FROM tests ORDER BY id", "SELECT * FROM fingerprints ORDER BY fingerprint")


def index_rows(qbench_dir: Path) -> list[list[Any]]:
    with sqlite3.connect(qbench_dir / INDEX_NAME) as db:
        return [db.execute(query).fetchall() for query in (ROWS, *TABLES)]


def passing(nodeid: str, duration: float, setup: float, teardown: float) -> dict[str, Any]:
    """A plain passing test's stored result: the one the stream writes from its template."""
    return {
        "nodeid": nodeid,
        "test_name": nodeid.partition("::")[2],
        "file": "t.py",
        "line": 3,
        "outcome": "passed",
        "duration": duration,
        "durations": {"setup": setup, "call": 0.5, "teardown": teardown},
        "started_at": "2026-11-27T04:00:00Z",
        "counted_as": ["passed"],
    }


def mixed(run: int) -> list[dict[str, Any]]:
    """Template lines (odd node ids among them: a quote, a backslash, non-ASCII, a lone
    surrogate the stream writes as ``?``, times of -0.0), a node id twice, and lines of every
    other kind between them; more than one part of ``written_parts``."""
    odd = ['q"uote', "back\\slash", "ü\t\U0001f600", "lone\udcff", 'k","outcome":"x']
    found: list[dict[str, Any]] = []
    for n in range(260):
        name = f"t.py::test_{n}" if n % 40 else f"t.py::{odd[n // 40 % len(odd)]}_{n}"
        found.append(passing(name, n * 1e-5 + run, -0.0 if n % 7 == 0 else n * 1e-6, 2.5e-07))
        if n % 30 == 0:
            outcomes: tuple[Outcome, ...] = ("failed", "error", "skipped", "xfailed", "xpassed")
            outcome = outcomes[n // 30 % 5]
            other = result(f"other_{n}", outcome, message=f"assert {n} == {run}")
            found.append(compact(store.RESULT, other))
    found.append(passing("t.py::test_5", 9.0, 1.0, 2.0))  # --keep-duplicates: the last counts
    found.append(compact(store.RESULT, result("t.py::test_6", "failed")))
    return found


def write_stream(path: Path, stored: list[dict[str, Any]]) -> store.Written | None:
    writer = store.StreamWriter(path)
    writer.write_deselected(2)  # a line that is no result, between them
    for item in stored:
        writer.write_stored(dict(item))
    writer.close()
    return writer.written


def test_kept_passing_lines_give_the_rows_the_stream_gives(tmp_path: Path) -> None:
    """Two runs of template lines and others, indexed from what the writer kept and, in another
    index, from the stream read back: the same rows in ``results``, ``tests`` and
    ``fingerprints``; of the stream only the failing lines are read."""
    kept_dir, read_dir = tmp_path / "kept", tmp_path / "read"
    kept_dir.mkdir()
    read_dir.mkdir()
    for run in (1, 2):
        stream = tmp_path / f"results-{run}.jsonl"
        written = write_stream(stream, mixed(run))
        assert written is not None
        assert written.nodeids.count(None) == 5  # the failing lines: read back
        head = report(f"r{run}", run, [])
        extra = [result("t.py::extra", "failed")]
        record_run(read_dir, head, stream, extra, keep_runs=0)
        record_run(kept_dir, head, stream, extra, keep_runs=0, written=written)
    assert index_rows(kept_dir) == index_rows(read_dir)
    nodeids = [row[0] for row in index_rows(kept_dir)[0]]
    assert "t.py::lone?_120" in nodeids  # as its line was written
    assert "t.py::back\\slash_40" in nodeids


def test_the_session_end_reads_none_of_its_own_passing_lines_back(
    run_qbench: RunQBench, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's end indexes its passing and skipped tests without reading their lines (a
    parametrized test's too, which the template does not write), nor its failing one's (kept
    as the index reads it by the stream's writer). The rows are those ``qbench index`` of the
    run directory gives (its stream read back)."""
    read: list[str] = []

    def part_items(*args: Any) -> Any:
        read.append("part")
        return parts(*args)

    def line_at(*args: Any) -> Any:
        read.append("line")
        assert lines is not None
        return lines(*args)

    parts = session_end._part_items
    lines = getattr(session_end, "_line_at", None)  # main has none
    monkeypatch.setattr(session_end, "_part_items", part_items)
    monkeypatch.setattr(session_end, "_line_at", line_at, raising=False)
    pytester.makepyfile(
        test_mixed="""
        import pytest

        @pytest.mark.parametrize("n", [*range(150), 'q"uote', "back\\\\slash", "ü"])
        def test_pass(n):
            pass

        def test_fail():
            assert 1 == 2

        def test_skip():
            pytest.skip("no")
        """
    )
    run = run_qbench()
    assert run.report.summary.passed == 153
    assert read == []  # main read the failing test's line back
    monkeypatch.undo()
    again = pytester.path / "again"
    again.mkdir()
    head = cast("TestReportRecord", {**run.report.model_dump(mode="json"), "results": []})
    record_run(again, head, run.run_dir / store.STREAM_NAME, [], keep_runs=0)
    assert index_rows(again) == index_rows(pytester.path / ".qbench")


def test_a_stream_changed_or_written_in_part_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream whose file changed after its writer closed it (a line appended), or whose
    writer failed a write (a full disk), is read back: every result it holds is indexed."""
    stream = tmp_path / "results.jsonl"
    written = write_stream(stream, [passing("t.py::a", 0.1, 0.2, 0.3)])
    assert written is not None
    late = passing("t.py::late", 0.1, 0.2, 0.3)
    with stream.open("a", encoding="utf-8") as handle:
        handle.write(f"{store.passing_line(late)}\n")
    record_run(tmp_path, report("r1", 0, []), stream, [], keep_runs=0, written=written)
    assert [row[0] for row in index_rows(tmp_path)[0]] == ["t.py::a", "t.py::late"]

    writer = store.StreamWriter(tmp_path / "full.jsonl")
    writer.write_stored(passing("t.py::b", 0.1, 0.2, 0.3))

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(store, "os_write", full)
        with pytest.raises(OSError):
            writer.write_stored(passing("t.py::c", 0.1, 0.2, 0.3))
    writer.write_stored(passing("t.py::d", 0.1, 0.2, 0.3))
    writer.close()
    assert writer.written is None  # what it kept is not what the file holds


def test_what_a_writer_keeps_is_a_few_bytes_a_result(tmp_path: Path) -> None:
    """A plain passing result costs the kept list one reference (its node id is the test's own
    ``str``), three doubles and a byte: about 33 bytes, whatever the run's size (10 000 tests: 0.3
    MiB)."""
    import tracemalloc

    nodeids = [f"t.py::test_{n}" for n in range(20000)]
    writer = store.StreamWriter(tmp_path / "results.jsonl")
    stored = passing("", 0.125, 0.0, 1e-05)
    for nodeid in nodeids[:100]:  # the list and array have grown once
        writer.write_stored({**stored, "nodeid": nodeid})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for nodeid in nodeids[100:]:
            writer.write_stored({**stored, "nodeid": nodeid})
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        writer.close()
    assert 24 <= grown / 19900 < 40


def test_kept_results_reach_the_index_as_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part of kept results whose node ids are distinct is inserted from its columns (the
    run's id, and the outcome when all passed, written in the statement: no tuple of Python a
    row); a part with a node id twice as items, in order (the last one counts). The rows are
    those of the stream read back (``test_kept_passing_lines_give_the_rows_the_stream_gives``)."""
    rows_of: dict[str, int] = {"columns": 0, "tuples": 0}
    columns = getattr(SQLiteIndex, "insert_passes", None)  # main has none
    tuples = SQLiteIndex.insert_passed

    def insert_passes(self: SQLiteIndex, cursor: Any, run_ref: int, refs: Any, *rest: Any) -> None:
        rows_of["columns"] += len(refs)
        assert columns is not None
        columns(self, cursor, run_ref, refs, *rest)

    def insert_passed(self: SQLiteIndex, cursor: Any, rows: Any) -> None:
        rows_of["tuples"] += len(rows)
        tuples(self, cursor, rows)

    monkeypatch.setattr(SQLiteIndex, "insert_passes", insert_passes, raising=False)
    monkeypatch.setattr(SQLiteIndex, "insert_passed", insert_passed)
    stream = tmp_path / "results.jsonl"
    stored = mixed(1)  # test_5 twice, in two parts
    written = write_stream(stream, stored)
    assert written is not None
    kept_dir, read_dir = tmp_path / "kept", tmp_path / "read"
    kept_dir.mkdir()
    read_dir.mkdir()
    record_run(kept_dir, report("r1", 1, []), stream, [], keep_runs=0, written=written)
    assert rows_of == {"columns": len(stored) - 5, "tuples": 0}  # 5 failing lines read back

    rows_of.update(columns=0, tuples=0)
    twice = [passing("t.py::a", 1.0, 0.1, 0.2), passing("t.py::b", 2.0, 0.0, -0.0)]
    twice.append(passing("t.py::a", 3.0, 0.3, 0.4))  # in one part: the last one counts
    written = write_stream(tmp_path / "twice.jsonl", twice)
    assert written is not None
    record_run(kept_dir, report("r2", 2, []), tmp_path / "twice.jsonl", [], 0, written=written)
    assert rows_of == {"columns": 0, "tuples": 2}  # by test: a row for t.py::a
    monkeypatch.undo()
    record_run(read_dir, report("r1", 1, []), stream, [], keep_runs=0)
    record_run(read_dir, report("r2", 2, []), tmp_path / "twice.jsonl", [], keep_runs=0)
    assert index_rows(kept_dir) == index_rows(read_dir)
