"""Which runs a merged run (``qbench merge``) combined, and the run to compare a run with.

Since schema 11 the index records which runs went into a merged run when it is indexed (its
report's ``shards``), and every command reads them from there (`known_members`); a merge
indexed before records none, and its members are read from the reports its command line names
(relative to the directory it ran in), as ``report.json`` of the merge records them in
``shards``: each source's run id, and for a source that is itself a merge, its shards' too. The
sources are checked to be
still what was merged: the merged run's start is copied from the earliest of theirs, so sources
overwritten since (a later pipeline's reports at the same paths) give another start, and the
members are then not known. Where they are not known, a run can still be told apart from the
members when its recorded times do not fit in the merged run's: a member's start is never before
the merge's (the earliest of them), its end never after the merge's (the latest). Those times are
copies the merge made, compared as such, not clocks read for an order: the index's one order
(the order runs were first indexed in) decides which run comes before which.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.queries import RunInfo


RUNS_BEFORE = (
    f"SELECT {sql.RUN_FIELDS} FROM runs r, runs h WHERE h.run_id = ? AND r.id < h.id "
    "ORDER BY r.id DESC LIMIT ?"
)
MAX_SCANNED = 1000
"""Runs read back at most, looking for a merged run or a base that is not a shard."""

Members = frozenset[str]


def is_merged(run: RunInfo) -> bool:
    """Whether ``run`` is the merged report of CI shards (``qbench merge``)."""
    return run.command[:2] == ["qbench", "merge"]


def merge_members(run: RunInfo, cache: dict[str, Members | None] | None = None) -> Members | None:
    """The ids of the runs merged into ``run`` (a ``qbench merge``'s run), read from the
    reports its command line names (this module's docstring); ``None`` when that is not known:
    ``run`` is no merge, a source cannot be read, or the sources are no longer those merged.
    ``cache``: the answers already found, by run id."""
    if cache is not None and run.run_id in cache:
        return cache[run.run_id]
    found = _members(run) if is_merged(run) else None
    if cache is not None:
        cache[run.run_id] = found
    return found


def _members(run: RunInfo) -> Members | None:
    members: set[str] = set()
    starts = []
    for path in _source_paths(run):
        held = _runs_in(path)
        if held is None:
            return None
        ids, start = held
        members.update(ids)
        starts.append(start)
    if not starts:
        return None
    try:  # index times: one width, UTC (naive as UTC, as the merge took it), text order is time's
        same = min(to_index_time(start) or "" for start in starts) == to_index_time(run.started_at)
    except ValueError:  # not a time
        return None
    return frozenset(members) if same else None


def _source_paths(run: RunInfo) -> list[Path]:
    """The files a merged run's command named (``qbench merge SOURCE...``), from where it ran."""
    paths = []
    for name in run.command[2:]:
        path = Path(name)
        paths.append(path if path.is_absolute() else Path(run.cwd) / path)
    return paths


def sources_written(run: RunInfo) -> int | None:
    """When the last of the reports a merged run combined was written (nanoseconds, the file
    system's clock: each source's ``report.json``, else its stream); ``None`` when ``run`` is
    no merge or a source cannot be found."""
    from pytest_qbench.report.store import REPORT_JSON
    from pytest_qbench.report.store import STREAM_NAME

    if not is_merged(run) or len(run.command) < 3:
        return None
    written = []
    for path in _source_paths(run):
        try:
            if path.is_dir():
                report = path / REPORT_JSON
                path = report if report.is_file() else path / STREAM_NAME
            written.append(path.stat().st_mtime_ns)
        except OSError:
            return None
    return max(written)


def _runs_in(path: Path) -> tuple[list[str], str] | None:
    """The run ids a merged source holds (its run's, and a merge's shards') and its run's
    recorded start; ``None`` when it cannot be read as a report or a run directory."""
    from pytest_qbench.report.store import REPORT_JSON
    from pytest_qbench.report.store import STREAM_NAME

    try:
        if path.is_dir():
            if (path / REPORT_JSON).is_file():
                report: Any = json.loads((path / REPORT_JSON).read_text(encoding="utf-8"))
            else:  # a run that died: its stream's start record
                with (path / STREAM_NAME).open(encoding="utf-8") as stream:
                    report = json.loads(stream.readline())
        else:
            report = json.loads(path.read_text(encoding="utf-8"))
        run = report["run"]
        ids = [str(run["run_id"])]
        ids += [str(shard["run"]["run_id"]) for shard in report.get("shards") or ()]
        return ids, str(run["started_at"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def could_hold(merged: RunInfo, run: RunInfo) -> bool:
    """Whether ``run``'s recorded times fit in ``merged``'s, as those of a run merged into it
    must (this module's docstring): ``False`` means it is certainly not one of its members."""
    if run.started_at < merged.started_at:
        return False
    return (
        merged.completed_at is None
        or run.completed_at is None
        or (run.completed_at <= merged.completed_at)
    )


def is_member(
    cursor: Cursor, merged: RunInfo, run: RunInfo, cache: dict[str, Members | None]
) -> bool | None:
    """Whether ``run`` is one of the runs merged into ``merged`` (`known_members`): ``None``
    when that cannot be told (the members are not known, and ``run``'s times fit in the
    merge's)."""
    members = known_members(cursor, merged, cache)
    if members is not None:
        return run.run_id in members
    return None if could_hold(merged, run) else False


def run_before(index: Index, head: RunInfo, naming: str) -> RunInfo | None:
    """The run to compare ``head`` with, by the index's one order: the run indexed before it;
    when ``head`` is not a CI shard, the one before it that is not a CI shard either (one shard
    of a pipeline is not its whole run), and for a merged run (``qbench merge``) none of the
    runs merged into it (this module's docstring). ``None`` when there is none.

    Raises:
        HistoryError: ``head`` is a merged run whose members are not known and a run before it
            may be one of them; the message ends with ``naming`` (the command that names the
            base), ``{run}`` in it replaced by that run's id.
    """

    def work(cursor: Cursor) -> RunInfo | None:
        cursor.execute(RUNS_BEFORE, (head.run_id, MAX_SCANNED))
        runs = [RunInfo.from_row(row) for row in cursor.fetchall()]
        return first_other(cursor, head, runs, naming)

    return index.read(work)


def known_members(cursor: Cursor, run: RunInfo, cache: dict[str, Members | None]) -> Members | None:
    """The ids of the runs merged into ``run``, by one rule for every command that asks: what
    the index recorded when the merge was indexed (its report's ``shards``:
    ``sql.MERGE_MEMBERS_TABLE``), which holds wherever its sources are now (CI artifacts
    expire); else, for a merge that recorded none (indexed before schema 11), read from its
    sources (`merge_members`). ``None`` when not known. ``cache``: the answers found so far, by
    run id (this adds to it)."""
    if run.run_id not in cache and is_merged(run):
        cursor.execute(sql.MEMBERS_OF_RUN, (run.run_id,))
        recorded = frozenset(str(row[0]) for row in cursor.fetchall())
        if recorded:
            cache[run.run_id] = recorded
    return merge_members(run, cache)


def first_other(
    cursor: Cursor,
    head: RunInfo,
    runs: Iterable[RunInfo],
    naming: str,
    cache: dict[str, Members | None] | None = None,
) -> RunInfo | None:
    """The first of ``runs`` (newest first) to compare ``head`` with (`run_before`): any, when
    ``head`` is a CI shard; else the first that is not a CI shard, nor one of the runs merged
    into ``head`` (`known_members`); ``None`` when there is none. ``cache``: as
    `known_members`'s.

    Raises:
        HistoryError: as `run_before`.
    """
    merged = head.shard is None and is_merged(head)
    cache = {} if cache is None else cache
    for run in runs:
        if head.shard is not None:
            return run
        if run.shard is not None:
            continue
        member = is_member(cursor, head, run, cache) if merged else False
        if member is None:
            raise HistoryError(_unknown_members(head, run, naming))
        if not member:
            return run
    return None


def _unknown_members(head: RunInfo, run: RunInfo, naming: str) -> str:
    return (
        f"run {head.run_id} is a merge of runs ('{' '.join(head.command)}'), and the reports it "
        f"names cannot be read in {head.cwd} as they were merged (gone, or overwritten since), "
        f"so whether run {run.run_id}, indexed before it, is one of them is not known: name the "
        f"run to compare it with ('{naming.format(run=run.run_id)}' if it is not one of them)"
    )


UNRECORDED_MERGES = f"""SELECT {sql.RUN_FIELDS} FROM runs r WHERE r.command LIKE ?
    AND NOT EXISTS (SELECT 1 FROM merge_members m WHERE m.merge_ref = r.id) ORDER BY r.id"""
"""The runs whose command may be ``qbench merge`` (``?``: ``MERGE_COMMAND``) that record no
member: merges indexed before schema 11."""
MERGE_COMMAND = json.dumps(["qbench", "merge"])[:-1] + "%"
"""How the ``runs`` row of a merged run's command begins (``indexer.run_row``'s JSON)."""
NAMED = 5
"""Unrecorded merged runs named in `unrecorded_note`; the rest are counted."""


def unrecorded_merges(index: Index) -> list[RunInfo]:
    """The merged runs whose members the index does not record (indexed before schema 11: the
    migration cannot fill them in, as the index holds neither a merge's report nor its shards,
    only the paths its command named, on the machine it ran on): their shards' results count
    twice in the windows of runs (``sql.COUNTED``) until their reports are indexed again."""

    def work(cursor: Cursor) -> list[RunInfo]:
        cursor.execute(UNRECORDED_MERGES, (MERGE_COMMAND,))
        return [run for run in map(RunInfo.from_row, cursor.fetchall()) if is_merged(run)]

    return index.read(work)


def unrecorded_note(index: Index) -> str | None:
    """What to tell a user whose index holds merged runs with no recorded members
    (`unrecorded_merges`), and how to fix it; ``None`` when there are none."""
    runs = unrecorded_merges(index)
    if not runs:
        return None
    named = ", ".join(run.run_id for run in runs[:NAMED])
    more = f" and {len(runs) - NAMED} more" if len(runs) > NAMED else ""
    return (
        f"{plural(len(runs), 'merged run')} indexed before index schema 11 ({named}{more}): "
        "the index does not know which runs each merged, so the results of those it holds "
        "count twice (the shard's and the merge's) in qbench flaky, qbench history, the "
        "quarantine and failing tests' histories; index the report.json that 'qbench merge' "
        "wrote again ('qbench index merged/report.json') to record them (where that file is "
        "gone, they count twice until the merge leaves the history: 'qbench gc')"
    )
