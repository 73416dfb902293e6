"""The metric gates inside pytest: ``--qbench-metric-min`` and ``--qbench-baseline``.

They fail the run as the coverage gate does: ``session.testsfailed`` is raised in a
``pytest_runtestloop`` wrapper, so pytest exits with 1 through its own path; each verdict
(`pytest_qbench.report.gates.verdicts`) is a ``GateResult`` record in the report, a terminal
line, and a next step in the digest.
"""

from __future__ import annotations

from collections.abc import Generator
from collections.abc import Iterator
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.evaluation import metric_names
from pytest_qbench.plugin import registered
from pytest_qbench.report import store
from pytest_qbench.report.gates.text import gate_lines
from pytest_qbench.report.gates.verdicts import baseline_gate
from pytest_qbench.report.gates.verdicts import case_scores
from pytest_qbench.report.gates.verdicts import metric_min_gate
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.agent import GateSettings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import TestResultRecord

PLUGIN_NAME = "qbench-gates"


class GateCollector:
    """Applies the metric gates when the test loop ends, and tells the user."""

    def __init__(
        self, config: pytest.Config, session: QBenchSession, settings: GateSettings
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.gates: list[GateResultRecord] = []

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

    def evaluate(self) -> list[GateResultRecord]:
        """Every gate's verdict: the metric means first, then the baseline's."""
        metrics = self.session.aggregator.metrics
        stats = {name: new("MetricStats", **acc.stored()) for name, acc in metrics.items()}
        known = sorted(name for name, s in stats.items() if s["n"])
        registered = metric_names() if self.settings.metric_min else []
        gates = [
            metric_min_gate(name, minimum, stats.get(name), known, registered)
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

    def _results(self) -> Iterator[TestResultRecord]:
        path = self.session.stream_path
        if path.exists():
            for raw in store.iter_result_json(path):
                yield store.read_result(raw)
        yield from self.session.unstreamed

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for gate in self.gates:
            for line, markup in gate_lines(gate):
                terminalreporter.write_line(f"qbench: {line}", **markup)


def register(config: pytest.Config, session: QBenchSession, settings: GateSettings) -> None:
    """Register the gates where reports arrive."""
    registered.register(config, GateCollector(config, session, settings), PLUGIN_NAME)


__all__ = ["GateCollector", "register"]
