"""The page's charts, drawn here as SVG: no chart library, no script, nothing to download.

Every chart is ``<svg class="chart" data-chart="NAME">`` with its numbers in ``<title>``
tooltips; colours come from the page's stylesheet (classes ``o-passed``, ``o-failed``...), never
from inline styles, which the page's Content-Security-Policy would refuse. Every text from a
test (node ids) is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence

from markupsafe import Markup
from markupsafe import escape

from pytest_qbench.report.html.data import OUTCOMES
from pytest_qbench.report.html.trend import FlakyTest
from pytest_qbench.report.html.trend import TrendRun


OUTCOME_NAMES = frozenset(OUTCOMES)
"""The outcomes the stylesheet colours (``o-NAME``); any other word is ``o-other``."""
DURATION_BINS = (
    (0.001, "< 1 ms"),
    (0.01, "1–10 ms"),
    (0.1, "10–100 ms"),
    (1.0, "0.1–1 s"),
    (10.0, "1–10 s"),
    (60.0, "10–60 s"),
    (math.inf, "≥ 60 s"),
)


def svg(
    name: str,
    width: int,
    height: int,
    body: Sequence[str],
    label: str,
    attrs: Mapping[str, str] | None = None,
) -> Markup:
    """The chart element around ``body`` (markup already escaped), with ``attrs`` (escaped
    here)."""
    extra = "".join(f' {key}="{escape(value)}"' for key, value in (attrs or {}).items())
    return Markup(
        f'<svg class="chart" data-chart="{name}"{extra} viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(label)}">'
        f"{''.join(body)}</svg>"
    )


def donut(counts: Sequence[tuple[str, int]]) -> Markup:
    """Outcomes as a ring: one arc per outcome that happened, the total in the middle."""
    total = sum(n for _label, n in counts)
    body = ['<circle class="ring" cx="21" cy="21" r="15.915" fill="none" stroke-width="6"/>']
    offset = 25.0  # start at 12 o'clock
    for label, n in counts:
        if not n or not total:
            continue
        share = 100.0 * n / total
        body.append(
            f'<circle class="{outcome_class(label)}" cx="21" cy="21" r="15.915" fill="none" '
            f'stroke-width="6" stroke-dasharray="{share:.3f} {100 - share:.3f}" '
            f'stroke-dashoffset="{offset:.3f}"><title>{n} {escape(label)}</title></circle>'
        )
        offset -= share
    body.append(f'<text class="donut-total" x="21" y="23" text-anchor="middle">{total}</text>')
    return svg("donut", 42, 42, body, f"outcomes of {total} tests")


def outcome_class(label: str) -> str:
    """``o-failed`` for an outcome, ``o-other`` for another word of the summary (``todo``)."""
    return f"o-{label}" if label in OUTCOME_NAMES else "o-other"


def bars(
    name: str, rows: Sequence[tuple[str, float, str]], css: str, label: str, width: int = 520
) -> Markup:
    """Horizontal bars: ``(label, value, value text)`` per row, the longest bar the largest."""
    top = max((value for _l, value, _t in rows), default=0.0) or 1.0
    height, bar_x, bar_w = 22 * len(rows) + 4, 230, width - 300
    body = []
    for i, (text, value, shown) in enumerate(rows):
        y = 4 + 22 * i
        w = max(1.0, bar_w * value / top)
        body.append(
            f'<text class="label" x="{bar_x - 6}" y="{y + 14}" text-anchor="end">'
            f"{escape(_shorten(text, 34))}<title>{escape(text)}</title></text>"
            f'<rect class="{css}" x="{bar_x}" y="{y + 2}" width="{w:.1f}" height="16"/>'
            f'<text class="value" x="{bar_x + w + 6:.1f}" y="{y + 14}">{escape(shown)}</text>'
        )
    return svg(name, width, max(height, 26), body, label)


def columns(
    name: str,
    rows: Sequence[tuple[str, int]],
    css: str,
    label: str,
    attrs: Mapping[str, str] | None = None,
) -> Markup:
    """Vertical bars over labelled bins (a histogram)."""
    top = max((n for _l, n in rows), default=0) or 1
    step, plot, top_y = 64, 120, 24
    width, height = 20 + step * len(rows), plot + top_y + 34
    base = plot + top_y
    body = [f'<line class="axis" x1="10" y1="{base}" x2="{width - 10}" y2="{base}"/>']
    for i, (text, n) in enumerate(rows):
        h = plot * n / top
        x = 14 + step * i
        body.append(
            f'<rect class="{css}" x="{x}" y="{base - h:.1f}" width="{step - 8}" '
            f'height="{h:.1f}"><title>{n} · {escape(text)}</title></rect>'
            f'<text class="value" x="{x + (step - 8) / 2:.0f}" y="{base - 4 - h:.1f}" '
            f'text-anchor="middle">{n}</text>'
            f'<text class="label" x="{x + (step - 8) / 2:.0f}" y="{base + 16}" '
            f'text-anchor="middle">{escape(text)}</text>'
        )
    return svg(name, width, height, body, label, attrs)


def duration_histogram(durations: Sequence[float]) -> Markup:
    """How many tests took how long, in bins that grow tenfold."""
    counts = [0] * len(DURATION_BINS)
    for seconds in durations:
        for i, (upper, _label) in enumerate(DURATION_BINS):
            if seconds < upper:
                counts[i] += 1
                break
    last = max((i for i, n in enumerate(counts) if n), default=0)
    rows = [(label, counts[i]) for i, (_u, label) in enumerate(DURATION_BINS[: last + 1])]
    return columns("histogram", rows, "bar", "tests by duration")


def score_histogram(name: str, scores: Sequence[float], scale: float | None) -> Markup:
    """A metric's scores in ten bins from 0 to its scale (1 unless given)."""
    top = scale or max(1.0, max(scores, default=1.0))
    counts = [0] * 10
    for score in scores:
        counts[min(9, max(0, int(10 * score / top)))] += 1
    rows = [(f"{top * i / 10:g}", n) for i, n in enumerate(counts)]
    return columns("scores", rows, "bar", f"scores of {name}", {"data-metric": name})


def trend_line(
    name: str, runs: Sequence[TrendRun], values: Sequence[float | None], unit: str, css: str
) -> Markup:
    """One value per run, oldest on the left, each point titled with its run."""
    width, height, left, plot_w, plot_h = 500, 150, 50, 430, 110
    known = [v for v in values if v is not None]
    top = max(known, default=1.0) or 1.0
    if unit == "%":
        top = 100.0
    step = plot_w / max(1, len(runs) - 1)
    first, last = axis_dates(runs)
    points, marks = [], []
    for i, (run, value) in enumerate(zip(runs, values, strict=True)):
        if value is None:
            continue
        x, y = left + step * i, 10 + plot_h - plot_h * value / top
        points.append(f"{x:.1f},{y:.1f}")
        marks.append(
            f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="3">'
            f"<title>{escape(run.run_id)} · {escape(run.started_at[:16])} · "
            f"{_number(value)}{escape(unit)}</title></circle>"
        )
    body = [
        f'<line class="axis" x1="{left}" y1="{10 + plot_h}" x2="{left + plot_w}" y2="{10 + plot_h}"/>',
        f'<text class="label" x="{left - 6}" y="16" text-anchor="end">{_number(top)}{escape(unit)}</text>',
        f'<text class="label" x="{left - 6}" y="{10 + plot_h}" text-anchor="end">0</text>',
        f'<polyline class="line {css}" fill="none" points="{" ".join(points)}"/>',
        *marks,
        f'<text class="label" x="{left}" y="{height - 8}">{escape(first)}</text>',
        f'<text class="label" x="{left + plot_w}" y="{height - 8}" text-anchor="end">'
        f"{escape(last)}</text>",
    ]
    return svg(name, width, height, body, f"{name} over {len(runs)} runs")


def axis_dates(runs: Sequence[TrendRun]) -> tuple[str, str]:
    """The first and last run's dates under a trend line; with the time (UTC) when both are on
    the same day."""
    first, last = runs[0].started_at, runs[-1].started_at
    if first[:10] == last[:10]:
        return first[:16].replace("T", " "), last[11:16]
    return first[:10], last[:10]


def trend_charts(runs: Sequence[TrendRun]) -> list[tuple[str, Markup]]:
    """Pass rate, failures and duration over the runs: ``(title, chart)`` each."""
    return [
        (
            "Pass rate",
            trend_line("trend-pass-rate", runs, [r.pass_rate for r in runs], "%", "t-pass"),
        ),
        (
            "Failures",
            trend_line("trend-failures", runs, [float(r.failed) for r in runs], "", "t-fail"),
        ),
        (
            "Duration",
            trend_line("trend-duration", runs, [r.duration for r in runs], " s", "t-time"),
        ),
    ]


def flaky_bars(flaky: Sequence[FlakyTest]) -> Markup:
    """The flaky tests with their flip counts."""
    rows = [(f.nodeid, float(f.flips), f"{f.flips} flips") for f in flaky]
    return bars("flaky", rows, "o-flaky", "flaky tests by flips")


def _number(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.2f}"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]
