"""Flaky or broken: the one rule that labels a failing test, for the run's report (and so MCP's
``get_test_failure``), ``qbench diff``, ``qbench flaky``, ``qbench history`` and MCP's
``flaky_tests``. Pure functions, no database.

A test is flaky only on evidence that its outcome does not follow from the code it runs:

1. it passed after a rerun (pytest-rerunfailures: it failed and passed within one run);
2. it passed in one run and failed in another on the same commit (as the CI recorded it);
3. it alternates: it failed in at least two separate runs, each failure a single run between
   passes (or the newest run), with the same failure (fingerprint) each time.

A failure that repeats in consecutive runs is broken, not flaky: a test whose newest failure
repeats the run before is never flaky, and a failure that lasted two runs or more anywhere in
the results looked at is no alternation (fail, fail, pass, pass, fail with the same failure is a
regression that came back).

Outage runs, where most tests failed at once (``is_outage``), are set aside: a healthy test
failing with all the others is no evidence about that test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_qbench.history.sql import FAILING
from pytest_qbench.history.sql import PASSING


if TYPE_CHECKING:
    from pytest_qbench.history.queries import PastResult


OUTAGE_MIN_FAILING = 10
"""Failed and errored tests from which a run where most tests failed is an outage."""


@dataclass(frozen=True)
class Verdict:
    """Whether a test is flaky, and the evidence (or why not), in words."""

    flaky: bool
    reason: str
    """``passed after a rerun in run r5``, ``failed in 2 consecutive runs (r3, r4)``...; empty
    when the results hold no failure."""
    error: str | None = None
    """The internal error that kept the rule from deciding (then the test is not flaky)."""


def is_outage(failing: int, ran: int) -> bool:
    """Whether a run with ``failing`` failed or errored tests of ``ran`` (passed or failed) is
    an outage: at least ``OUTAGE_MIN_FAILING`` of them, and more than half."""
    return failing >= OUTAGE_MIN_FAILING and failing * 2 > ran


def judge(results: Sequence[PastResult]) -> Verdict:
    """``classify``, failing closed: when the rule itself raises, the test is not flaky and
    the verdict names the error, so that no failure is excused on a guess."""
    try:
        return classify(results)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        return Verdict(False, f"flaky or not undecided, internal error {error}", error)


def classify(results: Sequence[PastResult]) -> Verdict:
    """The verdict on a test from its ``results``, oldest first (skips and outage runs are
    left out here)."""
    kept = [r for r in results if _ran(r) and not is_outage(r.run_failing, r.run_ran)]
    episodes = _failure_episodes(kept)
    if episodes and len(episodes[-1]) >= 2:
        return Verdict(False, f"broken: failed in {_consecutive(episodes[-1])}")
    evidence = _rerun_passed(kept) or _both_on_one_commit(kept) or _alternates(episodes)
    if evidence:
        return Verdict(True, evidence)
    if not episodes:
        return Verdict(False, "")
    longest = max(episodes, key=len)
    if len(longest) >= 2:
        return Verdict(False, f"not flaky: failed in {_consecutive(longest)} before")
    if len(episodes) == 1:
        return Verdict(False, "not flaky: failed in one run, no evidence of flakiness")
    return Verdict(False, "not flaky: failed in single runs, but not the same way each time")


def _ran(result: PastResult) -> bool:
    return result.outcome in FAILING or result.outcome in PASSING


def _failure_episodes(results: Sequence[PastResult]) -> list[list[PastResult]]:
    """The runs of consecutive failures."""
    episodes: list[list[PastResult]] = []
    previous_failed = False
    for result in results:
        failed = result.outcome in FAILING
        if failed and previous_failed:
            episodes[-1].append(result)
        elif failed:
            episodes.append([result])
        previous_failed = failed
    return episodes


def _consecutive(episode: Sequence[PastResult]) -> str:
    runs = [r.run_id for r in episode]
    shown = ", ".join(runs[:3]) + (", ..." if len(runs) > 3 else "")
    return f"{len(runs)} consecutive runs ({shown})"


def _rerun_passed(results: Sequence[PastResult]) -> str:
    passed = [r for r in results if r.flaky and r.outcome in PASSING]
    return f"passed after a rerun in run {passed[-1].run_id}" if passed else ""


def _both_on_one_commit(results: Sequence[PastResult]) -> str:
    passes: dict[str, str] = {}
    fails: dict[str, str] = {}
    for r in results:
        if r.commit:
            (fails if r.outcome in FAILING else passes)[r.commit] = r.run_id
    for commit, failed_in in reversed(fails.items()):
        if commit in passes:
            return (
                f"passed in run {passes[commit]} and failed in run {failed_in} "
                f"on the same commit {commit[:12]}"
            )
    return ""


def _alternates(episodes: Sequence[Sequence[PastResult]]) -> str:
    if len(episodes) < 2 or any(len(e) > 1 for e in episodes):
        return ""
    if len({e[0].fingerprint for e in episodes}) > 1:
        return ""
    return f"failed alone in {len(episodes)} runs between passes, the same failure each time"
