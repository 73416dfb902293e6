"""The HTML report in a real browser (issue 15, item 7): Debian's Chromium driven by Playwright
through tests/browser.py's fixtures, on pages written by real pytest runs (tests/html_suites.py).

Checked: the headline and the filter counts against pytest's own summary line, filters, search,
sort, the view kept in the URL fragment, the failure found in two clicks, the charts drawn (the
trend after three runs into one store), coverage, agent metrics, attachments, XSS payloads
inert, and a 50 000-test report usable. The DOM hooks used are listed at the top of
templates/report.html.j2. Speed is measured by benchmarks, not asserted here.

With ``QBENCH_SCREENSHOTS=DIR`` the tests save the screenshots of docs/how-to/html-report.md
into DIR (``QBENCH_SCREENSHOTS=docs/images pytest tests/test_html_browser.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from urllib.parse import unquote

import pytest
from browser import PageLog
from html_suites import PAYLOADS
from html_suites import Run
from html_suites import build_demo
from html_suites import build_large
from html_suites import build_xss
from html_suites import run_pytest
from shared_setup import shared_dir

from pytest_qbench.report.models import TestReport


if TYPE_CHECKING:
    from playwright.sync_api import Browser
    from playwright.sync_api import Locator
    from playwright.sync_api import Page


pytestmark = pytest.mark.xdist_group("test_html_browser")
"""One worker runs the module under ``--dist loadgroup``: its Chromium and its pages (module
fixtures) are made once, not once per worker."""


OUTCOME_WORDS = {
    "failed": "failed",
    "passed": "passed",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "error": "errors?",
}
"""Each filter button's outcome, and its word in pytest's summary line."""
DRAWN = """svg => Array.from(svg.querySelectorAll("rect, circle:not(.ring), polyline, path"))
    .filter(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length"""
"""How many shapes of a chart have a size on the page."""


def save_screenshot(page: Page, name: str, part: Locator | None = None) -> None:
    """The page's viewport, or ``part`` with a margin, as ``$QBENCH_SCREENSHOTS/NAME.png`` when
    that variable is set."""
    folder = os.environ.get("QBENCH_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    path = str(Path(folder) / f"{name}.png")
    if part is None:
        page.screenshot(path=path)
        return
    part.scroll_into_view_if_needed()
    box = part.bounding_box()
    assert box is not None, name
    x, y = max(0.0, box["x"] - 16), max(0.0, box["y"] - 12)
    page.screenshot(
        path=path, clip={"x": x, "y": y, "width": box["width"] + 32, "height": box["height"] + 24}
    )


def make_demo(directory: Path) -> None:
    """``build_demo`` in ``directory``, the last run's output kept in ``last-run.txt``."""
    _, run = build_demo(directory)
    (directory / "last-run.txt").write_text(run.stdout, encoding="utf-8")


@pytest.fixture(scope="module", autouse=True)
def demo_started(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, browser: Browser
) -> Iterator[Future[Path] | None]:
    """The demo's four child pytest runs, started in a thread with the module's first test
    when a test it runs reads them (only when there is a browser to open the page): the other
    tests use the browser meanwhile (the demo's tests are the module's last), where the
    worker waited for them. Made once for every xdist worker (``shared_dir``)."""
    reads = any(
        "demo" in getattr(item, "fixturenames", ())
        for item in request.session.items
        if getattr(item, "module", None) is request.module
    )
    if not reads:
        yield None
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="demo") as pool:
        yield pool.submit(shared_dir, tmp_path_factory, "test_html_browser.demo", make_demo)


@pytest.fixture(scope="module")
def demo(demo_started: Future[Path] | None) -> tuple[Path, Run]:
    """examples/demo plus extras, four runs into one store; the last run's page."""
    assert demo_started is not None, "demo_started saw no test reading the demo"
    directory = demo_started.result()
    last = (directory / "last-run.txt").read_text(encoding="utf-8")
    return directory / "demo" / "report.html", Run(last)


@pytest.fixture(scope="module")
def demo_report(demo: tuple[Path, Run]) -> dict[str, Any]:
    """The last demo run's report.json, every field filled in (the file leaves out a result's
    fields at their default)."""
    text = (demo[0].parent / ".qbench" / "runs" / "demo-3" / "report.json").read_text("utf-8")
    return TestReport.model_validate_json(text).model_dump(mode="json")


@pytest.fixture
def demo_page(page: Page, demo: tuple[Path, Run]) -> Page:
    """The demo's page opened from disk, its rows shown."""
    page.goto(demo[0].as_uri())
    page.wait_for_selector("#rows li.row")
    return page


def shown_nodeids(page: Page) -> list[str]:
    """The node ids of the rows on the page, in order."""
    return [str(r.get_attribute("data-nodeid")) for r in page.locator("#rows li.row").all()]


def click_filter(page: Page, outcome: str) -> None:
    """Show only ``outcome`` (``all``: every row)."""
    page.click("#filters button[data-outcome=all]")
    if outcome != "all":
        page.click(f"#filters button[data-outcome={outcome}]")


def search(page: Page, query: str, expected: int) -> None:
    """Type ``query`` and wait until ``expected`` rows match."""
    from playwright.sync_api import expect

    page.fill("#search", query)
    page.wait_for_function(  # the search ran (after its typing pause): the link has it
        "q => (new URLSearchParams(location.hash.slice(1)).get('q') || '') === q", arg=query
    )
    expect(page.locator("#shown-count")).to_have_text(str(expected))
    page.wait_for_function(
        "n => document.querySelectorAll('#rows li.row').length === n", arg=min(expected, 100)
    )


# --- payloads from tests ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def xss(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> tuple[Path, Run]:
    """Payloads in test ids, messages, output, properties, metadata, attachment names and
    agent answers; the page of that run."""
    return build_xss(tmp_path_factory.mktemp("xss"))


def test_payloads_from_real_tests_stay_text(
    page: Page, page_log: PageLog, xss: tuple[Path, Run]
) -> None:
    """Every row and every part opened: no dialog, no console error (a CSP violation is one),
    no page error, no request; the payloads show as text."""
    from playwright.sync_api import expect

    path, run = xss
    assert run.summary == "5 failed, 6 passed"
    page.goto(path.as_uri())
    page.wait_for_selector("#rows li.row")
    rows = page.locator("#rows li.row")
    for summary in page.locator("#rows li.row > details > summary").all():
        summary.click()
    expect(page.locator("#rows .detail")).to_have_count(rows.count())
    for summary in page.locator("#rows details.sub > summary").all():
        summary.click()
    expect(page.locator("#rows details.sub:not([open])")).to_have_count(0)
    assert page.locator("script").count() == 2  # the page's own: its data and its code
    assert page.locator("#rows img, #rows iframe, #rows object").count() == 0
    with_js = page.evaluate(
        """() => Array.from(document.querySelectorAll("*")).flatMap(e => Array.from(e.attributes))
        .filter(a => /^\\s*javascript:/i.test(a.value) || /^on/i.test(a.name)).length"""
    )
    assert with_js == 0
    nodeids = page.locator("#rows code.nodeid").all_text_contents()
    messages = page.locator("#rows pre.message").all_text_contents()
    responses = page.locator("#rows pre.response").all_text_contents()
    details = page.locator("#rows .detail").all_text_contents()
    for payload in PAYLOADS:
        if payload.isascii():
            assert f"test_xss.py::test_payload[{payload}]" in nodeids
        assert f"{payload}\nassert 0" in messages
        assert payload in responses
        assert sum(payload in d for d in details) >= 2  # its property, output, attachment
    meta = page.locator("#rows li.row[data-nodeid$='::test_meta'] .detail").inner_text()
    assert "<script>alert(1)</script>" in meta and "<img src=x onerror=alert(1)>" in meta
    search(page, "<script>", 4)
    assert all("<script>" in n for n in shown_nodeids(page))
    save_screenshot(page, "html-payloads", page.locator("#tests"))
    assert page_log.problems() == []
    assert page_log.dialogs == []


# --- 50 000 tests -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> tuple[Path, list[str]]:
    """A 50 000-test page (5% failing) and each test's searchable text."""
    return build_large(tmp_path_factory.mktemp("large"))


def test_fifty_thousand_tests_open_and_search(
    page: Page, page_log: PageLog, large: tuple[Path, list[str]]
) -> None:
    """The headline and a first page of 100 rows (failures first) show; a search over node
    ids, then over messages, narrows to exactly the matching rows. (Timings: benchmarks.)"""
    path, texts = large
    page.goto(path.as_uri())
    page.wait_for_selector("#rows li.row")
    assert "2500 failed, 47500 passed" in page.locator("#headline").inner_text()
    assert page.locator("#shown-count").inner_text() == "50000"
    rows = page.locator("#rows li.row")
    assert rows.count() == 100
    assert rows.first.get_attribute("data-outcome") == "failed"
    for query in ("test_case_4242", "off by 12 cents"):
        matching = sum(query in text for text in texts)
        assert 1 < matching < 100_000
        search(page, query, matching)
        shown = page.locator("#rows li.row").all_text_contents()
        assert len(shown) == min(matching, 100)
        assert all(query in text.lower() for text in shown)
    assert page_log.problems() == []


# --- a unittest subTest that failed -------------------------------------------------------------


SUBTEST_SUITE = """
import unittest


class TestParts(unittest.TestCase):
    def test_parts(self):
        for part in ("bolt", "nut", "washer"):
            with self.subTest(part=part):
                self.assertNotEqual(part, "nut")

    def test_whole(self):
        pass
"""


TEARDOWN_SUITE = """
import pytest


def test_fine():
    pass


def test_teardown_breaks(request):
    request.addfinalizer(lambda: 1 / 0)
"""


def filtered_rows(page: Page, outcome: str) -> list[str | None]:
    """The outcomes of the rows under ``outcome``'s filter, once its count is checked against
    them: a button's count is the rows it shows."""
    button = page.locator(f"#filters button[data-outcome={outcome}]")
    click_filter(page, outcome)
    outcomes = [r.get_attribute("data-outcome") for r in page.locator("#rows li.row").all()]
    assert button.locator(".count").inner_text() == str(len(outcomes)), outcome
    assert page.locator("#shown-count").inner_text() == str(len(outcomes)), outcome
    return outcomes


def test_a_failed_subtest_is_failed_under_every_filter(
    page: Page, page_log: PageLog, tmp_path: Path
) -> None:
    """pytest 9 counts a unittest method whose subTest failed as passed (and the subtest as
    failed); the report's verdict on the method is failed, and so is the page's: its row is
    under the failed filter only, and the passed filter counts and shows the passing test."""
    (tmp_path / "test_parts.py").write_text(SUBTEST_SUITE, encoding="utf-8")
    run = run_pytest(tmp_path, "--qbench-html=report.html")
    assert run.summary.startswith("1 failed, 2 passed")  # the method itself counted passed
    page.goto((tmp_path / "report.html").as_uri())
    page.wait_for_selector("#rows li.row")
    assert filtered_rows(page, "failed") == ["failed"]
    assert filtered_rows(page, "passed") == ["passed"]
    assert page_log.problems() == []


def test_a_rerun_teardown_error_counts_once_under_passed(
    page: Page, page_log: PageLog, tmp_path: Path
) -> None:
    """With pytest-rerunfailures, a test whose teardown errs passes its call in each attempt,
    and pytest counts it passed twice ("3 passed, 1 error, 1 rerun"); the page's passed button
    counts the rows it shows: the test once, beside the passing one."""
    pytest.importorskip("pytest_rerunfailures")
    (tmp_path / "test_teardown.py").write_text(TEARDOWN_SUITE, encoding="utf-8")
    run = run_pytest(tmp_path, "-p", "pytest_rerunfailures", "--reruns=1", "--qbench-html=r.html")
    assert run.summary == "3 passed, 1 error, 1 rerun"
    page.goto((tmp_path / "r.html").as_uri())
    page.wait_for_selector("#rows li.row")
    assert filtered_rows(page, "passed") == ["error", "passed"]
    assert filtered_rows(page, "error") == ["error"]
    assert page_log.problems() == []


# --- the harness itself (tests/browser.py) ------------------------------------------------------
# The XSS tests above rely on it seeing a script that ran (a dialog) and a console error, so it
# must see them. (A module of its own once: its own Chromium, 1.5 s of CPU.)


def test_harness_sees_dialogs_and_console_errors(
    page: Page, page_log: PageLog, tmp_path: Path
) -> None:
    html = tmp_path / "page.html"
    html.write_text(
        "<!doctype html><title>t</title><p id=p>hello</p>"
        "<script>alert('ran'); console.error('broken'); undefined_name();</script>",
        encoding="utf-8",
    )
    page.goto(html.as_uri())
    assert page.text_content("#p") == "hello"
    assert page_log.dialogs == ["alert: ran"]
    assert page_log.console_errors == ["broken"]
    assert len(page_log.page_errors) == 1 and "undefined_name" in page_log.page_errors[0]


def test_a_quiet_page_has_no_problems(page: Page, page_log: PageLog, tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_text("<!doctype html><title>t</title><p>quiet</p>", encoding="utf-8")
    page.goto(html.as_uri())
    assert page_log.problems() == []


# --- the demo: what a user of examples/demo gets ----------------------------------------------


def test_headline_and_filter_counts_are_pytests(
    demo_page: Page, demo: tuple[Path, Run], page_log: PageLog
) -> None:
    """The headline says pytest's summary line; each filter shows exactly its rows, as many as
    pytest counted; the run failed, so the headline's mark is the failed one."""
    page, run = demo_page, demo[1]
    headline = page.locator("#headline").inner_text().strip()
    assert re.fullmatch(rf"Test report: {re.escape(run.summary)} in [0-9.]+s", headline), headline
    assert page.locator("#headline").get_attribute("data-ok") == "false"
    assert page.locator("#headline svg.mark.bad").count() == 1
    assert page.title().startswith(f"Failed: {run.summary} · demo-3")
    total = sum(run.count(word) for word in OUTCOME_WORDS.values())
    assert page.locator("#shown-count").inner_text() == str(total)
    for outcome, word in OUTCOME_WORDS.items():
        button = page.locator(f"#filters button[data-outcome={outcome}]")
        assert button.locator(".count").inner_text() == str(run.count(word)), outcome
        if not run.count(word):
            assert button.is_disabled()
            continue
        click_filter(page, outcome)
        assert button.get_attribute("aria-pressed") == "true"
        assert page.locator("#shown-count").inner_text() == str(run.count(word))
        outcomes = [r.get_attribute("data-outcome") for r in page.locator("#rows li.row").all()]
        assert outcomes == [outcome] * run.count(word)
    assert page_log.problems() == []


def test_search_sort_and_the_link_keep_the_view(
    demo_page: Page, demo_report: dict[str, Any], page_log: PageLog
) -> None:
    """Search over node ids and messages; sort by duration and name; a reload from the link
    (the URL fragment) restores filter, search and sort."""
    from playwright.sync_api import expect

    page = demo_page
    results = demo_report["results"]
    search(page, "sandbox", 1)  # only in test_pay_by_card's error message
    assert shown_nodeids(page) == ["test_shop.py::test_pay_by_card"]
    with_shipping = [r["nodeid"] for r in results if "shipping" in r["nodeid"]]
    search(page, "SHIPPING", len(with_shipping))
    assert sorted(shown_nodeids(page)) == sorted(with_shipping)
    search(page, "", len(results))

    page.select_option("#sort", "duration")
    millis = {r["nodeid"]: round(r["duration"] * 1000) for r in results}
    by_duration = [millis[n] for n in shown_nodeids(page)]
    assert by_duration == sorted(millis.values(), reverse=True)
    page.select_option("#sort", "name")
    assert shown_nodeids(page) == sorted(millis)
    assert "s=name" in page.url

    click_filter(page, "failed")
    page.click("#filters button[data-outcome=error]")
    search(page, "test_", 2)
    view = shown_nodeids(page)
    assert view == sorted(r["nodeid"] for r in results if r["outcome"] in ("failed", "error"))
    link = page.url
    assert re.search(r"#o=failed%2Cerror&q=test_&s=name$", link), link
    page.goto("about:blank")
    page.goto(link)
    expect(page.locator("#shown-count")).to_have_text("2")
    assert shown_nodeids(page) == view
    assert page.locator("#search").input_value() == "test_"
    assert page.locator("#sort").input_value() == "name"
    pressed = page.locator("#filters button[aria-pressed=true]").all()
    assert sorted(str(b.get_attribute("data-outcome")) for b in pressed) == ["error", "failed"]
    assert page_log.problems() == []


def test_failure_in_two_clicks(demo_page: Page, demo_report: dict[str, Any]) -> None:
    """Click the failed filter, click the row: the error type, file:line and message show."""
    from playwright.sync_api import expect

    page = demo_page
    save_screenshot(page, "html-report")
    failed = next(r for r in demo_report["results"] if r["outcome"] == "failed")
    page.click("#filters button[data-outcome=failed]")
    page.click("#rows li.row summary")
    detail = page.locator("#rows li.row .detail")
    expect(detail).to_be_visible()
    where = detail.locator(".where").first
    expect(where.locator("strong")).to_have_text(failed["failure"]["error_type"])
    expect(where.locator("code")).to_have_text(re.compile(r"^test_shop\.py:\d+$"))
    message = detail.locator("pre.message").first
    expect(message).to_be_visible()
    assert failed["failure"]["error_message"].splitlines()[0] in message.inner_text()
    save_screenshot(page, "html-failure", page.locator("#tests"))


def test_charts_and_the_trend_after_four_runs(demo_page: Page, demo_report: dict[str, Any]) -> None:
    """The donut (one arc per outcome), the histogram and the slowest tests are drawn; after
    four runs into the store, the trend lines and the flaky test that failed once on each of
    two commits."""
    page = demo_page
    counts = demo_report["summary"]
    outcomes = [
        o
        for o in ("passed", "failed", "error", "skipped", "xfailed")
        if counts[o + "s" if o == "error" else o]
    ]
    donut = page.locator("svg.chart[data-chart=donut]")
    assert donut.locator("circle:not(.ring)").count() == len(outcomes)
    for name in ("donut", "histogram", "slowest"):
        assert page.locator(f"svg.chart[data-chart={name}]").evaluate(DRAWN) > 0, name
    trend = page.locator("#trend")
    assert trend.get_attribute("class") != "empty"
    for name in ("trend-pass-rate", "trend-failures", "trend-duration", "flaky"):
        chart = trend.locator(f"svg.chart[data-chart={name}]")
        assert chart.evaluate(DRAWN) > 0, name
    points = trend.locator("svg.chart[data-chart=trend-pass-rate] title").all_text_contents()
    assert [p.split(" · ")[0] for p in points if p.startswith("demo-")] == [
        "demo-0",
        "demo-1",
        "demo-2",
        "demo-3",
    ]
    assert "test_stock_sync" in trend.locator("svg.chart[data-chart=flaky]").inner_html()
    trend.scroll_into_view_if_needed()
    save_screenshot(page, "html-trend", trend)


def test_coverage_and_agent_metrics_sections(demo_page: Page, demo_report: dict[str, Any]) -> None:
    """--qbench-cov's section (most missed first) and the agent metrics with the score chart;
    the agent's row shows its response and tools."""
    from playwright.sync_api import expect

    page = demo_page
    coverage = page.locator("#coverage")
    expect(coverage).to_be_visible()
    files = coverage.locator("table#coverage-files tbody tr")
    assert files.count() == 2
    assert "stock.py" in files.first.inner_text()
    assert f"{demo_report['coverage']['percentage']:.1f}" in coverage.inner_text()
    save_screenshot(page, "html-coverage", coverage)

    agents = page.locator("#agents")
    expect(agents).to_be_visible()
    assert "token_f1" in agents.inner_text()
    assert agents.locator("svg.chart[data-chart=scores][data-metric=token_f1]").evaluate(DRAWN)
    search(page, "test_capital", 1)
    page.click("#rows li.row summary")
    expect(page.locator("#rows pre.response")).to_have_text("Paris, France")
    expect(page.locator("#rows .detail")).to_contain_text("Tools called: search")
    scored = page.locator("#rows .detail tbody tr").first.locator("td")
    assert scored.all_inner_texts()[:4] == ["token_f1", "0.667", "0.5", "passed"]
    save_screenshot(page, "html-agents", agents)
    save_screenshot(page, "html-agent-row", page.locator("#rows li.row"))


def test_attachments_of_a_real_run(
    demo_page: Page, demo: tuple[Path, Run], page_log: PageLog
) -> None:
    """qbench.attach's PNG shows as an image (a data: URI that decodes), the log as text, the
    bytes as a download link to the stored file, the file over the cap with its note only."""
    from playwright.sync_api import expect

    page = demo_page
    search(page, "test_checkout_page", 1)
    page.click("#rows li.row summary")
    items = page.locator("#rows .attachment")
    expect(items).to_have_count(4)  # the row's detail is built once it is opened
    image = items.nth(0).locator("img")
    assert str(image.get_attribute("src")).startswith("data:image/png;base64,")
    page.wait_for_function(
        "() => { const i = document.querySelector('#rows .attachment img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    assert image.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [160, 48]
    items.nth(1).locator("summary").click()
    assert items.nth(1).locator("pre").text_content() == "GET /cart 200\nPOST /checkout 201\n"
    link = items.nth(2).locator("a[download]")
    assert "trace.bin" in link.inner_text()
    target = demo[0].parent / unquote(str(link.get_attribute("href")))
    assert target.read_bytes() == bytes(range(256))
    over = items.nth(3)
    assert over.locator("a, img, pre").count() == 0
    text = over.inner_text()
    assert "video.webm" in text and "not stored" in text
    assert "over qbench_attach_max_size (2.0 KiB)" in text
    save_screenshot(page, "html-attachments", page.locator("#rows li.row"))
    assert page_log.problems() == []
