"""Stored runs, for every tool that reads them: finding one by id, loading its report, its
metadata file, the history index (imported when first opened).

Run ids are checked against the run store's id rule before they name a directory, so an id
cannot reach outside ``<qbench dir>/runs/``.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING
from typing import cast

from pytest_qbench.core import atomic
from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.text import bound_text
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.report import store
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.runref import LAST
from pytest_qbench.report.runref import MCP_META
from pytest_qbench.report.runref import find_run_dir


if TYPE_CHECKING:
    from pytest_qbench.history.backend import Index
    from pytest_qbench.report.records import TestReportRecord


META_NAME = MCP_META
"""The run as this server started it (the real command line and exit status)."""


def find_run(config: ServerConfig, run_id: str) -> Path:
    """The directory of ``run_id``: an id, a unique prefix of one, ``last`` or ``last~N``, in
    the history index's one order (``report.runref``, as every ``qbench`` command: the order
    the runs were indexed in, a run not indexed by its recorded start).

    Raises:
        ToolFailure: no such run, an ambiguous prefix, or an id that is not one.
    """
    from pytest_qbench.history.indexer import SAFE_RUN_ID

    if not LAST.match(run_id) and not re.match(SAFE_RUN_ID, run_id):
        raise ToolFailure(
            f"run_id {run_id!r} is not a run id (letters, digits, '.', '_', '-'); "
            "list_runs gives the ids"
        )
    try:
        indexed = _index_order(config) if LAST.match(run_id) else []
        return find_run_dir(config.qbench_dir, run_id, "list_runs", indexed)
    except HistoryError as exc:
        raise ToolFailure(str(exc)) from None


def _index_order(config: ServerConfig) -> list[str]:
    """The history index's runs, oldest first in its order (``files.index_order``).

    Raises:
        HistoryError: the index cannot be read.
    """
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.files import index_order

    return index_order(config.qbench_dir, configured_db(None, config.root))


def load_report(run_dir: Path) -> TestReport | None:
    """The run's ``report.json`` (which holds the failing tests' history), else its stream (a
    run that died); ``None`` when pytest wrote neither."""
    from pytest_qbench.report import readers
    from pytest_qbench.report.readers import load_source

    report = run_dir / store.REPORT_JSON
    try:
        if report.is_file():
            return readers.read_report(report)
        if store.holds_stream(run_dir):
            return load_source(run_dir)
    except QBenchError as exc:
        raise ToolFailure(f"run {run_dir.name} cannot be read: {exc}") from None
    return None


def require_report(run_dir: Path) -> TestReport:
    """``load_report``, or a tool error saying why there is nothing to read.

    Raises:
        ToolFailure: pytest wrote no results for the run.
    """
    report = load_report(run_dir)
    if report is None:
        raise ToolFailure(
            f"run {run_dir.name} has no results: pytest stopped before running tests; "
            f'get_run_output(run_id="{run_dir.name}", stream="stderr") says why'
        )
    return report


def write_meta(run_dir: Path, meta: RunMeta) -> None:
    """Store the run as the server ran it."""
    atomic.write_text_atomic(run_dir / META_NAME, meta.model_dump_json(indent=2) + "\n")


def read_meta(run_dir: Path) -> RunMeta:
    """The run's metadata: the server's own file, else the report's.

    Raises:
        ToolFailure: neither exists.
    """
    own = run_dir / META_NAME
    if own.is_file():
        with contextlib.suppress(OSError, ValueError):
            return RunMeta.model_validate_json(own.read_text(encoding="utf-8"))
    return require_report(run_dir).run


def repair(config: ServerConfig, run_dir: Path) -> None:
    """After pytest was killed: write the reports it could not write, from its stream, and
    index the run, so that the run store reads as after any interrupted run."""
    from pytest_qbench.history.indexer import Record
    from pytest_qbench.history.indexer import index_run
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.outputs import OutputWriter

    if (run_dir / store.REPORT_JSON).is_file() or not store.holds_stream(run_dir):
        return
    report = load_report(run_dir)
    if report is None:
        return
    record = cast("TestReportRecord", report.model_dump(mode="json"))
    view = aggregate(record["results"]).view()
    writer = OutputWriter(record, None, view, template_dir=None, max_items=50)
    writer.json(run_dir / store.REPORT_JSON)
    writer.markdown(run_dir / store.REPORT_MD)
    index = open_history(config, create=True)
    try:
        # indexing reads records generically (history.indexer.Record)
        results = cast("list[Record]", record["results"])
        index_run(index, cast("Record", record), lambda: results)
    finally:
        index.close()


def open_history(config: ServerConfig, *, create: bool = False, wait: float | None = None) -> Index:
    """The history index pytest records the project's runs in: the PostgreSQL database that
    ``$QBENCH_DB`` or the ini ``qbench_db`` names, else the run store's ``index.sqlite``;
    ``wait``: seconds a busy index is waited for (default: the backend's).

    Raises:
        HistoryError: it cannot be opened.
    """
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.database import open_index

    db = configured_db(None, config.root)
    return open_index(config.qbench_dir, db, create=create, wait=wait)


def open_history_seeing_died(config: ServerConfig) -> Index:
    """``open_history`` for the tools that answer from the history (``list_runs``,
    ``flaky_tests``, ``check_health``'s count): the runs that died outside the server (killed
    mid-test, ``os._exit``) are indexed first, as the CLI's history commands index them
    (``files.open_seeing_died``); each is named in the server's log.

    Raises:
        HistoryError: the index cannot be opened, or such a run cannot be indexed into it.
    """
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.files import open_seeing_died

    db = configured_db(None, config.root)
    return open_seeing_died(config.qbench_dir, db, _log)


def _log(line: str) -> None:
    import logging

    logging.getLogger(__name__).info("qbench: %s", line)


TAIL_LINES = 30


TAIL_CHARS = 1500


def output_tail(path: Path) -> str:
    """The last lines of an output file, bounded."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 16 * TAIL_CHARS))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    tail = Redactor(os.environ)("\n".join(data.rstrip().split("\n")[-TAIL_LINES:]))
    return bound_text(tail, TAIL_CHARS, keep="tail")
