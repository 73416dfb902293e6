"""The metric gates' verdicts: ``--qbench-metric-min`` on a metric's mean, ``--qbench-baseline``
against an earlier run. Pure functions on records; the pytest side is ``plugin/gates.py``.

Each verdict is a ``GateResult`` record; the baseline gate's statistics are in
`pytest_qbench.report.gates.stats`, and how a verdict is told in `pytest_qbench.report.gates.text`.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING

from pytest_qbench.core.repeat import repeated_test_id
from pytest_qbench.core.stats import stats_mean
from pytest_qbench.core.summary_words import plural
from pytest_qbench.report.gates.stats import CONFIDENCE
from pytest_qbench.report.gates.stats import paired_interval
from pytest_qbench.report.gates.text import ERRORED_SEPARATOR
from pytest_qbench.report.metric_text import score_pair
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import MetricStatsRecord
    from pytest_qbench.report.records import TestResultRecord


UNDECIDED = "the gate cannot decide, so it fails; {fix}"
"""Said by a gate that lacks the data to decide: it fails the run (fail closed), never passes."""


MAX_NEWLY_FAILING = 100
TOLERANCE = 1e-9
"""Float slack when comparing a drop or a mean with its limit (0.8 - 0.75 is 0.0500...04)."""


# --- scores per test ---------------------------------------------------------------------------


@dataclass
class CaseScore:
    """One test's evaluations of one metric (its repeats together)."""

    total: Fraction = Fraction(0)
    count: int = 0
    passed: bool = True
    """Every evaluation met its threshold (an error does not)."""
    error: str | None = None
    """The first error of an evaluation that gave no score."""

    @property
    def mean(self) -> float:
        """The test's score: the mean of its evaluations."""
        return float(self.total / self.count)


MetricCases = dict[str, dict[str, CaseScore]]
"""metric name -> test (node id without repeat id) -> its scores."""


def case_scores(results: Iterable[TestResultRecord]) -> MetricCases:
    """Each metric's scores by test, from ``TestResult`` records (skipped metrics left out)."""
    cases: MetricCases = {}
    for result in results:
        repeat = result.get("repeat")
        test = result["nodeid"] if repeat is None else repeated_test_id(result["nodeid"], repeat)
        for metric in result["metric_results"]:
            if metric["skipped"]:
                continue
            score = cases.setdefault(metric["metric_name"], {}).setdefault(test, CaseScore())
            score.passed = score.passed and bool(metric["passed"])
            if metric["score"] is not None:
                score.total += Fraction(metric["score"])
                score.count += 1
            elif metric["error"] and score.error is None:
                score.error = metric["error"]
    return cases


@dataclass(frozen=True)
class BaselineScores:
    """What the baseline gate needs from the baseline report."""

    source: str
    """The report's path as given."""
    cases: MetricCases = field(default_factory=dict)


# --- verdicts ----------------------------------------------------------------------------------


def metric_min_gate(
    name: str,
    minimum: float,
    stats: MetricStatsRecord | None,
    known: list[str],
    registered: Collection[str] = (),
) -> GateResultRecord:
    """The ``--qbench-metric-min`` verdict on one metric, from its ``MetricStats`` record.

    A name that no test scored and no registered metric has (a typo) fails the gate, with the
    nearest known name; a registered metric without scores in this run is only a note.
    """
    mean = None if stats is None else stats_mean(stats["score_sum"], stats["n"])
    if stats is None and name not in registered:
        return new(
            "GateResult",
            kind="metric_min",
            name=name,
            passed=False,
            threshold=minimum,
            detail=unknown_metric_detail(name, [*known, *registered]),
        )
    if stats is None or mean is None:
        scored = ", ".join(known) or "none"
        return new(
            "GateResult",
            kind="metric_min",
            name=name,
            passed=False,
            threshold=minimum,
            detail=f"no scores for metric {name} in this run (scored: {scored}); "
            + UNDECIDED.format(
                fix=f"score it in a test, or leave {name} out of --qbench-metric-min"
            ),
        )
    passed = mean >= minimum - TOLERANCE
    shown, required = score_pair(round(mean, 9), minimum)  # 0.7000000000000001 is 0.7
    verdict = "meets" if passed else "is below"
    return new(
        "GateResult",
        kind="metric_min",
        name=name,
        passed=passed,
        value=mean,
        threshold=minimum,
        n=stats["n"],
        detail=f"mean {shown} {verdict} the required {required} ({plural(stats['n'], 'score')})",
    )


def unknown_metric_detail(name: str, names: Iterable[str]) -> str:
    """Why a ``--qbench-metric-min`` name gates nothing: no test and no registered metric knows
    it; with the nearest known name."""
    known = sorted(set(names))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"unknown metric {name!r}: no test scored it and no registered metric has that name; "
        f"{hint}fix --qbench-metric-min {name}=... (known: {', '.join(known) or 'none'})"
    )


def baseline_gate(
    name: str,
    baseline: dict[str, CaseScore] | None,
    current: dict[str, CaseScore] | None,
    max_regression: float,
) -> GateResultRecord:
    """The ``--qbench-baseline`` verdict on one metric (see `pytest_qbench.report.gates.stats`)."""
    if not baseline:  # a metric new since the baseline: nothing it could have dropped from
        return new(
            "GateResult",
            kind="baseline",
            name=name,
            threshold=max_regression,
            passed=None,
            detail="not in the baseline, so nothing to compare it with (new since the baseline)",
        )
    if not current:
        return new(
            "GateResult",
            kind="baseline",
            name=name,
            threshold=max_regression,
            passed=False,
            detail="no scores in this run; "
            + UNDECIDED.format(fix="run the tests that score it, or give another baseline"),
        )
    gate = _compare(name, baseline, current, max_regression)
    errored = sorted(t for t, score in current.items() if not score.count and score.error)
    if errored:
        gate["detail"] += ERRORED_SEPARATOR + errored_text(errored, current)
    return gate


SHOWN_ERRORED = 3
MAX_ERROR_TEXT = 120


def errored_text(errored: list[str], current: dict[str, CaseScore]) -> str:
    """``t1 (why), t2 (why) (+3 more)``: the tests whose metric gave no score, bounded."""
    shown = []
    for test in errored[:SHOWN_ERRORED]:
        why = " ".join((current[test].error or "").split())
        if len(why) > MAX_ERROR_TEXT:
            why = why[: MAX_ERROR_TEXT - 3] + "..."
        shown.append(f"{test} ({why})")
    more = len(errored) - SHOWN_ERRORED
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def _compare(
    name: str,
    baseline: dict[str, CaseScore],
    current: dict[str, CaseScore],
    max_regression: float,
) -> GateResultRecord:
    both = [t for t in current if t in baseline]
    newly_failing = sorted(
        t for t in both if baseline[t].passed and not current[t].passed and current[t].count
    )  # a test whose metric errored has no verdict: it is told apart (errored_text)
    common = [t for t in both if current[t].count and baseline[t].count]  # scored in both
    gate = new(
        "GateResult",
        kind="baseline",
        name=name,
        threshold=max_regression,
        newly_failing=newly_failing[:MAX_NEWLY_FAILING],
        passed=None,
        detail="",
    )
    interval = paired_interval([baseline[t].mean - current[t].mean for t in common])
    if interval is None:
        return _without_noise(gate, baseline, current, common, max_regression)
    before = sum(baseline[t].mean for t in common) / len(common)
    drop = interval.mean
    significant = interval.low > TOLERANCE
    passed = not (significant and drop > max_regression + TOLERANCE)
    gate["passed"] = passed
    gate["value"] = drop
    gate["baseline"] = before
    gate["ci_low"] = interval.low
    gate["ci_high"] = interval.high
    gate["n"] = interval.n
    gate["detail"] = _baseline_detail(
        before,
        drop,
        interval.low,
        interval.high,
        interval.n,
        passed,
        significant,
        max_regression,
    )
    return gate


def _without_noise(
    gate: GateResultRecord,
    baseline: dict[str, CaseScore],
    current: dict[str, CaseScore],
    common: list[str],
    max_regression: float,
) -> GateResultRecord:
    """Too few tests in both runs to estimate the noise: any drop beyond the allowed fails
    (fail closed), and no test in both cannot be decided, so it fails too."""
    gate["n"] = len(common)
    if not common:
        gate["passed"] = False
        gate["detail"] = "no test scored it in both runs; " + UNDECIDED.format(
            fix="score it in the same tests as the baseline, or give another baseline"
        )
        return gate
    before = sum(baseline[t].mean for t in common) / len(common)
    drop = before - sum(current[t].mean for t in common) / len(common)
    gate["passed"] = passed = drop <= max_regression + TOLERANCE
    gate["value"] = drop
    gate["baseline"] = before
    verdict = "more than" if not passed else "within"
    gate["detail"] = (
        f"mean {before:.3f} -> {before - drop:.3f}, a drop of {drop_text(drop, max_regression)} over "
        f"{plural(len(common), 'test')} in both runs (too few to tell a drop from noise, so any "
        f"drop over the allowed fails): {verdict} the {max_regression:g} allowed"
    )
    return gate


def drop_text(drop: float, allowed: float) -> str:
    """The drop at 3 decimals, more when 3 would show it equal to the allowed drop it is not
    (``a drop of 0.0104``, never ``a drop of 0.010: more than the 0.01 allowed``)."""
    shown = f"{drop:.3f}"
    if shown == f"{allowed:.3f}" and abs(drop - allowed) > TOLERANCE:
        shown = score_pair(drop, allowed)[0]
    return shown


def _baseline_detail(
    before: float,
    drop: float,
    low: float,
    high: float,
    n: int,
    passed: bool,
    significant: bool,
    allowed: float,
) -> str:
    after = before - drop
    ci = f"{CONFIDENCE:.0%} CI {low:.3f} to {high:.3f} over {plural(n, 'test')} in both runs"
    moved = f"mean {before:.3f} -> {after:.3f}, a drop of {drop_text(drop, allowed)} ({ci})"
    if not passed:
        return f"{moved}: more than the {allowed:g} allowed"
    if drop <= 0:
        return f"{moved}: no drop"
    if not significant:
        return f"{moved}: within noise"
    return f"{moved}: within the {allowed:g} allowed"


__all__ = [
    "BaselineScores",
    "CaseScore",
    "MetricCases",
    "baseline_gate",
    "case_scores",
    "metric_min_gate",
]
