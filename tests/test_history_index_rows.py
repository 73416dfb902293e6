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
