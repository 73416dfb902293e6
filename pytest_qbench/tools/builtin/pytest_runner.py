"""pytest as a runner of the plugin interface: this Python's pytest with qbench's plugin
writing its JSON report into the scratch directory, read back into `TestResult`s."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.builtin.detect import is_python_project
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Runner


TOOL = "pytest"
OK_CODES = frozenset({0, 1, 5})
"""pytest's documented exit statuses for a run that ended: 0 all passed, 1 some failed, 5 no
tests collected (2 interrupted, 3 internal error and 4 usage error are crashes)."""
REPORT_NAME = "report.json"


def plan_pytest(cwd: Path, paths: list[str], scratch: Path) -> Plan[TestResult]:
    """``python -m pytest --qbench-json <scratch>/report.json PATHS``."""
    del cwd
    if importlib.util.find_spec("pytest") is None:
        raise NotInstalled("install pytest")
    output = scratch / REPORT_NAME
    command = [sys.executable, "-m", "pytest", "--qbench-json", str(output), *paths]
    return Plan(TOOL, command, OK_CODES, parse_report, output=output)


def parse_report(raw: bytes, cwd: Path) -> list[TestResult]:
    """The results of qbench's JSON report.

    Raises:
        CheckOutputError: the file is not a qbench report.
    """
    del cwd
    try:
        return TestReport.model_validate_json(raw).results
    except ValueError as exc:
        raise CheckOutputError(f"pytest's report.json is not a qbench report: {exc}") from None


@hookimpl
def qbench_runners() -> list[Runner]:
    """The built-in pytest runner."""
    return [
        Runner(
            "pytest",
            TOOL,
            is_python_project,
            plan_pytest,
            description="this Python's pytest with qbench's JSON report",
        )
    ]
