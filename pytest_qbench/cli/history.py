"""The history subcommands of ``qbench``: ``index``, ``runs``, ``show``, ``diff``, ``flaky``,
``history``, ``gc``, ``mcp-log``. ``cli.py`` adds them with ``add_history_parsers``.

Each takes ``--dir`` (the qbench directory; default: ``.qbench`` in the working directory or the
nearest parent holding one), ``--db`` (a PostgreSQL history database; ``database.py`` says where
else it comes from) and ``--json`` (machine-readable output on stdout).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_finite
from pytest_qbench.core.numbers import parse_path
from pytest_qbench.core.numbers import parse_whole


if TYPE_CHECKING:
    from pydantic import BaseModel

    from pytest_qbench.history.backend import Index
    from pytest_qbench.history.json_models import IndexedRunJson
    from pytest_qbench.history.queries import RunInfo

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]

NEW_FAILURES = 1
"""``qbench diff``'s exit status when the later run has new failures."""


def add_history_parsers(sub: SubParsers) -> None:
    """Add the history subcommands to ``qbench``'s parser."""
    _add_index(sub)
    _add_runs(sub)
    _add_mcp_log(sub)
    _add_show(sub)
    _add_diff(sub)
    _add_flaky(sub)
    _add_history(sub)
    _add_gc(sub)
    _add_shards(sub)


# --- shared -------------------------------------------------------------------------------------


def _parser(
    sub: SubParsers,
    name: str,
    help: str,
    description: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    parser.add_argument(
        "--dir",
        type=parse_path,
        help="The qbench directory. Default: .qbench in the working directory or its nearest "
        "parent holding one",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="The history database: a postgresql:// URL, or 'sqlite' for DIR/index.sqlite. "
        "Default: $QBENCH_DB, else qbench_db of the pytest configuration file, else sqlite",
    )
    parser.add_argument("--json", action="store_true", help="Print JSON instead of text")
    parser.set_defaults(func=func)
    return parser


def _count(
    parser: argparse.ArgumentParser, flag: str, default: int, help: str, metavar: str = "N"
) -> None:
    parser.add_argument(
        flag, type=_positive, default=default, metavar=metavar, help=f"{help}. Default: {default}"
    )


MAX_COUNT = 1_000_000_000
"""The largest count (``--runs``, ``--limit``, ``--keep``) the commands take."""


def _positive(value: str) -> int:
    # SQLite's integers end at 2**63: refuse a larger count before it does
    return parse_whole(value, minimum=1, maximum=MAX_COUNT)


def _non_negative(value: str) -> float:
    return parse_finite(
        value, minimum=0, above=False, what="a finite number, 0 or more", example="10"
    )


@contextmanager
def _opened(args: argparse.Namespace) -> Iterator[Index]:
    """The history database, else the index of ``--dir`` (or of the ``.qbench`` found), the
    runs that died indexed first (``files.open_seeing_died``), closed afterwards."""
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.files import open_seeing_died

    db = configured_db(args.db, Path.cwd())
    args.qbench_dir = _local_dir(args.dir, db)
    index = open_seeing_died(args.qbench_dir, db, _say)
    try:
        yield index
    finally:
        index.close()


def refuse_a_later_run_without_tests(qbench_dir: Path | None, head: RunInfo, command: str) -> None:
    """Raise when the run store holds a run written after ``head`` that ran no test (a ``-k``
    matching nothing, a usage error after collection): such a run is never indexed, so
    ``head``, the last indexed run, is not the CI's last run, and what ``command`` says of it
    (a pull-request comment, a comparison) would read green for a run that was not. A shard (a
    queue's machine that got nothing) and a ``--collect-only`` run are left out. "After" is by
    the file system's clock (when each report.json was written), not the start a run recorded
    (a frozen or wrong clock; for a merged run, when the reports it merged were written); only
    the directories changed since ``head``'s report are read.

    Raises:
        HistoryError: such a run, named with its exit status.
    """
    from pytest_qbench.core.exit_codes import PytestExit
    from pytest_qbench.core.exit_codes import pytest_meaning
    from pytest_qbench.report.store import REPORT_JSON
    from pytest_qbench.report.store import RUNS_DIR

    runs = None if qbench_dir is None else qbench_dir / RUNS_DIR
    if runs is None or not runs.is_dir():
        return
    try:
        since = (runs / head.run_id / REPORT_JSON).stat().st_mtime_ns
    except OSError:  # its report is elsewhere (a merged run): when its sources were written,
        from pytest_qbench.history.merges import sources_written  # else its recorded end

        written = sources_written(head)
        recorded = int((head.completed_at or head.started_at).timestamp() * 1e9)
        since = recorded if written is None else written
    later: list[tuple[int, str, Any, bool]] = []
    for run_dir in runs.iterdir():
        try:
            if run_dir.stat().st_mtime_ns < since:
                continue
            written = (run_dir / REPORT_JSON).stat().st_mtime_ns
            if written <= since or run_dir.name == head.run_id:
                continue
            report = json.loads((run_dir / REPORT_JSON).read_text(encoding="utf-8"))
            run, summary = report["run"], report["summary"]
            empty = summary["total"] == 0 and not report.get("collection_errors")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # no report (a run that died is indexed), or not one qbench wrote
        if empty and not run.get("collect_only") and not run.get("shard"):
            later.append(
                (written, str(run.get("run_id")), run["exit_code"], bool(run.get("interrupted")))
            )
    if not later:
        return
    _, run_id, code, interrupted = max(later)
    meaning = pytest_meaning(code, interrupted)
    fix = (  # stopped before its first test (Ctrl-C, a crash in collection): not the selection
        "fix what stopped that run (its output says) and run the tests again"
        if code not in (PytestExit.USAGE_ERROR, PytestExit.NO_TESTS_COLLECTED)
        else "fix that run's selection (its test paths, -k, -m)"
    )
    raise HistoryError(
        f"the last run, {run_id}, ran no tests (pytest's exit status {code}"
        f"{': ' + meaning if meaning else ''}) and is never indexed, so the last indexed run, "
        f"{head.run_id}, is not this one: {fix}, or name the run ('{command} {head.run_id}')"
    )


def refuse_a_last_run_of_another_commit(
    head: RunInfo, command: str, environ: Mapping[str, str] | None = None
) -> None:
    """Raise when this CI job's commit (its provider's variables) is not the commit of
    ``head``, the last indexed run: pytest recorded no run of this commit (it stopped before
    its session started: an INTERNALERROR in a plugin's set-up, a usage error at start-up), so
    what ``command`` says of ``head``, an older commit's run, would read as this commit's. Off
    the CI, or when either commit is unknown, nothing is checked.

    Raises:
        HistoryError: the two commits, and how to name the run anyway.
    """
    from pytest_qbench.core.ci import detect_ci

    ci = detect_ci(os.environ if environ is None else environ)
    commit = ci.get("commit") if ci else None
    if not commit or not head.commit or head.commit == commit:
        return
    raise HistoryError(
        f"the last indexed run, {head.run_id}, is of commit {head.commit[:12]}, and this CI "
        f"job is at commit {commit[:12]}: no run of this commit was recorded (pytest stopped "
        "before its session started: an INTERNALERROR or a usage error at start-up, as its "
        "output says), so what this command says of that run would not be about this "
        f"commit; fix the run, or name the run ('{command} {head.run_id}')"
    )


def _say(line: str) -> None:
    print(f"qbench: {line}", file=sys.stderr)


def _say_unrecorded_merges(index: Index) -> None:
    """Say which merged runs count their shards twice, and the fix (``merges.unrecorded_note``)."""
    from pytest_qbench.history.merges import unrecorded_note

    note = unrecorded_note(index)
    if note is not None:
        _say(note)


def _local_dir(given: Path | None, db: str | None) -> Path | None:
    """The qbench directory: required for the local index; with a history database, the one
    given or found, if any (it holds this machine's run directories)."""
    from pytest_qbench.history.files import find_qbench_dir

    if given is not None or db is None:
        return find_qbench_dir(given)
    with contextlib.suppress(HistoryError):
        return find_qbench_dir(None)
    return None


def _output(
    args: argparse.Namespace,
    data: Callable[[], BaseModel | dict[str, Any]],
    lines: Callable[[], list[str]],
) -> None:
    """``data()`` (the command's model, ``history/json_models.py``; ``qbench flaky`` still
    gives a dict) as JSON with ``--json``, else ``lines()``."""
    if args.json:
        shown = data()
        if not isinstance(shown, dict):
            shown = shown.model_dump(mode="json")
        print(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        print("\n".join(lines()))


# --- qbench index ------------------------------------------------------------------------------


def _add_index(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "index",
        "Index run directories (or report files) in the run store's history",
        "Add runs to <qbench dir>/index.sqlite (or the history database), or index them again "
        "(idempotent). Without arguments, every run directory of the qbench directory. A run "
        "directory without report.json (a crashed run) is indexed from its results.jsonl.",
        cmd_index,
    )
    parser.add_argument("sources", nargs="*", type=parse_path, metavar="RUN_DIR|REPORT.json")
    parser.add_argument(
        "--keep-runs",
        type=int,
        default=0,
        metavar="N",
        help="Then keep only the newest N runs in the index, deleting the older runs' "
        "directories found here. Default: 0 (keep all)",
    )


def cmd_index(args: argparse.Namespace) -> int:
    """``qbench index``."""
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.files import run_sources
    from pytest_qbench.history.indexer import delete_old_runs
    from pytest_qbench.history.indexer import live_runs_in
    from pytest_qbench.history.indexer import remove_run_dirs
    from pytest_qbench.history.json_models import IndexOutput
    from pytest_qbench.history.queries import runs_in_order
    from pytest_qbench.history.text import index_lines

    if args.keep_runs < 0:
        raise HistoryError(f"--keep-runs must be 0 (keep all) or more, given: {args.keep_runs}")
    db = configured_db(args.db, Path.cwd())
    qbench_dir = args.dir
    if qbench_dir is not None and not args.sources:  # nothing to index in a missing directory
        qbench_dir = _local_dir(qbench_dir, None)
    if qbench_dir is None:  # files given to a database need no qbench directory
        qbench_dir = _local_dir(None, db if args.sources else None)
    if qbench_dir is not None:
        qbench_dir.mkdir(parents=True, exist_ok=True)
    index = open_index(qbench_dir, db, create=True)
    try:
        # a rebuild indexes the runs in the order they were indexed before, the others by start
        order = runs_in_order(index) if qbench_dir and not args.sources else []
        sources = run_sources(qbench_dir, args.sources, order) if qbench_dir else list(args.sources)
        indexed, skipped = _index_sources(index, sources, strict=bool(args.sources))
        removed = (
            index.write(
                partial(delete_old_runs, keep=args.keep_runs, live=live_runs_in(qbench_dir))
            )
            if args.keep_runs
            else []
        )
        _say_unrecorded_merges(index)
    finally:
        index.close()
    for line in remove_run_dirs(qbench_dir, removed) if qbench_dir else []:
        print(f"qbench: {line}", file=sys.stderr)
    _output(
        args,
        lambda: IndexOutput(index=index.location, indexed=indexed, removed=removed),
        lambda: index_lines(indexed, removed, None if sources else qbench_dir),
    )
    return ERR if skipped else OK


def _index_sources(
    index: Index, sources: list[Path], *, strict: bool
) -> tuple[list[IndexedRunJson], int]:
    """Index each source, one transaction each (``files.index_sources``), said on stderr."""
    from pytest_qbench.history.files import index_sources
    from pytest_qbench.history.json_models import IndexedRunJson

    indexed, skipped = index_sources(index, sources, strict=strict, say=_say)
    done = [
        IndexedRunJson(
            run_id=run.run_id, source=str(source), results=run.results, replaced=run.replaced
        )
        for source, run in indexed
    ]
    return done, skipped


def index_rebuilt(run_dir: Path, report: Any) -> None:
    """Index a run whose reports ``qbench render RUN_DIR`` rebuilt, when ``run_dir`` is in a run
    store (``<qbench dir>/runs/<id>``), in that store's index or the configured database; say
    so in one line. An index that cannot be used is a note on stderr, not an error: the reports
    were rebuilt, and ``qbench index RUN_DIR`` can index the run later.
    """
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.files import results_of
    from pytest_qbench.history.indexer import index_run
    from pytest_qbench.report import store

    runs = run_dir.resolve().parent
    if runs.name != store.RUNS_DIR:
        print(
            f"qbench: {run_dir} is not in a run store (<qbench dir>/runs/<id>), so not indexed; "
            f"'qbench index {run_dir} --dir DIR' indexes it in the store DIR's index"
        )
        return
    try:
        index = open_index(runs.parent, configured_db(None, Path.cwd()), create=True)
        try:
            done = index_run(index, report, partial(results_of, report))
        finally:
            index.close()
    except QBenchError as exc:
        print(
            f"qbench: rebuilt run not indexed: {exc}; 'qbench index {run_dir}' indexes it later",
            file=sys.stderr,
        )
        return
    again = " again" if done.replaced else ""
    print(f"qbench: indexed {done.run_id}{again} in {index.location}: 'qbench runs' lists it")


# --- qbench runs / show ------------------------------------------------------------------------


def _add_runs(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "runs",
        "List the recent runs, one line each",
        "The most recent indexed runs, newest first: id, start (UTC), counts, duration, exit "
        "code, branch.",
        cmd_runs,
    )
    _count(parser, "-n", 20, "How many runs")


def _add_shards(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "shards",
        "How balanced the last sharded run was (--qbench-shard, --qbench-queue)",
        "Each shard of a sharded run: its tests, expected and actual time; then the slowest "
        "shard over the mean and over the ideal (the plan's total over the shards). RUN is one "
        "of the shards' runs (an id, a prefix, 'last', 'last~N'; default: the newest run that "
        "was a shard) or a merged report.json (qbench merge).",
        cmd_shards,
    )
    parser.add_argument("run", metavar="RUN", nargs="?")


def cmd_shards(args: argparse.Namespace) -> int:
    """``qbench shards``."""
    from pytest_qbench.history.shardview import balance_lines
    from pytest_qbench.history.shardview import from_index
    from pytest_qbench.history.shardview import from_report

    if args.run and Path(args.run).is_file():
        balance = from_report(Path(args.run))
    else:
        with _opened(args) as index:
            balance = from_index(index, args.run, args.qbench_dir)
    from pytest_qbench.history.shardview import ShardsOutput

    _output(args, lambda: ShardsOutput.of(balance), lambda: balance_lines(balance))
    return OK


def cmd_runs(args: argparse.Namespace) -> int:
    """``qbench runs``: the runs, then the size of the qbench directory."""
    from pytest_qbench.history.files import store_usage
    from pytest_qbench.history.json_models import RunJson
    from pytest_qbench.history.json_models import RunsOutput
    from pytest_qbench.history.json_models import StoreUsageJson
    from pytest_qbench.history.queries import list_runs
    from pytest_qbench.history.text import runs_lines
    from pytest_qbench.history.text import usage_line

    with _opened(args) as index:
        runs = list_runs(index, args.n)
    usage = store_usage(args.qbench_dir) if args.qbench_dir is not None else None
    _output(
        args,
        lambda: RunsOutput(runs=[RunJson.of(run) for run in runs], store=StoreUsageJson.of(usage)),
        lambda: runs_lines(runs) + (["", usage_line(usage)] if usage else []),
    )
    return OK


def _add_mcp_log(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "mcp-log",
        "List the MCP server's recent tool calls, and totals per tool",
        "The tool calls the MCP server (qbench-mcp) logged in the history index, newest first: "
        "when (UTC), tool, success or the error's type, duration, response size, bytes saved "
        "(raw output the response replaced, less the response) and arguments (secrets "
        "redacted); then, per tool over every logged call: calls, success rate, median "
        "duration, bytes saved.",
        cmd_mcp_log,
    )
    _count(parser, "--limit", 20, "How many recent calls")


def cmd_mcp_log(args: argparse.Namespace) -> int:
    """``qbench mcp-log``."""
    from pytest_qbench.history.json_models import McpLogOutput
    from pytest_qbench.history.json_models import ToolCallJson
    from pytest_qbench.history.json_models import ToolTotalsJson
    from pytest_qbench.history.text import mcp_log_lines
    from pytest_qbench.history.toollog import recent_calls
    from pytest_qbench.history.toollog import tool_totals

    with _opened(args) as index:
        calls = recent_calls(index, args.limit)
        totals = tool_totals(index)
    _output(
        args,
        lambda: McpLogOutput(
            calls=[ToolCallJson.of(call) for call in calls],
            totals=[ToolTotalsJson.of(t) for t in totals],
        ),
        lambda: mcp_log_lines(calls, totals),
    )
    return OK


def _add_show(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "show",
        "Show one run's summary",
        "One indexed run: when, how long, exit code, counts, environment, and its failed and "
        "errored tests. RUN is a run id, a unique prefix of one, 'last' or 'last~N' (N runs "
        "before the last).",
        cmd_show,
    )
    parser.add_argument("run", metavar="RUN")


def cmd_show(args: argparse.Namespace) -> int:
    """``qbench show``."""
    from pytest_qbench.history.json_models import ShowOutput
    from pytest_qbench.history.queries import resolve_run
    from pytest_qbench.history.queries import run_failures
    from pytest_qbench.history.text import run_lines
    from pytest_qbench.report import store

    with _opened(args) as index:
        run = resolve_run(index, args.run)
        failures = run_failures(index, run.run_id)
    if args.run == "last":  # a later run that ran no test is never indexed: say so, not hide it
        try:
            refuse_a_later_run_without_tests(args.qbench_dir, run, "qbench show")
        except HistoryError as exc:
            _say(f"note: {exc}; shown: the last indexed run")
    shown = None
    if args.qbench_dir is not None:  # a run of another machine has its directory there
        report = store.run_dir(args.qbench_dir, run.run_id) / store.REPORT_MD
        shown = report if report.is_file() else None

    _output(
        args,
        lambda: ShowOutput.build(run, failures, str(shown) if shown else None),
        lambda: run_lines(run, failures, shown),
    )
    return OK


# --- qbench diff -------------------------------------------------------------------------------


def _add_diff(sub: SubParsers) -> None:
    from pytest_qbench.history.thresholds import Thresholds

    default = Thresholds()
    parser = _parser(
        sub,
        "diff",
        "Compare two runs: new failures, fixed, slower tests, metric changes",
        "Compare run B with run A (default: the last run with the one before; with one RUN, "
        "that run with the last). Exit status 1 when tests fail or error in B that did not fail "
        "in A (or were not in A): new failures, and known flaky ones too (the verdict of B's "
        "report, on evidence: a pass after rerun, a pass and a fail on one commit, single-run "
        "failures between passes), which are listed apart.",
        cmd_diff,
    )
    parser.add_argument("runs", nargs="*", metavar="RUN", help="A and B (ids, prefixes, last~N)")
    add_slower_options(parser)
    parser.add_argument(
        "--metric-delta",
        type=_non_negative,
        default=default.metric_delta,
        metavar="D",
        help="A metric score changed when it moved by D or more (or passed or failed anew). "
        "Default: %(default)r",
    )


def add_slower_options(parser: argparse.ArgumentParser) -> None:
    """``--slower-pct`` and ``--slower-secs``: when a test counts as slower."""
    from pytest_qbench.history.thresholds import Thresholds

    default = Thresholds()
    parser.add_argument(
        "--slower-pct",
        type=_non_negative,
        default=default.slower_pct,
        metavar="PCT",
        help="A test that passed in both runs is slower when it took PCT percent more... "
        "Default: %(default)r",
    )
    parser.add_argument(
        "--slower-secs",
        type=_non_negative,
        default=default.slower_secs,
        metavar="SECONDS",
        help="...and SECONDS more. Default: %(default)r",
    )


def cmd_diff(args: argparse.Namespace) -> int:
    """``qbench diff``."""
    from pytest_qbench.history.compare import diff_runs
    from pytest_qbench.history.json_models import DiffOutput
    from pytest_qbench.history.queries import resolve_run
    from pytest_qbench.history.text import diff_lines
    from pytest_qbench.history.thresholds import Thresholds

    if len(args.runs) > 2:
        raise HistoryError(
            f"qbench diff compares two runs, given {len(args.runs)}; e.g. qbench diff last~1 last"
        )
    refs = [*args.runs, "last"] if len(args.runs) == 1 else args.runs or ["last~1", "last"]
    thresholds = Thresholds(args.slower_pct, args.slower_secs, args.metric_delta)
    with _opened(args) as index:
        head = resolve_run(index, refs[-1])
        if refs[-1] == "last":  # never an older run than pytest's last
            refuse_a_later_run_without_tests(args.qbench_dir, head, "qbench diff last~1")
            refuse_a_last_run_of_another_commit(head, "qbench diff last~1")
        base = _base_of(index, head) if not args.runs else resolve_run(index, refs[0])
        diff = diff_runs(index, base, head, thresholds)
    _output(args, lambda: DiffOutput.of(diff), lambda: diff_lines(diff))
    return NEW_FAILURES if diff.failed else OK


def _base_of(index: Index, head: RunInfo) -> RunInfo:
    """The run ``qbench diff`` compares ``head`` (the last run) with, none named: the run before
    it (``merges.run_before``: not one of a merged run's own shards).

    Raises:
        HistoryError: there is none; or ``head`` is a merged run and which runs it merged is
            not known.
    """
    from pytest_qbench.history.merges import run_before
    from pytest_qbench.history.queries import resolve_run

    base = run_before(index, head, f"qbench diff {{run}} {head.run_id}")
    if base is not None:
        return base
    resolve_run(index, "last~1")  # none at all: its error
    raise HistoryError(
        f"no run to compare the last run, {head.run_id}, with: every run indexed before it is "
        "a CI shard (or one of the runs it merged); name the two runs ('qbench diff A B')"
    )


# --- qbench flaky / history --------------------------------------------------------------------


def _add_flaky(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "flaky",
        "List the flaky and broken tests of recent runs, with the monitor and the evidence",
        "Each test that failed or passed after a rerun in the last N runs gets a status: broken "
        "(failing every run since a point with the same failure, at least twice), flaky (on "
        "evidence in several runs from a monitor: pass-on-retry, a pass after a rerun; "
        "same-commit, a pass and a fail on one commit; failure-rate, single-run failures "
        "between passes with the same failure), or healthy (a flaky test recovers after a "
        "period without evidence). Runs where most tests failed (outages) are set aside. Listed: "
        "flaky tests (flakiest first), then broken ones, with the monitor that decided, the "
        "score (share of runs with a failure or rerun), the runs failed and the evidence.",
        cmd_flaky,
    )
    _count(parser, "--runs", DEFAULT_RUNS, "Runs looked at (also the monitors' window)")
    _count(parser, "--min-flips", 0, "Flips a test needs to be listed", metavar="K")
    parser.add_argument(
        "--all",
        action="store_true",
        help="List the healthy tests that failed or were rerun too, with why they are not flaky",
    )
    parser.add_argument(
        "--monitor",
        action="append",
        default=[],
        type=_monitor_setting,
        metavar="KEY=VALUE",
        help="A monitor setting, as the ini option qbench_flaky_monitors takes: min_evidence, "
        "min_runs, min_rate, recovery, outage_share, outage_min_failing (repeatable)",
    )


DEFAULT_RUNS = 50
"""``qbench flaky --runs``: the monitors' default window."""


def _monitor_setting(value: str) -> str:
    from pytest_qbench.history.flakiness import parse_monitors

    try:
        parse_monitors([value])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def cmd_flaky(args: argparse.Namespace) -> int:
    """``qbench flaky``."""
    from pytest_qbench.history.flakiness import parse_monitors
    from pytest_qbench.history.flaky_list import list_statuses
    from pytest_qbench.history.queries import runs_held
    from pytest_qbench.history.text import flaky_lines

    monitors = parse_monitors([f"window={args.runs}", *args.monitor])
    with _opened(args) as index:
        found = list_statuses(index, args.runs, args.min_flips, monitors, args.all)
        held = None if found.tests else runs_held(index)
        _say_unrecorded_merges(index)
    _output(
        args,
        lambda: found.model_dump(mode="json"),
        lambda: flaky_lines(found.tests, args.runs, args.min_flips, held),
    )
    return OK


def _add_history(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "history",
        "One test's results across runs",
        "A test's execution summary over its last N results: totalRuns, passedRuns, failedRuns, "
        "lastRunDate, averageExecutionTime (seconds), flakyIndicator, executionTrend (Azure "
        "DevOps' names, used by --json), its outcomes, and whether it is flaky (the rule of "
        "qbench flaky, over these results).",
        cmd_history,
    )
    parser.add_argument("nodeid", metavar="NODEID", help="The test's pytest node id")
    _count(parser, "--runs", 200, "Latest results looked at")


def cmd_history(args: argparse.Namespace) -> int:
    """``qbench history``."""
    from pytest_qbench.history.analysis import execution_summary
    from pytest_qbench.history.flakiness import judge
    from pytest_qbench.history.json_models import HistoryOutput
    from pytest_qbench.history.json_models import PastResultJson
    from pytest_qbench.history.queries import results_of_test
    from pytest_qbench.history.text import history_lines

    with _opened(args) as index:
        results = results_of_test(index, args.nodeid, args.runs)
        _say_unrecorded_merges(index)
    summary = execution_summary(results)
    verdict = judge(results)
    _output(
        args,
        lambda: HistoryOutput(
            **HistoryOutput.fields_of(args.nodeid, summary),
            results=[PastResultJson.of(r) for r in results],
            flaky=verdict.flaky,
            verdict=verdict.reason,
        ),
        lambda: history_lines(args.nodeid, summary, results, verdict),
    )
    return OK


# --- qbench gc ---------------------------------------------------------------------------------

AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _age(value: str) -> timedelta:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` as a duration."""
    match = AGE.match(value.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"must be a number and a unit, s, m, h, d or w (e.g. 30d, 12h, 2w), given: {value!r}"
        )
    age = timedelta(seconds=float(match.group(1)) * AGE_UNITS[match.group(2)])
    if not age:
        raise argparse.ArgumentTypeError(
            f"must be more than 0 (an age of 0 is every run), given: {value!r}; e.g. 30d"
        )
    return age


def _add_gc(sub: SubParsers) -> None:
    parser = _parser(
        sub,
        "gc",
        "Remove old runs from the index and delete their run directories",
        "Take runs out of the history index and delete their run directories (reports, stream, "
        "coverage data) found in the qbench directory: the runs beyond the newest N "
        "(--keep), and those that started more than AGE ago (--older-than); with both, a run "
        "either rule names goes; --older-than also drops the MCP server's tool calls logged before "
        "then. Run directories that are not in the index (a run still going, one that crashed "
        "and was never indexed) are left alone.",
        cmd_gc,
    )
    parser.add_argument(
        "--keep", type=_positive, metavar="N", help="Keep the newest N runs, remove the others"
    )
    parser.add_argument(
        "--older-than",
        type=_age,
        metavar="AGE",
        help="Remove the runs that started more than AGE ago: a number and a unit, s, m, h, d "
        "or w (30d, 12h, 2w)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="Say what would be removed, and remove nothing"
    )


def cmd_gc(args: argparse.Namespace) -> int:
    """``qbench gc``."""
    from pytest_qbench.core.timefmt import to_index_time
    from pytest_qbench.history.files import dir_size
    from pytest_qbench.history.files import store_usage
    from pytest_qbench.history.indexer import live_runs_in
    from pytest_qbench.history.indexer import prune_runs
    from pytest_qbench.history.indexer import remove_run_dirs
    from pytest_qbench.history.json_models import GcOutput
    from pytest_qbench.history.json_models import StoreUsageJson
    from pytest_qbench.history.text import gc_lines
    from pytest_qbench.history.toollog import prune_tool_calls
    from pytest_qbench.report import store

    if args.keep is None and args.older_than is None:
        raise HistoryError(
            "qbench gc needs --keep N, --older-than AGE or both (e.g. qbench gc --keep 50 "
            "--older-than 30d); add --dry-run to see what would go",
            slug="gc-needs-a-rule",
        )
    before = None
    if args.older_than is not None:
        before = to_index_time(datetime.now(timezone.utc) - args.older_than)
    calls = 0
    with _opened(args) as index:
        live = live_runs_in(args.qbench_dir)
        work = partial(
            prune_runs, keep=args.keep or 0, before=before, dry_run=args.dry_run, live=live
        )
        removed = index.read(work) if args.dry_run else index.write(work)
        if before is not None:  # the MCP tool-call log ages out the same way
            prune = partial(prune_tool_calls, before=before, dry_run=args.dry_run)
            calls = index.read(prune) if args.dry_run else index.write(prune)
    qbench_dir = args.qbench_dir
    dirs = [store.run_dir(qbench_dir, run_id) for run_id in removed] if qbench_dir else []
    freed = sum(dir_size(d) for d in dirs if d.is_dir() and not d.is_symlink())
    if qbench_dir is not None and not args.dry_run:
        for line in remove_run_dirs(qbench_dir, removed):
            print(f"qbench: {line}", file=sys.stderr)
    usage = store_usage(qbench_dir) if qbench_dir is not None else None
    _output(
        args,
        lambda: GcOutput(
            index=index.location,
            dry_run=args.dry_run,
            removed=removed,
            freed_bytes=freed,
            tool_calls_removed=calls,
            store=StoreUsageJson.of(usage),
        ),
        lambda: gc_lines(removed, freed, usage, dry_run=args.dry_run, tool_calls=calls),
    )
    return OK
