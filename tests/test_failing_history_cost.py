"""A failing result's work at the session end (issue 28): its history read from the index,
judged, and its fingerprint, without work repeated per failure or per row."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from history_data import index_reports
from history_data import report
from history_data import result

from pytest_qbench.core.types import Outcome
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history import fingerprint
from pytest_qbench.history import queries
from pytest_qbench.history import sql
from pytest_qbench.history.database import open_index
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import Recent


# a: fails in the newest four runs, passed before (its last pass is older than a window of 3);
# b: passes, skipped in one run (left out), fails in the newest; c: never passed.
OUTCOMES: dict[str, list[Outcome]] = {
    "a": ["passed", "passed", "failed", "failed", "failed", "error"],
    "b": ["passed", "skipped", "passed", "xfailed", "passed", "failed"],
    "c": ["failed", "failed", "failed", "failed", "failed", "failed"],
}


@pytest.fixture
def history(tmp_path: Path) -> Path:
    runs = [
        report(f"r{n}", n, [result(name, outcomes[n]) for name, outcomes in OUTCOMES.items()])
        for n in range(6)
    ]
    index_reports(tmp_path, *runs)
    return tmp_path


def _recent(qbench_dir: Path, run_id: str, window: int) -> dict[str, Recent]:
    index = open_index(qbench_dir, None)
    try:
        return queries.recent_results(index, ["t.py::c", "t.py::a", "t.py::b"], run_id, window)
    finally:
        index.close()


def test_recent_results_are_a_window_and_the_last_pass(history: Path) -> None:
    """Each test's newest ``window`` results that passed or failed, in runs indexed before the
    run (every run for a run not indexed), and its last pass, in or before the window."""
    recent = _recent(history, "r5", 3)
    assert [(p.run_id, p.outcome) for p in recent["t.py::a"].window] == [
        ("r4", "failed"),
        ("r3", "failed"),
        ("r2", "failed"),
    ]
    assert recent["t.py::a"].last_pass is not None
    assert recent["t.py::a"].last_pass.run_id == "r1"
    assert [p.run_id for p in recent["t.py::b"].window] == ["r4", "r3", "r2"]
    assert recent["t.py::b"].last_pass == recent["t.py::b"].window[0]
    assert recent["t.py::c"].last_pass is None
    assert len(recent["t.py::c"].window) == 3
    whole = _recent(history, "not indexed", 10)
    assert [p.run_id for p in whole["t.py::b"].window] == ["r5", "r4", "r3", "r2", "r0"]
    assert [p.outcome for p in whole["t.py::a"].window][:2] == ["error", "failed"]
    assert _recent(history, "r0", 10) == {}


def test_recent_results_reads_the_rows_in_index_order(history: Path) -> None:
    """The failing tests' past is read in the order the indexes give, with no window function
    and no sort: ranked in SQL (two ``ROW_NUMBER`` partitions, three temporary B-trees) it cost
    three times reading the rows."""
    db = sqlite3.connect(history / INDEX_NAME)
    try:
        statement = sql.recent_results_of(2)
        params = ["t.py::a", "t.py::b", 6, 10][: statement.count("?")]  # main's: a window too
        plan = db.execute(f"EXPLAIN QUERY PLAN {statement}", params)
        steps = [row[3] for row in plan.fetchall()]
    finally:
        db.close()
    assert "ROW_NUMBER" not in statement
    assert not [step for step in steps if "TEMP B-TREE" in step], steps


def test_past_results_are_made_without_the_dataclass_init(
    history: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result read back is the same ``PastResult`` (equal, the same fields), made without the
    dataclass's ``__init__`` (its Python loop a field at a time, ten times a failing test)."""
    expected = PastResult("r4", "x", "failed", 0.01, False, None, "assert 1 == 2", "abc123-r4")
    made: list[object] = []
    init = PastResult.__init__

    def counted(self: PastResult, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(PastResult, "__init__", counted)
    newest = _recent(history, "r5", 3)["t.py::a"].window[0]
    assert made == []
    assert vars(newest).keys() == vars(expected).keys()
    assert (newest.run_id, newest.outcome, newest.commit, newest.reruns) == (
        "r4",
        "failed",
        "abc123-r4",
        0,
    )
    assert (newest.run_failing, newest.run_ran) == (2, 3)
    assert newest == PastResult(**{**vars(newest)})
    assert hash(newest) == hash(PastResult(**{**vars(newest)}))
    with pytest.raises(AttributeError):
        newest.outcome = "passed"  # type: ignore[misc]


class _Counted:
    """A compiled pattern whose ``sub`` calls are counted."""

    def __init__(self, pattern: re.Pattern[str], runs: list[str]) -> None:
        self.pattern, self.runs = pattern, runs

    def sub(self, replacement: str, text: str) -> str:
        self.runs.append(replacement)
        return self.pattern.sub(replacement, text)


def test_a_fingerprint_runs_only_the_patterns_a_message_can_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An id holds four hyphens and a path two separators: a message with fewer is not
    searched for them (``assert -1 == 2``, ``a/b``), and normalises as before."""
    runs: list[str] = []
    for name in ("_ID", "_ADDRESS", "_PATH", "_HEX", "_NUMBER"):  # _RULES' patterns, in order
        monkeypatch.setattr(fingerprint, name, _Counted(getattr(fingerprint, name), runs))
    assert fingerprint.normalise_message("assert -1 == 2 in a/b") == "assert <n> == <n> in a/b"
    assert runs == ["<hex>", "<n>"]
    runs.clear()
    text = "id 12345678-1234-1234-1234-123456789abc at /srv/x/y.py:0x1f"
    assert fingerprint.normalise_message(text) == "id <id> at <path>:<addr>"
    assert runs == ["<id>", "<addr>", "<path>", "<hex>", "<n>"]


def test_a_failing_tests_verdict_is_made_without_the_shared_init(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failing test's history makes its ``Verdict``, ``Assessment`` and the run's own
    ``PastResult`` without ``core.records``' shared ``__init__`` (a Python loop of
    ``object.__setattr__`` a field at a time); the records are those it made."""
    import dataclasses

    from pytest_qbench.history.failure_history import judged_history
    from pytest_qbench.history.flakiness import Assessment
    from pytest_qbench.history.flakiness import Verdict
    from pytest_qbench.history.queries import Recent

    for made in (Verdict, Assessment):  # their own, not core/records.py's
        assert made.__init__.__code__.co_filename.endswith("flakiness.py")
    inits: list[str] = []
    init = PastResult.__init__

    def counted(self: PastResult, *args: Any, **kwargs: Any) -> None:
        inits.append("PastResult")
        init(self, *args, **kwargs)

    monkeypatch.setattr(PastResult, "__init__", counted)
    record, verdict = judged_history(Recent([], None), "fp", "r1", "abc")
    assert inits == []
    assert verdict == Verdict(False, "not flaky: failed in one run, no evidence of flakiness")
    assert dataclasses.asdict(verdict) == {
        "flaky": False,
        "reason": "not flaky: failed in one run, no evidence of flakiness",
        "error": None,
        "broken_since": None,
    }
    assert hash(verdict) == hash(dataclasses.replace(verdict))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.flaky = True  # type: ignore[misc]
    found = Assessment("broken", "broken", "why", ("r1",), since="r1")
    assert dataclasses.astuple(found) == (
        "broken",
        "broken",
        "why",
        ("r1",),
        (),
        0.0,
        0,
        None,
        "r1",
    )
    assert record["status"] == "new failure"
    assert list(record) == [
        "status",
        "summary",
        "runs",
        "failed",
        "flips",
        "flaky_indicator",
        "last_passed_run",
        "last_passed_at",
        "first_failed_run",
        "fingerprint",
        "same_failure_runs",
    ]


@pytest.mark.parametrize("min_runs", [1, 2, 3])
@pytest.mark.parametrize("min_evidence", [1, 2])
@pytest.mark.parametrize("min_rate", [0.02, 1.0])
@pytest.mark.parametrize("commit", [None, "abc"])
def test_a_first_failure_is_judged_as_the_monitors_judge_it(
    min_runs: int, min_evidence: int, min_rate: float, commit: str | None
) -> None:
    """A failing test without a past (``FIRST_FAILURE``, no monitor called) gets the verdict
    and history ``flakiness.judge`` gives of its one failing result, whatever the monitors'
    settings (a monitor needing one run of one piece of evidence calls it flaky)."""
    from pytest_qbench.history import failure_history
    from pytest_qbench.history.flakiness import Monitors
    from pytest_qbench.history.flakiness import judge
    from pytest_qbench.history.queries import Recent

    monitors = Monitors(min_runs=min_runs, min_evidence=min_evidence, min_rate=min_rate)
    now = PastResult("r1", "", "failed", 0.0, False, "fp", commit=commit)
    expected = judge([now], monitors)
    record, verdict = failure_history.judged_history(Recent([], None), "fp", "r1", commit, monitors)
    assert verdict == expected
    if min_runs > 1 or min_evidence > 1:
        assert verdict is failure_history.FIRST_FAILURE
    assert record["status"] == ("known flaky" if expected.flaky else "new failure")
