"""At the end of a pytest run: index the run, then tell each failing test its history.

Called once by ``QBenchSession`` (records only: no pydantic in the pytest process).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal
from typing import cast

from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history.analysis import FAIL
from pytest_qbench.history.analysis import as_outcome
from pytest_qbench.history.analysis import count_flips
from pytest_qbench.history.analysis import flaky_indicator
from pytest_qbench.history.backend import Index
from pytest_qbench.history.database import open_index
from pytest_qbench.history.diagnostics import mark_diagnostics
from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import Verdict
from pytest_qbench.history.flakiness import is_outage
from pytest_qbench.history.flakiness import judge
from pytest_qbench.history.indexer import Indexed
from pytest_qbench.history.indexer import Record
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.indexer import live_runs_in
from pytest_qbench.history.indexer import remove_run_dirs
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import Recent
from pytest_qbench.history.queries import recent_results
from pytest_qbench.history.sql import FAILING
from pytest_qbench.report import store
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.models import HistoryStatus
    from pytest_qbench.report.records import TestHistoryRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


WINDOW = 10
"""Earlier runs of a test that its history counts (the flaky monitors look at their own
window, ``Monitors.window``)."""


@dataclass
class Recorded:
    """What indexing a finished run gives back."""

    histories: dict[str, TestHistoryRecord] = field(default_factory=dict)
    """``TestHistory`` records of the failed and errored tests, by node id."""
    problems: list[str] = field(default_factory=list)
    """Lines for the terminal: what retention removed, old run directories that could not be
    deleted."""
    removed: list[str] = field(default_factory=list)
    """Runs retention removed."""


def record_run(
    qbench_dir: Path,
    report: TestReportRecord,
    stream: Path | None,
    extra: Iterable[TestResultRecord],
    keep_runs: int,
    db: str | None = None,
    deselected: Sequence[str] = (),
    monitors: Monitors | None = None,
    quarantined: Mapping[str, bool] | None = None,
) -> Recorded:
    """Index the run (the results of ``stream``, then ``extra``) in ``<qbench_dir>/index.sqlite``
    or the PostgreSQL database ``db`` (created when missing), apply retention, and return the
    history of each failing test. First, each static-check diagnostic of ``report`` gets its
    ``history`` (``new``, ``existing since <run>``) from the runs indexed before. Retention
    deletes the run directories of the runs it removes that are in ``qbench_dir`` (another
    machine's runs have theirs elsewhere). ``deselected``: the node ids the run deselected,
    which ``qbench diff`` tells from removed tests. ``quarantined``: the quarantined tests that
    failed, by node id, and whether their failure's fingerprint is known.

    Raises:
        HistoryError: the index cannot be used (locked for too long, damaged, newer,
            unreachable).
    """
    index = open_index(qbench_dir, db, create=True)
    try:
        # indexing reads records generically, most of them parsed only in part (index_records)
        records = partial(index_records, stream, cast("Iterable[Record]", extra))
        before = to_index_time(report["run"]["started_at"]) or ""
        mark_diagnostics(index, cast("Record", report), before)  # before it is in the index
        done = index_run(
            index,
            cast("Record", report),
            records,
            keep_runs=keep_runs,
            deselected=deselected,
            live=live_runs_in(qbench_dir),
        )
        ci = report["environment"]["ci"]
        commit = ci["commit"] if ci else None
        started = report["run"]["started_at"]
        histories = failing_histories(
            index, done, started, commit, monitors or DEFAULT_MONITORS, quarantined or {}
        )
    finally:
        index.close()
    notes = _remove_old_runs(qbench_dir, done.removed, keep_runs)
    return Recorded(histories, notes, done.removed)


def _remove_old_runs(qbench_dir: Path, removed: list[str], keep_runs: int) -> list[str]:
    """Delete the run directories of the runs retention ``removed``; the lines saying so."""
    if not removed:
        return []
    from pytest_qbench.core.numbers import format_bytes
    from pytest_qbench.core.summary_words import plural
    from pytest_qbench.history.files import dir_size

    dirs_here = [store.run_dir(qbench_dir, run_id) for run_id in removed]
    sizes = {d: dir_size(d) for d in dirs_here if d.is_dir() and not d.is_symlink()}
    problems = remove_run_dirs(qbench_dir, removed)
    gone = [size for d, size in sizes.items() if not d.exists()]
    deleted, freed = len(gone), sum(gone)
    runs = plural(len(removed), "old run")
    dirs = f"{deleted} run director{'y' if deleted == 1 else 'ies'}"
    shown = ", ".join(removed[:5]) + (", ..." if len(removed) > 5 else "")
    note = (
        f"retention (qbench_keep_runs = {keep_runs}) removed {runs} from the index and deleted "
        f"{dirs} ({format_bytes(freed)}): {shown}"
    )
    return [note, *problems]


def forget_run(qbench_dir: Path, run_id: str, db: str | None = None) -> bool:
    """Take ``run_id`` out of the index again (its reports could not be written); return
    whether it was there.

    Raises:
        HistoryError: the index cannot be used.
    """
    from pytest_qbench.history.indexer import delete_run

    index = open_index(qbench_dir, db)
    try:
        return bool(index.write(partial(delete_run, run_id=run_id)))
    finally:
        index.close()


_HEAD_END = ',"durations":'
# A line holding one of these needs all its fields (a failure, metrics, reruns); a string value
# cannot hold them, as its quotes are escaped.
_NEEDS_ALL = (
    '"outcome":"failed"',
    '"outcome":"error"',
    '"flaky":true',
    '"attempts":[{',
    '"metric_results":[{',
)


def index_records(stream: Path | None, extra: Iterable[Record]) -> Iterator[Record]:
    """What indexing needs of each result of a run's stream (then ``extra``), parsed cheaply.

    Most results only tell their node id, outcome and durations: of their JSON line only the
    head is parsed, the fields up to ``durations`` and that object (which hold no nested value
    but it, so that the head cut after it and closed is an object of its own). Other lines are
    parsed whole, with the fields the stream leaves out at their default restored.
    """
    if stream is not None:
        for raw in store.iter_result_json(stream):
            yield _light_record(raw)
    yield from extra


def _light_record(raw: str) -> Record:
    start = raw.find(_HEAD_END)
    cut = raw.find("}", start) + 1  # the end of the durations object
    if start < 0 or cut <= 0 or any(mark in raw for mark in _NEEDS_ALL):
        return _whole_record(raw)
    head: Record = json.loads(raw[:cut] + "}")
    return head if "outcome" in head and "duration" in head else _whole_record(raw)


def _whole_record(raw: str) -> Record:
    return cast("Record", store.read_result(raw))


def failing_histories(
    index: Index,
    done: Indexed,
    started_at: str,
    commit: str | None = None,
    monitors: Monitors = DEFAULT_MONITORS,
    quarantined: Mapping[str, bool] | None = None,
) -> dict[str, TestHistoryRecord]:
    """``TestHistory`` records of the run's failing tests: one query for all of them. ``commit``:
    the one the run tested, as the CI recorded it; ``quarantined``: see ``record_run``."""
    if not done.failing:
        return {}
    before = to_index_time(started_at) or ""
    nodeids = [nodeid for nodeid, _fp in done.failing]
    recent = recent_results(index, nodeids, before, done.run_id, max(WINDOW, monitors.window))
    empty = Recent([], None)
    quarantined = quarantined or {}
    return {
        nodeid: judged_history(
            recent.get(nodeid, empty), fp, done.run_id, commit, monitors, quarantined.get(nodeid)
        )[0]
        for nodeid, fp in done.failing
    }


def build_history(
    recent: Recent,
    fp: str | None,
    run_id: str,
    commit: str | None = None,
    monitors: Monitors = DEFAULT_MONITORS,
) -> TestHistoryRecord:
    """The ``TestHistory`` record of a test failing in ``run_id`` (on ``commit``, when the CI
    recorded one), from its recent past."""
    return judged_history(recent, fp, run_id, commit, monitors)[0]


def judged_history(
    recent: Recent,
    fp: str | None,
    run_id: str,
    commit: str | None = None,
    monitors: Monitors = DEFAULT_MONITORS,
    quarantined: bool | None = None,
) -> tuple[TestHistoryRecord, Verdict]:
    """``build_history``, with the flaky verdict it is built on (over the monitors' window,
    the counts over the last ``WINDOW`` runs). ``quarantined``: for a quarantined test, whether
    its failure's fingerprint is known (None: not quarantined)."""
    judged = list(reversed(recent.window[: monitors.window]))
    window = recent.window[:WINDOW]  # newest first
    outcomes = [o for o in (as_outcome(r.outcome, r.flaky) for r in reversed(window)) if o]
    outcomes.append(FAIL)
    flips = count_flips(outcomes)
    failed = sum(1 for r in window if r.outcome in FAILING)
    first_failed = run_id
    for past in window:
        if past.outcome not in FAILING:
            break
        first_failed = past.run_id
    last_pass = recent.last_pass
    now = PastResult(run_id, "", "failed", 0.0, False, fp, commit=commit)
    verdict = judge([*judged, now], monitors)
    status: HistoryStatus
    status, summary = _status(window, verdict, failed, first_failed, fp)
    if quarantined is not None:
        status, summary = "quarantined", _quarantined(summary, known=quarantined)
    record = new(
        "TestHistory",
        status=status,
        summary=summary,
        runs=len(window),
        failed=failed,
        flips=flips,
        flaky_indicator=flaky_indicator(outcomes),
        last_passed_run=last_pass.run_id if last_pass else None,
        last_passed_at=iso(from_index_time(last_pass.started_at)) if last_pass else None,
        first_failed_run=first_failed,
        fingerprint=fp,
        same_failure_runs=sum(1 for r in window if fp is not None and r.fingerprint == fp),
    )
    return record, verdict


def _quarantined(summary: str, *, known: bool) -> str:
    """The label of a quarantined test's failure: whether it is one its history knows."""
    if known:
        return f"quarantined (known failure: {QUARANTINE_ADVICE}); {summary}"
    return f"quarantined (NEW failure: its fingerprint was never seen before); {summary}"


QUARANTINE_ADVICE = "a quarantined flaky test's usual failure, not a bug to fix"
"""What a quarantined known failure's label tells a reader (and an assistant)."""


def _status(
    window: list[PastResult], verdict: Verdict, failed: int, first_failed: str, fp: str | None
) -> tuple[Literal["new failure", "failing", "broken", "known flaky"], str]:
    of_last = f"failed {failed + 1} of the last {len(window) + 1} runs"
    if verdict.flaky:
        return "known flaky", f"known flaky: {of_last}; {verdict.reason}"
    if verdict.error:
        status, summary = _status(window, Verdict(False, ""), failed, first_failed, fp)
        return status, f"{summary}; {verdict.reason}"
    if not window:
        return "new failure", "new failure: first run of this test"
    previous = window[0]
    if previous.outcome not in FAILING:
        return "new failure", f"new failure: passed in the previous run {previous.run_id}" + (
            _came_back(window, fp)
        )
    same = (
        "same failure" if fp is not None and previous.fingerprint == fp else "failing differently"
    )
    if verdict.broken_since:
        return "broken", f"broken since run {verdict.broken_since}: {of_last} ({same})"
    return "failing", f"{of_last}, since {first_failed} ({same})"


def _came_back(window: list[PastResult], fp: str | None) -> str:
    """For a test failing again after passes: the earlier run it failed the same way in (not
    an outage run)."""
    failing = (
        r for r in window if r.outcome in FAILING and not is_outage(r.run_failing, r.run_ran)
    )
    earlier = next(failing, None)
    if earlier is None or fp is None or earlier.fingerprint != fp:
        return ""
    return f"; failed the same way in run {earlier.run_id} before: {CAME_BACK}"


CAME_BACK = "a regression that came back"
"""How a failure's history names a returning regression (`qbench pr-comment` looks for it)."""
