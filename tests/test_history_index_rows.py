"""Indexing at the end of a run leaves the same rows as an earlier release did, and gives the
failing tests the same histories (the indexer's cheaper writes and parse change no answer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from index_rows_data import index_rows


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
