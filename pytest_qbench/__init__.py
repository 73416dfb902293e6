"""pytest-qbench: pytest reports that agree with pytest, for people, CI and AI assistants.

The public API: the report models, reading and rendering reports, and the types of agent
evaluation (``QBench``, the ``qbench`` fixture's class; ``MetricFailure``; ``AgentConfigError``). Names are imported lazily, so
that pytest loading the plugin (``import pytest_qbench.plugin``) does not import pydantic or
jinja2 when qbench is not in use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench._version import __version__


if TYPE_CHECKING:
    from pytest_qbench.agent import MetricFailure
    from pytest_qbench.agent import QBench
    from pytest_qbench.agent_cases import AgentCase
    from pytest_qbench.agent_cases import qbench_cases
    from pytest_qbench.agent_config import AgentConfigError
    from pytest_qbench.errors import QBenchError
    from pytest_qbench.errors import ReportFormatError
    from pytest_qbench.errors import TemplateError
    from pytest_qbench.models import Diagnostic
    from pytest_qbench.models import Failure
    from pytest_qbench.models import FailureDigest
    from pytest_qbench.models import MetricResult
    from pytest_qbench.models import MetricStats
    from pytest_qbench.models import ReportSection
    from pytest_qbench.models import ReportSummary
    from pytest_qbench.models import RunMeta
    from pytest_qbench.models import TestReport
    from pytest_qbench.models import TestResult
    from pytest_qbench.readers import read_report
    from pytest_qbench.render import render

_LAZY = {
    "AgentConfigError": "pytest_qbench.agent_config",
    "MetricFailure": "pytest_qbench.agent",
    "QBench": "pytest_qbench.agent",
    "qbench_cases": "pytest_qbench.agent_cases",
    "AgentCase": "pytest_qbench.agent_cases",
    "MetricStats": "pytest_qbench.models",
    "QBenchError": "pytest_qbench.errors",
    "ReportFormatError": "pytest_qbench.errors",
    "TemplateError": "pytest_qbench.errors",
    "Diagnostic": "pytest_qbench.models",
    "Failure": "pytest_qbench.models",
    "FailureDigest": "pytest_qbench.models",
    "MetricResult": "pytest_qbench.models",
    "ReportSection": "pytest_qbench.models",
    "ReportSummary": "pytest_qbench.models",
    "RunMeta": "pytest_qbench.models",
    "TestReport": "pytest_qbench.models",
    "TestResult": "pytest_qbench.models",
    "render": "pytest_qbench.render",
    "read_report": "pytest_qbench.readers",
}

__all__ = [
    "AgentCase",
    "AgentConfigError",
    "Diagnostic",
    "Failure",
    "FailureDigest",
    "MetricFailure",
    "MetricResult",
    "MetricStats",
    "QBench",
    "QBenchError",
    "ReportFormatError",
    "ReportSection",
    "ReportSummary",
    "RunMeta",
    "TemplateError",
    "TestReport",
    "TestResult",
    "__version__",
    "qbench_cases",
    "read_report",
    "render",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_qbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
