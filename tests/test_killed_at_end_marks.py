"""Runs killed during their session's end keep their mark in ``.qbench/unfinished/`` until
``qbench render RUN_DIR`` writes their report.json: the mark is what makes them read as
incomplete (`qbench index`, the history's commands, the next run, an older qbench). Every
later run's session end finds the marks again: it must index each such run once, never read it
as complete, and pay for a mark no more than a look at it (before: each mark was looked at five
times, its stream's end read three times, and the index asked once per mark and for every
run's id, at every later run)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.history.database import open_index
from pytest_qbench.history.files import died_marked
from pytest_qbench.history.session_end import _index_died
from pytest_qbench.report import store

from conftest import RunQBench


KILL_WRITING_REPORT = """
import os, signal
from pytest_qbench.report import store


def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


if os.environ.get("QBENCH_TEST_KILL"):
    store.write_report_json = killed
"""
MARKS = 50


def copy_run(qbench_dir: Path, source: str, run_id: str) -> None:
    """The run ``source`` again as ``run_id``: its directory (the id in its stream) and mark."""
    old, new = store.run_dir(qbench_dir, source), store.run_dir(qbench_dir, run_id)
    shutil.copytree(old, new)
    stream = new / store.STREAM_NAME
    text = stream.read_text(encoding="utf-8")
    stream.write_text(text.replace(f'"run_id":"{source}"', f'"run_id":"{run_id}"'), "utf-8")
    marks = qbench_dir / store.UNFINISHED_DIR
    shutil.copy(marks / source, marks / run_id)


def later_session_end(qbench_dir: Path, statements: list[str]) -> list[str]:
    """What a later run's session end does with the marks (``session_end.record_run``'s first
    lines), the index's statements in ``statements``; its notes."""
    died = died_marked(qbench_dir, "later")
    index = open_index(qbench_dir, None, create=True)
    index._conn.set_trace_callback(statements.append)  # type: ignore[attr-defined]
    try:
        return _index_died(qbench_dir, index, died)
    finally:
        index.close()


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    calls: list[Any] = []
    real: Callable[..., Any] = getattr(store, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(store, name, counted)
    return calls


def test_fifty_runs_killed_at_their_end_are_indexed_once_and_cost_a_look_each(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run SIGKILLed while writing its report.json (after it indexed itself, as complete),
    and 49 copies of it: the next session end indexes the 50 as incomplete; each later one
    indexes none, keeps the marks, asks the index one statement (not one a mark, nor every
    run's id) and looks at each run twice, never reading its stream; `qbench render` takes a
    mark away (the next session end does), its run still incomplete."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    pytester.makeconftest(KILL_WRITING_REPORT)
    run_qbench("--qbench-run-id=r0", "-p", "no:randomly", subprocess=True, run_dir="r0")
    monkeypatch.setenv("QBENCH_TEST_KILL", "1")
    killed = pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=k00")
    assert killed.ret < 0 or killed.ret > 1  # SIGKILL
    monkeypatch.delenv("QBENCH_TEST_KILL")
    qbench_dir = pytester.path / ".qbench"
    assert store.killed_at_end(store.run_dir(qbench_dir, "k00"))
    for number in range(1, MARKS):
        copy_run(qbench_dir, "k00", f"k{number:02d}")
    first = later_session_end(qbench_dir, [])
    assert sum("indexed" in note for note in first) == MARKS  # k00 again: incomplete
    marks = sorted(store.unfinished_runs(qbench_dir))
    assert len(marks) == MARKS

    looked = counting(monkeypatch, "run_in_progress")
    streams = counting(monkeypatch, "stream_ended")
    statements: list[str] = []
    assert later_session_end(qbench_dir, statements) == []
    assert sorted(store.unfinished_runs(qbench_dir)) == marks
    assert len(looked) <= 2 * MARKS  # main: 5 a mark
    assert len(streams) <= MARKS  # main: 3 a mark
    asked = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(asked) <= 2, asked  # main: every run's id, then one a mark
    with sqlite3.connect(qbench_dir / "index.sqlite") as db:
        rows = db.execute("SELECT run_id, recording_errors FROM runs WHERE run_id LIKE 'k%'")
        assert sorted(rows) == [(run_id, 1) for run_id in marks]

    assert main(["render", str(store.run_dir(qbench_dir, "k07"))]) == 0
    assert later_session_end(qbench_dir, []) == []  # its report.json written: its mark goes
    assert "k07" not in store.unfinished_runs(qbench_dir)
    assert len(store.unfinished_runs(qbench_dir)) == MARKS - 1
    with sqlite3.connect(qbench_dir / "index.sqlite") as db:
        row = db.execute("SELECT recording_errors FROM runs WHERE run_id = 'k07'").fetchall()
        assert row == [(1,)]
    report = json.loads((store.run_dir(qbench_dir, "k07") / "report.json").read_text("utf-8"))
    assert "died during its session's end" in report["run"]["recording_errors"][0]
