"""A plugin's own outcome words in the history's run counts (schema 12's ``runs.other_counts``):
the flaky rule's outage runs and the HTML report's trend judge each word by the results counted
under it, as every other reader of the history judges such a result by its own outcome. A
conftest's ``pytest_report_teststatus`` that files each failure as ``known`` makes pytest end with
``2 passed, 13 known``: before, the rule read that run as one where nothing failed (its line's
failed and errors only), so the tests failing in it looked flaky, and the trend drew it green."""

from __future__ import annotations

import json

import pytest
from cli_here import qbench_here
from postgres_server import HistoryDB

from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.history.trend import load_trend


CONFTEST = """
def pytest_report_teststatus(report, config):
    if report.when == "call" and report.failed:
        return "known", "K", "KNOWN"
"""
SUITE = """
import pathlib

import pytest

def down():
    return "down" in pathlib.Path("plan.txt").read_text()

def test_stable():
    pass

def test_stable2():
    pass

@pytest.mark.parametrize("i", range(13))
def test_many(i):
    assert not down()
"""


def run_plans(pytester: pytest.Pytester, plans: list[str]) -> list[str]:
    """The suite once a plan (``down`` fails 13 of its 15 tests), each run's closing line; in
    this process (what is judged is the index's counts, not a process)."""
    lines = []
    for number, plan in enumerate(plans, 1):
        (pytester.path / "plan.txt").write_text(plan)
        done = pytester.runpytest("-p", "qbench", "-q", f"--qbench-run-id=r{number}")
        assert done.ret == (1 if plan else 0), done.outlines
        lines.append(done.outlines[-1])
    return lines


def test_a_run_failing_under_a_plugin_s_word_is_an_outage_and_drawn_failed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, history_db: HistoryDB
) -> None:
    """Green, outage, green, outage, green (SQLite and PostgreSQL): the outage runs are set
    aside, so no test is flaky (``qbench flaky``), and the trend draws them with 13 failed, a
    pass rate of 13.3 %. Before, all 13 were flaky (failed in 2 of 5 runs, each time alone
    between passes) and the trend drew 0 failed, 100 %."""
    root = pytester.path
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    if history_db.url is not None:
        monkeypatch.setenv(ENV_VAR, history_db.url)
    lines = run_plans(pytester, ["", "down", "", "down", ""])
    assert lines[1].startswith("2 passed, 13 known in ")
    done = qbench_here("flaky", "--json")
    assert done.ret == 0, done.out + done.err
    assert json.loads(done.out)["tests"] == []
    trend = load_trend(root / ".qbench", history_db.url)
    assert trend is not None
    drawn = [(run.run_id, run.total, run.passed, run.failed) for run in trend.runs]
    assert drawn == [
        ("r1", 15, 15, 0),
        ("r2", 15, 2, 13),
        ("r3", 15, 15, 0),
        ("r4", 15, 2, 13),
        ("r5", 15, 15, 0),
    ]
    assert [round(run.pass_rate or 0, 1) for run in trend.runs][:2] == [100.0, 13.3]
