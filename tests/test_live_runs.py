"""Retention and indexing beside runs that are going or ending, with real concurrent pytest
processes: a live or ending run is neither deleted nor dropped from the index, and `qbench
index` leaves a run that is going to its own end.

Each run's conftest holds the run at a point the test chooses (until a file appears), so the
verdicts never depend on timing: the loops that wait are bounded safety nets.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from child_pytest import start_child
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.report.store import run_in_progress


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock on run directories")

SAFETY = 120.0
"""Seconds a wait gives up after: only when something is broken."""

CONFTEST = """
import os, pathlib, time

import pytest

HERE = pathlib.Path(__file__).parent


def _hold(stage, run_id):
    if os.environ.get("HOLD_AT") != stage:
        return
    (HERE / f"{stage}-{run_id}").write_text("")
    deadline = time.monotonic() + 120
    while not (HERE / f"release-{run_id}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def pytest_runtest_call(item):
    _hold("running", item.config.getoption("qbench_run_id"))


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    # after qbench indexed the run, before it releases its run directory
    _hold("ending", config.getoption("qbench_run_id"))
"""


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + SAFETY
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


class Runs:
    """Pytest runs of one project, started as separate processes."""

    def __init__(self, root: Path, db: str | None) -> None:
        self.root = root
        self.env = {} if db is None else {ENV_VAR: db}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, run_id: str, *args: str, hold_at: str = "") -> None:
        """Start a run; return when it holds its run directory (so start times are ordered)."""
        env = {**self.env, "HOLD_AT": hold_at}
        self.procs[run_id] = start_child(
            self.root,
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
            run_id=run_id,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc = self.procs[run_id]
        # a run not held can end before a look finds it going: then it has started too
        wait_for(
            lambda: run_in_progress(self.dir(run_id)) or proc.poll() is not None,
            f"{run_id} to start",
        )

    def held(self, stage: str, run_id: str) -> None:
        wait_for(lambda: (self.root / f"{stage}-{run_id}").exists(), f"{run_id} {stage}")

    def release(self, run_id: str) -> int:
        (self.root / f"release-{run_id}").write_text("")
        return self.procs.pop(run_id).wait(SAFETY)

    def dir(self, run_id: str) -> Path:
        return self.root / ".qbench" / "runs" / run_id

    def stop_all(self) -> None:
        for run_id in list(self.procs):
            (self.root / f"release-{run_id}").write_text("")
        for proc in self.procs.values():
            proc.wait(SAFETY)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, history_db: HistoryDB) -> Iterator[Runs]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_one.py").write_text("def test_one():\n    pass\n")
    monkeypatch.chdir(root)
    if history_db.url is not None:
        monkeypatch.setenv(ENV_VAR, history_db.url)
    started = Runs(root, history_db.url)
    yield started
    started.stop_all()


def indexed(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    """Run id to total tests, of every run in the index."""
    capsys.readouterr()
    assert main(["runs", "--json", "-n", "100"]) == OK
    data = json.loads(capsys.readouterr().out)
    return {run["run_id"]: run["summary"]["total"] for run in data["runs"]}


def on_disk(runs: Runs) -> set[str]:
    return {path.name for path in (runs.root / ".qbench" / "runs").iterdir()}


def test_retention_leaves_ending_runs_whole(runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    """Four runs end at once (indexed, their directories still locked) while `qbench gc --keep
    2` and a fifth run's `--qbench-keep-runs=2` apply retention: none of the four leaves the
    index or its directory. Once they have ended, gc takes the oldest, index rows and
    directories together, and leaves no orphan."""
    ending = ["C1", "C2", "C3", "C4"]
    for run_id in ending:
        runs.start(run_id, hold_at="ending")
    for run_id in ending:
        runs.held("ending", run_id)
    assert main(["gc", "--keep", "2"]) == OK
    assert set(indexed(capsys)) == set(ending)
    runs.start("C5", "--qbench-keep-runs=2")
    assert runs.procs.pop("C5").wait(SAFETY) == 0
    assert set(indexed(capsys)) == {*ending, "C5"}
    assert on_disk(runs) == {*ending, "C5"}
    for run_id in ending:
        assert runs.release(run_id) == 0
    assert main(["gc", "--keep", "2"]) == OK
    assert set(indexed(capsys)) == on_disk(runs) == {"C4", "C5"}


@pytest.mark.parametrize("history_db", ["sqlite"], indirect=True)
def test_index_skips_a_run_that_is_going(runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    """`qbench index` while a run is in its test leaves it out (it was indexed as "0 tests:
    none ran", made `last` and counted for --keep-runs); the run indexes itself when it ends."""
    runs.start("done")
    assert runs.procs.pop("done").wait(SAFETY) == 0
    runs.start("going", hold_at="running")
    runs.held("running", "going")
    capsys.readouterr()
    assert main(["index", "--keep-runs", "1"]) == OK
    err = capsys.readouterr().err
    assert "skipped" in err and "runs/going: its run is still going" in err
    assert indexed(capsys) == {"done": 1}
    assert runs.dir("done").is_dir()
    assert runs.release("going") == 0
    assert indexed(capsys) == {"done": 1, "going": 1}
