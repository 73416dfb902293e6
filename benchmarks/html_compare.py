"""pytest-html 4.2 and qbench's HTML report side by side: CPU cost, file size, time to first rows.

On the suite of ``overhead.py`` (5% failing with a traceback a few frames deep, skips, captured
output), at each size, three configurations run in the same interleaved rounds: plain pytest,
pytest-html ``--html=... --self-contained-html`` and qbench ``-p qbench --qbench-html=...``
(qbench imported from ``--qbench-checkout``). Their CPU time and peak RSS come from
``_measure.py``, exactly as in ``overhead.py``, whose runner this script reuses.

Then the HTML file each tool wrote in its last round is opened in headless Chromium (Debian's,
driven by Playwright for Python; no browser is downloaded), once per round, in the same rotated
order: the time from navigation start until the first result row is visible, and for qbench the
time from typing a query into its search box until the visible rows are the matching ones.

The qbench configuration is left out, with a line saying so, when ``--qbench-html`` is not an
option of the checkout.

Usage::

    python benchmarks/html_compare.py --sizes 1000,10000,50000 --rounds 3 \\
        [--qbench-checkout PATH] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _measure import CHECKOUT
from _measure import exit_on_sigterm
from _measure import imported_package_revision
from overhead import BASELINE
from overhead import CONFIGS
from overhead import DEFAULT_WORK_DIR
from overhead import Config
from overhead import Measurement
from overhead import Row
from overhead import Suite
from overhead import child_env
from overhead import generate_suite
from overhead import importable
from overhead import run_size
from overhead import summarize
from overhead import verify_html
from overhead import verify_qbench
from playwright.sync_api import Browser
from playwright.sync_api import BrowserContext
from playwright.sync_api import Page
from playwright.sync_api import sync_playwright


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HTML_NAME = "report.html"
MB = 1_000_000  # file sizes in MB (10^6 bytes), as the "under 15 MB"
DEPTH = 2  # a failing test fails three helper frames below itself
PYTEST_HTML = "pytest-html"
QBENCH = "qbench"

# pytest-html 4.2 renders every row with JavaScript from a JSON blob: a <tbody> per test, whose
# first <tr class="collapsible"> is the visible row.
PYTEST_HTML_ROW = "#results-table tbody.results-table-row tr.collapsible"
# qbench's page: the stable DOM hooks listed at the top of templates/report.html.j2.
QBENCH_HEADLINE = "#headline"
QBENCH_ROW = "#rows [data-nodeid]"
QBENCH_SEARCH = "#search"
QBENCH_COUNT = "#shown-count"
# Types the query into the search box the way Playwright's fill() does (value, then an "input"
# event) and resolves with the milliseconds, by the page's own clock, until the search is done:
# the count of matching rows has changed (when the page has one), at least one row is visible,
# and every visible row's node id holds the query. That is what a search leaves on screen,
# whether the page hides the other rows or drops them (pages, a virtual list). Checked after
# every DOM change and every animation frame; null after limitMs. Timed inside the page because
# a round trip to Playwright costs 40-150 ms on a loaded machine, as much as the search itself.
SEARCH_JS = """async ({query, searchSelector, countSelector, rowSelector, limitMs}) => {
    const box = document.querySelector(searchSelector);
    const count = document.querySelector(countSelector);
    const before = count === null ? null : count.textContent;
    const done = () => {
        if (count !== null && count.textContent === before) return false;
        const rows = Array.from(document.querySelectorAll(rowSelector));
        const shown = rows.filter((row) => row.getClientRects().length > 0);
        return shown.length > 0 && shown.every((row) => row.dataset.nodeid.includes(query));
    };
    return await new Promise((resolve) => {
        let finished = false;
        const finish = (value) => {
            if (finished) return;
            finished = true;
            observer.disconnect();
            resolve(value);
        };
        const check = () => {
            if (!finished && done()) finish(performance.now() - started);
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, {childList: true, subtree: true, characterData: true});
        const frame = () => {
            check();
            if (!finished) requestAnimationFrame(frame);
        };
        box.focus();
        const started = performance.now();
        box.value = query;
        box.dispatchEvent(new Event("input", {bubbles: true}));
        requestAnimationFrame(frame);
        setTimeout(() => finish(null), limitMs);
    });
}"""


def html_config() -> Config:
    """pytest-html as ``overhead.py`` runs it (with pytest-metadata, which it needs)."""
    html = next(c for c in CONFIGS if c.name == "html")
    return Config(PYTEST_HTML, html.args, verify_html, module=html.module)


def verify_qbench_html(out: Path, suite: Suite) -> list[str]:
    """``overhead.py``'s qbench checks, and the HTML file written and not a stub."""
    problems = verify_qbench(out, suite)
    path = out / HTML_NAME
    if not path.is_file():
        return [*problems, f"{HTML_NAME} missing"]
    if path.stat().st_size < 10_000:
        problems.append(f"{HTML_NAME} only {path.stat().st_size} bytes")
    return problems


def qbench_config(checkout: Path) -> Config:
    """qbench with its default outputs in a fresh directory per run, plus ``--qbench-html``."""
    return Config(
        QBENCH,
        lambda out: [
            "-p",
            "qbench",
            f"--qbench-dir={out / 'qbench'}",
            f"--qbench-html={out / HTML_NAME}",
        ],
        verify_qbench_html,
        pythonpath=str(checkout),
    )


def has_html_option(python: str, checkout: Path) -> bool:
    """Whether ``pytest -p qbench --help``, with qbench from ``checkout``, lists --qbench-html."""
    with tempfile.TemporaryDirectory() as empty:
        (Path(empty) / "pytest.ini").write_text("[pytest]\n")
        shown = subprocess.run(
            [python, "-m", "pytest", "-p", "qbench", "--help"],
            cwd=empty,
            env=child_env(str(checkout)),
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    return "--qbench-html" in shown


# --- the browser ----------------------------------------------------------------------------


@dataclass
class PageTiming:
    """One opening of one tool's HTML file in Chromium."""

    config: str
    size: int
    round: int
    first_rows_s: float | None
    """None: the rows did not show within the time limit."""
    search_ms: float | None = None
    problem: str = ""


def open_page(
    browser: Browser, url: str, selectors: Sequence[str], limit_s: float
) -> tuple[BrowserContext, Page, float | None]:
    """Open ``url`` in a fresh context: the context, the page, seconds until all selectors show.

    The seconds are None when a selector did not show within ``limit_s``.
    """
    context = browser.new_context()
    page = context.new_page()
    started = time.perf_counter()
    try:
        page.goto(url, wait_until="commit", timeout=limit_s * 1000)
        for selector in selectors:
            remaining = limit_s - (time.perf_counter() - started)
            page.wait_for_selector(selector, state="visible", timeout=max(remaining, 0.001) * 1000)
    except Exception as exc:  # Playwright's TimeoutError, or the page crashed
        if "Timeout" not in type(exc).__name__:
            raise
        return context, page, None
    return context, page, time.perf_counter() - started


def search_time(page: Page, query: str, limit_s: float) -> float | None:
    """Milliseconds from typing ``query`` into qbench's search box until only matches show.

    None when the search did not settle within ``limit_s``.
    """
    page.locator(QBENCH_SEARCH).first.wait_for(state="visible", timeout=limit_s * 1000)
    found = page.evaluate(
        SEARCH_JS,
        {
            "query": query,
            "searchSelector": QBENCH_SEARCH,
            "countSelector": QBENCH_COUNT,
            "rowSelector": QBENCH_ROW,
            "limitMs": limit_s * 1000,
        },
    )
    return None if found is None else float(found)


def time_page(browser: Browser, config: str, path: Path, query: str, limit_s: float) -> PageTiming:
    """Open one tool's file once; for qbench, also search it."""
    selectors = [PYTEST_HTML_ROW] if config == PYTEST_HTML else [QBENCH_HEADLINE, QBENCH_ROW]
    context, page, first_rows = open_page(browser, path.as_uri(), selectors, limit_s)
    timing = PageTiming(config, 0, 0, first_rows)
    try:
        if config == QBENCH and first_rows is not None:
            timing.search_ms = search_time(page, query, limit_s)
            if timing.search_ms is None:
                timing.problem = f"search did not settle within {limit_s:g} s"
    except Exception as exc:  # no search box, a page error: a finding, not a crash
        timing.problem = f"search failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
    finally:
        context.close()
    return timing


def time_pages(files: dict[str, Path], suite: Suite, args: argparse.Namespace) -> list[PageTiming]:
    """Every tool's file opened once per round, in a rotated order; one browser for the size."""
    query = search_query(suite)
    names = list(files)
    timings: list[PageTiming] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        try:
            for round_no in range(1, args.rounds + 1):
                shift = (round_no - 1) % len(names)
                for name in names[shift:] + names[:shift]:
                    timing = time_page(browser, name, files[name], query, args.page_timeout)
                    timing.size, timing.round = suite.total, round_no
                    timings.append(timing)
                    report_page(timing, args)
        finally:
            browser.close()
    return timings


def report_page(timing: PageTiming, args: argparse.Namespace) -> None:
    """One progress line on stderr."""
    search = f"  search {timing.search_ms:.0f} ms" if timing.search_ms is not None else ""
    problem = f"  PROBLEM: {timing.problem}" if timing.problem else ""
    print(
        f"  n={timing.size:>6} round {timing.round}/{args.rounds} {timing.config:<12} "
        f"first rows {show_seconds(timing.first_rows_s, args.page_timeout)} s{search}{problem}",
        file=sys.stderr,
        flush=True,
    )


def search_query(suite: Suite) -> str:
    """A node-id fragment that a handful of failing tests of the suite match."""
    module = min(7, suite.files - 1)
    return f"test_fail_{module:04d}_"


# --- the table ------------------------------------------------------------------------------


def show_seconds(value: float | None, limit_s: float) -> str:
    """Seconds with two decimals, or ``> limit`` for a wait that timed out."""
    return f"> {limit_s:g}" if value is None else f"{value:.2f}"


def median_or_none(values: Sequence[float | None]) -> float | None:
    """The median, a timeout (None) counting as longer than any value; None when it is one."""
    if not values:
        return None
    middle = statistics.median(math.inf if v is None else v for v in values)
    return None if math.isinf(middle) else middle


def table_lines(
    size: int,
    rows: Sequence[Row],
    sizes_mb: dict[str, float],
    timings: Sequence[PageTiming],
    limit_s: float,
) -> list[str]:
    """Table lines of one size: one per configuration."""
    lines = []
    for row in rows:
        if row.config == BASELINE:
            cpu = f"{row.cpu_s:.2f} s (plain)"
        else:
            base = next(r for r in rows if r.config == BASELINE)
            cpu = f"{row.cpu_s - base.cpu_s:+.2f} ({row.paired_ratio:.2f}x)"
        if row.failed_runs:
            cpu += f" **FAILED {row.failed_runs}/{row.runs}**"
        mine = [t for t in timings if t.config == row.config]
        first = median_or_none([t.first_rows_s for t in mine])
        searches = [t.search_ms for t in mine]
        file_mb = f"{sizes_mb[row.config]:.2f}" if row.config in sizes_mb else "–"
        first_rows = show_seconds(first, limit_s) if mine else "–"
        search = "–"
        if row.config == QBENCH and mine:
            found = median_or_none(searches)
            search = f"{found:.0f}" if found is not None else "not measured"
        lines.append(f"| {size} | {row.config} | {cpu} | {file_mb} | {first_rows} | {search} |")
    return lines


def problem_lines(rows: Sequence[Row], timings: Sequence[PageTiming]) -> list[str]:
    """The problems of failed runs and page openings, one line each."""
    lines = [f"- **{r.config}**: " + "; ".join(r.problems) for r in rows if r.problems]
    for problem in sorted({f"{t.config} at {t.size}: {t.problem}" for t in timings if t.problem}):
        lines.append(f"- {problem}")
    return lines


TABLE_HEAD = [
    "| tests | tool | extra CPU s (paired ratio vs plain) | file MB | first rows s | search ms |",
    "|---:|---|---:|---:|---:|---:|",
]


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1000, 10000],
        metavar="N,N,...",
        help="Suite sizes, comma-separated (default 1000,10000)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="Runs and page openings per size")
    parser.add_argument("--qbench-checkout", type=Path, default=CHECKOUT, metavar="PATH")
    parser.add_argument("--per-file", type=int, default=100, help="Tests per generated module")
    parser.add_argument("--depth", type=int, default=DEPTH, help="Helper frames under a failure")
    parser.add_argument("--warmup", type=int, default=1, help="Unmeasured plain runs per size")
    parser.add_argument("--timeout", type=float, default=3600.0, help="Seconds per pytest run")
    parser.add_argument(
        "--page-timeout", type=float, default=60.0, help="Seconds to wait for a page's rows"
    )
    parser.add_argument("--chromium", default=CHROMIUM, help="The Chromium executable")
    parser.add_argument("--python", default=sys.executable, help="Interpreter that runs pytest")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--json", type=Path, help="Also write every measurement here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not Path(args.qbench_checkout, "pytest_qbench").is_dir():
        parser.error(f"--qbench-checkout {args.qbench_checkout} holds no pytest_qbench/")
    args.order, args.seed = "rotate", 0  # what overhead.run_size reads
    return args


def choose_configs(args: argparse.Namespace) -> tuple[list[Config], list[str]]:
    """Plain pytest, and pytest-html and qbench where they can run; why the others cannot."""
    configs = [next(c for c in CONFIGS if c.name == BASELINE)]
    skipped = []
    html = html_config()
    if html.module and importable(args.python, html.module):
        configs.append(html)
    else:
        skipped.append(f"{PYTEST_HTML}: pytest_html is not installed for {args.python}")
    checkout = args.qbench_checkout.resolve()
    if has_html_option(args.python, checkout):
        configs.append(qbench_config(checkout))
    else:
        skipped.append(f"{QBENCH}: --qbench-html is not an option of the checkout at {checkout}")
    return configs, skipped


def html_files(configs: Sequence[Config], rows: Sequence[Row], out_root: Path) -> dict[str, Path]:
    """The HTML file of every tool whose runs all succeeded (each one's last round)."""
    good = {r.config for r in rows if not r.failed_runs}
    return {
        c.name: out_root / c.name / HTML_NAME
        for c in configs
        if c.name != BASELINE and c.name in good
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison; return 1 when any run or page opening failed."""
    args = parse_args(argv)
    exit_on_sigterm()
    work_dir: Path = args.work_dir.resolve()
    configs, skipped = choose_configs(args)
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    qbench_at = imported_package_revision(args.python, child_env(str(args.qbench_checkout)))
    print(f"qbench: pytest-qbench at {qbench_at}", file=sys.stderr)
    results: dict[str, Any] = {
        "qbench_revision": qbench_at,
        "python": args.python,
        "rounds": args.rounds,
        "depth": args.depth,
        "skipped": skipped,
        "sizes": {},
    }
    lines = list(TABLE_HEAD)
    problems: list[str] = []
    for size in args.sizes:
        suite = generate_suite(work_dir, size, args.per_file, args.depth)
        print(f"suite of {suite.total} tests at {suite.path}: {suite.outcomes}", file=sys.stderr)
        html_work = work_dir / "html-compare"
        measurements: list[Measurement] = run_size(args.python, configs, suite, html_work, args)
        rows = summarize(measurements, configs)
        files = html_files(configs, rows, html_work / f"out-{size}")
        sizes_mb = {name: path.stat().st_size / MB for name, path in files.items()}
        timings = time_pages(files, suite, args) if files else []
        lines += table_lines(size, rows, sizes_mb, timings, args.page_timeout)
        problems += problem_lines(rows, timings)
        results["sizes"][str(size)] = {
            "rows": [asdict(r) for r in rows],
            "runs": [asdict(m) for m in measurements],
            "file_mb": sizes_mb,
            "pages": [asdict(t) for t in timings],
        }
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
        print("\n".join(lines), file=sys.stderr, flush=True)
    print("\n".join(lines))
    for line in problems:
        print(line)
    for line in skipped:
        print(f"Not measured: {line}.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
