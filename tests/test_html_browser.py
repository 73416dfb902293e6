"""The HTML report in a real browser: Debian's Chromium driven by Playwright (no download).

A first few checks; the full browser suite (issue 15, item 7) builds on the DOM hooks listed at
the top of templates/report.html.j2.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.html import render_html
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.shapes import new


CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None,
    reason="install Debian's chromium and playwright to run the browser tests",
)
PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "javascript:alert(1)",
    "a\u2028b\u2029c",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


def _page_file(tmp_path: Path) -> Path:
    results: list[dict[str, Any]] = []
    for i, payload in enumerate(PAYLOADS):
        failure = new(
            "Failure", error_type="AssertionError", error_message=payload, stack_trace=payload
        )
        result: dict[str, Any] = dict(
            new(
                "TestResult",
                nodeid=f"t.py::test_x[{payload}]",
                test_name="x",
                file="t.py",
                outcome="failed",
            )
        )
        result.update(failure=failure, counted_as=["failed"], duration=0.01 * (i + 1))
        result["user_properties"] = [("url", payload)]
        results.append(dict(result))
    for i in range(250):
        result = dict(
            new(
                "TestResult",
                nodeid=f"t.py::test_ok_{i}",
                test_name="ok",
                file="t.py",
                outcome="passed",
            )
        )
        result.update(counted_as=["passed"], duration=0.001 * i)
        results.append(dict(result))
    report = TestReport.model_validate(
        {
            "meta": {"qbench_version": "0", "created_at": "2026-01-01T00:00:00Z"},
            "run": {"run_id": "r", "started_at": "2026-01-01T00:00:00Z", "cwd": "/", "command": []},
            "environment": {
                "python": "3",
                "implementation": "CPython",
                "platform": "x",
                "pytest_version": "8",
                "qbench_version": "0",
            },
            "summary": aggregate(results).summary(1.0),
        }
    ).model_dump(mode="json")
    path = tmp_path / "report.html"
    path.write_text(render_html(report, results), encoding="utf-8")
    return path


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[tuple[Any, list[str]]]:
    """The page opened from disk, with every console message, page error and dialog noted."""
    context = browser.new_context()
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(f"console {m.type}: {m.text}"))
    opened.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def on_dialog(dialog: Any) -> None:
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def on_request(request: Any) -> None:
        if not request.url.startswith("file:"):
            problems.append(f"request: {request.url}")

    opened.on("dialog", on_dialog)
    opened.on("request", on_request)
    opened.goto(_page_file(tmp_path).as_uri())
    opened.wait_for_selector("#rows li.row")
    yield opened, problems
    context.close()


def test_filters_search_and_the_fragment(page: tuple[Any, list[str]]) -> None:
    """Failures first; the failed filter and a search narrow the rows, the fragment keeps the
    view and reproduces it; no console message, no error, no request."""
    from playwright.sync_api import expect

    opened, problems = page
    assert opened.locator("#shown-count").inner_text() == "255"
    assert opened.locator("#rows li.row").count() == 100  # a page of rows, not 255
    assert opened.locator("#rows li.row").first.get_attribute("data-outcome") == "failed"
    opened.select_option("#sort", "duration")
    expect(opened.locator("#rows li.row").first).to_have_attribute(
        "data-nodeid", "t.py::test_ok_249"
    )
    assert "s=duration" in opened.url
    opened.select_option("#sort", "status")
    opened.click("#filters button[data-outcome=failed]")
    assert opened.locator("#shown-count").inner_text() == "5"
    opened.fill("#search", "img src")
    expect(opened.locator("#shown-count")).to_have_text("1")
    assert "q=img+src" in opened.url
    url = opened.url
    opened.goto("about:blank")
    opened.goto(url)
    opened.wait_for_selector("#rows li.row")
    assert opened.locator("#shown-count").inner_text() == "1"
    assert opened.locator("#search").input_value() == "img src"
    assert problems == []


def test_payloads_stay_text(page: tuple[Any, list[str]]) -> None:
    """Opening every failing row runs nothing from the data: the payloads show as text."""
    opened, problems = page
    opened.click("#filters button[data-outcome=failed]")
    summaries = opened.locator("#rows li.row details > summary")
    for i in range(summaries.count()):
        summaries.nth(i).click()
    opened.wait_for_timeout(100)
    assert opened.locator("#rows img").count() == 0
    assert opened.locator("#rows script").count() == 0
    texts = opened.locator("#rows pre.message").all_inner_texts()
    assert "<img src=x onerror=alert(1)>" in texts
    assert "</script><script>alert(1)</script>" in texts
    assert problems == []
    assert opened.locator("svg.chart[data-chart=donut] circle").count() >= 2
