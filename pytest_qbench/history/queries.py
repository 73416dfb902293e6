"""Reading the index: runs, one run's results, a test's results, flaky candidates.

Each function is one snapshot (``Index.read``) and returns plain data classes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import field
from datetime import datetime
from itertools import groupby
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.records import dataclass
from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.backend import Row
from pytest_qbench.history.deselection import decode
from pytest_qbench.history.json_config import JSON_CONFIG


if TYPE_CHECKING:
    from pytest_qbench.history.shardplan import Timing


@dataclass(frozen=True)
class RunInfo:
    """One indexed run: its metadata, counts and environment."""

    run_id: str
    tool: str
    started_at: datetime
    completed_at: datetime | None
    exit_code: int | None
    interrupted: bool
    cwd: str
    command: list[str]
    counts: dict[str, int]
    """By ``ReportSummary`` field: ``sql.COUNT_COLUMNS``, and ``sql.SUBTEST_COLUMNS`` only
    where known (see ``subtests_known``)."""
    duration: float
    branch: str | None
    commit: str | None
    ci_provider: str | None
    build_url: str | None
    python: str | None
    platform: str | None
    qbench_version: str | None
    shard: str | None = None
    """The CI shard the run was: ``2/4`` (``--qbench-shard``), ``queue NAME``
    (``--qbench-queue``); ``None`` for a whole run."""
    max_failures: int | None = None
    """The failures and errors at which pytest was to stop the run (``-x`` 1, ``--maxfail=N``,
    ``--sw``), from whatever source pytest read them; 0: none; ``None``: not known (the command
    line tells)."""
    last_failed: bool | None = None
    """Whether pytest ran with ``--lf``, from whatever source; ``None``: not known."""
    recording_errors: int | None = None
    """qbench's errors while recording the run (not 0: its results are incomplete); ``None``:
    not known (a run indexed before schema 10)."""
    other: dict[str, int] = field(default_factory=dict, hash=False)
    """The counts its closing line gave under plugins' own words (``ReportSummary.other``: a
    conftest's ``pytest_report_teststatus`` counting a failure as ``known``), in the line's
    order; empty when none, or not known (a run indexed before schema 12)."""

    @property
    def subtests_known(self) -> bool:
        """Whether the index knows the run's subtest counts (not for a run indexed before
        schema 8, or from a report written before qbench counted subtests)."""
        return all(name in self.counts for name in sql.SUBTEST_COLUMNS)

    @classmethod
    def from_row(cls, row: Row) -> RunInfo:
        """From a row of ``sql.RUN_COLUMNS``."""
        v = dict(zip(sql.RUN_COLUMNS, row, strict=True))
        started = from_index_time(v["started_at"])
        assert started is not None  # NOT NULL column
        return cls(
            run_id=v["run_id"],
            tool=v["tool"],
            started_at=started,
            completed_at=from_index_time(v["completed_at"]),
            exit_code=v["exit_code"],
            interrupted=bool(v["interrupted"]),
            cwd=v["cwd"],
            command=list(json.loads(v["command"])),
            counts=run_counts(v),
            duration=float(v["duration"]),
            branch=v["branch"],
            commit=v["commit_sha"],
            ci_provider=v["ci_provider"],
            build_url=v["build_url"],
            python=v["python"],
            platform=v["platform"],
            qbench_version=v["qbench_version"],
            shard=v["shard"],
            max_failures=v["max_failures"],
            last_failed=None if v["last_failed"] is None else bool(v["last_failed"]),
            recording_errors=v["recording_errors"],
            other=other_counts(v["other_counts"]),
        )


def run_counts(columns: dict[str, Any]) -> dict[str, int]:
    """A run's counts by ``ReportSummary`` field, from its ``runs`` columns; the subtest counts
    only where known (``NULL``: not known, which must never read as 0)."""
    counts = {name: int(columns[name]) for name in sql.COUNT_COLUMNS}
    counts.update(
        (name, int(columns[name])) for name in sql.SUBTEST_COLUMNS if columns[name] is not None
    )
    return counts


def other_counts(text: str | None) -> dict[str, int]:
    """The ``runs.other_counts`` column as a dict (``NULL``: none)."""
    if not text:
        return {}
    found = json.loads(text)
    return (
        {str(word): int(count) for word, count in found.items()} if isinstance(found, dict) else {}
    )


@dataclass(frozen=True)
class PastResult:
    """One result of a test, in one run."""

    run_id: str
    started_at: str
    """Index time text (sortable)."""
    outcome: str
    duration: float
    flaky: bool
    fingerprint: str | None
    message: str | None = None
    """First line of the failure's message (failed and errored results)."""
    commit: str | None = None
    """The commit the run tested, as the CI recorded it (read for flaky verdicts)."""
    run_failing: int = 0
    """The run's failed and errored tests (read for flaky verdicts: ``flakiness.is_outage``)."""
    run_ran: int = 0
    """The run's tests that passed or failed, skips left out (read for flaky verdicts)."""
    reruns: int = 0
    """How many times pytest-rerunfailures ran it again (read for ``qbench diff``)."""


@dataclass(frozen=True)
class FailureInfo:
    """What a fingerprint stands for: error type, location and an example message."""

    __pydantic_config__ = JSON_CONFIG  # the --json output's model (history/json_models.py)

    error_type: str
    location: str
    message: str


def list_runs(index: Index, limit: int) -> list[RunInfo]:
    """The ``limit`` most recent runs, newest first."""

    def work(cursor: Cursor) -> list[RunInfo]:
        cursor.execute(sql.LIST_RUNS, (limit,))
        return [RunInfo.from_row(row) for row in cursor.fetchall()]

    return index.read(work)


def resolve_run(index: Index, ref: str) -> RunInfo:
    """The run that ``ref`` names: an id, a unique prefix of one, ``last`` or ``last~N``.

    Raises:
        HistoryError: no such run, or a prefix of several.
    """
    return index.read(lambda cursor: _resolve(cursor, ref, index.location))


def indexed_run_ids(index: Index) -> set[str]:
    """The ids of the runs in the index."""

    def ids(cursor: Cursor) -> set[str]:
        cursor.execute(sql.RUN_IDS_NEWEST_FIRST)
        return {str(row[0]) for row in cursor.fetchall()}

    return index.read(ids)


def runs_in_order(index: Index) -> list[str]:
    """The ids of the runs in the index, in its one order (the order they were first indexed
    in), oldest first."""

    def ids(cursor: Cursor) -> list[str]:
        cursor.execute(sql.RUN_IDS_NEWEST_FIRST)
        return [str(row[0]) for row in reversed(cursor.fetchall())]

    return index.read(ids)


def _resolve(cursor: Cursor, ref: str, where: str) -> RunInfo:
    from pytest_qbench.report.runref import RunName  # not needed at the end of a pytest run
    from pytest_qbench.report.runref import choose

    cursor.execute(sql.RUN_IDS_NEWEST_FIRST)
    names = [RunName(str(row[0])) for row in cursor.fetchall()]
    cursor.execute(sql.RUN_BY_ID, (choose(ref, names, where, "'qbench runs'"),))
    return RunInfo.from_row(cursor.fetchone())


def run_results(index: Index, run_id: str) -> dict[str, PastResult]:
    """Every result of a run, by node id."""

    def work(cursor: Cursor) -> dict[str, PastResult]:
        cursor.execute(sql.RESULTS_OF_RUN, (run_id,))
        return {
            nodeid: PastResult(
                run_id, "", outcome, float(duration), bool(flaky), fp, message, reruns=int(reruns)
            )
            for nodeid, outcome, duration, flaky, fp, message, reruns in cursor.fetchall()
        }

    return index.read(work)


def run_deselected(index: Index, run_id: str) -> list[str]:
    """The node ids a run deselected, as far as the index knows (see ``sql.DESELECTED_TABLE``)."""

    def work(cursor: Cursor) -> list[str]:
        cursor.execute(sql.DESELECTION_SET_OF_RUN, (run_id,))
        found = cursor.fetchone()
        if found is not None:
            return decode(str(found[0]))
        cursor.execute(sql.DESELECTED_OF_RUN, (run_id,))  # a run indexed before schema 5
        return [row[0] for row in cursor.fetchall()]

    return index.read(work)


def run_metrics(index: Index, run_id: str) -> dict[tuple[str, str, int], tuple[float | None, bool]]:
    """Every metric score of a run: ``(nodeid, metric, seq) -> (score, passed)``."""

    def work(cursor: Cursor) -> dict[tuple[str, str, int], tuple[float | None, bool]]:
        cursor.execute(sql.METRICS_OF_RUN, (run_id,))
        return {
            (nodeid, metric, int(seq)): (score, bool(passed))
            for nodeid, metric, seq, score, passed in cursor.fetchall()
        }

    return index.read(work)


def run_failures(index: Index, run_id: str) -> list[tuple[str, str, FailureInfo | None]]:
    """Failed and errored tests of a run: node id, outcome and what failed, by node id."""

    def work(cursor: Cursor) -> list[tuple[str, str, FailureInfo | None]]:
        cursor.execute(sql.FAILURES_OF_RUN, (run_id,))
        return [
            (nodeid, outcome, FailureInfo(etype, loc, msg) if etype is not None else None)
            for nodeid, outcome, etype, loc, msg in cursor.fetchall()
        ]

    return index.read(work)


def failure_infos(index: Index, fingerprints: Iterable[str]) -> dict[str, FailureInfo]:
    """What each fingerprint stands for."""
    wanted = sorted(set(fingerprints))

    def work(cursor: Cursor) -> dict[str, FailureInfo]:
        found: dict[str, FailureInfo] = {}
        for chunk in sql.batches(wanted):
            cursor.execute(sql.fingerprints_in(len(chunk)), chunk)
            for fp, etype, loc, msg in cursor.fetchall():
                found[fp] = FailureInfo(etype, loc, msg)
        return found

    return index.read(work) if wanted else {}


def results_of_test(index: Index, nodeid: str, limit: int) -> list[PastResult]:
    """A test's last ``limit`` results, oldest first.

    Raises:
        HistoryError: the index has no result of that test (similar node ids are named).
    """

    def work(cursor: Cursor) -> list[PastResult]:
        cursor.execute(sql.TEST_RESULTS, (nodeid, limit))
        rows = cursor.fetchall()
        if not rows:
            raise _unknown_test(cursor, nodeid, index.location)
        words = worded_runs(cursor)
        return [judged_result(row, words) for row in reversed(rows)]

    return index.read(work)


def _unknown_test(cursor: Cursor, nodeid: str, where: str) -> HistoryError:
    escaped = re.sub(r"([!%_])", r"!\1", nodeid)
    cursor.execute(sql.SIMILAR_TESTS, (f"%{escaped}%",))
    similar = [row[0] for row in cursor.fetchall()]
    if not similar:  # a misspelling: the node ids a few edits away
        cursor.execute(sql.ALL_TESTS)
        similar = close_names(nodeid, (row[0] for row in cursor.fetchall()))
    hint = f"; did you mean {', '.join(similar)}?" if similar else "; give a full pytest node id"
    return HistoryError(f"no test {nodeid!r} in {where}{hint}", slug="test-not-found")


MAX_SUGGESTED = 5
"""Node ids an unknown test's message offers at most."""


def close_names(wanted: str, nodeids: Iterable[str]) -> list[str]:
    """The node ids within a few edits of ``wanted`` (ignoring case), closest first.

    A node id is compared whole and by its last part (the test's name after ``::``), so that
    ``test_flaki`` finds ``test_app.py::test_flaky``. At most ``max(2, len(wanted) // 5)``
    insertions, deletions or substitutions count as close.
    """
    from pytest_qbench.evaluation.metrics import levenshtein_distance

    text = wanted.lower()
    limit = max(2, len(text) // 5)
    ranked = []
    for nodeid in nodeids:
        lowered = nodeid.lower()
        distances = [
            levenshtein_distance(text, part)
            for part in {lowered, lowered.rsplit("::", 1)[-1]}
            if abs(len(part) - len(text)) <= limit
        ]
        if distances and min(distances) <= limit:
            ranked.append((min(distances), nodeid))
    return [nodeid for _distance, nodeid in sorted(ranked)[:MAX_SUGGESTED]]


def known_tests(index: Index, nodeids: Iterable[str]) -> set[str] | None:
    """The node ids among ``nodeids`` that the index has a result of; ``None`` when it holds no
    run at all (no history to tell a new test by)."""

    def work(cursor: Cursor) -> set[str] | None:
        cursor.execute(sql.ANY_RUN)
        if cursor.fetchone() is None:
            return None
        # one scan of the tests table: at 10 000 tests about 10 times cheaper than the batches
        # of IN lists over every collected node id
        cursor.execute(sql.ALL_TESTS)
        return {str(row[0]) for row in cursor.fetchall()}.intersection(nodeids)

    return index.read(work)


def sequences_of(index: Index, nodeids: Sequence[str], runs: int) -> dict[str, list[PastResult]]:
    """Every result of the tests ``nodeids`` (those the index has) in the last ``runs`` runs,
    oldest first per test."""

    def work(cursor: Cursor) -> dict[str, list[PastResult]]:
        refs: list[Any] = []
        for chunk in sql.batches(dict.fromkeys(nodeids)):
            cursor.execute(sql.find_tests(len(chunk)), chunk)
            refs += [row[0] for row in cursor.fetchall()]
        return _sequences(cursor, refs, runs)

    return index.read(work)


def flaky_candidates(index: Index, runs: int) -> dict[str, list[PastResult]]:
    """Tests that failed (or passed only after reruns) in the last ``runs`` runs, with every
    result of theirs in those runs, oldest first."""

    def work(cursor: Cursor) -> dict[str, list[PastResult]]:
        cursor.execute(sql.FLAKY_CANDIDATES, (runs,))
        return _sequences(cursor, [row[0] for row in cursor.fetchall()], runs)

    return index.read(work)


def _sequences(cursor: Cursor, refs: list[Any], runs: int) -> dict[str, list[PastResult]]:
    """Every result of the tests ``refs`` (ids of ``tests``) in the last ``runs`` runs."""
    found: dict[str, list[PastResult]] = {}
    words = worded_runs(cursor)
    for chunk in sql.batches(refs):
        cursor.execute(sql.flaky_sequences(len(chunk)), [*chunk, runs])
        for nodeid, *row in cursor.fetchall():
            found.setdefault(nodeid, []).append(judged_result(row, words))
    return found


@dataclass(frozen=True)
class Recent:
    """A test's recent past, as the history of a failure needs it."""

    window: list[PastResult]
    """Its last pass-or-fail results, newest first."""
    last_pass: PastResult | None
    """Its last pass, in or before the window."""


def recent_results(
    index: Index, nodeids: Sequence[str], run_id: str, window: int
) -> dict[str, Recent]:
    """For each node id with results: its last ``window`` pass-or-fail results in runs indexed
    before ``run_id`` (every run when it is not indexed), and its last pass. Indexed before,
    not started before: a run's recorded start is its machine's clock, which may be wrong."""

    def work(cursor: Cursor) -> dict[str, Recent]:
        cursor.execute(sql.FIND_RUN_REF, (run_id,))
        own = cursor.fetchone()
        own_ref = own[0] if own else sql.LAST_REF
        found: dict[str, Recent] = {}
        words = worded_runs(cursor)
        for chunk in sql.batches(dict.fromkeys(nodeids)):
            cursor.execute(sql.recent_results_of(len(chunk)), [*chunk, own_ref])
            for nodeid, rows in groupby(cursor.fetchall(), itemgetter(0)):
                kept = [judged_result(row[1:], words) for row in islice(rows, window)]
                last_pass = next((past for past in kept if past.outcome not in sql.FAILING), None)
                if last_pass is None:  # before its window, if it ever passed
                    row = next((row for row in rows if row[3] not in sql.FAILING), None)
                    last_pass = None if row is None else judged_result(row[1:], words)
                if kept or last_pass is not None:
                    found[nodeid] = Recent(kept, last_pass)
        return found

    return index.read(work) if nodeids else {}


def phase_timings(
    index: Index, nodeids: Sequence[str], runs: int, commit: str | None = None
) -> dict[str, list[Timing]]:
    """The phase seconds of each node id's last ``runs`` results that passed or failed, in
    runs of another commit than ``commit`` (the shards of one CI pipeline test one commit: a
    shard that finished first must not change the plan of one that starts later), each
    pipeline once (a run held by an indexed merged run is left out: the merge holds its
    results). A result indexed before phase times were kept counts its whole duration as the
    call."""
    from pytest_qbench.history.shardplan import Timing  # only sharded runs plan

    other = commit or ""

    def read(cursor: Cursor, wanted: Iterable[str], low: int, high: int) -> dict[str, list[Row]]:
        """The rows of ``wanted`` in runs ``low`` to ``high`` (excluded), at most ``runs`` a
        node id, newest first."""
        rows: dict[str, list[Row]] = {}
        for chunk in sql.batches(wanted):
            cursor.execute(sql.phase_timings_of(len(chunk)), [*chunk, low, high, other])
            for nodeid, group in groupby(cursor.fetchall(), itemgetter(0)):
                rows[nodeid] = list(islice(group, runs))
        return rows

    def work(cursor: Cursor) -> dict[str, list[Timing]]:
        if runs < 1:
            return {}
        cursor.execute(sql.PHASE_WINDOW_START, (other, runs - 1))
        start = cursor.fetchone()
        unique = dict.fromkeys(nodeids)
        if start is None:  # fewer such runs than a window: every one is read
            found = read(cursor, unique, 0, sql.LAST_REF)
        else:  # the newest runs hold most tests' window; older ones for those short of it
            found = read(cursor, unique, start[0], sql.LAST_REF)
            short = [nodeid for nodeid in unique if len(found.get(nodeid, ())) < runs]
            for nodeid, older in read(cursor, short, 0, start[0]).items():
                found[nodeid] = [*found.get(nodeid, ()), *older][:runs]
        timings: dict[str, list[Timing]] = {}
        for nodeid, rows in found.items():
            kept = timings[nodeid] = []
            for _nodeid, duration, setup, teardown in rows:
                before, after = float(setup or 0.0), float(teardown or 0.0)
                call = max(0.0, float(duration) - before - after)
                kept.append(Timing(before, call, after))
        return timings

    return index.read(work) if nodeids else {}


def worded_runs(cursor: Cursor) -> dict[str, tuple[int, int]]:
    """The failed and errored tests, and the tests that passed or failed, of each run whose line
    counts tests under a plugin's own words (``sql.WORDED_RUNS``), by run id: what
    ``judged_result`` gives its results instead of the line's counts."""
    cursor.execute(sql.WORDED_RUNS)
    return {str(run_id): (int(failing), int(ran)) for run_id, failing, ran in cursor.fetchall()}


NO_WORDS: dict[str, tuple[int, int]] = {}


def judged_result(row: Sequence[Any], words: dict[str, tuple[int, int]] = NO_WORDS) -> PastResult:
    """A result from the columns of ``sql.JUDGED_RESULT``: its fields set in one dict update,
    not by the dataclass's ``__init__`` (a Python loop of ``object.__setattr__``, a field at a
    time: 26.7 k instructions a result against 8.5 k; a failing test's history reads up to 50).
    ``tests/test_failing_history_cost.py`` holds it to ``PastResult``'s fields."""
    run_id, started, outcome, duration, flaky, fp, message, commit, failing, ran = row
    if words and run_id in words:  # a plugin's own words: judged by its results
        failing, ran = words[run_id]
    past: PastResult = object.__new__(PastResult)
    vars(past).update(
        run_id=run_id,
        started_at=started,
        outcome=outcome,
        duration=float(duration),
        flaky=bool(flaky),
        fingerprint=fp,
        message=message,
        commit=commit,
        run_failing=failing,
        run_ran=ran,
        reruns=0,
    )
    return past


def runs_held(index: Index) -> int:
    """How many runs the index holds: a window of "the last N runs" holds no more."""
    return int(index.read(lambda cursor: cursor.execute(sql.COUNT_RUNS).fetchone()[0]))
