"""Naming a run: ``last``, ``last~N`` (N runs before the last), a run id, or a unique prefix of
one. One rule for every command and MCP tool: runs are in the history index's one order (the
order they were first indexed in: a run whose clock was wrong is not "last" for ever), newest
first, never by their names (``ci-…`` ids do not sort by time) nor by file times.

`choose` applies the rule to runs in that order; the history index gives its runs ordered
(``history.queries.resolve_run``), and `find_run_dir` orders the run store's directories the
same way (`in_run_order`): the runs the index holds in its order, each run it does not hold
(not indexed yet, still going) after the last indexed run that started before it, by the start
time each run recorded. Without an index, every run is ordered by its recorded start.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from pathlib import Path

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.report import store


LAST = re.compile(r"^last(?:~(\d+))?$")
MAX_SHOWN = 5
"""Candidates an ambiguous prefix's error lists."""
_START_LINE = 1 << 20
"""Bytes of a stream's first line read for its start time (the start record is a few KB)."""
MCP_META = "mcp-run.json"
"""The run as the MCP server started it (``mcp.runs.META_NAME``): a run whose pytest wrote
nothing still has its start time there."""


@dataclass(frozen=True)
class RunName:
    """A run that a reference may name."""

    run_id: str
    test_run: bool = True
    """A test run (``last`` names only these), not a ``qbench check`` run or a generation."""


def choose(ref: str, runs: Sequence[RunName], where: str, listing: str) -> str:
    """The id of the run ``ref`` names among ``runs`` (newest first).

    Args:
        ref: ``last``, ``last~N``, a run id or a prefix of one.
        runs: The runs, newest first (in the index's one order: `in_run_order`).
        where: Where the runs are, for messages (``.qbench/index.sqlite``).
        listing: What lists the runs, for messages (``'qbench runs'``).

    Raises:
        HistoryError: no such run (slug ``run-not-found``), or a prefix of several
            (``run-ambiguous``, naming them).
    """
    match = LAST.match(ref)
    if match:
        back = int(match.group(1) or 0)
        tests = [run.run_id for run in runs if run.test_run]
        if back < len(tests):
            return tests[back]
        if not tests:
            raise HistoryError(f"no runs in {where} yet", slug="run-not-found")
        raise HistoryError(
            f"{ref} needs {back + 1} runs, and {where} holds {len(tests)}; {listing} lists them",
            slug="run-not-found",
        )
    if any(run.run_id == ref for run in runs):
        return ref
    found = [run.run_id for run in runs if run.run_id.startswith(ref)] if ref else []
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(found[:MAX_SHOWN]) + (", ..." if len(found) > MAX_SHOWN else "")
        raise HistoryError(
            f"run {ref!r} is ambiguous: it begins several run ids ({shown}, newest first); "
            "give more of the id",
            slug="run-ambiguous",
        )
    raise HistoryError(
        f"no run {ref!r} in {where}; {listing} lists the runs (or use last, last~1, ...)",
        slug="run-not-found",
    )


def find_run_dir(
    qbench_dir: Path, ref: str, listing: str = "'qbench runs'", indexed: Sequence[str] = ()
) -> Path:
    """The directory in ``<qbench_dir>/runs/`` of the run ``ref`` names (see `choose`), the
    runs in the index's order (``indexed``: its run ids, oldest first; `in_run_order`).

    Raises:
        HistoryError: no such run, or an ambiguous prefix.
    """
    runs = qbench_dir / store.RUNS_DIR
    found = choose(ref, stored_runs(runs, indexed), str(runs), listing)
    return runs / found


def stored_runs(runs: Path, indexed: Sequence[str] = ()) -> list[RunName]:
    """The run directories in ``runs``, newest first (`in_run_order`)."""
    with contextlib.suppress(OSError):
        dirs = [path for path in runs.iterdir() if path.is_dir() and not path.is_symlink()]
        return [
            RunName(path.name, is_test_run(path)) for path in reversed(in_run_order(dirs, indexed))
        ]
    return []


def in_run_order(dirs: Iterable[Path], indexed: Sequence[str]) -> list[Path]:
    """Run directories oldest first, in the history index's one order: those of the runs in
    ``indexed`` (the index's run ids, oldest first) in that order; each other run (not indexed
    yet: still going, or not indexed) right after the last of them that recorded a start no
    later than its own (before them all when none did), those among themselves by their
    recorded start (`recorded_start`), then their names. Without ``indexed``, by recorded start
    alone."""
    place = {run_id: n for n, run_id in enumerate(indexed)}
    known: list[tuple[str, Path]] = []
    others: list[tuple[str, str, Path]] = []
    for path in dirs:
        start = recorded_start(path)
        if path.name in place:
            known.append((start, path))
        else:
            others.append((start, path.name, path))
    known.sort(key=lambda item: place[item[1].name])
    others.sort(reverse=True)  # popped from the end: the earliest first
    # the earliest start of the known runs from each on: a run not indexed goes before the
    # first known run from which on none started at or before it
    earliest = [start for start, _path in known]
    for n in range(len(earliest) - 2, -1, -1):
        earliest[n] = min(earliest[n], earliest[n + 1])
    ordered: list[Path] = []
    for n, (_start, path) in enumerate(known):
        while others and earliest[n] > others[-1][0]:
            ordered.append(others.pop()[2])
        ordered.append(path)
    ordered.extend(item[2] for item in reversed(others))
    return ordered


def is_test_run(path: Path) -> bool:
    """Whether a run directory is a test run's: not ``qbench check``'s, nor a generation's."""
    return not store.is_check_run(path) and not path.name.startswith("generate-")


def recorded_start(path: Path) -> str:
    """A run directory's start time as index time text (sortable): the one its stream's start
    record holds, else the MCP server's record of the run, else the directory's time (a run
    that recorded nothing)."""
    for source in (_stream_start, _mcp_start):
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError, AttributeError):
            found = to_index_time(source(path))
            if found is not None:
                return found
    with contextlib.suppress(OSError):
        moment = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
        return to_index_time(moment) or ""
    return ""


def _stream_start(path: Path) -> str | None:
    with (path / store.STREAM_NAME).open(encoding="utf-8", errors="replace") as handle:
        first = json.loads(handle.readline(_START_LINE))
    return str(first["run"]["started_at"]) if first.get("kind") == "start" else None


def _mcp_start(path: Path) -> str | None:
    return str(json.loads((path / MCP_META).read_text(encoding="utf-8"))["started_at"])
