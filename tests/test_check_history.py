"""Static-check diagnostics in history (issue 13.5): fingerprints without the line, each
diagnostic of a test run's report marked ``new`` or ``existing since <run>``, ``qbench diff``
listing new and fixed diagnostics, on both backends, with real ruff in real pytest runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from typing import Literal

import pytest
from history_data import index_args
from history_data import index_reports
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.history import sql
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.history.diagnostics import diff_diagnostics
from pytest_qbench.history.fingerprint import diagnostic_fingerprint
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.queries import list_runs
from pytest_qbench.report.records import TestReportRecord
from pytest_qbench.report.shapes import new

from conftest import QBenchRun
from conftest import RunQBench


def test_diagnostic_fingerprint_ignores_the_line_and_numbers() -> None:
    """issue 13.5: the same tool, code, file and message (numbers aside) is one diagnostic."""
    base = diagnostic_fingerprint("ruff.lint", "F401", "mod.py", "`os` imported but unused")
    assert diagnostic_fingerprint("ruff.lint", "F401", "mod.py", "`os` imported but unused") == base
    assert diagnostic_fingerprint(
        "mypy.typecheck", "x", "a.py", "expected 2 arguments, got 3"
    ) == diagnostic_fingerprint("mypy.typecheck", "x", "a.py", "expected 4 arguments, got 1")
    assert diagnostic_fingerprint("ruff.lint", "F401", "sub\\mod.py", "m") == (
        diagnostic_fingerprint("ruff.lint", "F401", "sub/mod.py", "m")
    )
    others = [
        ("mypy.typecheck", "F401", "mod.py", "`os` imported but unused"),
        ("ruff.lint", "F811", "mod.py", "`os` imported but unused"),
        ("ruff.lint", "F401", "other.py", "`os` imported but unused"),
        ("ruff.lint", "F401", "mod.py", "`sys` imported but unused"),
    ]
    assert all(diagnostic_fingerprint(*other) != base for other in others)


FIRST = """\
import os


def add(a: int, b: int) -> int:
    return a + b
"""
SECOND = """\
'''A module.'''

import os
import sys


def add(a: int, b: int) -> int:
    return a + b
"""
THIRD = """\
'''A module.'''

import sys


def add(a: int, b: int) -> int:
    return a + b
"""
TESTS = """\
def test_one():
    assert 1 + 1 == 2
"""


def checked_run(pytester: pytest.Pytester, run_qbench: RunQBench, run_id: str) -> QBenchRun:
    """A test run with real ruff, as ``run_id``."""
    return run_qbench(
        "--qbench-check=ruff", f"--qbench-run-id={run_id}", subprocess=True, run_dir=run_id
    )


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``qbench ARGS`` in process (the console script's own exit status is tested in
    test_history_runs.py), which exits 0; its stdout."""
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def diff_json(capsys: pytest.CaptureFixture[str], *runs: str) -> dict[str, Any]:
    """``qbench diff RUNS --json``'s diagnostics part."""
    data: dict[str, Any] = json.loads(qbench(capsys, "diff", *runs, "--json"))["diagnostics"]
    return data


def test_diagnostics_new_existing_and_fixed_across_real_runs(
    history_db: HistoryDB,  # first: psycopg is imported before pytester snapshots sys.modules
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """issue 13.5: run 1 has F401 on os; run 2 has it two lines down plus one on sys: its report
    says existing since run 1 and new, and qbench diff lists one new, none fixed; run 3 without
    the first: diff lists it fixed."""
    if history_db.url is not None:
        monkeypatch.setenv(ENV_VAR, history_db.url)
    pytester.makefile(".py", test_one=TESTS)
    pytester.makefile(".py", mod=FIRST)
    first = checked_run(pytester, run_qbench, "r1")
    assert [(d.code, d.line, d.history) for d in first.report.diagnostics] == [("F401", 1, "new")]
    pytester.makefile(".py", mod=SECOND)
    second = checked_run(pytester, run_qbench, "r2")
    found = sorted((d.message, d.line, d.history) for d in second.report.diagnostics)
    assert found == [
        ("`os` imported but unused", 3, "existing since r1"),
        ("`sys` imported but unused", 4, "new"),
    ]
    md = (second.run_dir / "report.md").read_text(encoding="utf-8")
    assert "| Where | Severity | Code | Message | History |" in md
    assert "| \\`os\\` imported but unused | existing since r1 |" in md
    assert "| \\`sys\\` imported but unused | new |" in md

    data = diff_json(capsys, "r1", "r2")
    assert data["compared"] == ["ruff.lint"]
    assert [(d["code"], d["message"]) for d in data["new"]] == [
        ("F401", "`sys` imported but unused")
    ]
    assert data["fixed"] == []
    out = qbench(capsys, "diff", "r1", "r2")
    assert "New diagnostics (1):" in out
    assert "mod.py:4  ruff.lint F401  `sys` imported but unused" in out
    assert "Fixed diagnostics" not in out
    assert "1 new diagnostic, 0 fixed diagnostics" in out

    pytester.makefile(".py", mod=THIRD)
    third = checked_run(pytester, run_qbench, "r3")
    assert [(d.line, d.history) for d in third.report.diagnostics] == [(3, "existing since r2")]
    data = diff_json(capsys, "r2", "r3")
    assert data["new"] == []
    assert [(d["file"], d["message"]) for d in data["fixed"]] == [
        ("mod.py", "`os` imported but unused")
    ]
    out = qbench(capsys, "diff", "r2", "r3")
    assert "Fixed diagnostics (1):" in out
    assert "mod.py:3  ruff.lint F401  `os` imported but unused" in out

    # a run without --qbench-check: nothing compared, and diff says so
    run_qbench("--qbench-run-id=r4", subprocess=True, run_dir="r4")
    data = diff_json(capsys, "r3", "r4")
    assert (data["compared"], data["only_in_base"], data["new"], data["fixed"]) == (
        [],
        ["ruff.lint"],
        [],
        [],
    )
    out = qbench(capsys, "diff", "r3", "r4")
    assert "ruff.lint: checked only in A, not in B: not compared" in out


def checks_report(run_id: str, minutes: int, *messages: str) -> TestReportRecord:
    """A test run's report record whose ruff run found ``messages`` (F401 in mod.py)."""
    record = report(run_id, minutes, [result("a")])
    status: Literal["clean", "failed"] = "failed" if messages else "clean"
    record["checks"] = [new("CheckRun", run={**record["run"], "tool": "ruff.lint"}, status=status)]
    record["diagnostics"] = [
        new(
            "Diagnostic",
            tool="ruff.lint",
            severity="error",
            code="F401",
            file="mod.py",
            line=1,
            message=m,
        )
        for m in messages
    ]
    return record


def test_an_index_of_schema_3_gains_the_diagnostics(history_db: HistoryDB) -> None:
    """issue 13.5: an index of schema 3 (without checked and diagnostics) is migrated when
    opened: its runs stay, a new run's diagnostics are indexed, and retention deletes them."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    make_index_of_schema(history_db, 3)
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
        index_run(index, *index_args(checks_report("r2", 1, "`os` imported but unused")))
        index_run(index, *index_args(checks_report("r3", 2, "`sys` imported but unused")))
        diff = diff_diagnostics(index, "r2", "r3")
        assert [d.message for d in diff.new] == ["`sys` imported but unused"]
        assert [d.message for d in diff.fixed] == ["`os` imported but unused"]
        assert diff_diagnostics(index, "r1", "r3").only_head == ["ruff.lint"]
        index_run(index, *index_args(report("r4", 3, [result("a")])), keep_runs=1)
        assert history_db.query("SELECT COUNT(*) FROM diagnostics") == [(0,)]
        assert history_db.query("SELECT COUNT(*) FROM checked") == [(0,)]
    finally:
        index.close()


def test_the_same_diagnostic_twice_is_one_row_counted_twice(history_db: HistoryDB) -> None:
    """issue 13.5: two diagnostics with one fingerprint (another line) are one row, occurring
    twice; a clean run of the checker fixes it."""
    index = history_db.open(create=True)
    try:
        twice = checks_report("r1", 0, "`os` imported but unused", "`os` imported but unused")
        index_run(index, *index_args(twice))
        index_run(index, *index_args(checks_report("r2", 1)))
        diff = diff_diagnostics(index, "r1", "r2")
        assert [(d.message, d.occurrences) for d in diff.fixed] == [("`os` imported but unused", 2)]
        assert diff.compared == ["ruff.lint"]
    finally:
        index.close()


def test_diff_of_runs_without_checks_lists_no_diagnostics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13.5: runs that checked nothing: no diagnostics section, the summary as before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".qbench").mkdir()
    index_reports(
        tmp_path / ".qbench", report("r1", 0, [result("a")]), report("r2", 1, [result("a")])
    )
    assert main(["diff", "r1", "r2"]) == 0
    out = capsys.readouterr().out
    assert "diagnostic" not in out
    assert "not compared" not in out
