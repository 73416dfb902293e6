"""A run whose session end could not write its report.json (rendering the outputs raised: a
bug of qbench's, a template's; or the disk refused it) is never left out of the history: its
mark in ``.qbench/unfinished/`` stays, and every reader indexes it from its stream as
incomplete, naming why. Before, it took itself out of the index and its mark away: `qbench
runs` listed the run before it as the last one, clean, and `qbench pr-comment` said passing."""

from __future__ import annotations

import json

import pytest
from test_unrecorded_runs import faulted_second_run
from test_unrecorded_runs import qbench_json
from test_unrecorded_runs import read_as_died

from pytest_qbench.cli import main
from pytest_qbench.report import store

from conftest import RunQBench


def breaking(module: str, method: str, env: str, what: str) -> str:
    """A conftest that makes ``pytest_qbench.<module>``'s ``method`` (``Class.name``) raise
    ``RuntimeError("injected <what> fault")`` when the environment variable ``env`` is set."""
    package, _, name = module.rpartition(".")
    return f"""
import os
from pytest_qbench.{package} import {name}


def pytest_configure(config):
    if os.environ.get("{env}"):
        def broken(self, *args, **kwargs):
            raise RuntimeError("injected {what} fault")

        {name}.{method} = broken
"""


RENDER_FAILS = breaking(
    "history.publish", "Publisher._render_all", "QBENCH_TEST_BREAK_RENDER", "render"
)


def test_a_run_whose_report_was_not_written_is_listed_incomplete_with_the_reason(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """r1 clean, then r2 whose outputs' rendering raised: no report.json.
    `qbench runs` lists r2 first, incomplete, its exit status pytest's; `qbench diff` exits 1;
    the pull-request comment is red; the report `qbench render` rebuilds names the error."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    broken = faulted_second_run(
        pytester, run_qbench, monkeypatch, RENDER_FAILS, "QBENCH_TEST_BREAK_RENDER"
    )
    assert broken.ret == 0  # pytest's own status: no gate
    broken.stdout.fnmatch_lines(["*internal error in writing the outputs*injected render fault*"])
    run_dir = pytester.path / ".qbench/runs/r2"
    assert not (run_dir / "report.json").exists()
    assert store.unfinished_runs(pytester.path / ".qbench") == ["r2"]
    report = read_as_died(capsys, run_dir, 0)
    [error] = report["run"]["recording_errors"]
    assert error.startswith("could not write report.json at the run's end (internal error in ")
    assert "RuntimeError: injected render fault" in error
    assert report["run"]["exit_code"] == 0
    assert not (run_dir / "report.md").read_text(encoding="utf-8").startswith("# ✅")


INDEX_FAILS = breaking(
    "history.sqlite", "SQLiteIndex.insert_passes", "QBENCH_TEST_BREAK_INDEX", "index"
)
FLIPS = """
import os

def test_a():
    pass

def test_flip():
    assert not os.environ.get("QBENCH_TEST_BREAK_INDEX")
"""


def test_a_run_that_could_not_index_itself_is_indexed_by_the_next_reader(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """r2 fails a test and writes its report.json, but indexing it raises (a fault injected
    in the index's fast insert of passing results): it keeps its mark, and `qbench runs`
    indexes it from its report.json, whole, before it answers; `qbench diff` compares it with
    r1 and exits 1 for its new failure. Before, it was never indexed: `qbench runs` listed r1
    as the last run and `qbench pr-comment` said "passing" on it."""
    pytester.makepyfile(test_f=FLIPS)
    broken = faulted_second_run(
        pytester, run_qbench, monkeypatch, INDEX_FAILS, "QBENCH_TEST_BREAK_INDEX"
    )
    assert broken.ret == 1
    broken.stdout.fnmatch_lines(["qbench: run not indexed*injected index fault*"])
    assert store.unfinished_runs(pytester.path / ".qbench") == ["r2"]
    _, runs = qbench_json(capsys, "runs")
    assert [(r["run_id"], r["summary"]["failed"]) for r in runs["runs"]] == [("r2", 1), ("r1", 0)]
    capsys.readouterr()
    assert main(["diff", "--dir", ".qbench"]) == 1
    assert "New failures (1):\n  test_f.py::test_flip" in capsys.readouterr().out


DISK_FULL = """
import errno, os
from pytest_qbench.report import store


def pytest_configure(config):
    if os.environ.get("QBENCH_TEST_DISK_FULL"):
        real = store.StreamWriter._write_pending

        def refused(*args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def after_start(self):
            if self._end:  # the start record is on the disk: the disk is full from here on
                refused()
            real(self)

        store.StreamWriter._write_pending = after_start
        store.write_report_json = refused
"""
THREE = "def test_a():\n    pass\n\ndef test_b():\n    pass\n\ndef test_c():\n    pass\n"


def test_a_run_whose_disk_filled_is_incomplete_not_dead(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """r2's disk filled after its stream's start record: the stream has no result and no end
    record, and its report.json could not be written; its session end kept why. Read back, it
    is an incomplete run that names the full disk, not one whose process died (tomlkit with its
    store on a full tmpfs: `qbench render` said `at least 3.85s (it died; when is unknown)` and
    `the run did not finish: its process died or was killed`, of a run pytest finished)."""
    pytester.makepyfile(test_ok=THREE)
    broken = faulted_second_run(
        pytester, run_qbench, monkeypatch, DISK_FULL, "QBENCH_TEST_DISK_FULL"
    )
    assert broken.ret == 0
    broken.stdout.fnmatch_lines(["*results.jsonl: No space left on device*", "*3 passed*"])
    run_dir = pytester.path / ".qbench/runs/r2"
    assert not (run_dir / "report.json").exists()
    _, runs = qbench_json(capsys, "runs")
    [r2] = [r for r in runs["runs"] if r["run_id"] == "r2"]
    assert r2["recording_errors"] and not r2["interrupted"], r2
    assert main(["render", str(run_dir)]) == 0
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["interrupted"] is False and report["run"]["exit_code"] is None
    [error] = report["run"]["recording_errors"]
    assert error.startswith("could not write report.json at the run's end (could not write ")
    assert "results.jsonl has no end record" in error
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert not markdown.startswith("# ✅") and "died" not in markdown
    assert "its counts are what was kept, not what ran" in markdown
