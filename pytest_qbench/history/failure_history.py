"""The history of each failing test of a run: its recent past in the index, judged.

Imported at the end of a run only when a test failed (a green run never needs it), and by
``qbench diff`` and the PR comment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Literal
from typing import cast

from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.history.analysis import FAIL
from pytest_qbench.history.analysis import as_outcome
from pytest_qbench.history.analysis import count_flips
from pytest_qbench.history.analysis import flaky_indicator
from pytest_qbench.history.backend import Index
from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import Verdict
from pytest_qbench.history.flakiness import is_outage
from pytest_qbench.history.flakiness import judge
from pytest_qbench.history.indexer import Indexed
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import Recent
from pytest_qbench.history.queries import judged_result
from pytest_qbench.history.queries import recent_results
from pytest_qbench.history.sql import FAILING
from pytest_qbench.report.shapes import expand
from pytest_qbench.report.shapes import iso


if TYPE_CHECKING:
    from pytest_qbench.report.models import HistoryStatus
    from pytest_qbench.report.records import TestHistoryRecord


WINDOW = 10
"""Earlier runs of a test that its history counts (the flaky monitors look at their own
window, ``Monitors.window``)."""


def failing_histories(
    index: Index,
    done: Indexed,
    commit: str | None = None,
    monitors: Monitors | None = None,
    quarantined: Mapping[str, bool] | None = None,
) -> dict[str, TestHistoryRecord]:
    """``TestHistory`` records of the run's failing tests: one query for all of them. ``commit``:
    the one the run tested, as the CI recorded it; ``quarantined``: see ``record_run``."""
    if not done.failing:
        return {}
    monitors = monitors or DEFAULT_MONITORS
    nodeids = [nodeid for nodeid, _fp in done.failing]
    recent = recent_results(index, nodeids, done.run_id, max(WINDOW, monitors.window))
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
    if window:
        outcomes = [o for o in (as_outcome(r.outcome, r.flaky) for r in reversed(window)) if o]
        outcomes.append(FAIL)
        flips, indicator = count_flips(outcomes), flaky_indicator(outcomes)
        failed = sum(1 for r in window if r.outcome in FAILING)
        same = sum(1 for r in window if fp is not None and r.fingerprint == fp)
    else:  # a first failure (a new test, a new index): this run's failure alone, counted once
        (flips, indicator), failed, same = _LONE_FAILURE, 0, 0
    first_failed = run_id
    for past in window:
        if past.outcome not in FAILING:
            break
        first_failed = past.run_id
    last_pass = recent.last_pass
    if not judged and (monitors.min_runs > 1 or monitors.min_evidence > 1):
        verdict = FIRST_FAILURE  # judge's of the failing run alone (no past): no monitor's
    else:
        # PastResult(run_id, "", "failed", 0.0, False, fp, commit=commit), without __init__
        now = judged_result((run_id, "", "failed", 0.0, False, fp, None, commit, 0, 0))
        verdict = judge([*judged, now], monitors)
    status: HistoryStatus
    status, summary = _status(window, verdict, failed, first_failed, fp)
    if quarantined is not None:
        status, summary = "quarantined", _quarantined(summary, known=quarantined)
    # the model's every field given, in its order: expand, without new's checks of the names
    # (tests/test_failing_history_cost.py holds them to the model's)
    record = expand(
        "TestHistory",
        {
            "status": status,
            "summary": summary,
            "runs": len(window),
            "failed": failed,
            "flips": flips,
            "flaky_indicator": indicator,
            "last_passed_run": last_pass.run_id if last_pass else None,
            "last_passed_at": iso(from_index_time(last_pass.started_at)) if last_pass else None,
            "first_failed_run": first_failed,
            "fingerprint": fp,
            "same_failure_runs": same,
        },
    )
    return cast("TestHistoryRecord", record), verdict


_LONE_FAILURE = (count_flips([FAIL]), flaky_indicator([FAIL]))
"""The flips and flaky indicator of a failure without an earlier result (no outcome to count
but its own: about 10 us of ``count_flips`` and ``flaky_indicator`` a first failure saved)."""

FIRST_FAILURE = Verdict(False, "not flaky: failed in one run, no evidence of flakiness")
"""``flakiness.judge`` of a failing result alone, when a monitor needs more than one run or
more than one run of evidence (``failure-rate`` is the only one a lone failure can feed): one
result, not an outage (no run's counts), is neither broken (one failure in a row) nor flaky, and
its one failure is its only episode. A test's first failure (a new test, a new index) is judged
without the monitors' calls and records (about 45 k instructions: issue 28);
``tests/test_failing_history_cost.py`` holds it to ``judge``'s."""


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
        was = PREVIOUS_WORDS.get(previous.outcome, previous.outcome)
        return "new failure", f"new failure: {was} in the previous run {previous.run_id}" + (
            _came_back(window, fp)
        )
    same = (
        "same failure" if fp is not None and previous.fingerprint == fp else "failing differently"
    )
    if verdict.broken_since:
        return "broken", f"broken since run {verdict.broken_since}: {of_last} ({same})"
    return "failing", f"{of_last}, since {first_failed} ({same})"


PREVIOUS_WORDS = {"skipped": "was skipped"}
"""How a new failure's history names the previous run's outcome where it is not the outcome's
own word (``passed``, ``xfailed``, ``xpassed``): an xfailed test did not pass."""


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
