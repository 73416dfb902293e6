"""The ``qbench`` fixture: record what an agent did, score it, and gate the test on the scores.

Where the test runs, `AgentState` (held in ``item.stash``) keeps the recorded `Sample` and the
metric results as ``MetricResult`` records (plain JSON). When the test function returns,
`AgentState.finish` evaluates the marker's metrics and fails the test with `MetricFailure` if
an enabled metric is below its threshold, the tool calls do not match ``expected_tools``, or a
metric with ``fail_on_error`` errored. `agent_facts` turns the state into the JSON facts that
travel on pytest's report (also through pytest-xdist) into ``TestResult``'s agent fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.core.text import bound_text
from pytest_qbench.evaluation import Evaluation
from pytest_qbench.evaluation import Judge
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import ToolCall
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation import tools_matched
from pytest_qbench.evaluation.config import AgentConfigError
from pytest_qbench.evaluation.config import MarkerConfig
from pytest_qbench.evaluation.config import MetricConfig
from pytest_qbench.evaluation.config import check_scale
from pytest_qbench.evaluation.config import check_score
from pytest_qbench.evaluation.config import check_threshold
from pytest_qbench.evaluation.config import metric_config
from pytest_qbench.evaluation.config import read_marker
from pytest_qbench.evaluation.sample import as_text
from pytest_qbench.plugin.agent.hooks import MARKER
from pytest_qbench.plugin.agent.hooks import agent_state_key
from pytest_qbench.plugin.agent.hooks import register
from pytest_qbench.plugin.agent.hooks import thresholds_key
from pytest_qbench.plugin.collectors import MAX_MESSAGE
from pytest_qbench.plugin.collectors import to_json_safe
from pytest_qbench.plugin.options import parse_thresholds
from pytest_qbench.report.metric_text import failure_message
from pytest_qbench.report.metric_text import metric_failure
from pytest_qbench.report.metric_text import tools_failure
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.models import MetricResult

DISABLED_REASON = "disabled (enabled=False)"

__all__ = ["AgentConfigError", "AgentState", "MetricFailure", "QBench", "agent_facts"]


class MetricFailure(AssertionError):
    """A metric below its threshold, tool calls that do not match, or an error with
    ``fail_on_error``: fails the test like a failed ``assert``."""


class AgentState:
    """One test's recorded sample and metric results."""

    def __init__(
        self,
        nodeid: str,
        marker: MarkerConfig | None,
        thresholds: dict[str, float],
        judge: Judge | None,
    ) -> None:
        self.nodeid = nodeid
        self.marker = marker
        self.thresholds = thresholds
        self.judge = judge
        self.sample: Sample | None = None
        self.results: list[Record] = []
        self.tools_matched: bool | None = None

    def evaluate(self, config: MetricConfig) -> Record:
        """Evaluate one metric on the sample and keep its ``MetricResult`` record."""
        assert self.sample is not None
        threshold = self.threshold_for(config.metric, config.threshold, config.scale)
        if not config.enabled:
            evaluation = Evaluation(config.metric, skipped_reason=DISABLED_REASON)
        else:
            evaluation = evaluate(
                config.metric,
                self.sample,
                params=config.params,
                retries=config.retries,
                timeout_ms=config.timeout_ms,
                judge=self._judge(config.model),
            )
        record = metric_record(evaluation, threshold, config.scale, config.fail_on_error)
        self.results.append(record)
        return record

    def threshold_for(self, name: str, given: float | None, scale: float | None) -> float | None:
        """The given threshold, else ini ``qbench_thresholds``' (checked against the scale)."""
        if given is not None or name not in self.thresholds:
            return given
        where = f"ini qbench_thresholds {name}={self.thresholds[name]:g}"
        return check_threshold(self.thresholds[name], scale or 1.0, where)

    def _judge(self, model: str | None) -> Judge | None:
        judge = self.judge
        with_model = getattr(judge, "with_model", None)
        if judge is not None and model is not None and callable(with_model):
            switched: Judge = with_model(model)
            return switched
        return judge

    def finish(self) -> None:
        """The test function returned: evaluate the marker's metrics, then apply the fail rules."""
        __tracebackhide__ = True
        marker = self.marker
        if marker is not None and self.sample is None:
            raise AgentConfigError(
                f"@pytest.mark.qbench on {self.nodeid}: the test recorded no response to "
                "evaluate; call qbench.record(response, ...) before it returns"
            )
        for config in marker.metrics if marker is not None else ():
            self.evaluate(config)
        lines = [line for m in self.results if (line := metric_failure(m))]
        if self.tools_matched is False:
            assert self.sample is not None and self.sample.expected_tools is not None
            called = [call_json(c) for c in self.sample.tool_calls]
            lines.append(tools_failure(called, [call_json(c) for c in self.sample.expected_tools]))
        if lines:
            raise MetricFailure(failure_message(lines))


def metric_record(
    evaluation: Evaluation, threshold: float | None, scale: float | None, fail_on_error: bool
) -> Record:
    """A ``MetricResult`` record from an evaluation."""
    score = evaluation.score
    return new(
        "MetricResult",
        metric_name=evaluation.metric_name,
        score=score,
        threshold=threshold,
        passed=score is not None and (threshold is None or score >= threshold),
        scale=evaluation.scale or scale,
        error=_bounded(evaluation.error),
        retry_count=evaluation.retry_count,
        evaluation_time_ms=round(evaluation.evaluation_time_ms, 3),
        model_used=evaluation.model_used,
        reason=_bounded(evaluation.skipped_reason or evaluation.reason),
        skipped=evaluation.skipped_reason is not None,
        fail_on_error=fail_on_error,
    )


def _bounded(text: str | None) -> str | None:
    return None if text is None else bound_text(text, MAX_MESSAGE, keep="head")


class QBench:
    """The ``qbench`` fixture: what the agent did (`record`), its scores (`score`, `add`), and
    assertions on them (`check`).

    Scores kept with `score` and `add` gate the test when it returns, like the marker's: a
    score below its threshold fails the test, with every failing metric in the message.
    """

    def __init__(self, state: AgentState) -> None:
        self._state = state

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


def _model(record: Record) -> MetricResult:
    from pytest_qbench.report.models import MetricResult

    return MetricResult.model_validate(record)


# --- the fixture's life ----------------------------------------------------------------------


def start(request: pytest.FixtureRequest, judge: Judge | None) -> QBench:
    """Set up the ``qbench`` fixture for ``request.node``: read its marker, keep its state."""
    __tracebackhide__ = True
    item = request.node
    register(request.config)  # a test may ask for the fixture dynamically, uncollected
    marker = read_marker(item.iter_markers(MARKER), item.nodeid)
    state = AgentState(item.nodeid, marker, thresholds(request.config), judge)
    item.stash[agent_state_key] = state
    return QBench(state)


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


def agent_facts(state: AgentState, max_output: int) -> dict[str, Any] | None:
    """The agent fields of ``TestResult`` as plain JSON, texts bounded to ``max_output``;
    ``None`` when the test recorded nothing."""
    sample = state.sample
    if sample is None and not state.results:
        return None
    facts: dict[str, Any] = {"metric_results": list(state.results)}
    if sample is not None:
        expected = sample.expected_tools
        facts.update(
            agent_response=_text(sample.response, max_output),
            test_input=_text(sample.input, max_output),
            ground_truth=_text(sample.ground_truth, max_output),
            tool_calls=[call_json(call) for call in sample.tool_calls],
            expected_tools=None if expected is None else [call_json(call) for call in expected],
            tools_matched=state.tools_matched,
        )
    return facts


def call_json(call: ToolCall) -> Any:
    """A tool call as JSON: its name, or ``{"name", "arguments"}`` when it has arguments."""
    if call.arguments is None:
        return call.name
    return {"name": call.name, "arguments": to_json_safe(dict(call.arguments))}


def _text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    return bound_text(as_text(value), limit, keep="head", option="--qbench-max-output")
