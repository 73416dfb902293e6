"""Indexing at the end of a run leaves the same rows as an earlier release did, and gives the
failing tests the same histories (the indexer's cheaper writes and parse change no answer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_data import indexed_items
from history_data import result
from index_rows_data import index_rows

from pytest_qbench.core.types import Outcome


pytestmark = pytest.mark.engine

GOLDEN = Path(__file__).parent / "data" / "history" / "index-rows.json"


def test_a_mixed_run_leaves_the_rows_an_earlier_release_left(tmp_path: Path) -> None:
    """Three runs (passes, failures, errors, skips, xfail and xpass, a rerun pass, metrics, a
    node id twice, odd node ids; more results than one statement and one batch take; the
    first run indexed again) give the rows and histories ``index-rows.json`` holds."""
    found = json.loads(json.dumps(index_rows(tmp_path)))
    expected = json.loads(GOLDEN.read_text())
    for table, rows in expected["tables"].items():
        assert found["tables"][table] == rows, table
    assert found["histories"] == expected["histories"]


@pytest.mark.parametrize(
    "durations",
    [{}, {"call": 0.5}, {"setup": 1e-05}, {"call": 3.0, "teardown": 2.5e-07}, {"setup": 0.0}],
)
@pytest.mark.parametrize("outcome", ["passed", "skipped", "xfailed", "xpassed"])
def test_a_passing_line_read_in_part_gives_what_a_whole_parse_gives(
    tmp_path: Path, outcome: Outcome, durations: dict[str, float]
) -> None:
    """The outcome, duration and phase seconds read from a stream line without parsing it as
    JSON are those of the whole record, whichever phases its durations hold."""
    from pytest_qbench.report import store

    record = {**result('n"ode\\,"durations":{}', outcome, duration=7.5e-05), "durations": durations}
    writer = store.StreamWriter(tmp_path / "results.jsonl")
    writer.write_result(record)  # type: ignore[arg-type]
    writer.close()
    (light,) = indexed_items(tmp_path / "results.jsonl")
    assert "test_name" not in light  # read in part
    assert (light["nodeid"], light["outcome"], light["duration"]) == (
        record["nodeid"],
        outcome,
        7.5e-05,
    )
    for phase in ("setup", "teardown"):
        assert light["durations"].get(phase) == durations.get(phase)


def test_new_tests_are_numbered_without_selecting_them_again(tmp_path: Path) -> None:
    """A batch's new node ids get their ids from the ``INSERT`` that adds them (SQLite numbers
    the rows of one statement in order), and after a batch of new tests the next is inserted
    without looking its node ids up first: a new index's run looks them up once, not twice a
    batch. Each result's row refers to its own node id: in a new index, in one whose tests are
    known in part (a batch after one of new tests holding known ones), and in one whose
    largest id is so large that SQLite may pick ids at random (then the ids are selected). A
    look-up gives the ids in the node ids' order, without reading their text back."""
    from history_data import index_args
    from history_data import report

    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.indexer import index_run

    lookups: list[str] = []
    index = open_index(tmp_path, None, create=True)
    conn = index._conn  # type: ignore[attr-defined]
    looks_up = ("nodeid IN", "FROM wanted")  # main's look-up, this one's

    def trace(text: str) -> None:
        if any(key in text for key in looks_up):
            lookups.append(text)

    conn.set_trace_callback(trace)

    def indexed(run_id: str, names: list[str]) -> list[str]:
        lookups.clear()
        index_run(index, *index_args(report(run_id, len(names), [result(n) for n in names])))
        return list(lookups)

    def rows_of(run_id: str) -> list[tuple[str, str]]:
        found = conn.execute(
            "SELECT t.nodeid, r.test_ref FROM results r JOIN tests t ON t.id = r.test_ref "
            "JOIN runs ON runs.id = r.run_ref WHERE runs.run_id = ? ORDER BY t.nodeid",
            (run_id,),
        ).fetchall()
        return [(nodeid, f"{ref}") for nodeid, ref in found]

    try:
        first = [f"test_{i}" for i in range(250)]  # three batches, all new
        assert len(indexed("r1", first)) == 1
        assert [nodeid for nodeid, _ in rows_of("r1")] == sorted(f"t.py::{n}" for n in first)
        second = [f"test_{i}" for i in range(200, 330)]  # known, then new
        looked = indexed("r2", second)
        assert len(looked) == 2
        assert not any("SELECT id, nodeid" in text for text in looked)  # ids only, in order
        third = [f"test_{i}" for i in range(400, 550)] + [f"test_{i}" for i in range(20)]
        assert len(indexed("r3", third)) == 2  # new, then new and known: looked up after all
        runs = dict(rows_of("r1")) | dict(rows_of("r2")) | dict(rows_of("r3"))
        assert len(set(runs.values())) == len(runs) == 480  # one id a node id
        assert [nodeid for nodeid, _ in rows_of("r3")] == sorted(f"t.py::{n}" for n in third)
        conn.execute("INSERT INTO tests (id, nodeid) VALUES (?, 'far')", (1 << 62,))
        assert len(indexed("r4", ["late_a", "late_b"])) == 2  # selected again
        late = rows_of("r4")
        ids = dict(conn.execute("SELECT nodeid, id FROM tests WHERE nodeid LIKE 't.py::late_%'"))
        assert late == [(nodeid, f"{ids[nodeid]}") for nodeid in ("t.py::late_a", "t.py::late_b")]
    finally:
        index.close()
