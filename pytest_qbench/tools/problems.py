"""A runner's errors: what ``qbench test`` reports when a runner, or a command of a test
script qbench ran itself (``tsc``, ``eslint``, ``node --test``), could not give its results:
one shape, one crash code for every runner."""

from __future__ import annotations

from pytest_qbench.report.models import Diagnostic


CRASHED = "runner-crashed"
"""The code of the error saying a runner crashed, timed out or left no readable report."""


def problem(tool: str, message: str, code: str) -> Diagnostic:
    """A runner that could not give its results: an error."""
    return Diagnostic(tool=tool, severity="error", message=message, code=code)
