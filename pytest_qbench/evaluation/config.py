"""Reading ``@pytest.mark.qbench`` and metric settings into checked `MetricConfig` values.

A metric entry has the fields of the source documents' EvaluationMetric (`CONFIG_FIELDS`); any
other key is a param of the metric itself (``mode`` of ``tool_calls``, ``schema`` of
``json_schema``), checked against the metric's signature. Every problem raises
`AgentConfigError` naming where it is, the field, the value and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.evaluation import MAX_RETRIES
from pytest_qbench.evaluation import MetricConfigError
from pytest_qbench.evaluation import MetricSpec
from pytest_qbench.evaluation import ToolCall
from pytest_qbench.evaluation import check_params
from pytest_qbench.evaluation import normalize_tool_calls


CONFIG_FIELDS = (
    "metric",
    "threshold",
    "enabled",
    "scale",
    "model",
    "fail_on_error",
    "retry_on_failure",
    "timeout_ms",
    "custom_prompt",
)
"""The source documents' EvaluationMetric fields; ``custom_prompt`` is handed to the metric."""
MARKER_KWARGS = ("metrics", "expected_tools", "ground_truth")
ENTRY_EXAMPLE = "{'metric': 'token_f1', 'threshold': 0.7}"
__tracebackhide__ = True  # pytest hides these frames: the message names the problem and the fix


class AgentConfigError(QBenchError, ValueError):
    """The ``qbench`` marker, a metric's settings, or a call of the ``qbench`` fixture is wrong."""


@dataclass(frozen=True)
class MetricConfig:
    """One metric to evaluate, checked."""

    metric: str
    threshold: float | None = None
    """``None``: ini ``qbench_thresholds``, else no threshold."""
    enabled: bool = True
    scale: float | None = None
    """The top of the score's range (the metric's own; ``None`` for 0..1)."""
    model: str | None = None
    fail_on_error: bool = False
    retries: int = 0
    timeout_ms: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MarkerConfig:
    """A test's ``@pytest.mark.qbench`` (closest marker first, keyword by keyword)."""

    metrics: tuple[MetricConfig, ...] = ()
    expected_tools: tuple[ToolCall, ...] | None = None
    ground_truth: Any = None


def read_marker(marks: Iterable[Any], nodeid: str) -> MarkerConfig | None:
    """The merged ``qbench`` marks of a test (``item.iter_markers("qbench")``), or ``None``."""
    kwargs: dict[str, Any] = {}
    where = f"@pytest.mark.qbench on {nodeid}"
    found = False
    for mark in marks:
        found = True
        if mark.args:
            raise AgentConfigError(
                f"{where} takes keyword arguments only, given: {mark.args!r}; "
                f"e.g. @pytest.mark.qbench(metrics=['token_f1'], ground_truth='Paris')"
            )
        for key, value in mark.kwargs.items():
            kwargs.setdefault(key, value)
    if not found:
        return None
    unknown = sorted(set(kwargs) - set(MARKER_KWARGS))
    if unknown:
        raise AgentConfigError(
            f"{where}: unknown argument {unknown[0]!r}; it takes {', '.join(MARKER_KWARGS)}"
        )
    metrics = kwargs.get("metrics", [])
    if isinstance(metrics, (str, Mapping)) or not isinstance(metrics, (list, tuple)):
        raise AgentConfigError(
            f"{where}: metrics must be a list of metric names or dicts, given: {metrics!r}; "
            f"e.g. metrics=['exact_match', {ENTRY_EXAMPLE}]"
        )
    expected = kwargs.get("expected_tools")
    try:
        tools = None if expected is None else normalize_tool_calls(expected, "expected_tools")
    except ValueError as exc:
        raise AgentConfigError(f"{where}: {exc}") from None
    return MarkerConfig(
        metrics=tuple(
            parse_entry(entry, f"{where}: metrics[{i}]") for i, entry in enumerate(metrics)
        ),
        expected_tools=tools,
        ground_truth=kwargs.get("ground_truth"),
    )


def parse_entry(entry: object, where: str) -> MetricConfig:
    """A metric entry: a name, or a dict of EvaluationMetric fields plus the metric's params."""
    if isinstance(entry, str):
        entry = {"metric": entry}
    if not isinstance(entry, Mapping):
        raise AgentConfigError(
            f"{where} must be a metric name or a dict, given: {entry!r}; e.g. {ENTRY_EXAMPLE}"
        )
    values = dict(entry)
    name = values.pop("metric", None)
    if not isinstance(name, str) or not name.strip():
        raise AgentConfigError(
            f"{where}.metric must be a metric name, given: {name!r}; e.g. {ENTRY_EXAMPLE}"
        )
    config = {k: values.pop(k) for k in CONFIG_FIELDS if k in values}
    return metric_config(name, where, params=values, **config)


def metric_config(
    name: str,
    where: str,
    *,
    threshold: object = None,
    enabled: object = True,
    scale: object = None,
    model: object = None,
    fail_on_error: object = False,
    retry_on_failure: object = None,
    timeout_ms: object = None,
    custom_prompt: object = None,
    params: Mapping[str, Any] | None = None,
) -> MetricConfig:
    """Check the settings of metric ``name`` (``where`` starts every message)."""
    params = dict(params or {})
    if custom_prompt is not None:
        params["custom_prompt"] = _check_type(custom_prompt, str, f"{where}.custom_prompt", "a str")
    try:
        spec = check_params(name, params)
    except MetricConfigError as exc:
        raise AgentConfigError(f"{where}: {exc}") from None
    top = _check_scale(spec, scale, where)
    return MetricConfig(
        metric=name,
        threshold=check_threshold(threshold, top, f"{where}.threshold"),
        enabled=_check_type(enabled, bool, f"{where}.enabled", "True or False"),
        scale=spec.scale,
        model=_check_model(spec, model, where),
        fail_on_error=_check_type(fail_on_error, bool, f"{where}.fail_on_error", "True or False"),
        retries=_check_retries(retry_on_failure, f"{where}.retry_on_failure"),
        timeout_ms=_check_positive(timeout_ms, f"{where}.timeout_ms"),
        params=params,
    )


def check_threshold(value: object, top: float, where: str) -> float | None:
    """A threshold from 0 to ``top`` (the metric's scale), or ``None``."""
    if value is None:
        return None
    number = _number(value)
    if number is None or not 0 <= number <= top:
        raise AgentConfigError(
            f"{where} must be a number from 0 to {top:g}, given: {value!r}; e.g. {0.7 * top:g}"
        )
    return number


def check_score(value: object, top: float, where: str) -> float:
    """A score from 0 to ``top``."""
    number = _number(value)
    if number is None or not 0 <= number <= top:
        raise AgentConfigError(f"{where} must be a number from 0 to {top:g}, given: {value!r}")
    return number


def check_scale(value: object, where: str) -> float | None:
    """A positive scale, or ``None``."""
    return _check_positive(value, where)


def _check_scale(spec: MetricSpec, scale: object, where: str) -> float:
    own = spec.scale or 1.0
    given = _check_positive(scale, f"{where}.scale")
    if given is not None and given != own:
        raise AgentConfigError(
            f"{where}.scale is {given:g}, but metric {spec.name!r} scores from 0 to {own:g}; "
            f"drop scale or set it to {own:g}"
        )
    return own


def _check_model(spec: MetricSpec, model: object, where: str) -> str | None:
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip():
        raise AgentConfigError(f"{where}.model must be a model name (str), given: {model!r}")
    if spec.kind != "judge":
        raise AgentConfigError(
            f"{where}.model applies to judge metrics only, and {spec.name!r} is deterministic; "
            "drop model"
        )
    return model


def _check_retries(value: object, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RETRIES:
        raise AgentConfigError(
            f"{where} must be an int from 1 to {MAX_RETRIES}, given: {value!r}; e.g. 2 "
            "(or leave it out for no retries)"
        )
    return value


def _check_positive(value: object, where: str) -> float | None:
    if value is None:
        return None
    number = _number(value)
    if number is None or not number > 0:
        raise AgentConfigError(f"{where} must be a positive number, given: {value!r}")
    return number


def _check_type(value: object, kind: type[Any], where: str, shape: str) -> Any:
    if not isinstance(value, kind):
        raise AgentConfigError(f"{where} must be {shape}, given: {value!r}")
    return value


def _number(value: object) -> float | None:
    """``value`` as a float when it is a finite int or float (not a bool), else ``None``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
