"""The metric gates: ``--qbench-metric-min`` on a metric's mean, ``--qbench-baseline`` against an
earlier run.

They fail the run as the coverage gate does: ``session.testsfailed`` is raised in a
``pytest_runtestloop`` wrapper, so pytest exits with 1 through its own path; each verdict is a
``GateResult`` record in the report, a terminal line, and a next step in the digest. The
baseline gate's statistics are in `pytest_qbench.report.gate_stats`.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.core.repeat import repeated_test_id
from pytest_qbench.core.stats import stats_mean
from pytest_qbench.report import store
from pytest_qbench.report.gate_stats import CONFIDENCE
from pytest_qbench.report.gate_stats import paired_interval
from pytest_qbench.report.gate_text import gate_lines
from pytest_qbench.report.metric_text import score_pair
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.plugin.agent.options import GateSettings
    from pytest_qbench.plugin.session import QBenchSession

PLUGIN_NAME = "qbench-gates"
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

    @property
    def mean(self) -> float:
        """The test's score: the mean of its evaluations."""
        return float(self.total / self.count)


MetricCases = dict[str, dict[str, CaseScore]]
"""metric name -> test (node id without repeat id) -> its scores."""


def case_scores(results: Iterable[Record]) -> MetricCases:
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
    return cases


@dataclass(frozen=True)
class BaselineScores:
    """What the baseline gate needs from the baseline report."""

    source: str
    """The report's path as given."""
    cases: MetricCases = field(default_factory=dict)


def read_baseline(path: Path, source: str) -> BaselineScores:
    """Read the baseline report; a ``UsageError`` when it cannot serve as one."""
    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.report.readers import read_report

    try:
        report = read_report(path)
    except QBenchError as exc:
        raise pytest.UsageError(
            f"{source} cannot be used as the baseline: {exc}; give the report.json of an "
            "earlier run (e.g. .qbench/runs/<run id>/report.json)"
        ) from None
    cases = case_scores(r.model_dump(mode="json") for r in report.results)
    cases = {name: tests for name, tests in cases.items() if any(s.count for s in tests.values())}
    if not cases:
        raise pytest.UsageError(
            f"{source} has no metric scores to compare with, given: {path}; give the "
            "report.json of a run with agent tests"
        )
    return BaselineScores(source=str(path), cases=cases)


# --- verdicts ----------------------------------------------------------------------------------


def metric_min_gate(name: str, minimum: float, stats: Record | None, known: list[str]) -> Record:
    """The ``--qbench-metric-min`` verdict on one metric, from its ``MetricStats`` record."""
    mean = None if stats is None else stats_mean(stats["score_sum"], stats["n"])
    if stats is None or mean is None:
        scored = ", ".join(known) or "none"
        return new(
            "GateResult",
            kind="metric_min",
            name=name,
            passed=None,
            threshold=minimum,
            detail=f"no scores for metric {name} in this run (scored: {scored}); nothing to gate",
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
        detail=f"mean {shown} {verdict} the required {required} ({_count(stats['n'], 'score')})",
    )


def baseline_gate(
    name: str,
    baseline: dict[str, CaseScore] | None,
    current: dict[str, CaseScore] | None,
    max_regression: float,
) -> Record:
    """The ``--qbench-baseline`` verdict on one metric (see `pytest_qbench.report.gate_stats`)."""
    gate = {"kind": "baseline", "name": name, "threshold": max_regression}
    if not baseline or not current:
        missing = "the baseline" if not baseline else "this run"
        return new("GateResult", **gate, passed=None, detail=f"no scores in {missing}")
    both = [t for t in current if t in baseline]
    newly_failing = sorted(t for t in both if baseline[t].passed and not current[t].passed)
    common = [t for t in both if current[t].count and baseline[t].count]  # scored in both
    gate["newly_failing"] = newly_failing[:MAX_NEWLY_FAILING]
    interval = paired_interval([baseline[t].mean - current[t].mean for t in common])
    if interval is None:
        return new(
            "GateResult",
            **gate,
            passed=None,
            n=len(common),
            detail=f"{_count(len(common), 'test')} in both runs: too few to tell a drop from noise",
        )
    before = sum(baseline[t].mean for t in common) / len(common)
    drop = interval.mean
    significant = interval.low > TOLERANCE
    passed = not (significant and drop > max_regression + TOLERANCE)
    return new(
        "GateResult",
        **gate,
        passed=passed,
        value=drop,
        baseline=before,
        ci_low=interval.low,
        ci_high=interval.high,
        n=interval.n,
        detail=_baseline_detail(
            before,
            drop,
            interval.low,
            interval.high,
            interval.n,
            passed,
            significant,
            max_regression,
        ),
    )


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
    ci = f"{CONFIDENCE:.0%} CI {low:.3f} to {high:.3f} over {_count(n, 'test')} in both runs"
    moved = f"mean {before:.3f} -> {after:.3f}, a drop of {drop:.3f} ({ci})"
    if not passed:
        return f"{moved}: more than the {allowed:g} allowed"
    if drop <= 0:
        return f"{moved}: no drop"
    if not significant:
        return f"{moved}: within noise"
    return f"{moved}: within the {allowed:g} allowed"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- in pytest ---------------------------------------------------------------------------------


class GateCollector:
    """Applies the metric gates when the test loop ends, and tells the user."""

    def __init__(
        self, config: pytest.Config, session: QBenchSession, settings: GateSettings
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.gates: list[Record] = []

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield  # an interrupted loop raises: no verdict on part of a run
        if self.config.option.collectonly:
            return result
        with self.session.guard("the metric gates"):
            self.gates = self.evaluate()
            self.session.gates.extend(self.gates)
            if any(gate["passed"] is False for gate in self.gates):
                session.testsfailed += 1  # pytest then exits with 1, as with the coverage gate
        return result

    def evaluate(self) -> list[Record]:
        """Every gate's verdict: the metric means first, then the baseline's."""
        metrics = self.session.aggregator.metrics
        stats = {name: acc.stored() for name, acc in metrics.items()}
        known = sorted(name for name, s in stats.items() if s["n"])
        gates = [
            metric_min_gate(name, minimum, stats.get(name), known)
            for name, minimum in self.settings.metric_min.items()
        ]
        baseline = self.settings.baseline
        if baseline is not None:
            current = case_scores(self._results())
            for name in sorted({*baseline.cases, *current}):
                gates.append(
                    baseline_gate(
                        name,
                        baseline.cases.get(name),
                        current.get(name),
                        self.settings.max_regression,
                    )
                )
        return gates

    def _results(self) -> Iterator[Record]:
        path = self.session.stream_path
        if path.exists():
            for raw in store.iter_result_json(path):
                result: Record = json.loads(raw)
                yield result
        yield from self.session.unstreamed

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for gate in self.gates:
            for line, markup in gate_lines(gate):
                terminalreporter.write_line(f"qbench: {line}", **markup)


def register(config: pytest.Config, session: QBenchSession, settings: GateSettings) -> None:
    """Register the gates where reports arrive."""
    config.pluginmanager.register(GateCollector(config, session, settings), PLUGIN_NAME)


__all__ = [
    "BaselineScores",
    "GateCollector",
    "baseline_gate",
    "case_scores",
    "metric_min_gate",
    "read_baseline",
    "register",
]
