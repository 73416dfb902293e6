"""``qbench render ... --html OUT``: the trend of the run store that holds the rendered run (the
page itself is written by ``history/publish.py``, as at the end of a live run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.report.html.trend import Trend


def store_trend(run_dir: Path, run_id: str, started_at: str) -> Trend | None:
    """The trend up to run ``run_id`` (started at ``started_at``) from the index of the run
    store holding ``run_dir`` (``<qbench dir>/runs/<id>``): the runs indexed up to it
    (``history.trend.load_trend``); ``None`` when it is in none or the store has no index (an
    index that cannot be read is a note on stderr)."""
    from pytest_qbench.report import store

    runs = run_dir.resolve().parent
    if runs.name != store.RUNS_DIR:
        return None
    from pytest_qbench.history.trend import load_trend  # the history index's readers

    try:
        return load_trend(runs.parent, None, until=(run_id, started_at))
    except QBenchError as exc:
        print(f"qbench: no trend in the HTML report: {exc}", file=sys.stderr)
        return None
