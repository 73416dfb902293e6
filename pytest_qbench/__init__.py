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
    from pytest_qbench.core.errors import AttachmentError
    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.core.errors import ReportFormatError
    from pytest_qbench.core.errors import TemplateError
    from pytest_qbench.evaluation.cases import AgentCase
    from pytest_qbench.evaluation.config import AgentConfigError
    from pytest_qbench.plugin.agent.cases import qbench_cases
    from pytest_qbench.plugin.agent.fixture import QBench
    from pytest_qbench.plugin.agent.state import MetricFailure
    from pytest_qbench.plugin.attach import QBenchWarning
    from pytest_qbench.report.models import Attachment
    from pytest_qbench.report.models import Diagnostic
    from pytest_qbench.report.models import Failure
    from pytest_qbench.report.models import FailureDigest
    from pytest_qbench.report.models import MetricResult
    from pytest_qbench.report.models import MetricStats
    from pytest_qbench.report.models import ReportSection
    from pytest_qbench.report.models import ReportSummary
    from pytest_qbench.report.models import RunMeta
    from pytest_qbench.report.models import TestReport
    from pytest_qbench.report.models import TestResult
    from pytest_qbench.report.readers import read_report
    from pytest_qbench.report.render import render

_LAZY = {
    "Attachment": "pytest_qbench.report.models",
    "AttachmentError": "pytest_qbench.core.errors",
    "QBenchWarning": "pytest_qbench.plugin.attach",
    "AgentConfigError": "pytest_qbench.evaluation.config",
    "MetricFailure": "pytest_qbench.plugin.agent.state",
    "QBench": "pytest_qbench.plugin.agent.fixture",
    "qbench_cases": "pytest_qbench.plugin.agent.cases",
    "AgentCase": "pytest_qbench.evaluation.cases",
    "MetricStats": "pytest_qbench.report.models",
    "QBenchError": "pytest_qbench.core.errors",
    "ReportFormatError": "pytest_qbench.core.errors",
    "TemplateError": "pytest_qbench.core.errors",
    "Diagnostic": "pytest_qbench.report.models",
    "Failure": "pytest_qbench.report.models",
    "FailureDigest": "pytest_qbench.report.models",
    "MetricResult": "pytest_qbench.report.models",
    "ReportSection": "pytest_qbench.report.models",
    "ReportSummary": "pytest_qbench.report.models",
    "RunMeta": "pytest_qbench.report.models",
    "TestReport": "pytest_qbench.report.models",
    "TestResult": "pytest_qbench.report.models",
    "render": "pytest_qbench.report.render",
    "read_report": "pytest_qbench.report.readers",
}

__all__ = [
    "AgentCase",
    "AgentConfigError",
    "Attachment",
    "AttachmentError",
    "Diagnostic",
    "Failure",
    "FailureDigest",
    "MetricFailure",
    "MetricResult",
    "MetricStats",
    "QBench",
    "QBenchError",
    "QBenchWarning",
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
