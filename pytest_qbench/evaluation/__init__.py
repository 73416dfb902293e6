"""Agent evaluation: samples, the metric registry, built-in metrics and judges.

Pure Python and standard library only (no pytest, no pydantic): the ``qbench`` fixture and the
``@pytest.mark.qbench`` marker are built on this package.

- `Sample` is what ``qbench.record(...)`` receives; `ToolCall` one normalised tool call.
- `evaluate` runs a registered metric on a sample and returns an `Evaluation` (score, or error,
  or skipped reason; retries, timeout, time taken, model used). Problems with the sample never
  raise; mistakes in the call raise `MetricConfigError`.
- `metric` registers a metric; third-party packages register through the entry-point group
  ``pytest_qbench.metrics`` (`ENTRY_POINT_GROUP`), whose modules are imported on first lookup.
- `tools_matched` tells whether an agent's tool calls match the expected ones.
- `Judge` is the protocol of LLM judges; `ReplayJudge` replays committed verdicts offline.

Built-in metrics and their formulas: ``docs/reference/metrics.md``.
"""

from __future__ import annotations

from pytest_qbench.evaluation import metrics as _metrics  # noqa: F401  # registers built-ins
from pytest_qbench.evaluation.judge import Judge
from pytest_qbench.evaluation.judge import ReplayJudge
from pytest_qbench.evaluation.judge import verdict_key
from pytest_qbench.evaluation.registry import ENTRY_POINT_GROUP
from pytest_qbench.evaluation.registry import MAX_RETRIES
from pytest_qbench.evaluation.registry import NO_JUDGE_REASON
from pytest_qbench.evaluation.registry import REGISTRY
from pytest_qbench.evaluation.registry import Evaluation
from pytest_qbench.evaluation.registry import MetricConfigError
from pytest_qbench.evaluation.registry import MetricError
from pytest_qbench.evaluation.registry import MetricKind
from pytest_qbench.evaluation.registry import MetricSpec
from pytest_qbench.evaluation.registry import MissingField
from pytest_qbench.evaluation.registry import Registry
from pytest_qbench.evaluation.registry import SampleField
from pytest_qbench.evaluation.registry import check_params
from pytest_qbench.evaluation.registry import evaluate
from pytest_qbench.evaluation.registry import get
from pytest_qbench.evaluation.registry import metric
from pytest_qbench.evaluation.registry import metric_names
from pytest_qbench.evaluation.sample import Sample
from pytest_qbench.evaluation.sample import ToolCall
from pytest_qbench.evaluation.sample import Verdict
from pytest_qbench.evaluation.sample import normalize_tool_calls
from pytest_qbench.evaluation.tools import ArgumentMatch
from pytest_qbench.evaluation.tools import ToolMode
from pytest_qbench.evaluation.tools import score_tool_calls
from pytest_qbench.evaluation.tools import tools_matched


__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_RETRIES",
    "NO_JUDGE_REASON",
    "REGISTRY",
    "ArgumentMatch",
    "Evaluation",
    "Judge",
    "MetricConfigError",
    "MetricError",
    "MetricKind",
    "MetricSpec",
    "MissingField",
    "Registry",
    "ReplayJudge",
    "Sample",
    "SampleField",
    "ToolCall",
    "ToolMode",
    "Verdict",
    "check_params",
    "evaluate",
    "get",
    "metric",
    "metric_names",
    "normalize_tool_calls",
    "score_tool_calls",
    "tools_matched",
    "verdict_key",
]
