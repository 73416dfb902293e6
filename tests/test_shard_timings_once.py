"""The shard planner's phase times (``queries.phase_timings``, read by ``--qbench-shard`` and
``--qbench-queue``) count each CI pipeline once: a shard indexed by itself and the merged run
holding it are one pipeline's result, not two (``sql.COUNTED``, as in the flaky verdicts).
Real pytest runs, a real merge, a real SQLite index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_pr_comment_shards import SUITE
from test_pr_comment_shards import run_ci

from pytest_qbench.cli import main
from pytest_qbench.history.database import open_index
from pytest_qbench.history.queries import phase_timings
from pytest_qbench.history.shardplan import Timing
from pytest_qbench.history.shardplan import plan_shards
from pytest_qbench.plugin.shards import HISTORY_RUNS


TEST_A = "test_suite.py::test_a"
EVERYTHING = [f"test_suite.py::test_{name}" for name in "abcd"]


def sharded_pipeline(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, sha: str) -> None:
    """Two shards of commit ``sha`` (each indexed as it ends), merged and the merge indexed."""
    for number in (1, 2):
        run_ci(
            pytester,
            monkeypatch,
            sha,
            f"--qbench-shard={number}/2",
            f"--qbench-run-id={sha}-{number}",
        )
    monkeypatch.delenv("GITHUB_ACTIONS")
    qbench_dir = pytester.path / ".qbench"
    runs = qbench_dir / "runs"
    merged = pytester.path / sha / "report.json"
    assert main(["merge", str(runs / f"{sha}-1"), str(runs / f"{sha}-2"), "-o", str(merged)]) == 0
    assert main(["index", str(merged), "--dir", str(qbench_dir)]) == 0


def timings(qbench_dir: Path) -> dict[str, list[Timing]]:
    index = open_index(qbench_dir, None)
    try:
        return phase_timings(index, EVERYTHING, HISTORY_RUNS, "next")
    finally:
        index.close()


def test_a_pipeline_counts_once_in_the_planned_times(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three whole runs where test_a took 1 s, then two sharded pipelines, their shards and
    merges indexed, where it took 3 s. Its last 5 results are the 5 pipelines' (3, 3, 1, 1, 1:
    1 s planned); before, each pipeline's shard and merge were two results (3, 3, 3, 3, 1), the
    window held 2 pipelines and a half, and test_a was planned at 3 s, three times the time
    its runs took by majority."""
    pytester.makepyfile(test_suite=SUITE)
    for number in range(3):
        run_ci(pytester, monkeypatch, f"c{number}", f"--qbench-run-id=whole{number}")
    sharded_pipeline(pytester, monkeypatch, "p1")
    sharded_pipeline(pytester, monkeypatch, "p2")
    qbench_dir = pytester.path / ".qbench"
    with sqlite3.connect(qbench_dir / "index.sqlite") as db:  # times of a loaded machine: set
        db.execute("UPDATE results SET duration = 0.01, setup = 0, teardown = 0")
        db.execute(
            "UPDATE results SET duration = CASE WHEN (SELECT commit_sha FROM runs r WHERE "
            "r.id = run_ref) LIKE 'c%' THEN 1.0 ELSE 3.0 END "
            "WHERE test_ref = (SELECT id FROM tests WHERE nodeid = ?)",
            (TEST_A,),
        )
    db.close()
    found = timings(qbench_dir)
    assert sorted(t.call for t in found[TEST_A]) == [1.0, 1.0, 1.0, 3.0, 3.0]
    assert all(len(found[nodeid]) == HISTORY_RUNS for nodeid in EVERYTHING)
    plan = plan_shards(EVERYTHING, found, 1)
    assert plan.expected[0] == pytest.approx(1.0 + 3 * 0.01)
