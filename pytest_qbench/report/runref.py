"""Naming a run: ``last``, ``last~N`` (N runs before the last), a run id, or a unique prefix of
one. One rule for every command and MCP tool: runs are ordered by their recorded start time,
newest first, never by their names (``ci-…`` ids do not sort by time) nor by file times.

`choose` applies the rule to runs in that order; the history index gives its runs ordered
(``history.queries.resolve_run``), and `find_run_dir` orders the run store's directories by the
start time each run recorded.
"""

from __future__ import annotations

import contextlib
import json
import re
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
        runs: The runs, newest first (by recorded start time).
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


def find_run_dir(qbench_dir: Path, ref: str, listing: str = "'qbench runs'") -> Path:
    """The directory in ``<qbench_dir>/runs/`` of the run ``ref`` names (see `choose`).

    Raises:
        HistoryError: no such run, or an ambiguous prefix.
    """
    runs = qbench_dir / store.RUNS_DIR
    found = choose(ref, stored_runs(runs), str(runs), listing)
    return runs / found


def stored_runs(runs: Path) -> list[RunName]:
    """The run directories in ``runs``, newest first by the start time each recorded."""
    with contextlib.suppress(OSError):
        dirs = [path for path in runs.iterdir() if path.is_dir() and not path.is_symlink()]
        keyed = [(recorded_start(path), path.name, path) for path in dirs]
        keyed.sort(reverse=True)
        return [RunName(name, is_test_run(path)) for _start, name, path in keyed]
    return []


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
