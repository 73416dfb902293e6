"""``render_html``: the report as one self-contained HTML page."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import jinja2
from markupsafe import Markup

from pytest_qbench.core.errors import TemplateError
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.summary_words import collected_text
from pytest_qbench.core.summary_words import rate_text
from pytest_qbench.report.aggregate import DEFAULT_MAX_ITEMS
from pytest_qbench.report.aggregate import Aggregator
from pytest_qbench.report.aggregate import ReportView
from pytest_qbench.report.aggregate import as_record
from pytest_qbench.report.coverage.view import percent_text
from pytest_qbench.report.html import charts
from pytest_qbench.report.html.data import OUTCOMES
from pytest_qbench.report.html.data import PageData
from pytest_qbench.report.html.data import collect
from pytest_qbench.report.html.headline import summary_parts
from pytest_qbench.report.html.trend import Trend
from pytest_qbench.report.render import HTML_TEMPLATE
from pytest_qbench.report.render import builtin_template_dir
from pytest_qbench.report.render import run_duration
from pytest_qbench.report.template_cache import bytecode_cache
from pytest_qbench.report.verdict import verdict_of


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


STYLE = "html/report.css"
SCRIPT = "html/report.js"
JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def make_html_environment() -> jinja2.Environment:
    """The built-in templates with autoescape on: every value is HTML-escaped unless it is
    ``Markup`` made here (the charts, the hashed style and script, the escaped JSON)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(builtin_template_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=bytecode_cache("html"),
    )
    env.filters.update(
        duration=format_duration,
        run_duration=run_duration,
        percent=percent_text,
        collected_text=collected_text,
        rate=rate_text,
        outcome_class=charts.outcome_class,
    )
    return env


@dataclass(frozen=True)
class Page:
    """A rendered page, and whether it links attachments (relative to its directory)."""

    text: str
    linked: bool


def render_html(
    report: TestReportRecord | Any, results: Iterable[Any] | None = None, **options: Any
) -> str:
    """The page, as ``str``: ``build_page(...).text`` (see there)."""
    return build_page(report, results, **options).text


def build_page(
    report: TestReportRecord | Any,
    results: Iterable[TestResultRecord | Any] | None = None,
    *,
    view: ReportView | None = None,
    trend: Trend | None = None,
    run_dir: Path | None = None,
    link_base: Path | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    env: jinja2.Environment | None = None,
) -> Page:
    """The page: a pure function of its inputs (and of the attachments' files).

    Args:
        report: The report record (or model); ``report.results`` when ``results`` is omitted.
        results: Every result, read once (a stream's results are parsed lazily).
        view: The bounded view the Markdown uses; computed in the same pass when omitted.
        trend: The last runs from the history index; the trend section says when there is none.
        run_dir: Where attachment paths are relative to: small ones are embedded from there.
        link_base: The page's directory, for links to the other attachments (``run_dir`` when
            omitted).
        max_items: Items per bounded list when ``view`` is computed here.
        env: A Jinja environment from ``make_html_environment``.

    Raises:
        TemplateError: the built-in template failed (a bug, reported as such).
    """
    record: TestReportRecord = as_record(report)
    source: Iterable[Any] = record["results"] if results is None else results
    aggregator = Aggregator(max_items) if view is None else None
    data = collect(_fed(source, aggregator), run_dir, link_base)
    if aggregator is not None:
        view = aggregator.view()
    assert view is not None
    env = env or make_html_environment()
    trend = trend or Trend()
    context = page_context(record, view, trend, data.to_json(), env)
    context["charts"] = chart_context(record, view, trend, data)
    context["row_counts"] = data.outcome_counts()
    context["row_total"] = len(data.outcome)
    try:
        text = env.get_template(HTML_TEMPLATE).render(**context)
    except jinja2.TemplateError as exc:
        raise TemplateError(
            f"template {HTML_TEMPLATE!r} failed: {type(exc).__name__}: {exc}",
            slug="template-render",
        ) from None
    return Page(text, data.linked)


def _fed(results: Iterable[Any], aggregator: Aggregator | None) -> Iterable[TestResultRecord]:
    for value in results:
        result: TestResultRecord = as_record(value)
        if aggregator is not None:
            aggregator.add_result(result)
        yield result


def embed_json(value: Any) -> Markup:
    """``value`` as JSON that cannot end its ``<script>`` block nor break a parser: ``<``, ``>``,
    ``&``, U+2028 and U+2029 as ``\\u`` escapes (the same string once parsed)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for unsafe, escape in JSON_ESCAPES.items():  # str.replace: ~30x faster than str.translate here
        if unsafe in text:
            text = text.replace(unsafe, escape)
    return Markup(text)


def csp_hash(text: str) -> str:
    """The CSP source of an inline block: ``'sha256-<base64>'``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def page_context(
    report: TestReportRecord,
    view: ReportView,
    trend: Trend,
    data: dict[str, Any],
    env: jinja2.Environment,
) -> dict[str, Any]:
    """Everything the template gets but the charts."""
    style = _source(env, STYLE)
    script = _source(env, SCRIPT)
    csp = (
        "default-src 'none'; "
        f"script-src {csp_hash(script)}; "
        f"style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    summary = report["summary"]
    verdict = verdict_of(report)
    return {
        "report": report,
        "summary": summary,
        "parts": summary_parts(summary),
        "ok": verdict.green,
        "reasons": verdict.reasons,
        "incomplete": verdict.incomplete,
        "view": view,
        "trend": trend,
        "outcomes": _outcome_counts(summary),
        "data_json": embed_json(data),
        "csp": csp,
        "style": Markup(style),
        "script": Markup(script),
    }


def chart_context(
    report: TestReportRecord,
    view: ReportView,
    trend: Trend,
    data: PageData,
) -> dict[str, Any]:
    """The SVG charts, by name."""
    slowest = [
        (r["nodeid"], float(r["duration"]), format_duration(r["duration"])) for r in view.slowest
    ]
    return {
        "donut": charts.donut(_outcome_counts(report["summary"])),
        "histogram": charts.duration_histogram(data.durations) if data.durations else None,
        "slowest": charts.bars("slowest", slowest, "bar", "slowest tests") if slowest else None,
        "trend": charts.trend_charts(trend.runs) if trend.drawable else [],
        "flaky": charts.flaky_bars(trend.flaky) if trend.flaky else None,
        "scores": {
            name: charts.score_histogram(name, values, data.scales.get(name))
            for name, values in sorted(data.scores.items())
        },
    }


def _outcome_counts(summary: Any) -> list[tuple[str, int]]:
    """``(outcome, count)`` in `OUTCOMES` order, from the summary (which says ``errors``), then
    the summary's other words (vitest's and jest's ``todo``) when they are the tests those
    outcomes leave out of the total: the ring then counts every test, as the headline does."""
    counts = [(name, int(summary["errors" if name == "error" else name])) for name in OUTCOMES]
    other = sorted((str(word), int(n)) for word, n in (summary.get("other") or {}).items() if n)
    left = int(summary["total"]) - sum(n for _name, n in counts)
    if other and sum(n for _word, n in other) <= left:
        counts.extend(other)
    return counts


def _source(env: jinja2.Environment, name: str) -> str:
    assert env.loader is not None
    text, _filename, _uptodate = env.loader.get_source(env, name)
    return text
