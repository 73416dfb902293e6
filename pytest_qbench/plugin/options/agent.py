"""Options of agent evaluation: case files, repeats and the metric gates, and their parsers.

Standard library and pytest only (imported whenever pytest starts). `read_gate_settings` checks
the gate options before any test runs; it reads the baseline report (and so imports pydantic)
only when ``--qbench-baseline`` is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import pytest

from pytest_qbench.core.numbers import parse_finite
from pytest_qbench.core.numbers import parse_whole
from pytest_qbench.core.records import dataclass
from pytest_qbench.plugin.options.values import OptionReader
from pytest_qbench.plugin.options.values import number_ini_type
from pytest_qbench.plugin.options.values import split_metric_value


if TYPE_CHECKING:
    from pytest_qbench.report.gates.verdicts import BaselineScores
    from pytest_qbench.report.records import TestResultRecord

DEFAULT_AGENT_FILES = ("agent.yaml", "agent.yml", "*.agent.yaml", "*.agent.yml")
DEFAULT_MAX_REGRESSION = 0.0
METRIC_MIN_EXAMPLE = "token_f1=0.7"


def parse_metric_min(value: str) -> tuple[str, float]:
    """``NAME=VALUE``: a metric name and the least mean it must reach (``type=`` for argparse)."""
    pair = split_metric_value(value)
    if pair is None:
        raise argparse.ArgumentTypeError(
            f"must be NAME=VALUE with a number of 0 or more, given: {value!r}; "
            f"e.g. {METRIC_MIN_EXAMPLE}"
        )
    return pair


def refuse_unreachable(thresholds: Mapping[str, float], source: str) -> None:
    """Refuse a threshold above the top of its registered metric's scale (``token_f1=80``, a
    percentage for a 0-1 score): no score can reach it, so every run would fail its gate or its
    tests. A name no metric has yet (a test may score it) is left to the run's end.

    Raises:
        pytest.UsageError: naming the option, the metric, its scale and the fix.
    """
    if not thresholds:
        return
    from pytest_qbench.evaluation.registry import REGISTRY

    known = set(REGISTRY.names())
    for name, value in thresholds.items():
        top = (REGISTRY.get(name).scale or 1) if name in known else None
        if top is not None and value > top:
            raise pytest.UsageError(
                f"{source} {name}={value:g} is above the top of {name}'s scale (0 to {top:g}), "
                f"so no score can reach it; give a score on that scale, e.g. "
                f"{name}={top * 0.8:g} (not a percentage)"
            )


def parse_regression(value: str) -> float:
    """A score drop of 0 or more (``type=`` for argparse)."""
    return parse_finite(
        value, minimum=0, above=False, what="a score drop of 0 or more", example="0.05"
    )


def parse_repeat(value: str) -> int:
    """A number of runs, 1 or more (``type=`` for argparse)."""
    return parse_whole(value, minimum=1, what="a whole number of 1 or more")


def add_agent_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """Register the agent-evaluation options and ini values."""
    parser.addini(
        "qbench_agent",
        "The agent of case files that name none: module:function",
        type="string",
        default="",
    )
    parser.addini(
        "qbench_agent_files",
        "File name patterns collected as agent case files. "
        f"Default: {' '.join(DEFAULT_AGENT_FILES)}",
        type="linelist",
        default=list(DEFAULT_AGENT_FILES),
    )
    group.addoption(
        "--qbench-repeat",
        dest="qbench_repeat",
        metavar="N",
        type=parse_repeat,
        default=None,
        help="Run each agent test (qbench fixture, marker, case file) N times, ids "
        "[repeat-1]...; the report gives each test's pass@k and mean scores",
    )
    group.addoption(
        "--qbench-metric-min",
        dest="qbench_metric_min",
        action="append",
        metavar="NAME=VALUE",
        type=parse_metric_min,
        default=None,
        help="Fail the run (exit status 1) when metric NAME's mean is below VALUE. Repeatable.",
    )
    parser.addini(
        "qbench_metric_min", "NAME=VALUE lines, like --qbench-metric-min", type="linelist"
    )
    for flag, name, metavar, text, parse, ini_type in (
        (
            "--qbench-baseline",
            "baseline",
            "REPORT",
            "Fail the run when a metric's mean dropped against this report.json of an earlier "
            "run by more than --qbench-max-regression, beyond noise",
            None,
            "string",
        ),
        (
            "--qbench-max-regression",
            "max_regression",
            "DROP",
            "The drop of a metric's mean (in its own units) that --qbench-baseline tolerates. "
            f"Default: {DEFAULT_MAX_REGRESSION:g}",
            parse_regression,
            number_ini_type(float),
        ),
    ):
        kwargs = {"type": parse} if parse is not None else {}
        group.addoption(
            flag, dest=f"qbench_{name}", metavar=metavar, default=None, help=text, **kwargs
        )
        parser.addini(f"qbench_{name}", f"{text} ({flag})", type=cast("Any", ini_type), default="")


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class GateSettings:
    """The metric gates asked for, checked."""

    metric_min: dict[str, float] = field(default_factory=dict)
    """The least mean of each metric, by name (ini lines, then the command line's)."""
    baseline: BaselineScores | None = None
    """The baseline report's scores (``--qbench-baseline``)."""
    max_regression: float = DEFAULT_MAX_REGRESSION
    """The drop of a mean tolerated against the baseline."""

    @property
    def active(self) -> bool:
        """Whether any metric gate was asked for."""
        return bool(self.metric_min) or self.baseline is not None


def read_gate_settings(config: pytest.Config) -> GateSettings:
    """Check the gate options; raise ``UsageError`` naming the option, the value and the fix."""
    reader = OptionReader(config)
    minimums: dict[str, float] = {}
    for line in reader.ini("metric_min") or []:
        try:
            name, value = parse_metric_min(line)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini qbench_metric_min {exc}") from None
        minimums[name] = value
    minimums.update(reader.cli("metric_min") or [])
    refuse_unreachable(minimums, "--qbench-metric-min")
    path, source = reader.path("baseline")
    max_regression = reader.parsed("max_regression", parse_regression, None)
    if path is None and max_regression is not None:
        raise pytest.UsageError(
            "--qbench-max-regression needs a baseline to compare with; add "
            "--qbench-baseline=REPORT (the report.json of an earlier run)"
        )
    baseline = None
    if path is not None:
        baseline = read_baseline(path, source)
    return GateSettings(
        metric_min=minimums,
        baseline=baseline,
        max_regression=DEFAULT_MAX_REGRESSION if max_regression is None else max_regression,
    )


def read_baseline(path: Path, source: str) -> BaselineScores:
    """Read the baseline report; a ``UsageError`` when it cannot serve as one."""
    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.report.gates.verdicts import BaselineScores
    from pytest_qbench.report.gates.verdicts import case_scores
    from pytest_qbench.report.readers import read_report

    try:
        report = read_report(path)
    except QBenchError as exc:
        raise pytest.UsageError(
            f"{source} cannot be used as the baseline: {exc}; give the report.json of an "
            "earlier run (e.g. .qbench/runs/<run id>/report.json)"
        ) from None
    cases = case_scores(cast("TestResultRecord", r.model_dump(mode="json")) for r in report.results)
    cases = {name: tests for name, tests in cases.items() if any(s.count for s in tests.values())}
    if not cases:
        raise pytest.UsageError(
            f"{source} has no metric scores to compare with, given: {path}; give the "
            "report.json of a run with agent tests"
        )
    return BaselineScores(source=str(path), cases=cases)


def gates_asked(reader: OptionReader) -> bool:
    """Whether a metric gate was asked for (it switches qbench on)."""
    return bool(
        reader.cli("metric_min")
        or reader.cli("baseline")
        or reader.ini("metric_min")
        or reader.ini("baseline")
    )


__all__ = [
    "GateSettings",
    "add_agent_options",
    "gates_asked",
    "parse_metric_min",
    "parse_regression",
    "parse_repeat",
    "read_baseline",
    "read_gate_settings",
]
