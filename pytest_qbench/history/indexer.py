"""Indexing a run: its report's records become rows, in one transaction; retention.

Works on records (plain JSON data, as ``report.json`` holds it), so that the pytest process
indexes its run without importing pydantic. Results are read in batches from an iterable (the
run's stream), never all held at once.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import field
from itertools import chain
from pathlib import Path
from types import ModuleType
from typing import Any
from typing import cast

from pytest_qbench.core.clock import utc_now
from pytest_qbench.core.gc_pause import paused_gc
from pytest_qbench.core.records import dataclass
from pytest_qbench.core.text import error_line
from pytest_qbench.core.text import message_line
from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.report.store import RUNS_DIR
from pytest_qbench.report.store import run_in_progress
from pytest_qbench.report.verdict import recording_errors


Record = dict[str, Any]
Passed = tuple[str, str, float, "float | None", "float | None"]
"""A result that passed or was skipped, read from a stream without making a record of it (or
kept by the stream's writer: ``store.Written``): node id, outcome, duration, setup and teardown
seconds (``None``: not in its durations). Its row has no reruns, fingerprint, message or
metrics."""


class Passes:
    """A part of a run's results whose node ids are distinct, kept by the stream's writer
    (``store.Written``): those that passed or were skipped as columns, in order (their rows
    made by ``zip`` in C, not a tuple and a loop of Python a result: issue 28), and the others
    as records. A plain class: a ``NamedTuple`` or a dataclass costs 0.8 to 1.7 M
    instructions to make when the module is imported, in every run."""

    __slots__ = ("nodeids", "order", "others", "outcomes", "seconds", "setup", "teardown")

    def __init__(
        self,
        nodeids: list[str],
        outcomes: Sequence[str] | None,
        times: Sequence[Sequence[float]],
        others: list[Record],
        order: list[str],
    ) -> None:
        self.nodeids = nodeids
        self.outcomes = outcomes
        """Each one's outcome; ``None``: all passed."""
        self.seconds, self.setup, self.teardown = times
        """Each one's duration, setup and teardown seconds."""
        self.others = others
        """The part's other results (failed, rerun, scored...), as records."""
        self.order = order
        """Every node id of the part, in its order (new tests are numbered in it)."""


MAX_EXAMPLE = 300
"""Characters of a fingerprint's example message that are stored."""
RESULT_BATCH = 100
"""Results parsed and written per batch: what indexing holds in memory at once, whatever the
run's size (more per batch saves few instructions and holds more)."""
SAFE_RUN_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A run directory's name that is safe to read or remove (a pattern compiled at first use)."""


@dataclass
class Indexed:
    """What indexing one run did."""

    run_id: str
    results: int = 0
    failing: list[tuple[str, str | None]] = field(default_factory=list)
    """Node id and fingerprint of every failed or errored test, in order."""
    removed: list[str] = field(default_factory=list)
    """Runs retention took out of the index (their directories are for the caller to delete)."""
    replaced: bool = False
    """The run was in the index already, and was indexed again."""


def index_run(
    index: Index,
    report: Record,
    results: Callable[[], Iterable[Record | Passed]],
    *,
    keep_runs: int = 0,
    deselected: Sequence[str] = (),
    live: Live | None = None,
    parts: Callable[[], Iterable[Passes | list[Record | Passed]]] | None = None,
) -> Indexed:
    """Index ``report``'s run with ``results()``'s results, in one transaction.

    A run already in the index is replaced (indexing is idempotent), in its row: it keeps its
    place among the runs (their order is the order they were first indexed in: ``sql.
    LIST_RUNS``), so that a report indexed again (``qbench render``, ``qbench index``) does not
    become the last run. With ``keep_runs`` above 0, the oldest runs beyond that many leave the
    index in the same transaction.

    Args:
        index: The index.
        report: A ``TestReport`` record (its ``results`` are ignored: see ``results``).
        results: Makes a new iterable over every result record (or ``Passed`` tuple: a
            stream's passing line read in part); called again if the transaction has to be
            retried.
        keep_runs: Runs to keep; 0 keeps all.
        deselected: The node ids the run deselected, when known.
        live: Whether a run is still going; retention leaves those (default: none is).
        parts: Makes the results that come before ``results()``'s, a part at a time (a
            stream its writer kept: ``session_end.written_parts``).
    """
    row = run_row(report)
    run_id = row[0]

    def work(cursor: Cursor) -> Indexed:
        kept = _empty_run(cursor, run_id)
        done = Indexed(run_id, replaced=kept is not None)
        if kept is not None:  # its row stays, its place kept; the set it deselected may be none's
            cursor.execute(sql.UPDATE_RUN, (*row, kept))
            cursor.execute(sql.DELETE_ORPHAN_DESELECTION_SETS)
            run_ref = kept
        else:
            run_ref = index.insert_id(cursor, sql.INSERT_RUN, row)
        batches: Iterable[Passes | list[Record | Passed]] = sql.batches(results(), RESULT_BATCH)
        if parts is not None:
            batches = chain(parts(), batches)
        _insert_results(index, cursor, run_ref, batches, done)
        errors: list[Record | Passed] = list(collection_error_results(report))
        _insert_results(index, cursor, run_ref, sql.batches(errors, RESULT_BATCH), done)
        _insert_deselected(cursor, run_ref, deselected)
        _insert_diagnostics(cursor, run_ref, report)
        _insert_members(cursor, run_ref, report)
        if keep_runs:
            done.removed = delete_old_runs(cursor, keep_runs, run_id, live or _never)
        return done

    with paused_gc():
        return index.write(work)


def run_row(report: Record) -> tuple[Any, ...]:
    """The ``runs`` row of a report record, in ``sql.RUN_COLUMNS`` order."""
    run, summary = report["run"], report["summary"]
    environment = report.get("environment") or {}
    ci = environment.get("ci") or {}
    values = {
        "run_id": run["run_id"],
        "tool": run.get("tool") or "pytest",
        "started_at": to_index_time(run["started_at"]),
        "completed_at": to_index_time(run.get("completed_at")),
        "exit_code": run.get("exit_code"),
        "interrupted": int(bool(run.get("interrupted"))),
        "cwd": run.get("cwd") or "",
        "command": json.dumps(run.get("command") or []),
        "duration": float(summary.get("duration", 0.0)),
        "branch": ci.get("branch"),
        "commit_sha": ci.get("commit"),
        "ci_provider": ci.get("provider"),
        "build_url": ci.get("build_url"),
        "python": environment.get("python"),
        "platform": environment.get("platform"),
        "qbench_version": environment.get("qbench_version"),
        "indexed_at": to_index_time(utc_now()),
        "shard": shard_label(run.get("shard")),
        "recording_errors": len(recording_errors(report)),
        "other_counts": other_counts_text(summary.get("other")),
    }
    for name in sql.COUNT_COLUMNS:
        values[name] = int(summary.get(name, 0))
    for name in sql.SUBTEST_COLUMNS:  # a report written before they were counted: not known
        values[name] = None if summary.get(name) is None else int(summary[name])
    for name in sql.STOP_COLUMNS:  # not recorded (an older report, another runner): not known
        values[name] = None if run.get(name) is None else int(run[name])
    return tuple(values[name] for name in sql.RUN_COLUMNS)


def other_counts_text(other: Record | None) -> str | None:
    """A run's counts under plugins' own words as the ``runs.other_counts`` column holds them
    (``sql.OTHER_COUNTS_SCHEMA``): a JSON object in the closing line's order, those of 0 left
    out; ``None`` when there are none."""
    kept = {str(word): int(count) for word, count in (other or {}).items() if count}
    return json.dumps(kept, ensure_ascii=False) if kept else None


def shard_label(shard: Record | None) -> str | None:
    """How a run's shard is shown and stored: ``2/4``, ``queue NAME``; ``None``: not a shard."""
    if not shard:
        return None
    if shard.get("queue"):
        return f"queue {shard['queue']}"
    return f"{shard.get('index')}/{shard.get('count')}"


def delete_run(cursor: Cursor, run_id: str) -> bool:
    """Take ``run_id`` (its results and metrics) out of the index; return whether it was in."""
    return _delete_run(cursor, run_id)


def _delete_run(cursor: Cursor, run_id: str) -> bool:
    ref = _empty_run(cursor, run_id)
    if ref is not None:
        cursor.execute(sql.DELETE_RUN, (ref,))
    return ref is not None


def _empty_run(cursor: Cursor, run_id: str) -> int | None:
    """Delete every row of ``run_id`` but its own (results, metrics, ...); its ``id``, or
    ``None`` when it is not in the index."""
    cursor.execute(sql.FIND_RUN_REF, (run_id,))
    found = cursor.fetchone()
    if found is None:
        return None
    ref = int(found[0])
    for statement in sql.DELETE_RUN_ROWS:
        if statement != sql.DELETE_RUN:
            cursor.execute(statement, (ref,))
    return ref


def _insert_results(
    index: Index,
    cursor: Cursor,
    run_ref: int,
    batches: Iterable[Passes | list[Record | Passed]],
    done: Indexed,
) -> None:
    with_metrics: set[int] = set()
    new = False  # the last batch's tests were all new
    for batch in batches:
        if type(batch) is Passes:
            ids, new = _test_ids(index, cursor, batch.order, new)
            _insert_batch(index, cursor, run_ref, batch.others, ids, done, with_metrics)
            _insert_passes(index, cursor, run_ref, batch, ids, with_metrics)
            done.results += len(batch.nodeids)
            continue
        items = cast("list[Record | Passed]", batch)
        nodeids = [r[0] if isinstance(r, tuple) else r["nodeid"] for r in items]
        ids, new = _test_ids(index, cursor, nodeids, new)
        _insert_batch(index, cursor, run_ref, items, ids, done, with_metrics)


def _insert_passes(
    index: Index,
    cursor: Cursor,
    run_ref: int,
    batch: Passes,
    ids: dict[str, int],
    with_metrics: set[int],
) -> None:
    """The rows of ``batch``'s columns (after its other results': the order rows were
    inserted in before)."""
    refs = list(map(ids.__getitem__, batch.nodeids))
    if with_metrics:  # the same node id scored before in this run: its metrics go
        again = [(run_ref, ref) for ref in refs if ref in with_metrics]
        if again:
            cursor.executemany(sql.DELETE_METRICS_OF_TEST, again)
    # as _result_row: -0.0 is 0.0 (a time of 0 is rare: the columns are then made again)
    times = [
        [value or 0.0 for value in column] if 0.0 in column else column
        for column in (batch.seconds, batch.setup, batch.teardown)
    ]
    index.insert_passes(cursor, run_ref, refs, batch.outcomes, times)


def _insert_batch(
    index: Index,
    cursor: Cursor,
    run_ref: int,
    batch: Sequence[Record | Passed],
    ids: dict[str, int],
    done: Indexed,
    with_metrics: set[int],
) -> None:
    # by test: the same node id twice (--keep-duplicates): the last one counts, and one
    # statement inserting a row twice would be refused by PostgreSQL
    rows: dict[int, tuple[Any, ...]] = {}  # sql.INSERT_RESULT's
    passed: dict[int, tuple[Any, ...]] = {}  # sql.PASSED_ROW's
    prints: dict[str, tuple[str, str, str, str]] = {}
    metrics: dict[int, list[tuple[Any, ...]]] = {}
    for result in batch:
        if isinstance(result, tuple):  # the row straight from the stream's line
            nodeid, outcome, seconds, setup, teardown = result
            test_ref = ids[nodeid]
            # as _result_row: -0.0 and a phase not there are 0.0
            row = (run_ref, test_ref, outcome, seconds or 0.0, setup or 0.0, teardown or 0.0)
            passed[test_ref] = row
            if rows and test_ref in rows:  # read before in this batch
                del rows[test_ref]
            if test_ref in with_metrics:  # the same node id scored before in this run
                metrics[test_ref] = []
            continue
        test_ref = ids[result["nodeid"]]
        failing = result["outcome"] in sql.FAILING
        failed = result if failing else _failed_attempt(result)
        fp = example = None
        if failed is not None:
            printed = _fingerprint_row_of(failed)
            if printed is not None:
                fp = printed[0]
                prints[fp] = printed
                example = printed[3]  # the failing result's own message, when it failed
        if failing:
            done.failing.append((result["nodeid"], fp))
        rows[test_ref] = _result_row(run_ref, test_ref, result, fp, example)
        passed.pop(test_ref, None)
        if result.get("metric_results") or test_ref in with_metrics:
            metrics[test_ref] = _metric_rows(run_ref, test_ref, result)
    if rows:
        index.insert_rows(cursor, sql.INSERT_RESULT, list(rows.values()))
    if passed:
        index.insert_passed(cursor, list(passed.values()))
    if prints:
        cursor.executemany(sql.INSERT_FINGERPRINT, list(prints.values()))
    if metrics:
        again = [(run_ref, ref) for ref in metrics if ref in with_metrics]
        if again:  # the same node id twice in one run: the last one counts
            cursor.executemany(sql.DELETE_METRICS_OF_TEST, again)
        cursor.executemany(sql.INSERT_METRIC, [row for rows in metrics.values() for row in rows])
        with_metrics.update(metrics)
    done.results += len(batch)


def collection_error_results(report: Record) -> list[Record]:
    """The run's collection errors as result records of outcome ``error`` under the collector's
    node id (``tests/test_x.py``), so that ``qbench diff``, ``pr-comment`` and the MCP tools
    name a module that fails to import as they name an erroring test.

    Such a collector never passes, so it is never judged flaky, and it is no test a run
    collects, so no shard plan schedules it.
    """
    found: dict[str, Record] = {}
    for diagnostic in report.get("collection_errors") or []:
        nodeid = diagnostic.get("nodeid") or diagnostic.get("file")
        if not nodeid or nodeid in found:
            continue
        error_type, message = _collection_error(str(diagnostic.get("message") or ""))
        failure = {
            "error_type": error_type,
            "error_message": message,
            "file": diagnostic.get("file"),
            "line": diagnostic.get("line"),
        }
        found[nodeid] = {
            "nodeid": nodeid,
            "file": diagnostic.get("file") or "",
            "outcome": "error",
            "duration": 0.0,
            "failure": failure,
        }
    return list(found.values())


def _collection_error(message: str) -> tuple[str, str]:
    """The error type and message of pytest's collection error text, from the line naming its
    cause (``ModuleNotFoundError: No module named 'x'``); ``CollectionError`` when no line
    names an exception."""
    line = error_line(message, MAX_EXAMPLE)
    named, colon, rest = line.partition(": ")
    if colon and re.match(_EXCEPTION_NAME, named):
        return named, rest
    return "CollectionError", line


_EXCEPTION_NAME = r"^[A-Za-z_][\w.]*$"  # compiled at the first collection error


def _insert_deselected(cursor: Cursor, run_ref: int, nodeids: Sequence[str]) -> None:
    """Refer the run to the set of ids it deselected, stored when no run has it yet."""
    if not nodeids:
        return
    from pytest_qbench.history.deselection import DeselectionSet  # few runs deselect

    found = DeselectionSet.of(nodeids)
    cursor.execute(sql.HAS_DESELECTION_SET, (found.digest,))
    if cursor.fetchone() is None:
        cursor.execute(sql.INSERT_DESELECTION_SET, (found.digest, found.count, found.encoded()))
    cursor.execute(sql.INSERT_RUN_DESELECTION, (run_ref, found.digest))


CHECKED_STATUSES = ("clean", "failed")
"""Statuses of a checker that ran to the end: its diagnostics are all it found."""


def merge_member_ids(report: Record) -> list[str]:
    """The run ids a merged report holds (``qbench merge``: its ``shards``, a merge of merges'
    every shard), without its own; none for a report that is no merge."""
    own = report["run"]["run_id"]
    ids = (str(shard["run"]["run_id"]) for shard in report.get("shards") or ())
    return [run_id for run_id in dict.fromkeys(ids) if run_id != own]


def _insert_members(cursor: Cursor, run_ref: int, report: Record) -> None:
    """Record the runs a merged run holds (``sql.MERGE_MEMBERS_TABLE``): the windows of runs
    leave them out, whether they were indexed before the merge or are indexed after it.

    A merge of merged reports records their shards, not them: an indexed merge whose shards
    are all among this one's is held by it too (the last indexed of two merges of the same
    shards counts), and this one is held by an indexed merge of more shards than its own."""
    members = merge_member_ids(report)
    if not members:
        return
    held = set(members)
    cursor.execute(sql.OTHER_MERGES, (run_ref,))
    others: dict[tuple[int, str], set[str]] = {}
    for ref, run_id, member in cursor.fetchall():
        others.setdefault((int(ref), str(run_id)), set()).add(str(member))
    own = report["run"]["run_id"]
    merges = {run_id for _ref, run_id in others} | {own}
    rows = [(run_ref, run_id) for run_id in members]
    for (ref, run_id), recorded in others.items():
        theirs = recorded - merges  # their shards: not the merges they hold
        if theirs <= held:
            rows.append((run_ref, run_id))
        elif held < theirs:
            rows.append((ref, own))
    for row in rows:
        cursor.execute(sql.INSERT_MERGE_MEMBER, row)


def checked_tools(report: Record) -> list[str]:
    """The static checkers that ran to the end in the run of a ``TestReport`` record."""
    tools = [
        str(check["run"]["tool"])
        for check in report.get("checks") or []
        if check.get("status") in CHECKED_STATUSES
    ]
    return list(dict.fromkeys(tools))


def _insert_diagnostics(cursor: Cursor, run_ref: int, report: Record) -> None:
    """The run's checkers and the fingerprints of their diagnostics (issue 13.5)."""
    tools = checked_tools(report)
    cursor.executemany(sql.INSERT_CHECKED, [(run_ref, tool) for tool in tools])
    diagnostics = report.get("diagnostics") or []
    if not diagnostics:
        return
    from pytest_qbench.history.fingerprint import diagnostic_fingerprint_of

    rows: dict[str, list[Any]] = {}
    for diagnostic in diagnostics:
        if diagnostic.get("tool") not in tools:
            continue
        fp = diagnostic_fingerprint_of(diagnostic)
        if fp in rows:
            rows[fp][-1] += 1
            continue
        rows[fp] = [
            run_ref,
            fp,
            str(diagnostic["tool"]),
            str(diagnostic.get("severity") or ""),
            diagnostic.get("code"),
            diagnostic.get("file"),
            diagnostic.get("line"),
            _example(diagnostic.get("message")),
            1,
        ]
    values = [tuple(row) for row in rows.values()]
    for batch in sql.batches(values):
        cursor.executemany(sql.INSERT_DIAGNOSTIC, batch)


def _test_ids(
    index: Index, cursor: Cursor, nodeids: list[str], new: bool
) -> tuple[dict[str, int], bool]:
    """The ids of ``nodeids`` (at most ``sql.BATCH``), those not in the index yet added, and
    whether all were new. ``new``: the last batch's were, so these are inserted first (their
    ids without a ``SELECT`` when all are new), not looked up first (what a run of tests the
    index knows needs)."""
    wanted = list(dict.fromkeys(nodeids))
    if new:  # the last batch's tests were all new (a new index, say): these are likely too
        ids = index.insert_tests(cursor, wanted)
        if ids is not None:
            return ids, True
        return index.known_tests(cursor, wanted), False
    ids = index.known_tests(cursor, wanted)
    missing = [nodeid for nodeid in wanted if nodeid not in ids]
    if missing:
        added = index.insert_tests(cursor, missing)
        ids.update(index.known_tests(cursor, missing) if added is None else added)
    return ids, len(missing) == len(wanted)


def _failed_attempt(result: Record) -> Record | None:
    """For a test that passed after reruns, its first failed attempt (with the test's file):
    its fingerprint is kept on the passing result, the evidence the ``pass-on-retry`` monitor
    needs that the same failure passes on rerun."""
    if not result.get("flaky"):
        return None
    for attempt in result.get("attempts") or []:
        if isinstance(attempt, dict) and attempt.get("failure"):
            return {"failure": attempt["failure"], "file": result.get("file")}
    return None


def _result_row(
    run_ref: int, test_ref: int, result: Record, fp: str | None, example: str | None = None
) -> tuple[Any, ...]:
    """``example``: its failure's message as ``_example`` gives it, when known."""
    failure = result.get("failure") if result["outcome"] in sql.FAILING else None
    phases = result.get("durations") or {}
    if failure and example is None:
        example = _example(failure.get("error_message"))
    return (
        run_ref,
        test_ref,
        result["outcome"],
        float(result.get("duration") or 0.0),
        int(result.get("reruns") or 0),
        int(bool(result.get("flaky"))),
        fp,
        example if failure else None,
        float(phases.get("setup") or 0.0),
        float(phases.get("teardown") or 0.0),
    )


def _fingerprint_row_of(failed: Record) -> tuple[str, str, str, str] | None:
    """The ``fingerprints`` row of a failure (its fingerprint first: ``fingerprint_of``);
    ``None`` when it has none. Its location and message made once for both (the row's own
    spellings of a missing file and error type kept). Its module imported by the first
    failure (a green run's index needs none), then kept (``_fingerprints``): two ``from``
    imports a failure cost about 4 us (issue 28)."""
    failure = failed.get("failure")
    if not failure:
        return None
    fingerprints = _fingerprints or _import_fingerprints()
    file, error_type = failed.get("file", ""), failure.get("error_type", "")
    location = fingerprints.failure_location(failure, str(file))
    fp = fingerprints.fingerprint(str(error_type), location, str(failure.get("error_message", "")))
    return (
        fp,
        str(error_type) if error_type else "",
        location if file else fingerprints.failure_location(failure, ""),
        _example(failure.get("error_message")),
    )


_fingerprints: ModuleType | None = None
"""``history.fingerprint``, once a failure has imported it."""


def _import_fingerprints() -> ModuleType:
    global _fingerprints
    from pytest_qbench.history import fingerprint

    _fingerprints = fingerprint
    return fingerprint


def _example(message: object) -> str:
    """A failure message on one line (``core.text.message_line``), bounded."""
    return message_line(str(message or ""), MAX_EXAMPLE)


def _metric_rows(run_ref: int, test_ref: int, result: Record) -> list[tuple[Any, ...]]:
    rows = []
    seqs: dict[str, int] = {}
    for metric in result.get("metric_results") or []:
        name = str(metric["metric_name"])
        seqs[name] = seq = seqs.get(name, -1) + 1
        score, threshold = metric.get("score"), metric.get("threshold")
        rows.append(
            (
                run_ref,
                test_ref,
                name,
                seq,
                None if score is None else float(score),
                None if threshold is None else float(threshold),
                int(bool(metric.get("passed"))),
            )
        )
    return rows


# --- retention -------------------------------------------------------------------------------


Live = Callable[[str], bool]
"""Whether the run of an id is still going (or ending) here: retention leaves it alone."""


def _never(_run_id: str) -> bool:
    return False


def live_runs_in(qbench_dir: Path | None) -> Live:
    """Whether a run is going in ``qbench_dir``: ``store.run_in_progress`` of its run directory
    there (locked by its run, which holds the lock until after it indexed itself, or marked by
    its live process). Another machine's runs (no directory here) are never live."""
    if qbench_dir is None:
        return _never
    runs = qbench_dir / RUNS_DIR

    def live(run_id: str) -> bool:
        return bool(re.match(SAFE_RUN_ID, run_id)) and run_in_progress(runs / run_id)

    return live


def delete_old_runs(cursor: Cursor, keep: int, spare: str = "", live: Live = _never) -> list[str]:
    """Take the runs beyond the newest ``keep`` out of the index (never ``spare``, nor a run
    still going: ``live``); return their ids. Tests and fingerprints no run refers to any more
    go too."""
    cursor.execute(sql.RUNS_BEYOND, (spare, keep))
    old = {ref: str(run_id) for ref, run_id in cursor.fetchall()}
    return _delete_runs(cursor, old, live)


def prune_runs(
    cursor: Cursor,
    keep: int,
    before: str | None,
    *,
    dry_run: bool = False,
    live: Live = _never,
) -> list[str]:
    """``qbench gc``: take the runs beyond the newest ``keep`` (0: no such limit), and those
    started before ``before`` (an index time; ``None``: no such limit), out of the index; return
    their ids, in the order they were indexed. A run still going (``live``) stays. With
    ``dry_run``, only find them."""
    old: dict[int, str] = {}
    if keep:
        cursor.execute(sql.RUNS_BEYOND, ("", keep))
        old.update(cursor.fetchall())
    if before is not None:
        cursor.execute(sql.RUNS_STARTED_BEFORE, (before,))
        old.update(cursor.fetchall())
    if dry_run:
        return [str(old[ref]) for ref in sorted(old) if not live(str(old[ref]))]
    return _delete_runs(cursor, old, live)


def _delete_runs(cursor: Cursor, old: dict[int, str], live: Live) -> list[str]:
    """Delete the runs ``old`` (``id`` to run id) but those still going; return the ids deleted,
    in the order they were indexed.

    Called inside the write transaction: a run that ends meanwhile waits for it to index
    itself, and holds its directory's lock until it has, so a run seen here unlocked has ended,
    and one seen locked keeps both its index rows and its directory (a later retention takes
    them together).
    """
    gone = [ref for ref in sorted(old) if not live(str(old[ref]))]
    for ref in gone:
        for statement in sql.DELETE_RUN_ROWS:
            cursor.execute(statement, (ref,))
    if gone:
        cursor.execute(sql.DELETE_ORPHAN_TESTS)
        cursor.execute(sql.DELETE_ORPHAN_FINGERPRINTS)
        cursor.execute(sql.DELETE_ORPHAN_DESELECTION_SETS)
        cursor.execute(sql.DELETE_OLD_QUEUES)
    return [str(old[ref]) for ref in gone]


def remove_run_dirs(qbench_dir: Path, run_ids: Iterable[str]) -> list[str]:
    """Delete ``<qbench_dir>/runs/<id>`` of each run id; return the problems, one line each.

    Only directories directly inside ``runs/`` whose names are safe run ids are touched, and
    never the directory of a run in progress (``store.run_in_progress``).
    """
    problems = []
    runs = qbench_dir / RUNS_DIR
    for run_id in run_ids:
        target = runs / run_id
        if not re.match(SAFE_RUN_ID, run_id) or not target.is_dir() or target.is_symlink():
            continue
        if run_in_progress(target):  # its run goes on: it is indexed again when it ends
            problems.append(f"did not delete old run {target}: it is still running")
            continue
        try:
            shutil.rmtree(target)
        except OSError as exc:
            problems.append(f"could not delete old run {target}: {exc.strerror or exc}")
    return problems
