"""``qbench render ... --html OUT``: the HTML report of a stored, merged or crashed run, with
the trend of the run store that holds it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.report.html.trend import Trend
    from pytest_qbench.report.outputs import OutputWriter


def write_html(writer: OutputWriter, source: Path, out: Path) -> Path:
    """Write the page of ``source`` (a run directory or a report file) to ``out``."""
    run_dir = source if source.is_dir() else source.parent
    trend = store_trend(run_dir, writer.report["run"]["started_at"])
    writer.html(out, trend, run_dir)
    print(f"qbench: wrote {out}", file=sys.stderr if str(out) == "-" else sys.stdout)
    return out


def store_trend(run_dir: Path, until: str) -> Trend | None:
    """The trend up to ``until`` from the index of the run store holding ``run_dir``
    (``<qbench dir>/runs/<id>``); ``None`` when it is in none or the store has no index (an
    index that cannot be read is a note on stderr)."""
    from pytest_qbench.history.trend import load_trend
    from pytest_qbench.report import store

    runs = run_dir.resolve().parent
    if runs.name != store.RUNS_DIR:
        return None
    try:
        return load_trend(runs.parent, None, until=until)
    except QBenchError as exc:
        print(f"qbench: no trend in the HTML report: {exc}", file=sys.stderr)
        return None
