"""Flakiness and trend of a test's outcomes over runs: pure functions, no database.

A test's history is the sequence of its results in runs, oldest first. Only passes and failures
count: ``passed``, ``xfailed`` and ``xpassed`` pass, ``failed`` and ``error`` fail, a skip (or a
run without the test) is left out.

**Flips** are the outcome changes between consecutive results (pass to fail, fail to pass), plus
one for each result that passed only after pytest-rerunfailures reran it (it failed and passed
within one run).

**Flaky indicator** = flips / (n - 1) for n results, capped at 1 (0 when n < 2 and nothing was
rerun): 0 for a test that always passes or always fails, 1 for one that alternates every run.
A test broken for good is not flaky; one that fails one run in five scores about 0.4.

**Trend** compares the failure share of the older half of the results with the newer half (the
middle result of an odd count is left out): ``Improving`` when the newer half fails at least
10 percentage points less often, ``Declining`` when at least 10 points more often, else
``Stable`` (also with fewer than 2 results).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from pytest_qbench.core.records import dataclass
from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.history.sql import FAILING
from pytest_qbench.history.sql import PASSING
from pytest_qbench.report.shapes import iso


if TYPE_CHECKING:
    from pytest_qbench.history.queries import PastResult


Trend = Literal["Improving", "Stable", "Declining"]
TREND_TOLERANCE = 0.1
"""Difference of failure shares below which the trend is ``Stable``."""


@dataclass(frozen=True)
class Outcome:
    """One pass-or-fail result of a test."""

    failed: bool
    rerun_passed: bool = False
    """Passed only after reruns."""


FAIL, PASS, RERUN_PASS = Outcome(True), Outcome(False), Outcome(False, rerun_passed=True)


def as_outcome(outcome: str, flaky: bool | int = False) -> Outcome | None:
    """The ``Outcome`` of a result; ``None`` for a skip (which counts neither way)."""
    if outcome in FAILING:
        return FAIL
    if outcome in PASSING:
        return RERUN_PASS if flaky else PASS
    return None


def count_flips(outcomes: Sequence[Outcome]) -> int:
    """Outcome changes between consecutive results, plus passes after reruns."""
    changes = sum(1 for a, b in itertools.pairwise(outcomes) if a.failed != b.failed)
    return changes + sum(1 for o in outcomes if o.rerun_passed)


def flaky_indicator(outcomes: Sequence[Outcome]) -> float:
    """``flips / (n - 1)``, capped at 1, rounded to 3 decimals."""
    flips = count_flips(outcomes)
    if not flips:
        return 0.0
    return round(min(1.0, flips / max(len(outcomes) - 1, 1)), 3)


def trend(outcomes: Sequence[Outcome]) -> Trend:
    """Whether the newer half of ``outcomes`` fails less (``Improving``) or more often."""
    half = len(outcomes) // 2
    if half == 0:
        return "Stable"
    older = sum(o.failed for o in outcomes[:half]) / half
    newer = sum(o.failed for o in outcomes[-half:]) / half
    change = newer - older
    if change <= -TREND_TOLERANCE + 1e-9:  # 0.3 - 0.2 is a bit less than 0.1 in floats
        return "Improving"
    if change >= TREND_TOLERANCE - 1e-9:
        return "Declining"
    return "Stable"


@dataclass(frozen=True)
class ExecutionSummary:
    """A test over several runs, as Azure DevOps' ``ExecutionSummary`` has it (plus the trend,
    the flips and the skips)."""

    total_runs: int
    """Runs with a result of the test (skips included)."""
    passed_runs: int
    """Runs it passed in (``passed``, ``xfailed``, ``xpassed``)."""
    failed_runs: int
    """Runs it failed or errored in."""
    skipped_runs: int
    """Runs it was skipped in."""
    last: PastResult
    """Its last result."""
    average_execution_time: float
    """Mean seconds over the runs it was not skipped in (0 when always skipped)."""
    flips: int
    flaky_indicator: float
    trend: Trend

    def to_json(self) -> dict[str, Any]:
        """Azure DevOps' field names (``totalRuns``...; times in seconds)."""
        return {
            "totalRuns": self.total_runs,
            "passedRuns": self.passed_runs,
            "failedRuns": self.failed_runs,
            "skippedRuns": self.skipped_runs,
            "lastRunDate": iso(from_index_time(self.last.started_at)),
            "lastRunId": self.last.run_id,
            "lastOutcome": self.last.outcome,
            "averageExecutionTime": round(self.average_execution_time, 6),
            "flakyIndicator": self.flaky_indicator,
            "flips": self.flips,
            "executionTrend": self.trend,
        }


def execution_summary(results: Sequence[PastResult]) -> ExecutionSummary:
    """Summarise a test's results (at least one), oldest first."""
    outcomes = [o for o in (as_outcome(r.outcome, r.flaky) for r in results) if o is not None]
    failed = sum(o.failed for o in outcomes)
    ran = [r.duration for r in results if r.outcome in FAILING or r.outcome in PASSING]
    return ExecutionSummary(
        total_runs=len(results),
        passed_runs=len(outcomes) - failed,
        failed_runs=failed,
        skipped_runs=len(results) - len(outcomes),
        last=results[-1],
        average_execution_time=sum(ran) / len(ran) if ran else 0.0,
        flips=count_flips(outcomes),
        flaky_indicator=flaky_indicator(outcomes),
        trend=trend(outcomes),
    )
