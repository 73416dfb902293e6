"""History-side truths (session 39): real pytest runs in subprocesses, a real SQLite index and
the ``qbench`` command as a subprocess. A run whose clock was moved to the future does not stay
"last"; a run that died is indexed once and only once it is dead; the phase a killed test died
in; a killed CI shard is that shard, interrupted, not a missing one."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest


FUTURE_CONFTEST = """
    import datetime as _dt
    import os

    class _Future(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return _dt.datetime(2031, 1, 1, tzinfo=tz)

    if os.environ.get("QBENCH_TEST_FUTURE"):
        # what a frozen-clock plugin (freezegun) does at start-up: the module's datetime
        # replaced, so the run records its start in 2031
        import pytest_qbench.plugin.session as _session

        _session.datetime = _Future
"""

FAILING_ON_DEMAND = """
    import os

    def test_a():
        assert not os.environ.get("QBENCH_TEST_FAIL")
"""


def qbench(pytester: pytest.Pytester, *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json --dir .qbench`` as a subprocess: its status and parsed output."""
    done = pytester.run(sys.executable, "-m", "pytest_qbench", *args, "--json", "--dir", ".qbench")
    return done.ret, json.loads(done.stdout.str())


def test_a_run_whose_clock_was_in_the_future_is_not_last_for_ever(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run r2's clock says 2031 (a frozen clock at start-up); r3, started after it on a right
    clock, is the last run: `qbench show last` and `qbench diff` (last~1 against last) name it,
    its failure is new against r2, and its history counts r2. Before, the index ordered runs by
    their recorded start, so r2 stayed last: `qbench diff` compared r3 with r2 the wrong way
    round ("fixed"), and r3's history left r2 out."""
    pytester.makeconftest(FUTURE_CONFTEST)
    pytester.makepyfile(test_a=FAILING_ON_DEMAND)
    args = ("-p", "qbench", "-p", "no:randomly")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r1").ret == 0
    monkeypatch.setenv("QBENCH_TEST_FUTURE", "1")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r2").ret == 0
    monkeypatch.delenv("QBENCH_TEST_FUTURE")
    monkeypatch.setenv("QBENCH_TEST_FAIL", "1")
    assert pytester.runpytest_subprocess(*args, "--qbench-run-id=r3").ret == 1
    _, shown = qbench(pytester, "show", "last")
    assert shown["run_id"] == "r3"
    assert shown["started_at"] < "2031"
    _, runs = qbench(pytester, "runs")
    assert [run["run_id"] for run in runs["runs"]] == ["r3", "r2", "r1"]
    assert runs["runs"][1]["started_at"].startswith("2031-01-01")  # shown as recorded
    status, diff = qbench(pytester, "diff")
    assert status == 1
    assert (diff["base"]["run_id"], diff["head"]["run_id"]) == ("r2", "r3")
    assert [change["nodeid"] for change in diff["new_failures"]] == ["test_a.py::test_a"]
    report = json.loads((pytester.path / ".qbench/runs/r3/report.json").read_text())
    (result,) = report["results"]
    assert result["history"]["runs"] == 2  # r1 and r2 before it
    # indexed again (its report read back), r1 keeps its place: it does not become the last
    assert pytester.run(sys.executable, "-m", "pytest_qbench", "index", ".qbench/runs/r1").ret == 0
    assert qbench(pytester, "show", "last")[1]["run_id"] == "r3"
