"""``qbench render ... --ctrf OUT``: a stored, merged or crashed run as a CTRF document, with the
insights of the run store that holds it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.report.ctrf import CtrfHistory
    from pytest_qbench.report.outputs import OutputWriter


def write_ctrf(writer: OutputWriter, source: Path, out: Path) -> Path:
    """Write the CTRF document of ``source`` (a run directory or a report file) to ``out``."""
    run_dir = source if source.is_dir() else source.parent
    history = store_history(run_dir, writer.report["run"]["run_id"], writer.nodeids())
    writer.ctrf(out, history)
    if str(out) != "-":
        print(f"qbench: wrote {out}")
    return out


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
