"""Per-metric score statistics: what is stored, what is derived, how two add up.

Standard library only: used by ``models`` (``MetricStats``) and by ``aggregate`` (records), so
that both derive ``mean``, ``stdev`` and ``pass_rate`` with the same arithmetic on the same
stored values, and a record equals the model's dump field for field.

Stored: ``n`` (scores), ``passed``, ``errors``, ``skipped``, ``score_sum``, ``sum_sq_dev`` (the
sum of squared deviations from the mean), ``min``, ``max``. Sums are accumulated exactly (as
fractions) and rounded once, so they do not depend on the order tests finish in: a run under
pytest-xdist stores the same values as a serial run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


STORED_FIELDS = ("n", "passed", "errors", "skipped", "score_sum", "sum_sq_dev", "min", "max")
DERIVED_FIELDS = ("mean", "stdev", "pass_rate")


def stats_mean(score_sum: float, n: int) -> float | None:
    """The mean score (``None`` without scores)."""
    return score_sum / n if n else None


def stats_stdev(sum_sq_dev: float, n: int) -> float | None:
    """The sample standard deviation (n - 1 in the denominator; ``None`` below 2 scores)."""
    return math.sqrt(sum_sq_dev / (n - 1)) if n >= 2 else None


def stats_pass_rate(passed: int, n: int, errors: int) -> float:
    """Percent of passed among scored and errored evaluations, 2 decimals (0 when none)."""
    ran = n + errors
    return round(100.0 * passed / ran, 2) if ran else 0.0


def derived(stats: Mapping[str, Any]) -> dict[str, Any]:
    """``mean``, ``stdev`` and ``pass_rate`` of a stats record."""
    return {
        "mean": stats_mean(stats["score_sum"], stats["n"]),
        "stdev": stats_stdev(stats["sum_sq_dev"], stats["n"]),
        "pass_rate": stats_pass_rate(stats["passed"], stats["n"], stats["errors"]),
    }


def add_stats(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """The stored fields of two stats added (Chan et al.'s pairwise update for ``sum_sq_dev``)."""
    n = a["n"] + b["n"]
    out: dict[str, Any] = {k: a[k] + b[k] for k in ("n", "passed", "errors", "skipped")}
    sum_a, sum_b = Fraction(a["score_sum"]), Fraction(b["score_sum"])
    m2 = Fraction(a["sum_sq_dev"]) + Fraction(b["sum_sq_dev"])
    if a["n"] and b["n"]:
        delta = sum_a / a["n"] - sum_b / b["n"]
        m2 += delta * delta * a["n"] * b["n"] / n
    out["score_sum"] = float(sum_a + sum_b)
    out["sum_sq_dev"] = float(m2)
    out["min"] = _pick(min, a["min"], b["min"])
    out["max"] = _pick(max, a["max"], b["max"])
    return out


def _pick(choose: Any, left: float | None, right: float | None) -> float | None:
    if left is None or right is None:
        return left if right is None else right
    return float(choose(left, right))


@dataclass
class ScoreAccumulator:
    """Folds one metric's results into its stats, exactly."""

    n: int = 0
    passed: int = 0
    errors: int = 0
    skipped: int = 0
    total: Fraction = Fraction(0)
    total_sq: Fraction = Fraction(0)
    low: float | None = None
    high: float | None = None

    def add(self, result: Mapping[str, Any]) -> None:
        """Count one ``MetricResult`` record: a score, an error or a skip."""
        score = result["score"]
        if result["skipped"]:
            self.skipped += 1
        elif score is None:
            self.errors += 1
        else:
            exact = Fraction(score)
            self.n += 1
            self.passed += bool(result["passed"])
            self.total += exact
            self.total_sq += exact * exact
            self.low = score if self.low is None else min(self.low, score)
            self.high = score if self.high is None else max(self.high, score)

    def stored(self) -> dict[str, Any]:
        """The stored fields, in ``STORED_FIELDS`` order."""
        m2 = self.total_sq - self.total * self.total / self.n if self.n else Fraction(0)
        return {
            "n": self.n,
            "passed": self.passed,
            "errors": self.errors,
            "skipped": self.skipped,
            "score_sum": float(self.total),
            "sum_sq_dev": float(m2),
            "min": None if self.low is None else float(self.low),
            "max": None if self.high is None else float(self.high),
        }
