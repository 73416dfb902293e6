"""A run whose stream's start record could not be written by a bug of qbench (not a disk that
refuses writes) died unrecorded: its terminal names internal errors, pytest's exit status is
unchanged, and it leaves a run directory with an empty ``results.jsonl``, no report.json. It
makes its mark in ``.qbench/unfinished/`` all the same, and every reader of the history takes
it for a run that died: incomplete, its exit status unknown, never skipped. Before, it made no
mark, and the readers skipped it (marked or not) as a stream that is not a run's: `qbench runs`
listed the run before it as the last, and `qbench pr-comment` said ✅ 0 new failures."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.report import store

from conftest import RunQBench


START_FAILS = """
import os
from pytest_qbench.report import store


def pytest_configure(config):
    if os.environ.get("QBENCH_TEST_BREAK_STREAM"):
        def broken(self, *args):
            raise RuntimeError("injected")

        store.StreamWriter._wake_timer = broken  # every write of the stream, its start first
"""


def unrecorded_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run r1 recorded, then r2 whose stream takes no write: r2 died unrecorded."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n\n\ndef test_b():\n    assert 0\n")
    pytester.makeconftest(START_FAILS)
    run_qbench("--qbench-run-id=r1", "-p", "no:randomly", subprocess=True, run_dir="r1")
    monkeypatch.setenv("QBENCH_TEST_BREAK_STREAM", "1")
    broken = pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=r2")
    monkeypatch.delenv("QBENCH_TEST_BREAK_STREAM")
    assert broken.ret == 1  # pytest's own status: one test failed
    broken.stdout.fnmatch_lines(["*qbench: internal error in pytest_sessionstart*injected*"])
    run_dir = pytester.path / ".qbench/runs/r2"
    assert not (run_dir / "report.json").exists()
    assert (run_dir / store.STREAM_NAME).stat().st_size == 0
    assert store.unfinished_runs(pytester.path / ".qbench") == ["r2"]


def drop_index(qbench_dir: Path) -> None:
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (qbench_dir / name).unlink(missing_ok=True)


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    return status, json.loads(capsys.readouterr().out)


def test_a_run_unrecorded_is_listed_incomplete_and_pr_comment_is_red(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`qbench runs` lists r2 as the last run, incomplete with the error and its exit status
    unknown; `qbench pr-comment` and `qbench diff` fail on it; its mark stays (its stream is a
    run's only with it) until `qbench render` writes its report.json."""
    unrecorded_run(pytester, run_qbench, monkeypatch)
    _, runs = qbench_json(capsys, "runs")
    assert [r["run_id"] for r in runs["runs"]] == ["r2", "r1"]
    last = runs["runs"][0]
    assert last["exit_code"] is None and last["recording_errors"]
    assert main(["pr-comment", "--dir", ".qbench"]) == 0
    comment = capsys.readouterr().out
    assert "run `r2`" in comment and "against run `r1`" in comment
    assert ":x: qbench: the run did not finish" in comment
    assert ":white_check_mark:" not in comment
    assert main(["diff", "--dir", ".qbench"]) == 1
    assert "r2" in store.unfinished_runs(pytester.path / ".qbench")

    run_dir = pytester.path / ".qbench/runs/r2"
    assert main(["render", str(run_dir)]) == 0
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["exit_code"] is None
    assert report["run"]["recording_errors"] == [store.UNRECORDED]
    assert not (run_dir / "report.md").read_text(encoding="utf-8").startswith("# ✅")


def test_a_run_unrecorded_is_indexed_by_qbench_index_and_the_next_run(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`qbench index` (into a new index) indexes r2, incomplete; so does the next run's session
    end, before itself, started when r2's mark was made. A copy of r2 without a mark is skipped
    as before."""
    unrecorded_run(pytester, run_qbench, monkeypatch)
    qbench_dir = pytester.path / ".qbench"
    drop_index(qbench_dir)
    assert main(["index", "--dir", ".qbench"]) == 0
    said = capsys.readouterr()
    assert "indexed r2" in said.out + said.err
    _, runs = qbench_json(capsys, "runs")
    assert [(r["run_id"], r["exit_code"]) for r in runs["runs"]] == [("r2", None), ("r1", 1)]

    drop_index(qbench_dir)
    marked = store.marked_at(qbench_dir, "r2")
    # an empty stream without a mark (killed before its start record) is no run's, as before
    shutil.copytree(store.run_dir(qbench_dir, "r2"), store.run_dir(qbench_dir, "r9"))
    run_qbench("--qbench-run-id=r3", "-p", "no:randomly", subprocess=True, run_dir="r3")
    _, runs = qbench_json(capsys, "runs")
    assert [r["run_id"] for r in runs["runs"]] == ["r3", "r2"]  # r1 was indexed by r1 alone
    assert "has no report.json" not in capsys.readouterr().err  # r3 indexed it
    _, shown = qbench_json(capsys, "show", "r2")
    started = datetime.fromtimestamp(marked / 1e9, timezone.utc)
    assert shown["started_at"].startswith(started.strftime("%Y-%m-%dT%H:%M:%S"))


def test_the_mcp_servers_list_runs_lists_a_run_unrecorded(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP server's `list_runs` lists r2 first, incomplete, its exit status unknown."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp_helpers import structured

    from pytest_qbench.mcp.config import ServerConfig
    from pytest_qbench.mcp.server import build_server

    unrecorded_run(pytester, run_qbench, monkeypatch)
    config = ServerConfig(root=pytester.path, qbench_dir=pytester.path / ".qbench", stop_grace=1.0)

    async def listed() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return structured(await client.call_tool("list_runs", {"limit": 5}))

    runs = anyio.run(listed)["runs"]
    assert [(r["run_id"], r["exit_code"]) for r in runs] == [("r2", None), ("r1", 1)]
    assert runs[0]["recording_errors"]


def faulted_second_run(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    conftest: str,
    fault: str = "QBENCH_TEST_BREAK_STREAM",
) -> pytest.RunResult:
    """Run r1, then r2 with ``conftest``'s fault on (its environment variable ``fault`` set)."""
    pytester.makeconftest(conftest)
    run_qbench("--qbench-run-id=r1", "-p", "no:randomly", subprocess=True, run_dir="r1")
    monkeypatch.setenv(fault, "1")
    done = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=r2")
    monkeypatch.delenv(fault)
    return done


WRITER_FAILS = """
import os
from pytest_qbench.report import store


def pytest_configure(config):
    if os.environ.get("QBENCH_TEST_BREAK_STREAM"):
        def broken(self, *args, **kwargs):
            raise RuntimeError("injected")

        store.StreamWriter.__init__ = broken  # results.jsonl is never made
"""
KILLED = """
import os, signal

def test_a():
    pass

def test_b():
    if os.environ.get("QBENCH_TEST_BREAK_STREAM"):
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_run_without_a_stream_that_died_is_listed_incomplete_and_fails_diff(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stream's writer fails as it opens the file (a bug: no results.jsonl at all, the
    run marked), then the run is killed: r2 died unrecorded, as a run with an empty stream.
    `qbench runs` lists it first, incomplete (``run-unrecorded``), `qbench diff` exits 1 and
    `qbench pr-comment`'s headline is red. Before, nothing read a run directory without a
    stream: `qbench runs` listed r1 as the last run, and the comment said "passing"."""
    pytester.makepyfile(test_k=KILLED)
    killed = faulted_second_run(pytester, run_qbench, monkeypatch, WRITER_FAILS)
    assert killed.ret not in (0, 1)
    run_dir = pytester.path / ".qbench/runs/r2"
    assert not (run_dir / store.STREAM_NAME).exists()
    assert not (run_dir / "report.json").exists()
    assert store.unrecorded(run_dir)
    report = read_as_died(capsys, run_dir, None)
    assert report["run"]["recording_errors"] == [store.UNRECORDED]


def read_as_died(
    capsys: pytest.CaptureFixture[str], run_dir: Path, exit_code: int | None
) -> dict[str, Any]:
    """r2 (``run_dir``) read as a run that did not finish: `qbench runs` lists it first,
    incomplete, with ``exit_code``; `qbench diff` exits 1, the comment's headline is red; the
    report `qbench render` rebuilds, returned."""
    _, runs = qbench_json(capsys, "runs")
    assert [r["run_id"] for r in runs["runs"]] == ["r2", "r1"]
    assert runs["runs"][0]["exit_code"] == exit_code and runs["runs"][0]["recording_errors"]
    assert main(["diff", "--dir", ".qbench"]) == 1
    capsys.readouterr()
    main(["pr-comment", "--dir", ".qbench"])
    comment = capsys.readouterr().out
    assert ":x: qbench: the run did not finish" in comment and "run `r2`" in comment
    assert main(["render", str(run_dir)]) == 0
    report: dict[str, Any] = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    return report
