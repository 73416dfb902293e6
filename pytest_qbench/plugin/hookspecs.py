"""Hooks other plugins (or a conftest.py) implement to change what qbench writes.

Published with ``pytest_addhooks``; implement them like any pytest hook::

    def pytest_qbench_modify_result(result, config):
        result.metadata = ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import pytest


if TYPE_CHECKING:
    from pytest_qbench.report.models import ReportSection
    from pytest_qbench.report.models import TestReport
    from pytest_qbench.report.models import TestResult


@pytest.hookspec()
def pytest_qbench_modify_result(result: TestResult, config: pytest.Config) -> None:
    """Change one test's ``TestResult`` before it is streamed and counted.

    Called in the process that writes reports (the xdist controller), once per test, as soon as
    the test's last report arrived. Modify ``result`` in place (for example add
    ``user_properties`` or fill ``metadata``). The summary counts what pytest counted (the
    result's ``counted_as``), so it keeps agreeing with pytest's own line whatever the hook does.

    Args:
        result: The finished test.
        config: The pytest config.

    Added in 0.1.
    """


@pytest.hookspec()
def pytest_qbench_modify_report(report: TestReport, config: pytest.Config) -> None:
    """Change the ``TestReport`` before ``report.json``, ``report.md`` and the other outputs are
    written.

    Called once at the end of the session in the process that writes reports. ``report.results``
    is empty here: results were streamed to disk as tests finished (use
    ``pytest_qbench_modify_result`` to change them). Everything else (``run``, ``environment``,
    ``summary``, ``warnings``, ``sections``...) may be modified in place.

    Args:
        report: The report about to be written.
        config: The pytest config.

    Added in 0.1.
    """


@pytest.hookspec()
def pytest_qbench_markdown_sections(
    report: TestReport, config: pytest.Config
) -> list[ReportSection] | None:
    """Return extra sections for the Markdown report.

    Called once, after ``pytest_qbench_modify_report``. Every implementation's sections are
    appended, in hook call order, to ``report.sections``, so they are also kept in ``report.json``
    and re-rendered by ``qbench render``.

    Args:
        report: The report about to be written.
        config: The pytest config.

    Returns:
        A list of ``pytest_qbench.ReportSection(title=..., body=...)``; ``body`` is Markdown,
        inserted as is.

    Added in 0.1.
    """


@pytest.hookspec()
def pytest_qbench_attachments(item: pytest.Item) -> list[Any] | None:
    """Return files to attach to a test, for plugins that have no ``qbench`` fixture at hand
    (the ``record_property``-free twin of ``qbench.attach``).

    Called once per test, in the process that ran it (an xdist worker, or the only one), after
    its teardown and only while qbench writes a report. Each element is what ``qbench.attach``
    takes: the data itself (``bytes``, ``str`` as text, a ``pathlib.Path`` to copy), or a dict
    ``{"data": ..., "name": ..., "mime": ...}`` (``name`` and ``mime`` optional). The files are
    stored in the run directory with the test's other attachments, under the same caps; an
    element qbench cannot store is a ``QBenchWarning``, never an error of the test.

    Args:
        item: The test that just finished.

    Returns:
        A list of attachments, or ``None`` for none.

    Added in 0.1.
    """
