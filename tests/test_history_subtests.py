"""The history index counts pytest 9 subtests as pytest's closing line does: ``qbench runs``,
``show``, ``diff``, ``pr-comment`` and MCP's ``list_runs`` over stdio repeat pytest's own words
(``5 subtests passed``); a run indexed before the index kept them (an index of schema 7, made
by the qbench of that time) is upgraded in place and its subtests are "unknown", never 0.
Real pytest runs in subprocesses, the real CLI, real SQLite files (and PostgreSQL for the
migration)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from child_pytest import run_child
from history_data import index_args
from history_data import index_reports
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from mcp_helpers import mcp_call
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.history import sql
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.queries import list_runs


pytestmark = [
    pytest.mark.skipif(not hasattr(pytest, "SubtestReport"), reason="pytest 9's built-in subtests"),
    pytest.mark.runs_pytest,  # pytest with qbench, in subprocesses
    pytest.mark.xdist_group("test_history_subtests"),  # one worker makes `project`
]

SUITE = """
    import pathlib
    import pytest

    def test_numbers(subtests):
        bad = int(pathlib.Path("plan.txt").read_text())
        for i in range(4):
            with subtests.test(msg="check", i=i):
                assert i != bad

    def test_skips(subtests):
        with subtests.test(msg="skip"):
            pytest.skip("not here")
        with subtests.test(msg="ok"):
            pass

    def test_plain():
        pass
"""
CLOSING = re.compile(r"^=+ (.*) in [0-9.]+s(?: \([0-9:]+\))? =+$")
OLD_INDEX = Path(__file__).parent / "data" / "history" / "index-schema-7.sql"
"""An index made by qbench before schema 8 (its header says how)."""
OLD_RUN = "20261126T112924Z-6fa35f"
"""Its one run: ``2 failed, 1 passed, 2 subtests passed`` by pytest's count."""


@dataclass(frozen=True)
class Run:
    """A pytest run of the project: its id and pytest's closing line (without the time)."""

    run_id: str
    line: str


def run_pytest(root: Path, run_id: str, bad: int, *args: str) -> Run:
    """Run the suite in ``root`` with the subtest ``bad`` failing (-1: none); pytest's line."""
    (root / "plan.txt").write_text(str(bad))
    done = run_child(root, *args, run_id=run_id)
    lines = [m.group(1) for line in done.stdout.splitlines() if (m := CLOSING.match(line))]
    assert lines, done.stdout + done.stderr
    return Run(run_id, lines[-1])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Run]]:
    """The suite run twice: at pytest's default verbosity with a failing subtest (pytest's line
    leaves out the subtests that passed), then verbose with none failing."""
    root = tmp_path_factory.mktemp("subtests").resolve()
    (root / "test_subs.py").write_text(textwrap.dedent(SUITE))
    runs = [run_pytest(root, "r1", 3), run_pytest(root, "r2", -1, "-v")]
    assert "subtests passed" not in runs[0].line and "5 subtests passed" in runs[1].line
    assert "2 failed" in runs[0].line  # the failed subtest beside its test, as pytest counts
    return root, runs


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``qbench ARGS`` in process (in the current directory): exit status and output."""
    capsys.readouterr()
    status = main(list(args))
    return status, capsys.readouterr().out


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    status, out = qbench(capsys, *args, "--json")
    assert status in (0, 1), out
    return json.loads(out)


def test_runs_show_and_diff_say_what_pytest_said(
    project: tuple[Path, list[Run]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, (first, second) = project
    monkeypatch.chdir(root)
    _status, listed = qbench(capsys, "runs")
    rows = {line.split()[0]: line for line in listed.splitlines()[1:3]}
    assert f"3 tests: {first.line}  " in rows["r1"], (rows, first.line)
    assert f"3 tests: {second.line}  " in rows["r2"], (rows, second.line)

    _status, shown = qbench(capsys, "show", "r1")
    assert f"tests     3: {first.line}\n" in shown
    assert "subtests  1 failed subtest, counted in pytest's failed\n" in shown
    _status, shown = qbench(capsys, "show", "r2")
    assert f"tests     3: {second.line}\n" in shown and "\nsubtests" not in shown

    status, diff = qbench(capsys, "diff", "r1", "r2")
    assert status == 0
    base, head = diff.splitlines()[:2]
    assert base.startswith("base  r1  ") and base.endswith(f"  3 tests: {first.line}")
    assert head.startswith("head  r2  ") and head.endswith(f"  3 tests: {second.line}")


def test_the_json_and_the_pr_comment_count_subtests(
    project: tuple[Path, list[Run]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, _runs = project
    monkeypatch.chdir(root)
    summaries = {r["run_id"]: r["summary"] for r in qbench_json(capsys, "runs")["runs"]}
    for run_id, summary in summaries.items():
        written = json.loads((root / ".qbench" / "runs" / run_id / "report.json").read_text())
        for name in sql.SUBTEST_COLUMNS:
            assert summary[name] == written["summary"][name], (run_id, name)
    assert (summaries["r1"]["subtests_failed"], summaries["r2"]["subtests_passed"]) == (1, 5)
    shown = qbench_json(capsys, "show", "r2")
    assert shown["summary"]["subtests_passed"] == 5
    diff = qbench_json(capsys, "diff", "r1", "r2")
    assert diff["head"]["summary"]["subtests_passed"] == 5

    _status, comment = qbench(capsys, "pr-comment", "r2", "--base", "r1")
    assert "5 subtests passed (+5)" in comment, comment


def test_list_runs_over_mcp_says_what_pytest_said(project: tuple[Path, list[Run]]) -> None:
    """A real MCP client over stdio: each run's line is pytest's closing line; the structured
    summary has the subtest counts."""
    pytest.importorskip("mcp")
    root, runs = project
    result = mcp_call(root, "list_runs", {"limit": 5})
    lines = result.content[0].text.splitlines()
    for run, line in zip(reversed(runs), lines, strict=True):
        assert line.startswith(f"{run.run_id}  ") and f"  {run.line} in " in line, (line, run)
    summaries = {r["run_id"]: r["summary"] for r in result.structured_content["runs"]}
    assert summaries["r2"]["subtests_passed"] == 5 and summaries["r1"]["subtests_failed"] == 1


def test_an_index_of_the_previous_schema_is_upgraded_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index file the previous qbench made: opened, it gains the subtest columns and keeps
    its run, whose subtests are unknown (never "0"); a new run is indexed with them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".qbench").mkdir()
    path = tmp_path / ".qbench" / "index.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_INDEX.read_text())
    db.close()

    _status, listed = qbench(capsys, "runs")
    assert f"{OLD_RUN}  " in listed and "2 tests: 2 failed, 1 passed  " in listed
    assert "subtests" not in listed
    with sqlite3.connect(path) as db:
        assert db.execute(sql.GET_VERSION).fetchall() == [(str(sql.SCHEMA_VERSION),)]
        columns = ", ".join(sql.SUBTEST_COLUMNS)
        assert db.execute(f"SELECT {columns} FROM runs").fetchall() == [(None, None, None)]
    db.close()
    _status, shown = qbench(capsys, "show", OLD_RUN)
    assert "subtests  unknown: the run was indexed before qbench kept subtest counts" in shown
    old = qbench_json(capsys, "show", OLD_RUN)["summary"]
    assert not set(sql.SUBTEST_COLUMNS) & set(old)

    (tmp_path / "test_subs.py").write_text(textwrap.dedent(SUITE))
    new = run_pytest(tmp_path, "new", -1, "-v")
    _status, diff = qbench(capsys, "diff", OLD_RUN, "new")
    assert diff.splitlines()[0].endswith("2 tests: 2 failed, 1 passed")
    assert diff.splitlines()[1].endswith(f"3 tests: {new.line}") and "subtests passed" in new.line
    _status, comment = qbench(capsys, "pr-comment", "new", "--base", OLD_RUN)
    assert "5 subtests passed" in comment and "5 subtests passed (" not in comment


def test_reindexing_a_run_directory_keeps_its_subtests(
    project: tuple[Path, list[Run]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``qbench index`` (a lost index rebuilt from the run directories) and ``qbench render``
    of a run directory write the subtest counts; a report.json of a qbench that did not count
    subtests yet leaves them unknown."""
    root, (_first, second) = project
    copy = tmp_path / "copy"
    shutil.copytree(root / ".qbench", copy / ".qbench")
    monkeypatch.chdir(copy)
    (copy / ".qbench" / "index.sqlite").unlink()
    old_report = copy / ".qbench" / "runs" / "r1" / "report.json"
    data = json.loads(old_report.read_text())
    for name in sql.SUBTEST_COLUMNS:
        del data["summary"][name]
    old_report.write_text(json.dumps(data))
    assert qbench(capsys, "index")[0] == 0
    _status, listed = qbench(capsys, "runs")
    assert f"3 tests: {second.line}  " in listed
    _status, shown = qbench(capsys, "show", "r1")
    assert "subtests  unknown" in shown

    (copy / ".qbench" / "index.sqlite").unlink()
    assert qbench(capsys, "render", str(copy / ".qbench" / "runs" / "r2"))[0] == 0
    _status, shown = qbench(capsys, "show", "r2")
    assert f"tests     3: {second.line}\n" in shown


def test_the_migration_on_each_backend(history_db: HistoryDB) -> None:
    """An index of schema 7 (SQLite or PostgreSQL) gains the subtest columns when opened: its
    runs stay, with their subtests unknown; runs indexed after it have them."""
    with_subtests = report("r1", 0, [result("a", "failed")])
    with_subtests["summary"]["subtests_passed"] = 3
    index_reports(history_db.qbench_dir, with_subtests, db=history_db.url)
    make_index_of_schema(history_db, 7)
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        [old] = list_runs(index, 5)
        assert not old.subtests_known and "subtests_passed" not in old.counts
        later = report("r2", 1, [result("a")])
        summary = later["summary"]
        summary["subtests_passed"], summary["subtests_failed"], summary["subtests_skipped"] = (
            5,
            2,
            1,
        )
        index_run(index, *index_args(later))
        new, old = list_runs(index, 5)
    finally:
        index.close()
    assert new.subtests_known and not old.subtests_known
    assert {name: new.counts[name] for name in sql.SUBTEST_COLUMNS} == {
        "subtests_passed": 5,
        "subtests_failed": 2,
        "subtests_skipped": 1,
    }


def test_runs_indexed_into_each_backend_say_what_pytest_said(
    project: tuple[Path, list[Run]],
    history_db: HistoryDB,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The run directories indexed into a new index (SQLite) or database (PostgreSQL) with
    ``qbench index``: ``qbench runs`` and ``show`` read pytest's words back from it."""
    root, (first, second) = project
    monkeypatch.chdir(history_db.qbench_dir)
    where = ["--dir", str(history_db.qbench_dir / ".qbench")]
    where += ["--db", history_db.url] if history_db.url else []
    runs = root / ".qbench" / "runs"
    assert qbench(capsys, "index", str(runs / "r1"), str(runs / "r2"), *where)[0] == 0
    _status, listed = qbench(capsys, "runs", *where)
    assert f"3 tests: {first.line}  " in listed and f"3 tests: {second.line}  " in listed
    _status, shown = qbench(capsys, "show", "r1", *where)
    assert "subtests  1 failed subtest, counted in pytest's failed\n" in shown
