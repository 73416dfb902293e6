"""``qbench quarantine add|remove|list``: in the history index (SQLite and PostgreSQL, migrated
from schema 6), or in a reviewed text file when ``qbench_quarantine_file`` is set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_data import index_reports
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.history import sql
from pytest_qbench.history.fingerprint import fingerprint_of
from pytest_qbench.history.quarantine import IndexQuarantine
from pytest_qbench.history.quarantine import failed_before_with


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["quarantine", *args])
    return code, capsys.readouterr().out


def test_the_index_keeps_the_quarantine(
    history_db: HistoryDB, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--dir", str(history_db.qbench_dir)] + (
        ["--db", history_db.url] if history_db.url else []
    )
    assert qbench(capsys, "add", "t.py::a", "--reason", "network", *where)[0] == 0
    code, out = qbench(capsys, "add", "t.py::b", *where)
    assert (code, out) == (0, "quarantined: t.py::b\n")
    code, out = qbench(capsys, "list", "--json", *where)
    tests = json.loads(out)["tests"]
    assert [(t["nodeid"], t["reason"]) for t in tests] == [("t.py::a", "network"), ("t.py::b", "")]
    assert all(t["added_at"] for t in tests)
    assert qbench(capsys, "remove", "t.py::a", *where) == (0, "released: t.py::a\n")
    assert qbench(capsys, "remove", "t.py::a", *where) == (1, "not quarantined: t.py::a\n")
    assert qbench(capsys, "list", *where) == (0, "t.py::b\n1 quarantined test\n")


def test_an_index_of_schema_6_gains_the_quarantine(history_db: HistoryDB) -> None:
    failing = result("a", "failed")
    index_reports(history_db.qbench_dir, report("r1", 0, [failing]), db=history_db.url)
    make_index_of_schema(history_db, 6)
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        store = IndexQuarantine(index)
        assert store.add("t.py::a", "flaky") is True
        assert store.add("t.py::a", "still flaky") is False
        assert [(e.nodeid, e.reason) for e in store.entries()] == [("t.py::a", "still flaky")]
        fp = fingerprint_of(failing)
        assert fp is not None
        assert failed_before_with(index, "t.py::a", fp) is True
        assert failed_before_with(index, "t.py::a", "0" * 16) is False
        assert failed_before_with(index, "t.py::other", fp) is False
    finally:
        index.close()


def test_a_quarantine_file_is_plain_text_teams_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\nqbench_quarantine_file = ci/quarantine.txt\n")
    listed = tmp_path / "ci" / "quarantine.txt"
    listed.parent.mkdir()
    listed.write_text("# reviewed by the team\nt.py::old  # ticket 12\n\n")
    assert qbench(capsys, "add", "t.py::new[1]", "--reason", "race")[0] == 0
    assert (
        listed.read_text()
        == "# reviewed by the team\nt.py::old  # ticket 12\n\nt.py::new[1] # race\n"
    )
    _code, out = qbench(capsys, "list", "--json")
    assert [(t["nodeid"], t["reason"]) for t in json.loads(out)["tests"]] == [
        ("t.py::new[1]", "race"),
        ("t.py::old", "ticket 12"),
    ]
    assert qbench(capsys, "remove", "t.py::old") == (0, "released: t.py::old\n")
    assert "t.py::old" not in listed.read_text() and "# reviewed" in listed.read_text()
    assert not (tmp_path / ".qbench").exists()  # the file, not the index


def test_auto_judges_the_failures_as_the_whole_window_would(tmp_path: Path) -> None:
    """``--qbench-quarantine=auto`` asks the monitors about a run's failures only, at its end:
    on a real index of 30 seeded runs, each test it is asked about gets the decision that
    classifying every candidate of the window gives (the way it was computed at session
    start), and a test it is not asked about costs nothing."""
    import random

    from pytest_qbench.history.database import existing_index
    from pytest_qbench.history.flakiness import DEFAULT_MONITORS
    from pytest_qbench.history.flakiness import examine
    from pytest_qbench.history.quarantine import flaky_among
    from pytest_qbench.history.queries import flaky_candidates

    draw = random.Random(26)
    rates = {f"t{n}": rate for n, rate in enumerate([0.0] * 20 + [0.2] * 6 + [1.0] * 2)}
    records = []
    for number in range(30):
        results = []
        for name, rate in rates.items():
            failed = draw.random() < rate
            retried = failed and rate < 1 and draw.random() < 0.5  # a rerun that passed
            outcome = "passed" if retried or not failed else "failed"
            results.append(result(name, outcome, flaky=retried))  # type: ignore[arg-type]
        records.append(report(f"r{number:02d}", number, results))
    index_reports(tmp_path, *records)
    index = existing_index(tmp_path, None)
    assert index is not None
    try:
        whole = {
            nodeid
            for nodeid, past in flaky_candidates(index, DEFAULT_MONITORS.window).items()
            if examine(past, DEFAULT_MONITORS).status == "flaky"
        }
        every = [f"t.py::{name}" for name in rates]
        judged = flaky_among(index, [*every, "t.py::never_ran"])
        assert set(judged) == whole
        assert {f"t.py::t{n}" for n in range(20, 26)} >= whole and whole  # flaky ones only
        assert flaky_among(index, every[:20]) == {}
    finally:
        index.close()
