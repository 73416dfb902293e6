"""Where the tests run: Python, platform, plugins and CI (``core/ci.py``), as the report's
``environment`` block."""

from __future__ import annotations

import platform
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_qbench._version import __version__
from pytest_qbench.core.ci import detect_ci
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import EnvironmentRecord


def describe_environment(
    pytest_version: str, plugins: Mapping[str, str], environ: Mapping[str, str]
) -> EnvironmentRecord:
    """Build the ``environment`` block of a report."""
    return new(
        "Environment",
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        platform=platform.platform(),
        pytest_version=pytest_version,
        qbench_version=__version__,
        plugins=dict(sorted(plugins.items())),
        ci=None if (ci := detect_ci(environ)) is None else new("CIInfo", **ci),
    )
