"""The history index: fingerprints, flakiness arithmetic, indexing, retention, schema versions,
locking, and real processes writing at the same time (issue 5)."""

from __future__ import annotations

import contextlib
import multiprocessing
import re
import sqlite3
import tracemalloc
from dataclasses import replace
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pytest
from history_data import T0
from history_data import index_args
from history_data import index_reports
from history_data import indexed_items
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from history_data import run_at_once
from history_data import write_run
from history_data import writer_runs
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from postgres_server import HistoryDB

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.text import strip_ansi
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history import sql
from pytest_qbench.history.analysis import Outcome
from pytest_qbench.history.analysis import count_flips
from pytest_qbench.history.analysis import flaky_indicator
from pytest_qbench.history.analysis import trend
from pytest_qbench.history.failure_history import build_history
from pytest_qbench.history.fingerprint import fingerprint
from pytest_qbench.history.fingerprint import normalise_message
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import Verdict
from pytest_qbench.history.flakiness import assess
from pytest_qbench.history.flakiness import classify
from pytest_qbench.history.flakiness import examine
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.indexer import remove_run_dirs
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import Recent
from pytest_qbench.history.queries import list_runs
from pytest_qbench.history.queries import run_deselected
from pytest_qbench.history.queries import run_results
from pytest_qbench.history.session_end import record_run
from pytest_qbench.history.sqlite import SQLiteIndex
from pytest_qbench.history.toollog import MAX_ARGUMENT_CHARS
from pytest_qbench.history.toollog import ToolCall
from pytest_qbench.history.toollog import recent_calls
from pytest_qbench.history.toollog import record_call
from pytest_qbench.history.toollog import tool_totals
from pytest_qbench.report.records import TestResultRecord


pytestmark = pytest.mark.engine


P, F = Outcome(failed=False), Outcome(failed=True)
R = Outcome(failed=False, rerun_passed=True)


# --- fingerprints ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("assert 3 == 4", "assert 17 == 4"),
        ("<Foo object at 0x7f3a2b1c>", "<Foo object at 0x55d0e8a1>"),
        ("no file /tmp/pytest-of-ci/pytest-12/test_x0/data.csv", "no file /home/u/t/data.csv"),
        (
            "id 3f2b8c1e-1a2b-4c3d-8e9f-001122334455 gone",
            "id 00000000-1111-2222-3333-444444444444 gone",
        ),
        ("took 1.25s", "took  0.5s"),
        # pytest's explanation by verbosity (-v, -vv, or CI=true): the same failure (idna)
        (
            "assert b'xn--eckwd4c7c' == b'wrong'\n  \n  At index 0 diff: b'x' != b'w'\n"
            "  Use -v to get more diff",
            "assert b'xn--eckwd4c7c' == b'wrong'\n  \n  At index 0 diff: b'x' != b'w'\n  \n"
            "  Full diff: (-: missing in left side, +: extra in left side)\n  - (b'wrong')\n"
            "  + (b'xn--eckwd4c7c')",
        ),
        (
            "assert [1, 2] == [1, 3]\n  \n  At index 1 diff: 2 != 3\n  Use -v to get more diff",
            "assert [1, 2] == [1, 3]\n  \n  At index 1 diff: 2 != 3\n  \n  Full diff: (-: missing"
            " in left side, +: extra in left side)\n    [\n        1,\n  -     3,...\n  \n"
            "  ...Full output truncated, use '-vv' to show",
        ),
    ],
)
def test_normalising_keeps_what_is_the_same(a: str, b: str) -> None:
    """Numbers, addresses, paths, ids and spacing do not make a different failure."""
    assert normalise_message(a) == normalise_message(b)
    assert fingerprint("AssertionError", "t.py:3", a) == fingerprint("AssertionError", "t.py:3", b)


_OLD_RULES = (
    (r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", "<id>"),
    (r"\b0x[0-9a-fA-F]+\b", "<addr>"),
    (r"(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+){2,}[\\/]?", "<path>"),
    (r"\b[0-9a-f]{12,}\b", "<hex>"),
    (r"[-+]?\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?", "<n>"),
    (r"\s+", " "),
)
"""The rules as every index's fingerprints were made with them (each run on every message)."""


PIECES = ["/", "/dir", "\\", "\\dir", "C:", "0x", "-", ".", "_", "e", "7", "a", "F", "é", "@"]
PIECES += ["ab12cd34ef56", "3f2b8c1e", "-1a2b", " ", "\n", "\t", "\x1c", "\u2028", "\xa0"]
PIECES += ["\x1b[31m", "\x1b[0m"]


@settings(deadline=None, max_examples=300)
@example("C:\\Users\\ci\\test_x.py:12 at 0x7f3a2b1c")
@example(" id 3f2b8c1e-1a2b-4c3d-8e9f-001122334455\u2028 took\x1c 1.5e-3s \x1b[31m")
@given(
    st.lists(
        st.sampled_from(PIECES),
        max_size=30,
    ).map("".join)
)
def test_normalising_is_what_every_index_holds(message: str) -> None:
    """A rule left out for a message without the text its matches need, and the spacing
    collapsed by ``str.split``, give the normalised message (so the fingerprint) the index's
    runs were stored with: each rule's pattern, then ``\\s+``, run on every message."""
    text = strip_ansi(message)
    for pattern, replacement in _OLD_RULES:
        text = re.sub(pattern, replacement, text)
    assert normalise_message(message) == text.strip()[:1000]


def test_fingerprint_tells_failures_apart() -> None:
    """Another error type, another failing line or another message is another failure."""
    base = fingerprint("AssertionError", "t.py:3", "assert x == 4")
    assert fingerprint("KeyError", "t.py:3", "assert x == 4") != base
    assert fingerprint("AssertionError", "t.py:4", "assert x == 4") != base
    assert fingerprint("AssertionError", "t.py:3", "assert y == 4") != base
    assert len(base) == 16
    plain = "assert 'ab' == 'ac'\n  - ac\n  + ab\n  Use -v to get more diff"
    other = "assert 'ab' == 'ad'\n  - ad\n  + ab\n  Use -v to get more diff"
    assert fingerprint("AssertionError", "t.py:3", plain) != fingerprint(
        "AssertionError", "t.py:3", other
    )


# --- flips, indicator, trend -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcomes", "flips", "indicator"),
    [
        ([], 0, 0.0),
        ([F], 0, 0.0),
        ([F, F, F, F], 0, 0.0),
        ([P, P, P, F], 1, 0.333),
        ([F, P, F], 2, 1.0),
        ([P, F, P, F, P], 4, 1.0),
        ([P, P, R, P, P], 1, 0.25),
        ([R], 1, 1.0),
    ],
)
def test_flips_and_flaky_indicator(outcomes: list[Outcome], flips: int, indicator: float) -> None:
    """flips / (n - 1), a pass after reruns counting as a flip; broken for good is not flaky."""
    assert count_flips(outcomes) == flips
    assert flaky_indicator(outcomes) == indicator


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], "Stable"),
        ([F], "Stable"),
        ([P, F], "Declining"),
        ([F, F, P, P], "Improving"),
        ([P, F, P, F], "Stable"),
        ([F, P, P, P, P, P, P, F, P, P], "Stable"),  # 1/5 then 1/5
        ([F, F, F, P, P, P, P, F, P, P], "Improving"),  # middle left out: 3/5 then 1/5
        ([P, P, P, P, P, P, P, F, P, F, F], "Declining"),
    ],
)
def test_trend_compares_the_newer_half_with_the_older(
    outcomes: list[Outcome], expected: str
) -> None:
    """Failure share of the newer half against the older half, 10 points of tolerance."""
    assert trend(outcomes) == expected


def past(run_id: str, outcome: str, fp: str | None = None, flaky: bool = False) -> PastResult:
    return PastResult(run_id, "2026-01-01T00:00:00.000000Z", outcome, 0.1, flaky, fp)


def test_history_of_a_test_without_earlier_runs_is_a_new_failure() -> None:
    """No earlier result: a new failure, failing since this run."""
    history = build_history(Recent([], None), "fp1", "r9")
    assert history["status"] == "new failure"
    assert history["summary"] == "new failure: first run of this test"
    assert (history["runs"], history["failed"], history["first_failed_run"]) == (0, 0, "r9")


@pytest.mark.parametrize(
    ("outcome", "words"),
    [("xfailed", "xfailed"), ("xpassed", "xpassed"), ("skipped", "was skipped")],
)
def test_a_new_failure_names_what_the_previous_run_called_the_test(
    outcome: str, words: str
) -> None:
    """A test pytest called xfailed (a conftest's makereport wrapper, found on simplejson),
    xpassed or skipped in the previous run did not pass there: the history line says what it
    was, not "passed in the previous run"."""
    window = [past("r2", outcome), past("r1", "passed")]
    history = build_history(Recent(window, window[1]), "fp1", "r3")
    assert history["status"] == "new failure"
    assert history["summary"] == f"new failure: {words} in the previous run r2"


def test_history_of_a_test_that_passed_last_time_is_a_new_failure() -> None:
    """Passed in the previous run: a new failure that names that run."""
    window = [past("r2", "passed"), past("r1", "passed")]
    history = build_history(Recent(window, window[0]), "fp1", "r3")
    assert history["status"] == "new failure"
    assert history["summary"] == "new failure: passed in the previous run r2"
    assert (history["last_passed_run"], history["first_failed_run"]) == ("r2", "r3")
    assert (history["runs"], history["failed"], history["flips"]) == (2, 0, 1)


def test_history_of_a_test_failing_for_a_while() -> None:
    """Failing in a row: counts over the window and this run, the streak's first run."""
    window = [past("r4", "failed", "fp1"), past("r3", "error", "fp0"), past("r2", "skipped")]
    window = [w for w in window if w.outcome != "skipped"] + [past("r1", "passed")]
    history = build_history(Recent(window, window[-1]), "fp1", "r5")
    assert history["status"] == "broken"
    assert (history["same_failure_runs"], history["last_passed_run"]) == (1, "r1")
    assert history["summary"] == "broken since run r4: failed 3 of the last 4 runs (same failure)"
    assert history["flips"] == 1
    assert history["flaky_indicator"] == 0.333
    other = build_history(Recent(window, window[-1]), "fp9", "r5")
    assert other["summary"].endswith("(failing differently)")


def test_history_of_a_test_that_flips_is_known_flaky() -> None:
    """Single-run failures between passes, the same failure each time, or a pass after
    reruns, make it known flaky."""
    window = [past("r3", "passed"), past("r2", "failed"), past("r1", "passed")]
    history = build_history(Recent(window, window[0]), None, "r4")
    assert history["status"] == "known flaky"
    assert history["summary"] == (
        "known flaky: failed 2 of the last 4 runs; "
        "failed alone in 2 of 4 runs between passes, the same failure each time (r2, r4)"
    )
    assert history["flaky_indicator"] == 1.0
    rerun = [
        past("r3", "passed", flaky=True),
        past("r2", "passed"),
        past("r1", "passed", flaky=True),
    ]
    assert build_history(Recent(rerun, rerun[0]), None, "r4")["summary"] == (
        "known flaky: failed 1 of the last 4 runs; passed after a rerun in 2 runs (r1, r3)"
    )


def test_history_of_a_regression_that_comes_back_is_not_flaky() -> None:
    """Fail, fail, pass, pass, fail with the same failure: a new failure, not flaky; a failing
    differently between passes is no alternation either."""
    window = [
        past("r6", "passed"),
        past("r5", "passed"),
        past("r4", "failed", "fp1"),
        past("r3", "failed", "fp1"),
    ]
    history = build_history(Recent(window, window[0]), "fp1", "r7")
    assert (history["status"], history["flips"]) == ("new failure", 2)
    assert history["summary"].endswith(
        "failed the same way in run r4 before: a regression that came back"
    )
    other = [past("r3", "passed"), past("r2", "failed", "fp0"), past("r1", "passed")]
    assert build_history(Recent(other, other[0]), "fp1", "r4")["status"] == "new failure"


def seq(outcomes: str, fp: str = "fp1", commits: str = "") -> list[PastResult]:
    """Results oldest first from letters: ``.`` passed, ``F`` failed, ``R`` passed after
    reruns, ``O`` failed in an outage run; ``commits``: one letter per result (``-`` none)."""
    found = []
    for i, letter in enumerate(outcomes):
        outcome = "passed" if letter in ".R" else "failed"
        commit = commits[i] if commits and commits[i] != "-" else None
        failing, ran = (20, 21) if letter == "O" else (1, 21)
        found.append(
            PastResult(f"r{i + 1}", "", outcome, 0.1, letter == "R", fp, None, commit, failing, ran)
        )
    return found


@pytest.mark.parametrize(
    ("outcomes", "commits", "flaky", "reason"),
    [
        ("FF..F", "", False, "not flaky: failed in 2 consecutive runs (r1, r2) before"),
        (
            ".F.F",
            "",
            True,
            "failed alone in 2 of 4 runs between passes, the same failure each time (r2, r4)",
        ),
        (".F.FF", "", False, "broken: failed in 2 consecutive runs (r4, r5)"),
        (
            "R..",
            "",
            False,
            "not flaky yet: passed after a rerun in 1 run (r1); a monitor needs evidence in 2 runs",
        ),
        ("R.R.", "", True, "passed after a rerun in 2 runs (r1, r3)"),
        ("RFF", "", False, "broken: failed in 2 consecutive runs (r2, r3)"),
        (
            "..F.F",
            "abbcc",
            True,
            "passed and failed on the same commit for 2 commits, newest: passed in run r4 and "
            "failed in run r5 on the same commit c",
        ),
        ("..F", "abc", False, "not flaky: failed in one run, no evidence of flakiness"),
        (
            "FF..F",
            "aaaaa",
            False,
            "not flaky yet: passed in run r4 and failed in run r5 on the same commit a; a "
            "monitor needs evidence in 2 runs",
        ),
        (".O.O.F", "", False, "not flaky: failed in one run, no evidence of flakiness"),
        (
            ".F.O.F",
            "",
            True,
            "failed alone in 2 of 5 runs between passes, the same failure each time (r2, r6)",
        ),
        ("...", "", False, ""),
        (
            "R.R" + "." * 41,
            "",
            False,
            "recovered: no evidence in the last 40 runs (passed after a rerun in 2 runs (r1, r3))",
        ),
        (
            "." * 5 + "R" + "." * 20 + "F" + "." * 20,
            "",
            True,
            "passed after a rerun in 1 run (r6), and the same failure failed alone in 1 run (r27)",
        ),
    ],
)
def test_the_flaky_rule(outcomes: str, commits: str, flaky: bool, reason: str) -> None:
    """Flaky on evidence in two runs at least; a failure repeating run after run is broken;
    outage runs are set aside; a flaky test recovers after 40 runs without evidence; a pass
    on rerun and the same failure alone in another run are evidence in two runs."""
    verdict = classify(seq(outcomes, commits=commits))
    assert (verdict.flaky, verdict.reason, verdict.error) == (flaky, reason, None)
    # a broken test names the run it has been failing since, and only a broken one
    assert (verdict.broken_since is not None) == reason.startswith("broken")


def test_the_monitors_name_status_monitor_evidence_and_score() -> None:
    """Each monitor names itself, its runs and commits; the score is the share of runs with a
    failure or a rerun; broken comes first and says since when."""
    rerun = assess(seq("R.R."))
    assert (rerun.status, rerun.monitor, rerun.runs, rerun.score) == (
        "flaky",
        "pass-on-retry",
        ("r1", "r3"),
        0.5,
    )
    commit = assess(seq("..F.F", commits="abbcc"))
    assert (commit.monitor, commit.runs, commit.commits) == (
        "same-commit",
        ("r2", "r3", "r4", "r5"),
        ("b", "c"),
    )
    rate = assess(seq(".F.F.F"))
    assert (rate.monitor, rate.runs, rate.looked_at) == ("failure-rate", ("r2", "r4", "r6"), 6)
    broken = assess(seq("R.R.FFF"))
    assert (broken.status, broken.monitor, broken.since, broken.score) == (
        "broken",
        "broken",
        "r5",
        round(5 / 7, 4),
    )


def test_the_monitors_settings() -> None:
    """The failure-rate monitor's minimum runs, the evidence needed, the window, the outage
    share and the recovery period are settings."""
    assert assess(seq(".F.F"), Monitors(min_runs=5)).status == "healthy"
    assert assess(seq("R.."), Monitors(min_evidence=1)).status == "flaky"
    assert assess(seq("R.R" + "." * 5), Monitors(window=5)).status == "healthy"
    assert assess(seq("R.R" + "." * 5), Monitors(recovery=4)).reason.startswith("recovered")
    # 20 of 21 failing is an outage by default; with a share of 0.99 it is not
    assert assess(seq(".O.O."), Monitors(outage_share=0.99)).status == "flaky"
    assert assess(seq(".O.O.")).status == "healthy"


def test_broken_needs_the_same_failure_since_a_point() -> None:
    """Two failures in a row that fail differently are not broken; with the same failure they
    are, even after evidence of flakiness."""
    different = [*seq("..F"), *seq("F", fp="fp2")]
    different = [replace(r, run_id=f"r{i}") for i, r in enumerate(different, 1)]
    assert assess(different).status == "healthy"
    assert assess(seq("R.R.FF")).status == "broken"


def test_a_pass_on_rerun_and_the_same_failure_alone_elsewhere_are_flaky() -> None:
    """A rerun pass and a run of its own where every attempt failed the same way are evidence in
    two runs (pass-on-retry), from 50 results back; with a different failure they are not."""
    found = assess(seq("R" + "." * 45 + "F" + "."))
    assert (found.status, found.monitor, found.runs) == ("flaky", "pass-on-retry", ("r1", "r47"))
    other = [*seq("R" + "." * 45), *seq("F.", fp="fp2")]
    other = [replace(r, run_id=f"r{i}") for i, r in enumerate(other, 1)]
    assert assess(other).status == "healthy"


def test_a_monitor_that_raises_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``examine`` turns a monitor's error into a healthy status naming the error (so nothing is
    quarantined or excused on a guess)."""
    from pytest_qbench.history import flakiness

    def broken(*args: object) -> object:
        raise RuntimeError("monitor broke")

    monkeypatch.setitem(flakiness._EVIDENCE, "pass-on-retry", broken)
    found = examine(seq("R.R."))
    assert (found.status, found.error) == ("healthy", "RuntimeError: monitor broke")


def test_the_flaky_rule_needs_the_same_failure_to_alternate() -> None:
    """Single-run failures that fail differently are no alternation."""
    results = [*seq(".F"), *seq(".F", fp="fp2")]
    results = [replace(r, run_id=f"r{i}") for i, r in enumerate(results, 1)]
    assert classify(results) == Verdict(
        False, "not flaky: failed in single runs, but not the same way each time"
    )


# --- indexing ----------------------------------------------------------------------------------


def test_indexing_a_run_again_replaces_it(history_db: HistoryDB) -> None:
    """Indexing is idempotent: the same run twice is one run with its latest results."""
    first = report("r1", 0, [result("a"), result("b", "failed")])
    again = report("r1", 0, [result("a", "failed"), result("c")])
    done = index_reports(history_db.qbench_dir, first, again, db=history_db.url)
    assert [d.replaced for d in done] == [False, True]
    index = history_db.open()
    try:
        assert [r.run_id for r in list_runs(index, 10)] == ["r1"]
        results = run_results(index, "r1")
    finally:
        index.close()
    assert {n: r.outcome for n, r in results.items()} == {"t.py::a": "failed", "t.py::c": "passed"}


def test_an_index_of_schema_1_gains_the_deselected_tests(history_db: HistoryDB) -> None:
    """(issue 11.4) An index of schema 1 (without the deselected table) is migrated when opened:
    its runs stay, a new run's deselected tests are kept, and retention deletes them with it."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    make_index_of_schema(history_db, 1)
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
        assert run_deselected(index, "r1") == []
        record = report("r2", 1, [result("a")])
        index_run(index, *index_args(record), deselected=["t.py::b", "t.py::c", "t.py::b"])
        assert sorted(run_deselected(index, "r2")) == ["t.py::b", "t.py::c"]
        index_run(index, *index_args(report("r3", 2, [result("a")])), keep_runs=1)
        assert history_db.query("SELECT COUNT(*) FROM deselected") == [(0,)]
        assert history_db.query("SELECT COUNT(*) FROM deselection_sets") == [(0,)]
    finally:
        index.close()


def test_deselection_is_stored_once_per_distinct_set(history_db: HistoryDB) -> None:
    """A suite that deselects the same 5 000 tests in every run stores them once: each further
    run adds a reference (the SQLite file grows by less than 8 KB a run, not by the ids), the
    runs read their own sets back, and a set no run refers to any more goes with retention."""
    same = [f"tests/test_stress.py::test_load[{i}]" for i in range(5000)]
    other = [*same[:10], "tests/test_other.py::test_x"]

    def total(table: str) -> object:
        return history_db.query(f"SELECT COUNT(*) FROM {table}")[0][0]

    index = history_db.open(create=True)
    try:
        index_run(index, *index_args(report("r0", 0, [result("a")])), deselected=same)
        size = 0
        if not history_db.url:
            checkpoint(history_db.qbench_dir / "index.sqlite")
            size = (history_db.qbench_dir / "index.sqlite").stat().st_size
        for n in range(1, 11):
            record = report(f"r{n}", n, [result("a")])
            index_run(index, *index_args(record), deselected=list(reversed(same)))
        if not history_db.url:
            checkpoint(history_db.qbench_dir / "index.sqlite")
            grown = (history_db.qbench_dir / "index.sqlite").stat().st_size - size
            assert grown < 10 * 8192, grown
        index_run(index, *index_args(report("r11", 11, [result("a")])), deselected=other)
        assert total("deselection_sets") == 2
        assert sorted(run_deselected(index, "r7")) == sorted(same)
        assert sorted(run_deselected(index, "r11")) == sorted(set(other))
        assert run_deselected(index, "r0") == sorted(same)
        index_run(index, *index_args(report("r12", 12, [result("a")])), keep_runs=1)
        assert (total("deselection_sets"), total("run_deselection")) == (0, 0)
    finally:
        index.close()


def checkpoint(path: Path) -> None:
    """Move SQLite's write-ahead log into the file, so that its size is the index's."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def test_an_index_of_schema_4_keeps_its_deselected_tests(history_db: HistoryDB) -> None:
    """A run indexed before schema 5 keeps its deselected tests (the old table is read for it)."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    make_index_of_schema(history_db, 4)
    index = history_db.open()
    try:
        ref = index.read(lambda c: c.execute(sql.FIND_RUN_REF, ("r1",)).fetchone()[0])
        index.write(
            lambda c: c.execute(
                "INSERT INTO deselected (run_ref, nodeid) VALUES (?, ?)", (ref, "t.py::x")
            )
        )
    finally:
        index.close()
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        assert run_deselected(index, "r1") == ["t.py::x"]
    finally:
        index.close()


def test_an_index_of_schema_2_gains_the_tool_call_log(history_db: HistoryDB) -> None:
    """(issue 13.8) An index of schema 2 (without tool_calls) is migrated when opened: its runs
    stay, and MCP tool calls are logged in it."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    make_index_of_schema(history_db, 2)
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
        assert recent_calls(index, 5) == []
        record_call(index, tool_call("list_runs", limit=5))
        assert [(c.tool, c.arguments) for c in recent_calls(index, 5)] == [
            ("list_runs", {"limit": 5})
        ]
    finally:
        index.close()


def tool_call(tool: str, ok: bool = True, duration: float = 0.1, **arguments: object) -> ToolCall:
    """A call of ``tool`` made now, that replaced 1000 bytes with 400 when ``ok``."""
    return ToolCall(
        tool=tool,
        arguments=arguments,
        success=ok,
        error_type=None if ok else "ToolFailure",
        duration=duration,
        response_bytes=400,
        replaced_bytes=1000 if ok else 0,
        called_at=datetime.now(timezone.utc),
    )


def test_the_tool_call_log_keeps_the_newest_calls_and_sums_them_up(
    history_db: HistoryDB,
) -> None:
    """(issue 13.8) Calls read back newest first with their arguments (long texts cut); the
    totals per tool count calls, successes, the median duration and bytes saved; recording a
    call drops those beyond the newest N."""
    index = history_db.open(create=True)
    try:
        for duration in (0.3, 0.1, 0.2):
            record_call(index, tool_call("run_test_workflow", duration=duration))
        record_call(index, tool_call("get_run_output", ok=False, run_id="x" * 500))
        [last] = recent_calls(index, 1)
        assert (last.tool, last.success, last.error_type) == (
            "get_run_output",
            False,
            "ToolFailure",
        )
        assert last.arguments["run_id"] == "x" * (MAX_ARGUMENT_CHARS - 1) + "…"
        totals = {t.tool: t for t in tool_totals(index)}
        run = totals["run_test_workflow"]
        assert (run.calls, run.succeeded, run.median_duration) == (3, 3, 0.2)
        assert (run.saved_bytes, run.success_rate) == (1800, 1.0)
        assert (totals["get_run_output"].success_rate, totals["get_run_output"].saved_bytes) == (
            0.0,
            0,
        )
        record_call(index, tool_call("check_health"), keep=2)
        assert [c.tool for c in recent_calls(index, 10)] == ["check_health", "get_run_output"]
    finally:
        index.close()


def test_the_same_node_id_twice_in_a_run_keeps_the_last(history_db: HistoryDB) -> None:
    """A report holding a node id twice (pytest's --keep-duplicates) is indexed, last one wins."""
    record = report(
        "r1", 0, [result("a", "failed", metrics={"m": 0.2}), result("a", metrics={"m": 0.9})]
    )
    index_reports(history_db.qbench_dir, record, db=history_db.url)
    rows = history_db.query("SELECT outcome FROM results")
    metrics = history_db.query("SELECT score FROM metrics")
    assert (rows, metrics) == ([("passed",)], [(0.9,)])


def test_a_run_is_indexed_with_its_metadata_and_counts(history_db: HistoryDB) -> None:
    """RunMeta, the counts and the CI branch and commit are in the runs table."""
    record = report("r1", 0, [result("a"), result("b", "error")], branch="dev")
    index_reports(history_db.qbench_dir, record, db=history_db.url)
    index = history_db.open()
    try:
        (run,) = list_runs(index, 5)
    finally:
        index.close()
    assert (run.run_id, run.exit_code, run.branch, run.commit) == ("r1", 1, "dev", "abc123-r1")
    assert run.counts["total"] == 2 and run.counts["errors"] == 1 and run.counts["passed"] == 1
    assert run.command == ["pytest", "-p", "qbench"]
    assert run.started_at == T0 and run.duration == 2.0


def test_retention_removes_old_runs_and_their_directories(history_db: HistoryDB) -> None:
    """keep_runs=2: the oldest runs leave the index (with their tests no run refers to) and their
    directories are deleted; directories of runs not in the index stay."""
    qbench_dir = history_db.qbench_dir
    records = [report(f"r{i}", i, [result(f"only_in_r{i}"), result("common")]) for i in range(4)]
    for record in records:
        write_run(qbench_dir, record)
    (qbench_dir / "runs" / "not-indexed").mkdir()
    done = index_reports(qbench_dir, *records, keep_runs=2, db=history_db.url)
    assert [d.removed for d in done] == [[], [], ["r0"], ["r1"]]
    assert remove_run_dirs(qbench_dir, ["r0", "r1", "../escape"]) == []
    assert sorted(p.name for p in (qbench_dir / "runs").iterdir()) == ["not-indexed", "r2", "r3"]
    tests = {row[0] for row in history_db.query("SELECT nodeid FROM tests")}
    assert tests == {"t.py::common", "t.py::only_in_r2", "t.py::only_in_r3"}


# --- the index: versions, damage, locks --------------------------------------------------------


def test_an_index_of_a_newer_schema_is_refused(history_db: HistoryDB) -> None:
    """A newer qbench's index is not touched; the message says to upgrade or rebuild."""
    index_reports(history_db.qbench_dir, report("r1", 0, [result("a")]), db=history_db.url)
    index = history_db.open()
    try:
        index.write(
            lambda cursor: cursor.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                (str(sql.SCHEMA_VERSION + 1),),
            )
        )
    finally:
        index.close()
    newer = f"schema version {sql.SCHEMA_VERSION + 1}; this qbench knows up to {sql.SCHEMA_VERSION}"
    with pytest.raises(HistoryError, match=newer) as info:
        history_db.open(create=True)
    assert info.value.slug == "index-newer"


def test_a_missing_index_is_an_error_for_readers(history_db: HistoryDB) -> None:
    """Reading needs an index, and does not make one; the message says how to make one."""
    fix = "run pytest with qbench to create it" if history_db.url is None else "run 'qbench index'"
    with pytest.raises(HistoryError, match=fix) as info:
        history_db.open()
    assert info.value.slug == "index-missing"
    assert not (history_db.qbench_dir / INDEX_NAME).exists()
    with pytest.raises(HistoryError, match=fix):
        history_db.open()


def test_a_damaged_index_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    """A file that is not SQLite: delete it and rebuild with qbench index."""
    (tmp_path / INDEX_NAME).write_bytes(b"not a database, just some bytes" * 100)
    with pytest.raises(HistoryError, match="delete it and run 'qbench index'") as info:
        SQLiteIndex(tmp_path / INDEX_NAME, create=True)
    assert info.value.slug == "index-broken"


def test_a_writer_waits_for_a_lock_then_gives_up_clearly(tmp_path: Path) -> None:
    """Another process holding the write lock longer than `wait` gives a clear error, and the
    index is unchanged."""
    index_reports(tmp_path, report("r1", 0, [result("a")]))
    holder = sqlite3.connect(tmp_path / INDEX_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    index = SQLiteIndex(tmp_path / INDEX_NAME, wait=0.3)
    index._conn.execute("PRAGMA busy_timeout = 50")
    try:
        with pytest.raises(HistoryError, match="stayed locked by another process") as info:
            record = report("r2", 1, [result("a")])
            index_run(index, *index_args(record))
        assert info.value.slug == "index-locked"
        holder.execute("ROLLBACK")
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
    finally:
        index.close()
        holder.close()


# --- concurrent writers --------------------------------------------------------------------------

WRITERS, RUNS_EACH, RESULTS_EACH = 4, 12, 300


def _write_runs(qbench_dir: str, writer: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait(30)
    index_reports(Path(qbench_dir), *writer_runs(writer, RUNS_EACH, RESULTS_EACH))


def _read_runs(
    qbench_dir: str,
    start: multiprocessing.synchronize.Event,
    seen: multiprocessing.Queue[list[int]],
) -> None:
    start.wait(30)
    counts: list[int] = []
    for _ in range(40):
        index = SQLiteIndex(Path(qbench_dir) / INDEX_NAME)
        try:
            runs = list_runs(index, 1000)
            counts.extend(len(run_results(index, r.run_id)) for r in runs)
        finally:
            index.close()
    seen.put(sorted(set(counts)))


def test_processes_writing_at_the_same_time_lose_no_run(tmp_path: Path) -> None:
    """Four processes index 12 runs each at once (and one reads meanwhile): every run is there
    whole, the file passes SQLite's integrity check, and no reader saw a half-written run."""
    index_reports(tmp_path, report("seed", -1, [result("test_0")]))
    ctx = multiprocessing.get_context("spawn")
    start, seen = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_write_runs, args=(str(tmp_path), w, start)) for w in range(WRITERS)
    ]
    procs.append(ctx.Process(target=_read_runs, args=(str(tmp_path), start, seen)))
    assert run_at_once(start, procs) == [0] * (WRITERS + 1)
    with sqlite3.connect(tmp_path / INDEX_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        per_run = db.execute(
            "SELECT COUNT(*) FROM results GROUP BY run_ref HAVING COUNT(*) > 1"
        ).fetchall()
        journal = db.execute("PRAGMA journal_mode").fetchone()[0]
    assert runs == 1 + WRITERS * RUNS_EACH
    assert per_run == [(RESULTS_EACH,)] * (WRITERS * RUNS_EACH)
    assert journal == "wal"
    # the reader put it before it exited: a wait for the queue's pipe only (a safety net)
    assert set(seen.get(timeout=600)) <= {1, RESULTS_EACH}


# --- the stream, read cheaply at the end of a run ----------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        result("plain"),
        result('odd,"durations":{"x":1} name'),
        result('q"uote\\back\tünï ,"outcome":"failed" \U0001f600[a-1]'),
        result("slow", duration=1e-05),
        {**result("phases"), "durations": {"setup": 2e-05, "call": 0.5, "teardown": 0.25}},
        result("bad", "failed", message='with ,"durations": inside'),
        result("err", "error"),
        result("rerun", flaky=True),
        result("scored", metrics={"m": 0.7}),
        result("skip", "skipped"),
    ],
)
def test_index_items_reads_what_indexing_needs(tmp_path: Path, record: TestResultRecord) -> None:
    """The head-only parse of a stream line gives the indexer the same facts as a full parse."""
    from pytest_qbench.report import store

    writer = store.StreamWriter(tmp_path / "results.jsonl")
    writer.write_result(record)
    writer.close()
    (light,) = indexed_items(tmp_path / "results.jsonl")
    for field in ("nodeid", "outcome", "duration"):
        assert light[field] == record[field]
    for phase in ("setup", "teardown"):  # as stored: a phase not there is 0.0
        stored = (light.get("durations") or {}).get(phase) or 0.0
        assert stored == ((record["durations"] or {}).get(phase) or 0.0)
    for key in ("metric_results", "flaky", "reruns"):
        assert (light.get(key) or None) == (record[key] or None), key
    failure = record["failure"]
    if failure:  # what the index reads of it (its traceback is not parsed)
        assert {key: light["failure"][key] for key in ("error_type", "error_message")} == {
            key: failure[key] for key in ("error_type", "error_message")
        }
        assert (light["file"], light["failure"]["file"], light["failure"]["line"]) == (
            record["file"],
            failure["file"],
            failure["line"],
        )
    else:
        assert not light.get("failure")


def test_a_write_holds_a_bounded_page_cache(tmp_path: Path) -> None:
    """Indexing a run keeps at most 512 KiB of SQLite pages in the test run's memory (SQLite's
    default is 2 000 KiB): the pages of a large run's transaction beyond that spill to the WAL
    file, and the run is indexed whole."""
    index = SQLiteIndex(tmp_path / INDEX_NAME, create=True)
    try:
        cache = index.write(lambda cursor: cursor.execute("PRAGMA cache_size").fetchone()[0])
    finally:
        index.close()
    assert cache == -512
    results = [result(f"test_{n}_{'x' * 200}") for n in range(3000)]
    index_reports(tmp_path, report("big", 0, results))
    with sqlite3.connect(tmp_path / INDEX_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (3000,)


def _indexing_peak(qbench_dir: Path, size: int) -> int:
    """Python's peak memory (bytes, tracemalloc) while indexing a run of ``size`` results that
    are made one at a time, as a stream is read."""
    record = report(f"r{size}", 0, [])
    results = (result(f"test_{n}", "failed" if n % 20 == 0 else "passed") for n in range(size))
    tracemalloc.start()
    try:
        record_run(qbench_dir, record, None, results, keep_runs=0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_indexing_holds_the_same_memory_for_a_small_and_a_large_run(tmp_path: Path) -> None:
    """The results are parsed and written in small batches: indexing 3 000 results holds no
    more memory than indexing 200 (it held about 1.5 MiB more: batches of 500)."""
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small = _indexing_peak(tmp_path / "small", 200)
    large = _indexing_peak(tmp_path / "large", 3000)
    assert large - small < 256 * 1024, (small, large)
