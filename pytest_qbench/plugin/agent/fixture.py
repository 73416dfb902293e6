"""The ``qbench`` fixture: record what an agent did, score it, and gate the test on the scores.

`QBench` is what a test receives; it records into the test's `AgentState`
(`pytest_qbench.plugin.agent.state`), which gates the test when it returns.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.evaluation import Evaluation
from pytest_qbench.evaluation import Judge
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import tools_matched
from pytest_qbench.evaluation.config import AgentConfigError
from pytest_qbench.evaluation.config import check_scale
from pytest_qbench.evaluation.config import check_score
from pytest_qbench.evaluation.config import check_threshold
from pytest_qbench.evaluation.config import metric_config
from pytest_qbench.evaluation.config import read_marker
from pytest_qbench.plugin.agent.hooks import MARKER
from pytest_qbench.plugin.agent.hooks import agent_state_key
from pytest_qbench.plugin.agent.hooks import register
from pytest_qbench.plugin.agent.hooks import thresholds_key
from pytest_qbench.plugin.agent.state import AgentState
from pytest_qbench.plugin.agent.state import MetricFailure
from pytest_qbench.plugin.agent.state import metric_record
from pytest_qbench.plugin.attach import reopen
from pytest_qbench.plugin.options.values import parse_thresholds
from pytest_qbench.report.metric_text import metric_failure


if TYPE_CHECKING:
    from pytest_qbench.report.models import MetricResult
    from pytest_qbench.report.records import MetricResultRecord

__all__ = ["AgentConfigError", "QBench", "start", "stop"]


class QBench:
    """The ``qbench`` fixture: what the agent did (`record`), its scores (`score`, `add`),
    assertions on them (`check`), and files for the report (`attach`).

    Scores kept with `score` and `add` gate the test when it returns, like the marker's: a
    score below its threshold fails the test, with every failing metric in the message.
    """

    def __init__(self, state: AgentState, item: pytest.Item | None = None) -> None:
        self._state = state
        self._item = item

    def attach(
        self, data: bytes | str | os.PathLike[str], name: str | None = None, mime: str | None = None
    ) -> Path | None:
        """Attach a file to the test's report: ``bytes``, ``str`` (text, stored as UTF-8), or a
        ``pathlib.Path`` whose file is copied (like pytest-html's extras, Allure's attach).

        ``name`` defaults to the file's name, else ``attachment-N``; ``mime`` is guessed from the
        name (``text/plain`` for text, ``application/octet-stream`` when unknown). The file goes to
        the run directory (``attachments/<test>/<name>``) and is listed in report.json and
        report.md. Returns where it was stored; ``None`` when qbench writes no report in this run,
        or when ``qbench_attach_max_size`` / ``qbench_attach_max_total`` refused it (its record
        says so, and a ``QBenchWarning`` too).

        Raises:
            AttachmentError: ``data`` is not bytes, str or a path to a file, or ``name`` or
                ``mime`` is malformed.
        """
        __tracebackhide__ = True
        from pytest_qbench.plugin.attach import attach

        return attach(self._item, data, name, mime) if self._item is not None else None

    @property
    def sample(self) -> Sample | None:
        """The last recorded sample."""
        return self._state.sample

    @property
    def results(self) -> list[MetricResult]:
        """Every metric result kept so far, in order."""
        return [_model(record) for record in self._state.results]

    def record(
        self,
        response: Any,
        *,
        ground_truth: Any = None,
        expected_tools: Iterable[object] | None = None,
        **fields: Any,
    ) -> Sample:
        """Record what the agent did: the keywords of ``Sample.from_record`` (``input``,
        ``ground_truth``, ``tool_calls``, ``expected_tools``, ``latency_ms``, ``tokens``,
        ``cost``, and any other as ``extra``). ``ground_truth`` and ``expected_tools`` default to
        the marker's; a later call replaces the sample (metrics already kept stay)."""
        __tracebackhide__ = True
        state = self._state
        marker = state.marker
        if marker is not None:
            ground_truth = marker.ground_truth if ground_truth is None else ground_truth
            expected_tools = marker.expected_tools if expected_tools is None else expected_tools
        try:
            sample = Sample.from_record(
                response, ground_truth=ground_truth, expected_tools=expected_tools, **fields
            )
        except ValueError as exc:
            raise AgentConfigError(f"qbench.record(...): {exc}") from None
        state.sample = sample
        state.tools_matched = (
            None
            if sample.expected_tools is None
            else tools_matched(sample.tool_calls, sample.expected_tools)
        )
        return sample

    def score(
        self,
        metric: str,
        *,
        threshold: float | None = None,
        fail_on_error: bool = False,
        retry_on_failure: int | None = None,
        timeout_ms: float | None = None,
        model: str | None = None,
        **params: Any,
    ) -> MetricResult:
        """Evaluate registered metric ``metric`` on the recorded sample and keep the result.

        ``params`` go to the metric; the other keywords are the marker's metric settings. The
        threshold defaults to ini ``qbench_thresholds``.
        """
        __tracebackhide__ = True
        where = f"qbench.score({metric!r})"
        config = metric_config(
            metric,
            where,
            threshold=threshold,
            fail_on_error=fail_on_error,
            retry_on_failure=retry_on_failure,
            timeout_ms=timeout_ms,
            model=model,
            params=params,
        )
        if self._state.sample is None:
            raise AgentConfigError(
                f"{where} needs a recorded sample: call qbench.record(response, ...) first"
            )
        return _model(self._state.evaluate(config))

    def check(self, metric: str, **kw: Any) -> MetricResult:
        """Like `score`, then fail the test at once when the metric is below its threshold or
        errored: ``metric token_f1: score 0.42 < threshold 0.70``. A skipped metric passes."""
        __tracebackhide__ = True
        result = self.score(metric, **kw)
        line = metric_failure(self._state.results[-1], strict=True)
        if line:
            raise MetricFailure(line)
        return result

    def add(
        self,
        name: str,
        score: float | None,
        *,
        threshold: float | None = None,
        scale: float | None = None,
        model_used: str | None = None,
        error: str | None = None,
        fail_on_error: bool = False,
    ) -> MetricResult:
        """Keep a score computed elsewhere (or, with ``error=`` and no score, why there is none).

        ``score`` and ``threshold`` are in 0..1, or 0..``scale``.
        """
        __tracebackhide__ = True
        where = f"qbench.add({name!r})"
        if not isinstance(name, str) or not name.strip():
            raise AgentConfigError(f"qbench.add: the name must be a non-empty str, given: {name!r}")
        checked_scale = check_scale(scale, f"{where}: scale")
        top = checked_scale or 1.0
        if error is not None and not isinstance(error, str):
            raise AgentConfigError(f"{where}: error must be a str, given: {error!r}")
        if score is None and error is None:
            raise AgentConfigError(f"{where} needs a score, or error= saying why there is none")
        value = None if score is None else check_score(score, top, f"{where}: score")
        given = check_threshold(threshold, top, f"{where}: threshold")
        evaluation = Evaluation(name, score=value, error=error, model_used=model_used)
        state = self._state
        applied = state.threshold_for(name, given, checked_scale)
        record = metric_record(evaluation, applied, checked_scale, fail_on_error)
        state.results.append(record)
        return _model(record)


def _model(record: MetricResultRecord) -> MetricResult:
    from pytest_qbench.report.models import MetricResult

    return MetricResult.model_validate(record)


# --- the fixture's life ----------------------------------------------------------------------


def start(request: pytest.FixtureRequest, judge: Judge | None) -> QBench:
    """Set up the ``qbench`` fixture for ``request.node``: read its marker, keep its state."""
    __tracebackhide__ = True
    item = request.node
    register(request.config)  # a test may ask for the fixture dynamically, uncollected
    # A new attempt of the test (a rerun) may attach again, through this attempt's fixture:
    # the fixture is set up anew for each attempt, so no hook runs at every test's setup.
    reopen(item)
    marker = read_marker(item.iter_markers(MARKER), item.nodeid)
    state = AgentState(item.nodeid, marker, thresholds(request.config), judge)
    item.stash[agent_state_key] = state
    return QBench(state, item)


def stop(request: pytest.FixtureRequest) -> None:
    """Drop the test's state once its reports are made (responses can be large)."""
    stash = request.node.stash
    if agent_state_key in stash:
        del stash[agent_state_key]


def thresholds(config: pytest.Config) -> dict[str, float]:
    """ini ``qbench_thresholds``, parsed once (the plugin already checked it)."""
    found = config.stash.get(thresholds_key, None)
    if found is None:
        found = config.stash[thresholds_key] = parse_thresholds(config.getini("qbench_thresholds"))
    return found


# --- facts for the report ----------------------------------------------------------------------
