"""The metric gates inside pytest: ``--qbench-metric-min`` and ``--qbench-baseline``.

They are judged when the test loop ends, through `pytest_qbench.plugin.verdicts`, which fails
the run for every gate (an error while judging one fails it); each verdict
(`pytest_qbench.report.gates.verdicts`) is a ``GateResult`` record in the report, a terminal
line, and a next step in the digest.
"""

from __future__ import annotations

from collections.abc import Generator
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.evaluation import metric_names
from pytest_qbench.plugin import registered
from pytest_qbench.report import store
from pytest_qbench.report.gates.text import gate_lines
from pytest_qbench.report.gates.text import is_errored
from pytest_qbench.report.gates.verdicts import baseline_gate
from pytest_qbench.report.gates.verdicts import case_scores
from pytest_qbench.report.gates.verdicts import metric_min_gate
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.agent import GateSettings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.verdicts import Verdicts
    from pytest_qbench.report.gates.verdicts import BaselineScores
    from pytest_qbench.report.models import GateKind
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import TestResultRecord

PLUGIN_NAME = "qbench-gates"


class GateCollector:
    """Applies the metric gates when the test loop ends, and tells the user."""

    def __init__(
        self,
        config: pytest.Config,
        session: QBenchSession,
        settings: GateSettings,
        verdicts: Verdicts,
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.verdicts = verdicts
        self.gates: list[GateResultRecord] = []

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # an interrupted loop (Ctrl-C, -x) raises: no verdict on part of a run, whose status
        # fails it anyway; but pytest.exit may end it with status 0 or 5, which a gate left
        # unjudged would leave green: judged then on what ran, as the coverage gate is
        try:
            result = yield
        except pytest.exit.Exception:
            self._judge()
            raise
        self._judge()
        return result

    def _judge(self) -> None:
        if not self.config.option.collectonly:
            try:
                self.evaluate()
            except Exception as exc:  # outside each gate's judging: fail those not judged
                self._fail_unjudged(exc)

    def _fail_unjudged(self, exc: Exception) -> None:
        """Fail every configured gate without a verdict yet, naming ``exc`` (never dropped)."""
        judged = {(gate["kind"], gate["name"]) for gate in self.gates}
        wanted: list[tuple[GateKind, str]] = [("metric_min", n) for n in self.settings.metric_min]
        baseline = self.settings.baseline
        if baseline is not None and not any(g["kind"] == "baseline" for g in self.gates):
            wanted.append(("baseline", baseline.source))
        for kind, name in [pair for pair in wanted if pair not in judged] or wanted[-1:]:
            self.gates.append(self.verdicts.fail(kind, name, exc))

    def evaluate(self) -> list[GateResultRecord]:
        """Judge every gate: the metric means first, then the baseline's (each metric's minimum
        on its own, so that an error in one fails that one)."""
        for name, minimum in self.settings.metric_min.items():
            self.gates += self.verdicts.judge(
                "metric_min", name, partial(self._metric_min, name, minimum)
            )
        baseline = self.settings.baseline
        if baseline is not None:
            self.gates += self.verdicts.judge(
                "baseline", baseline.source, partial(self._baseline, baseline)
            )
        return self.gates

    def _metric_min(self, name: str, minimum: float) -> list[GateResultRecord]:
        metrics = self.session.aggregator.metrics
        stats = {metric: new("MetricStats", **acc.stored()) for metric, acc in metrics.items()}
        known = sorted(metric for metric, s in stats.items() if s["n"])
        return [metric_min_gate(name, minimum, stats.get(name), known, metric_names())]

    def _baseline(self, baseline: BaselineScores) -> list[GateResultRecord]:
        current = case_scores(self._results())
        return [
            baseline_gate(
                name, baseline.cases.get(name), current.get(name), self.settings.max_regression
            )
            for name in sorted({*baseline.cases, *current})
        ]

    def _results(self) -> Iterator[TestResultRecord]:
        path = self.session.stream_path
        self.session.flush_stream()  # its writes are batched
        if path.exists():
            for raw in store.iter_result_json(path):
                yield store.read_result(raw)
        yield from self.session.unstreamed

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for gate in self.gates:
            if is_errored(gate):
                continue  # the verdicts' own lines
            for line, markup in gate_lines(gate):
                terminalreporter.write_line(f"qbench: {line}", **markup)


def register(
    config: pytest.Config, session: QBenchSession, settings: GateSettings, verdicts: Verdicts
) -> None:
    """Register the gates where reports arrive."""
    registered.register(config, GateCollector(config, session, settings, verdicts), PLUGIN_NAME)


__all__ = ["GateCollector", "register"]
