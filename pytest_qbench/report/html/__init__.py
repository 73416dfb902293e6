"""The HTML report: one self-contained page (``report.html``) built with Jinja from the same view
as the Markdown.

``render_html(report, results, view=..., trend=..., run_dir=...)`` returns the page as ``str``:
all CSS and JavaScript inline and allowed by their hashes in a strict Content-Security-Policy,
the data embedded once as JSON, the charts drawn here as SVG (no chart library, no network).
This package never imports pytest nor the history index: the trend comes in as a ``Trend``.
"""

from __future__ import annotations

from pytest_qbench.report.html.page import Page
from pytest_qbench.report.html.page import build_page
from pytest_qbench.report.html.page import render_html
from pytest_qbench.report.html.trend import FlakyTest
from pytest_qbench.report.html.trend import Trend
from pytest_qbench.report.html.trend import TrendRun
from pytest_qbench.report.render import HTML_TEMPLATE


__all__ = ["HTML_TEMPLATE", "FlakyTest", "Page", "Trend", "TrendRun", "build_page", "render_html"]
