"""Flaky, broken or healthy: the monitors that label a test from its history, for the run's
report (and so MCP's ``get_test_failure``), ``qbench diff``, ``qbench flaky``, ``qbench
history``, the quarantine and MCP's ``flaky_tests``. Pure functions, no database.

The results looked at are a test's newest ``Monitors.window`` results that passed or failed,
outage runs left out: a run where most tests failed at once (more than ``outage_share`` of them,
and at least ``outage_min_failing``) says nothing about one test.

Precedence: **broken** before **flaky** before **healthy**.

- *broken*: the test failed in every run since a point, with the same failure (fingerprint),
  at least twice in a row. A regression is broken, never flaky, whatever came before it.
- *flaky*, on evidence that its outcome does not follow from the code it runs, from one of three
  monitors, each needing ``min_evidence`` runs of evidence:

  1. ``pass-on-retry``: it failed and then passed after a rerun within one run
     (pytest-rerunfailures), with the same failure (fingerprint of the failed attempt) each
     time; a rerun pass whose failure is not known (indexed before it was kept) counts with
     any;
  2. ``same-commit``: it passed in one run and failed in another on the same commit (as the CI
     recorded it);
  3. ``failure-rate``: over at least ``min_runs`` runs, it failed in at least ``min_rate`` of
     them, each failure a single run between passes (or the newest run), the same failure each
     time. A failure that lasted two runs or more in the window is no flakiness (fail, fail,
     pass, pass, fail with the same failure is a regression that came back).

  A flaky test whose newest evidence is more than ``recovery`` runs old has recovered: healthy.
- *healthy*: anything else.

The **score** is the share of the results looked at where the test failed at least once
(a failure, or a pass after a rerun), 0 to 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from pytest_qbench.core.records import dataclass
from pytest_qbench.core.summary_words import plural
from pytest_qbench.history.sql import FAILING
from pytest_qbench.history.sql import PASSING


if TYPE_CHECKING:
    from pytest_qbench.history.queries import PastResult


OUTAGE_MIN_FAILING = 10
"""Failed and errored tests from which a run where most tests failed is an outage."""
OUTAGE_SHARE = 0.5
"""Share of a run's tests failing above which it is an outage."""

Status = Literal["broken", "flaky", "healthy"]
Monitor = Literal["broken", "pass-on-retry", "same-commit", "failure-rate", ""]
MONITORS: tuple[Monitor, ...] = ("pass-on-retry", "same-commit", "failure-rate")
"""The flaky monitors, in the order they are asked."""


@dataclass(frozen=True)
class Monitors:
    """The monitors' settings (ini ``qbench_flaky_*``, ``qbench flaky``'s options)."""

    window: int = 50
    """Newest results of a test looked at (outage runs left out)."""
    min_evidence: int = 2
    """Runs of evidence a flaky monitor needs."""
    min_runs: int = 3
    """Results the failure-rate monitor needs."""
    min_rate: float = 0.02
    """Failure share from which the failure-rate monitor calls a test flaky."""
    recovery: int = 40
    """Results without evidence after which a flaky test is healthy again."""
    outage_share: float = OUTAGE_SHARE
    """Share of a run's tests failing above which the run is an outage."""
    outage_min_failing: int = OUTAGE_MIN_FAILING
    """Failing tests a run needs to be an outage."""


DEFAULT_MONITORS = Monitors()


@dataclass(frozen=True)
class Assessment:
    """A test's status, the monitor that decided it, its evidence and its score."""

    status: Status
    monitor: Monitor
    reason: str
    """``passed after a rerun in 2 runs (r5, r9)``, ``broken: failed in 2 consecutive runs
    (r3, r4)``...; empty when the results hold no failure."""
    runs: tuple[str, ...] = ()
    """The runs that are the evidence."""
    commits: tuple[str, ...] = ()
    """The commits that are the evidence (``same-commit``)."""
    score: float = 0.0
    """Share of the results looked at where the test failed at least once (0 to 1)."""
    looked_at: int = 0
    """Results looked at (outage runs and skips left out)."""
    error: str | None = None
    """The internal error that kept the monitors from deciding (then the test is not flaky)."""
    since: str | None = field(default=None)
    """For a broken test, the run it has been failing since."""

    def __init__(  # its fields in one update: see Verdict
        self,
        status: Status,
        monitor: Monitor,
        reason: str,
        runs: tuple[str, ...] = (),
        commits: tuple[str, ...] = (),
        score: float = 0.0,
        looked_at: int = 0,
        error: str | None = None,
        since: str | None = None,
    ) -> None:
        vars(self).update(
            status=status,
            monitor=monitor,
            reason=reason,
            runs=runs,
            commits=commits,
            score=score,
            looked_at=looked_at,
            error=error,
            since=since,
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a test is flaky, and the evidence (or why not), in words."""

    flaky: bool
    reason: str
    """``passed after a rerun in 2 runs (r5, r9)``, ``broken: failed in 2 consecutive runs
    (r3, r4)``...; empty when the results hold no failure."""
    error: str | None = None
    """The internal error that kept the rule from deciding (then the test is not flaky)."""
    broken_since: str | None = None
    """For a test the monitors call broken, the run it has been failing since."""

    def __init__(
        self,
        flaky: bool,
        reason: str,
        error: str | None = None,
        broken_since: str | None = None,
    ) -> None:
        """Its fields set in one update of its ``__dict__``, not by ``core.records``' shared
        ``__init__`` (a Python loop of ``object.__setattr__`` a field at a time: 18.7 k
        instructions a verdict against a few k; a failing test's history makes one, and an
        ``Assessment``: issue 28). The same fields, frozen, equal and hashed alike."""
        vars(self).update(flaky=flaky, reason=reason, error=error, broken_since=broken_since)


def is_outage(failing: int, ran: int, monitors: Monitors = DEFAULT_MONITORS) -> bool:
    """Whether a run with ``failing`` failed or errored tests of ``ran`` (passed or failed) is
    an outage: at least ``outage_min_failing`` of them, and more than ``outage_share``."""
    return failing >= monitors.outage_min_failing and failing > ran * monitors.outage_share


def judge(results: Sequence[PastResult], monitors: Monitors = DEFAULT_MONITORS) -> Verdict:
    """``classify``, failing closed: when the rule itself raises, the test is not flaky and
    the verdict names the error, so that no failure is excused on a guess."""
    try:
        return classify(results, monitors)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        return Verdict(False, f"flaky or not undecided, internal error {error}", error)


def classify(results: Sequence[PastResult], monitors: Monitors = DEFAULT_MONITORS) -> Verdict:
    """Whether ``assess`` calls the test flaky, and why (or why not)."""
    found = assess(results, monitors)
    since = found.since if found.status == "broken" else None
    return Verdict(found.status == "flaky", found.reason, broken_since=since)


def examine(results: Sequence[PastResult], monitors: Monitors = DEFAULT_MONITORS) -> Assessment:
    """``assess``, failing closed: when a monitor raises, the test is healthy (so nothing is
    quarantined or excused on a guess) and the assessment names the error."""
    try:
        return assess(results, monitors)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        return Assessment("healthy", "", f"undecided, internal error {error}", error=error)


def assess(results: Sequence[PastResult], monitors: Monitors = DEFAULT_MONITORS) -> Assessment:
    """The status of a test from its ``results``, oldest first (skips and outage runs are left
    out, then the newest ``monitors.window`` kept)."""
    kept = [r for r in results if _ran(r) and not is_outage(r.run_failing, r.run_ran, monitors)][
        -monitors.window :
    ]
    score = _score(kept)
    broken = _broken(kept)
    if broken:
        runs = tuple(r.run_id for r in broken)
        reason = f"broken: failed in {_consecutive(broken)}"
        return Assessment("broken", "broken", reason, runs, (), score, len(kept), since=runs[0])
    episodes = _failure_episodes(kept)
    found = [(m, e) for m in MONITORS if (e := _EVIDENCE[m](kept, episodes, monitors))]
    for monitor, (count, runs, commits, reason) in found:
        if count < monitors.min_evidence:
            continue
        newest = max(i for i, r in enumerate(kept) if r.run_id in runs)
        if len(kept) - 1 - newest > monitors.recovery:
            reason = f"recovered: no evidence in the last {monitors.recovery} runs ({reason})"
            return Assessment("healthy", monitor, reason, runs, commits, score, len(kept))
        return Assessment("flaky", monitor, reason, runs, commits, score, len(kept))
    if found:
        reason = f"not flaky yet: {found[0][1][3]}; a monitor needs evidence in "
        reason += f"{monitors.min_evidence} runs"
        return Assessment("healthy", "", reason, (), (), score, len(kept))
    return Assessment(
        "healthy",
        "",
        _why_healthy(episodes, bool(kept) and kept[-1].outcome in FAILING),
        (),
        (),
        score,
        len(kept),
    )


Evidence = tuple[int, tuple[str, ...], tuple[str, ...], str]
"""What a monitor found: how many pieces of evidence, the runs, the commits and in words."""


def _rerun_passed(
    results: Sequence[PastResult], episodes: Sequence[Sequence[PastResult]], _m: Monitors
) -> Evidence | None:
    passed = [r for r in results if r.flaky and r.outcome in PASSING]
    if not passed:
        return None
    # Evidence is the same failure passing on rerun: one-off failures of a healthy test, each
    # different (an infrastructure hiccup), are no pattern. A rerun pass without a known
    # failure (indexed before its attempt's fingerprint was kept) may be any of them. The
    # same failure in a run of its own between passes (every attempt failed) is the same
    # pattern seen once more: the rerun pass shows that failure does not follow from the code.
    known = Counter(r.fingerprint for r in passed if r.fingerprint is not None)
    fingerprint = known.most_common(1)[0][0] if known else None
    runs = tuple(r.run_id for r in passed if r.fingerprint in (None, fingerprint))
    alone = tuple(e[0].run_id for e in episodes if len(e) == 1 and e[0].fingerprint == fingerprint)
    reason = f"passed after a rerun in {_some_runs(runs)}"
    if fingerprint is not None and alone:
        reason += f", and the same failure failed alone in {_some_runs(alone)}"
        runs = tuple(sorted(runs + alone, key=_order(results)))
    return len(runs), runs, (), reason


def _both_on_one_commit(
    results: Sequence[PastResult], _episodes: Sequence[Sequence[PastResult]], _m: Monitors
) -> Evidence | None:
    passes: dict[str, str] = {}
    fails: dict[str, str] = {}
    for r in results:
        if r.commit:
            (fails if r.outcome in FAILING else passes)[r.commit] = r.run_id
    both = [c for c in fails if c in passes]
    if not both:
        return None
    runs = tuple(sorted({passes[c] for c in both} | {fails[c] for c in both}, key=_order(results)))
    newest = both[-1]
    reason = (
        f"passed in run {passes[newest]} and failed in run {fails[newest]} on the same "
        f"commit {newest[:12]}"
    )
    if len(both) > 1:
        reason = f"passed and failed on the same commit for {len(both)} commits, newest: {reason}"
    return len(both), runs, tuple(both), reason


def _single_failures(
    results: Sequence[PastResult], episodes: Sequence[Sequence[PastResult]], m: Monitors
) -> Evidence | None:
    if len(results) < m.min_runs or any(len(e) > 1 for e in episodes):
        return None
    counted = Counter(e[0].fingerprint for e in episodes)
    if not counted:
        return None
    fingerprint, count = counted.most_common(1)[0]
    failed = sum(1 for r in results if r.outcome in FAILING)
    if count < m.min_evidence or failed < m.min_rate * len(results):
        return None
    runs = tuple(e[0].run_id for e in episodes if e[0].fingerprint == fingerprint)
    reason = (
        f"failed alone in {count} of {len(results)} runs between passes, the same failure "
        f"each time ({_shown(runs)})"
    )
    return count, runs, (), reason


_EVIDENCE = {
    "pass-on-retry": _rerun_passed,
    "same-commit": _both_on_one_commit,
    "failure-rate": _single_failures,
}


def _why_healthy(episodes: Sequence[Sequence[PastResult]], ongoing: bool) -> str:
    if not episodes:
        return ""
    longest = max(episodes, key=len)
    if len(longest) >= 2 and longest is episodes[-1] and ongoing:
        return f"not flaky: failing in {_consecutive(longest)}, not the same way each time"
    if len(longest) >= 2:
        return f"not flaky: failed in {_consecutive(longest)} before"
    if len(episodes) == 1:
        return "not flaky: failed in one run, no evidence of flakiness"
    if len({e[0].fingerprint for e in episodes}) > 1:
        return "not flaky: failed in single runs, but not the same way each time"
    return "not flaky: failed in single runs, too few of them"


def _ran(result: PastResult) -> bool:
    return result.outcome in FAILING or result.outcome in PASSING


def _score(results: Sequence[PastResult]) -> float:
    if not results:
        return 0.0
    hit = sum(1 for r in results if r.outcome in FAILING or r.flaky)
    return round(hit / len(results), 4)


def _broken(results: Sequence[PastResult]) -> list[PastResult]:
    """The newest failures in a row with the newest failure's fingerprint, when at least two."""
    streak: list[PastResult] = []
    if not results:
        return streak
    for result in reversed(results):
        if result.outcome not in FAILING or result.fingerprint != results[-1].fingerprint:
            break
        streak.append(result)
    return streak[::-1] if len(streak) >= 2 else []


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


def _order(results: Sequence[PastResult]) -> Callable[[str], int]:
    return {r.run_id: i for i, r in enumerate(results)}.__getitem__


def _some_runs(runs: Sequence[str]) -> str:
    return f"{plural(len(runs), 'run')} ({_shown(runs)})"


def _shown(runs: Sequence[str]) -> str:
    """The newest three runs, ``..., r7, r8, r9``."""
    return ("..., " if len(runs) > 3 else "") + ", ".join(runs[-3:])


def _consecutive(episode: Sequence[PastResult]) -> str:
    runs = [r.run_id for r in episode]
    shown = ", ".join(runs[:3]) + (", ..." if len(runs) > 3 else "")
    return f"{len(runs)} consecutive runs ({shown})"


def parse_monitors(settings: Sequence[str], base: Monitors = DEFAULT_MONITORS) -> Monitors:
    """``base`` with each ``KEY=VALUE`` of ``settings`` (``window=50``, ``outage_share=0.6``;
    several may share one string, separated by spaces or commas).

    Raises:
        ValueError: an unknown key, a value of the wrong kind or out of range (the message
            names the key, the value and what is expected).
    """
    changes: dict[str, Any] = {}
    fields = {name: type(value) for name, value in vars(base).items()}
    for item in (w for s in settings for w in s.replace(",", " ").split()):
        key, _, value = item.partition("=")
        kind = fields.get(key.strip())
        if kind is None:
            raise ValueError(
                f"unknown monitor setting {key!r}, given: {item!r}; use one of {', '.join(fields)}"
            )
        changes[key.strip()] = _setting(key.strip(), value.strip(), kind)
    return replace(base, **changes)


def _setting(key: str, value: str, kind: type) -> int | float:
    expected = "a share from 0 to 1" if kind is float else "a whole number of 1 or more"
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or (kind is float and not 0 <= number <= 1) or (kind is int and number < 1):
        raise ValueError(f"monitor setting {key} must be {expected}, given: {value!r}")
    return number  # type: ignore[no-any-return]
