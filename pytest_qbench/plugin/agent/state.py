"""One agent test's state where it runs: `AgentState` (held in ``item.stash``) keeps the
recorded `Sample` and the metric results as ``MetricResult`` records (plain JSON).

When the test function returns, `AgentState.finish` evaluates the marker's metrics and fails
the test with `MetricFailure` if an enabled metric is below its threshold, the tool calls do not
match ``expected_tools``, or a metric with ``fail_on_error`` errored. `agent_facts` turns the
state into the JSON facts that travel on pytest's report (also through pytest-xdist) into
``TestResult``'s agent fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.limits import MAX_MESSAGE
from pytest_qbench.core.text import bound_text
from pytest_qbench.evaluation import Evaluation
from pytest_qbench.evaluation import Judge
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import ToolCall
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation.config import AgentConfigError
from pytest_qbench.evaluation.config import MarkerConfig
from pytest_qbench.evaluation.config import MetricConfig
from pytest_qbench.evaluation.config import check_threshold
from pytest_qbench.evaluation.sample import as_text
from pytest_qbench.plugin.collectors import to_json_safe
from pytest_qbench.report.metric_text import failure_message
from pytest_qbench.report.metric_text import metric_failure
from pytest_qbench.report.metric_text import tools_failure
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import MetricResultRecord


DISABLED_REASON = "disabled (enabled=False)"


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
        self.results: list[MetricResultRecord] = []
        self.tools_matched: bool | None = None

    def evaluate(self, config: MetricConfig) -> MetricResultRecord:
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
) -> MetricResultRecord:
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


__all__ = ["AgentState", "MetricFailure", "agent_facts", "call_json", "metric_record"]
