"""A failing result's work at the session end (issue 28): its history read from the index,
judged, and its fingerprint, without work repeated per failure or per row."""

from __future__ import annotations

import builtins
import json
import random
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


NUMBER_BEFORE = re.compile(r"[-+]?\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?")
"""``_RULES``' number pattern as it was written before (issue 28, ninth round)."""


def test_the_number_rule_starts_with_a_set_and_matches_as_before() -> None:
    """The number rule starts with a set of characters (a sign or a digit), so that sre skips
    to the next one instead of trying the pattern at every character; it replaces the same
    texts as ``[-+]?\\d+...`` on seeded random messages (signs alone, signs before letters,
    exponents, separators, non-ASCII digits)."""
    pattern = fingerprint._NUMBER.pattern
    assert pattern.startswith("[-+\\d]"), pattern
    rng = random.Random(28)
    alphabet = "0123456789abcdefxyzE_-+.,e /\\\n\t\u0663\u00e9\u00b2:"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert fingerprint._NUMBER.sub("<n>", text) == NUMBER_BEFORE.sub("<n>", text), text


def test_fingerprints_module_is_imported_once_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexing a run of 30 failures imports ``history.fingerprint`` at most once (a ``from``
    import of it a failure cost about 4 us), their fingerprints as ``fingerprint_of`` makes
    them."""
    imports: list[str] = []
    real = builtins.__import__

    def counted(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.endswith("fingerprint") or "fingerprint" in (args[2] if len(args) > 2 else ()):
            imports.append(name)
        return real(name, *args, **kwargs)

    failing = [result(f"f{n}", "failed", message=f"assert {n} == -1") for n in range(30)]
    index_reports(tmp_path, report("r0", 0, failing))  # the module imported once here
    monkeypatch.setattr(builtins, "__import__", counted)
    index_reports(tmp_path, report("r1", 1, failing))
    monkeypatch.undo()
    assert len(imports) <= 1, imports
    db = sqlite3.connect(tmp_path / INDEX_NAME)
    try:
        rows = db.execute("SELECT DISTINCT fingerprint FROM results").fetchall()
    finally:
        db.close()
    assert {row[0] for row in rows} == {fingerprint.fingerprint_of(failing[0])}


def _failing_lines() -> list[str]:
    """Failing results' JSON as the stream writes them: escapes, non-ASCII, a lone surrogate,
    no frame file or line, a negative line, no line, a start time, quotes and ``","`` in names,
    and lines written otherwise (reruns, a field out of place, a bad escape, a control
    character) that neither reader makes a record of."""
    rng = random.Random(9)
    texts = ["", "ok", 'a"b', "c\\d", "x\ny", "\ud800", "é", "\t", 'k","outcome":"x', "\u2028"]
    lines = []
    for n in range(600):
        failure: dict[str, Any] = {
            "error_type": rng.choice(["AssertionError", "KeyError", "E" + rng.choice(texts)]),
            "error_message": rng.choice(texts) + f"assert {n} == -1\n +  where" + rng.choice(texts),
            "phase": rng.choice(["call", "setup", "teardown" + rng.choice(texts)]),
            "file": rng.choice([None, "t.py", "t" + rng.choice(texts) + ".py"]),
            "line": rng.choice([None, 3, -1, 0]),
            "stack_trace": "t.py:3: in test\n    assert 0",
        }
        record: dict[str, Any] = {
            "nodeid": f"t.py::test_{n}" + rng.choice(texts),
            "test_name": f"test_{n}" + rng.choice(texts),
            "file": "t.py" + rng.choice(texts),
            "line": rng.choice([None, 7, -2]),
            "outcome": rng.choice(["failed", "error"]),
            "duration": 0.5,
            "durations": rng.choice([{}, {"setup": 0.1, "call": 0.2, "teardown": 0.2}]),
            "started_at": rng.choice([None, "2026-11-27T13:00:00Z", "2026\\x"]),
            "failure": failure,
        }
        for key in ("line", "started_at"):
            if record[key] is None:
                del record[key]
        if n % 50 == 7:
            record["reruns"] = 1
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=n % 2 == 0)
        if n % 40 == 3:
            line = line.replace('","phase"', '","phaze"')
        if n % 40 == 5:
            line = line.replace("\\n", "\\q", 1)
        if n % 40 == 9:
            line = line.replace("\\n", "\x01", 1)
        if n % 40 == 11:
            line = line.replace('"2026\\\\x"', '"2026\\x"')
        lines.append(line)
    return lines


def test_a_failing_line_is_read_by_two_matches_as_field_by_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plain failing line's record (``session_end._failing_record``) is found by two
    matches, no call a field (``_string``): the same records, and the same lines refused, as
    the field-by-field reader (``_failing_fields``) on 600 lines written every way."""
    from pytest_qbench.history import session_end

    expected, heads = [], []
    for raw in _failing_lines():
        head = re.compile(session_end._HEAD).match(raw, raw.find(session_end._OUTCOME))
        assert head is not None
        heads.append((raw, head))
        expected.append(session_end._failing_fields(raw, head))
    calls: list[str] = []
    string = session_end._string

    def counted(raw: str, key: str, at: int) -> tuple[str, int]:
        calls.append(key)
        return string(raw, key, at)

    monkeypatch.setattr(session_end, "_string", counted)
    monkeypatch.setattr(session_end, "_failing_lines", [session_end.FIELD_BY_FIELD])
    got = [session_end._failing_record(raw, head) for raw, head in heads]
    assert [repr(record) for record in got] == [repr(record) for record in expected]
    assert sum(record is not None for record in got) > 300
    accepted = [(raw, head) for (raw, head), record in zip(heads, got, strict=True) if record]
    calls.clear()
    for raw, head in accepted:
        session_end._failing_record(raw, head)
    assert calls == []


def test_a_few_failing_lines_are_read_without_compiling_the_matches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The two matches cost more to compile than they save on a run's few failing lines: the
    first ``FIELD_BY_FIELD`` lines a process reads are read field by field (the same records),
    the matches compiled only after them."""
    from pytest_qbench.history import session_end

    lines = _failing_lines()[:40]
    heads = [
        (raw, re.compile(session_end._HEAD).match(raw, raw.find(session_end._OUTCOME)))
        for raw in lines
    ]
    monkeypatch.setattr(session_end, "_failing_lines", [session_end.FIELD_BY_FIELD - 30])
    session_end._failing_patterns.cache_clear()
    got = []
    for raw, head in heads:
        assert head is not None
        got.append(session_end._failing_record(raw, head))
        if len(got) <= 30 and '"reruns":' not in raw:
            assert session_end._failing_patterns.cache_info().currsize == 0
    assert session_end._failing_patterns.cache_info().currsize == 1
    expected = [session_end._failing_fields(raw, head) if head else None for raw, head in heads]
    assert [repr(record) for record in got] == [repr(record) for record in expected]


def test_a_first_failure_counts_no_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure without an earlier result (a new test, a new index) has its flips and flaky
    indicator of its own failure alone, counted once at import (``count_flips`` and
    ``flaky_indicator`` of one failure), not a call of each a failing test; with a past they
    are counted as before."""
    from pytest_qbench.history import analysis
    from pytest_qbench.history import failure_history

    alone = {"runs": 0, "failed": 0, "same_failure_runs": 0, "first_failed_run": "r9"}
    alone |= {"flips": analysis.count_flips([analysis.FAIL])}
    alone |= {"flaky_indicator": analysis.flaky_indicator([analysis.FAIL])}
    calls: list[str] = []
    for name in ("count_flips", "flaky_indicator"):
        real = getattr(failure_history, name)

        def counted(outcomes: list[Any], name: str = name, real: Any = real) -> Any:
            calls.append(name)
            return real(outcomes)

        monkeypatch.setattr(failure_history, name, counted)
    record = failure_history.build_history(Recent([], None), "fp", "r9")
    assert {key: record[key] for key in alone} == alone  # type: ignore[literal-required]
    assert record["status"] == "new failure"
    assert calls == []
    past = PastResult("r8", "2026-01-02T03:04:05.000000Z", "passed", 0.01, False, None, None, "c")
    record = failure_history.build_history(Recent([past], past), "fp", "r9")
    assert (record["flips"], record["flaky_indicator"]) == (1, 1.0)
    assert calls == ["count_flips", "flaky_indicator"]
