"""``qbench render ... --ctrf OUT``: the insights of the run store that holds the rendered run (the
document itself is written by ``history/publish.py``, as at the end of a live run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.report.ctrf import CtrfHistory


def store_history(run_dir: Path, run_id: str, nodeids: list[str]) -> CtrfHistory | None:
    """The insights from the index of the run store holding ``run_dir``
    (``<qbench dir>/runs/<id>``); ``None`` when it is in none, the store has no index or the run
    is not indexed (an index that cannot be read is a note on stderr)."""
    from pytest_qbench.history.ctrf_insights import load_ctrf_history
    from pytest_qbench.report import store

    runs = run_dir.resolve().parent
    if runs.name != store.RUNS_DIR:
        return None
    try:
        return load_ctrf_history(runs.parent, None, run_id, nodeids)
    except QBenchError as exc:
        print(f"qbench: no insights in the CTRF document: {exc}", file=sys.stderr)
        return None
