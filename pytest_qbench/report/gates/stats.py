"""The arithmetic of the metric gates and of repeats: a paired t-interval and pass@k.

Standard library only. The baseline gate compares two runs test by test: each test's score is
the mean of its evaluations (repetitions averaged), and the drop of a metric is the mean of the
per-test differences ``baseline - current`` over the tests in both runs. Its 95% interval is
Student's t-interval over those differences (`paired_interval`): pairing removes the spread
between easy and hard cases, which dominates agent evaluations, so what is left is run-to-run
noise; t (not the normal) keeps small suites honest; and it is exact arithmetic with no random
seed, so the same two reports always give the same verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import fmean
from statistics import stdev


CONFIDENCE = 0.95


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on `t_cdf`, to 1e-12)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, given p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    while high - low > 1e-12 * max(1.0, high):
        middle = (low + high) / 2.0
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


@dataclass(frozen=True)
class Interval:
    """The mean of paired differences and its confidence interval."""

    mean: float
    low: float
    high: float
    n: int


def paired_interval(differences: list[float], confidence: float = CONFIDENCE) -> Interval | None:
    """Student's t-interval for the mean of ``differences``; ``None`` below 2 of them.

    With no spread at all (every difference equal: a deterministic agent) the interval is that
    one value: nothing in the data is noise.
    """
    n = len(differences)
    if n < 2:
        return None
    mean = fmean(differences)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * stdev(differences) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of HumanEval (Chen et al., 2021): ``1 - C(n-c, k) / C(n, k)``, the
    chance that at least one of ``k`` runs drawn from the ``n`` made passes, ``c`` of which did."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, given n={n} c={c} k={k}")
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


__all__ = [
    "Interval",
    "paired_interval",
    "pass_at_k",
    "t_cdf",
    "t_quantile",
]
