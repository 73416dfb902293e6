"""A plugin's own outcome words in the history index (schema 12): a conftest's
``pytest_report_teststatus`` that counts a failure under its own word makes pytest end with
``2 passed, 1 skipped, 1 known`` (exit status 1). The report kept the word; the index kept only
pytest's own categories, so every history reader said ``4 tests: 2 passed, 1 skipped``."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import qbench_here
from history_data import index_reports
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from postgres_server import HistoryDB

from pytest_qbench.history import sql
from pytest_qbench.history.queries import list_runs
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.run_history import runs_text
from pytest_qbench.mcp.tools import QBenchTools


CONFTEST = """
def pytest_report_teststatus(report, config):
    if report.when == "call" and report.failed and "known" in report.keywords:
        return "known", "K", "KNOWN"
"""
TESTS = """
import os
import pytest

@pytest.mark.known
def test_known():
    assert not os.environ.get("FAIL_KNOWN")

def test_ok():
    pass

def test_ok2():
    pass

@pytest.mark.skip
def test_skip():
    pass
"""
OLD = Path(__file__).parent / "data" / "history"


def make_project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_a.py").write_text(TESTS)
    (root / "pytest.ini").write_text("[pytest]\nmarkers = known\n")
    return root


def run_pytest(root: Path, *args: str, fail: bool = True) -> str:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "FAIL_KNOWN": "1" if fail else ""}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "qbench", "-q", *args],
        cwd=root, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == (1 if fail else 0), done.stdout + done.stderr
    return done.stdout.splitlines()[-1]


def qbench(root: Path, *args: str, status: int = 0) -> str:
    """``qbench ARGS`` in ``root``, in this process (``cli_here``): its output."""
    done = qbench_here(*args, cwd=root)
    assert done.ret == status, done.out + done.err
    return done.out


def test_every_history_reader_counts_a_plugin_s_own_word_as_pytest_s_line_does(
    tmp_path: Path,
) -> None:
    """A green run, then the known failure: `qbench runs`, `show`, `diff`, `pr-comment`,
    `runs --json` and MCP `list_runs` give the line's ``1 known`` (on schema 11 they said
    ``4 tests: 2 passed, 1 skipped``, one test short of the total)."""
    root = make_project(tmp_path / "p")
    assert run_pytest(root, fail=False).startswith("3 passed, 1 skipped in ")
    assert run_pytest(root).startswith("2 passed, 1 skipped, 1 known in ")
    line = "4 tests: 2 passed, 1 skipped, 1 known"
    runs = qbench(root, "runs")
    assert line in runs and "4 tests: 3 passed, 1 skipped" in runs
    assert "tests     4: 2 passed, 1 skipped, 1 known\n" in qbench(root, "show", "last")
    diff = qbench(root, "diff", "last~1", "last", status=1)
    assert f"  {line}\n" in diff and "New failures (1):" in diff
    comment = qbench(root, "pr-comment", "--base", "last~1")
    assert "**4 tests**: 2 passed (-1), 1 skipped, 1 known (+1) · run" in comment
    [known, green] = json.loads(qbench(root, "runs", "--json"))["runs"]
    assert (known["other"], green["other"]) == ({"known": 1}, {})
    tools = QBenchTools(ServerConfig(root=root, qbench_dir=root / ".qbench"))
    listed = tools.list_runs(2)
    assert [entry.other for entry in listed.runs] == [{"known": 1}, {}]
    assert "2 passed, 1 skipped, 1 known in " in runs_text(listed, 10_000)


def test_diff_knows_a_run_stopped_by_x_at_a_failure_counted_under_a_plugin_s_word(
    tmp_path: Path,
) -> None:
    """``-x`` and the known failure first: pytest stops there (its maxfail counts every failed
    report, whatever word the line files it under). `qbench diff` listed the two tests the run
    never reached as removed; it now says the run stopped at its failures."""
    root = make_project(tmp_path / "p")
    run_pytest(root, "-x", fail=False)
    assert run_pytest(root, "-x").startswith("1 known in ")
    diff = qbench(root, "diff", "last~1", "last", status=1)
    assert "Removed tests" not in diff
    assert "stopped at its failures by -x, --maxfail or --sw" in diff
    assert "0 removed tests, 3 not selected in B" in diff


def test_an_index_of_schema_11_is_migrated_and_learns_the_words_when_indexed_again(
    tmp_path: Path,
) -> None:
    """``index-schema-11.sql``: main's qbench (schema 11) indexed a run whose line was ``2
    passed, 1 skipped, 1 known``. This qbench migrates it in place to 12, the run kept (its
    words not known: the index never had them), and indexing its report.json again
    (``index-schema-11-known.json``) records them."""
    (tmp_path / ".qbench").mkdir()
    with sqlite3.connect(tmp_path / ".qbench/index.sqlite") as db:
        db.executescript((OLD / "index-schema-11.sql").read_text())
    runs = qbench(tmp_path, "runs", "--dir", ".qbench")
    assert "known1" in runs and "4 tests: 2 passed, 1 skipped  " in runs
    with sqlite3.connect(tmp_path / ".qbench/index.sqlite") as db:
        assert db.execute(sql.GET_VERSION).fetchall() == [("12",)]
        assert db.execute("SELECT run_id, other_counts FROM runs").fetchall() == [("known1", None)]
    shutil.copy(OLD / "index-schema-11-known.json", tmp_path / "report.json")
    qbench(tmp_path, "index", "report.json", "--dir", ".qbench")
    assert "4 tests: 2 passed, 1 skipped, 1 known" in qbench(tmp_path, "runs", "--dir", ".qbench")
    shown = json.loads(qbench(tmp_path, "show", "known1", "--json", "--dir", ".qbench"))
    assert shown["other"] == {"known": 1}


def test_each_backend_migrates_to_12_and_keeps_a_run_s_own_words(history_db: HistoryDB) -> None:
    """On SQLite and PostgreSQL: an index of schema 11 gains ``runs.other_counts`` when opened
    (its run kept, its words not known); a run indexed after keeps them, in the line's order."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    make_index_of_schema(history_db, 11)
    counted = report("r2", 1, [result("a", "failed"), result("b", "failed")])
    counted["summary"]["other"] = {"known": 1, "wip": 1}
    index_reports(history_db.qbench_dir, counted, db=history_db.url)
    assert history_db.query(sql.GET_VERSION) == [("12",)]
    index = history_db.open()
    try:
        runs = list_runs(index, 5)
    finally:
        index.close()
    assert [(run.run_id, run.other) for run in runs] == [
        ("r2", {"known": 1, "wip": 1}),
        ("r1", {}),
    ]
    assert list(runs[0].other) == ["known", "wip"]


@pytest.mark.parametrize("other", [{}, {"known": 0}])
def test_a_run_without_own_words_stores_none(other: dict[str, int]) -> None:
    """No word (or only words of 0, which pytest's line leaves out): ``NULL``, as in a run
    indexed before schema 12."""
    from pytest_qbench.history.indexer import other_counts_text

    assert other_counts_text(other) is None
    assert other_counts_text({"known": 2, "todo": 1}) == '{"known": 2, "todo": 1}'
