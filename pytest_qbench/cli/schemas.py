"""The models ``qbench schema --model NAME`` exports: the report's formats and the ``--json``
output of every command. A command's output model is registered here by one line; its schema
is checked into ``docs/schemas/NAME.json`` (``tests/test_schema.py`` keeps it current).

Each entry names ``module:attribute`` and is imported only when its schema is asked for, so
``qbench`` starts without loading them.
"""

from __future__ import annotations

import importlib
from typing import Any


MODELS: dict[str, str] = {
    "report": "pytest_qbench.report.models:TestReport",
    "digest": "pytest_qbench.report.models:FailureDigest",
    "stream": "pytest_qbench.report.models:StreamRecord",
    "check": "pytest_qbench.report.models:CheckReport",
    "generate": "pytest_qbench.generate.models:GenerateResult",
    "runs": "pytest_qbench.history.json_models:RunsOutput",
    "show": "pytest_qbench.history.json_models:ShowOutput",
    "diff": "pytest_qbench.history.json_models:DiffOutput",
    "index": "pytest_qbench.history.json_models:IndexOutput",
    "history": "pytest_qbench.history.json_models:HistoryOutput",
    "gc": "pytest_qbench.history.json_models:GcOutput",
    "mcp-log": "pytest_qbench.history.json_models:McpLogOutput",
    "flaky": "pytest_qbench.history.flaky_list:FlakyStatusList",
    "shards": "pytest_qbench.history.shardview:ShardsOutput",
    "pr-comment": "pytest_qbench.history.json_models:PrCommentOutput",
}
"""Name -> the model (or annotated type, for ``stream``) whose JSON Schema it prints."""

DEFAULT = "report"


def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema (serialization mode, as pydantic writes it) of the model ``name``."""
    from pydantic import TypeAdapter

    module, _, attribute = MODELS[name].partition(":")
    model = getattr(importlib.import_module(module), attribute)
    return TypeAdapter(model).json_schema(mode="serialization")
