"""``get_run_output``: pages of a run's raw output, by lines, within the size budget; its
result model (``RunOutputPage``) and its text.

The server keeps pytest's stdout and stderr of the runs it starts (``stdout.txt``,
``stderr.txt`` in the run directory); ``markdown`` pages through ``report.md``, which every run
has. A check run (``run_build_workflow``, ``qbench check``) keeps each checker's raw log, its
stream named after the checker (issue 13.7).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.redact import Redactor
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.mcp.text import cut_lines
from pytest_qbench.report import store
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.models import RunMeta


if TYPE_CHECKING:
    from pytest_qbench.mcp.service import RunService


OutputStream = str
"""Which raw output of a run ``get_run_output`` pages through: ``stdout``, ``stderr`` or
``markdown`` of a test run; a checker's log (``ruff.lint``, ``mypy.typecheck.stderr``) of a
check run (issue 13.7)."""


class RunOutputPage(QBenchModel):
    """A page of a run's raw output, by lines."""

    run: RunMeta
    """The run: id, tool, start and end, exit status, working directory, command."""
    stream: OutputStream
    """Which output."""
    offset: int
    """0-based line the page starts at."""
    text: str
    """The lines (each cut at 2000 characters)."""
    lines: int
    """Lines in this page."""
    total_lines: int
    """Lines in the whole output."""
    next_offset: int | None = None
    """Where the next page starts; ``None`` at the end."""
    note: str | None = None
    """Why the page is empty or short, when it is."""


MAX_LINE = 2000
"""Characters kept of one line."""
MAX_PAGE = 1000
"""Lines in one page at most."""
STREAM_FILES = {**OUTPUT_NAMES, "markdown": store.REPORT_MD, "llm": "llm.txt"}
"""A run's streams; ``llm``: a generation's prompts and answers (``generation.TRANSCRIPT``)."""
CHECK_STREAM = re.compile(r"^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*(\.stderr)?$")
"""A checker's log as a stream: its tool name (``ruff.lint``), ``.stderr`` for its stderr."""


def check_output_page(
    run_dir: Path, stream: OutputStream, offset: int, limit: int, budget: int
) -> RunOutputPage:
    """A page of one checker's raw log in a check run (issue 13.7): ``stream`` names the
    checker (``ruff.lint``; ``ruff.lint.stderr`` for its standard error); ``stdout``, the
    default, is the first checker's log.

    Raises:
        ToolFailure: ``check.json`` cannot be read, or no checker of the run has that log.
    """
    streams = _check_streams(run_dir) if store.is_check_run(run_dir) else _live_streams(run_dir)
    names = ", ".join(streams) or "none: no checker ran"
    if stream == "stdout" and streams:
        stream = next(iter(streams))
    if stream not in streams:
        raise ToolFailure(
            f"stream {stream!r} is not a log of check run {run_dir.name}; its streams: {names}"
        )
    name, meta = streams[stream]
    page = output_page(run_dir, meta, stream, offset, limit, budget, file_name=name)
    if page.note is None and len(streams) > 1:
        page = page.model_copy(update={"note": f"the run's streams: {names}"})
    return page


def _check_streams(run_dir: Path) -> dict[str, tuple[str, RunMeta]]:
    """The logs of a finished check run, by stream name, with their checker's run."""
    from pytest_qbench.report.models import CheckReport

    try:
        report = CheckReport.model_validate_json((run_dir / store.CHECK_JSON).read_bytes())
    except (OSError, ValueError) as exc:
        raise ToolFailure(f"check run {run_dir.name} cannot be read: {exc}") from None
    streams: dict[str, tuple[str, RunMeta]] = {}
    for check in report.checks:
        if check.log:
            streams[check.run.tool] = (check.log, check.run)
        if check.stderr_log:
            streams[f"{check.run.tool}.stderr"] = (check.stderr_log, check.run)
    return streams


def _live_streams(run_dir: Path) -> dict[str, tuple[str, RunMeta]]:
    """The logs of the check run going on, as written so far (no exit status yet)."""
    streams: dict[str, tuple[str, RunMeta]] = {}
    for log in sorted(run_dir.glob("*.log"), key=lambda path: path.stat().st_mtime):
        tool = log.name.removesuffix(".log").removesuffix(".stderr")
        started = datetime.fromtimestamp(log.stat().st_ctime, timezone.utc)
        meta = RunMeta(run_id=run_dir.name, tool=tool, started_at=started, cwd="", command=[])
        streams[log.name.removesuffix(".log")] = (log.name, meta)
    return streams


def output_page(
    run_dir: Path,
    meta: RunMeta,
    stream: OutputStream,
    offset: int,
    limit: int,
    budget: int,
    file_name: str | None = None,
) -> RunOutputPage:
    """Lines ``offset`` to ``offset + limit`` of ``stream`` (the file ``file_name``, else the
    test run's file of that stream), fewer when the budget is reached.

    Raises:
        ToolFailure: ``offset`` or ``limit`` out of range, or an unknown stream.
    """
    if file_name is None and stream not in STREAM_FILES:
        raise ToolFailure(
            f"stream {stream!r} is not one of a test run's: {', '.join(STREAM_FILES)} "
            "(a checker's log is a stream of a check run, from run_build_workflow)"
        )
    if offset < 0:
        raise ToolFailure(f"offset must be 0 or more, given: {offset}")
    if not 1 <= limit <= MAX_PAGE:
        raise ToolFailure(f"limit must be from 1 to {MAX_PAGE} lines, given: {limit}")
    page = RunOutputPage(run=meta, stream=stream, offset=offset, text="", lines=0, total_lines=0)
    path = run_dir / (file_name or STREAM_FILES[stream])
    if not path.is_file():
        return page.model_copy(update={"note": _missing(stream, run_dir.name)})
    room = budget - json_size(page) - 64
    kept, total, full = _read_lines(path, offset, limit, room)
    next_offset = offset + len(kept) if offset + len(kept) < total else None
    note = None
    if full and next_offset is not None and len(kept) < limit:
        note = f"page cut at {len(kept)} lines to stay within the size budget"
    elif total == 0:
        writer = "the checker" if file_name else "pytest"
        note = f"the {stream} of run {run_dir.name} is empty: {writer} wrote nothing to it"
    elif offset >= total:
        note = f"offset {offset} is past the end ({total} lines)"
    return page.model_copy(
        update={
            "text": "\n".join(kept),
            "lines": len(kept),
            "total_lines": total,
            "next_offset": next_offset,
            "note": note,
        }
    )


def _read_lines(path: Path, offset: int, limit: int, room: int) -> tuple[list[str], int, bool]:
    """The page's lines, redacted, the file's line count, and whether the budget stopped the
    page."""
    redact = Redactor(os.environ)  # pytest's own output has the secrets in clear
    kept: list[str] = []
    used, total, full = 0, 0, False
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        for total, raw in enumerate(handle, start=1):
            if total <= offset or len(kept) >= limit or full:
                continue
            line = redact(raw.rstrip("\r\n"))
            if len(line) > MAX_LINE:
                line = f"{line[:MAX_LINE]} [... qbench cut {len(line) - MAX_LINE} characters ...]"
            # the two quotes' bytes pay for the escaped newline that joins the lines
            size = len(json.dumps(line, ensure_ascii=False).encode())
            if used + size > room:
                full = True
                continue
            kept.append(line)
            used += size
    return kept, total, full


def _missing(stream: OutputStream, run_id: str) -> str:
    if stream == "markdown":
        return f"run {run_id} has no {store.REPORT_MD} (pytest was killed before writing it)"
    return (
        f"run {run_id} has no stored {stream}: only runs started by this server keep pytest's "
        "raw output; stream='markdown' gives the run's report"
    )


def output_text(page: RunOutputPage, limit: int) -> str:
    """A header, then the lines."""
    end = page.offset + page.lines
    if page.total_lines == 0:
        head = f"Run {page.run.run_id} {page.stream}: empty"
    elif page.lines == 0:
        head = f"Run {page.run.run_id} {page.stream}: no lines from offset {page.offset}"
    else:
        head = (
            f"Run {page.run.run_id} {page.stream}, lines {page.offset + 1}-{end} "
            f"of {page.total_lines}"
        )
    if page.next_offset is not None:
        head += f" (next: offset={page.next_offset})"
    lines = [head, *([page.note] if page.note else []), page.text]
    return cut_lines(lines, limit)


def get_run_output(
    tools: RunService,
    run_id: str,
    stream: OutputStream = "stdout",
    offset: int = 0,
    limit: int = 200,
) -> RunOutputPage:
    """A page of a run's raw output (of the run going on, too); of a check run, a checker's
    raw log (issue 13.7)."""
    if stream not in STREAM_FILES and not CHECK_STREAM.match(stream):
        raise ToolFailure(
            f"stream {stream!r} is none of stdout, stderr, markdown (a test run's), llm (a "
            "generation's prompts and answers) and no "
            "checker's log (a check run's, e.g. ruff.lint, mypy.typecheck.stderr)"
        )
    run_dir = runs.find_run(tools.config, run_id)
    if store.is_check_run(run_dir) or run_dir.name == tools.active_check:
        return check_output_page(run_dir, stream, offset, limit, tools.config.budget)
    active = tools.active
    if active is not None and active.plan.run_dir == run_dir:
        meta, source = active.meta(None), active.plan.staging
    else:
        meta, source = runs.read_meta(run_dir), run_dir
    return output_page(source, meta, stream, offset, limit, tools.config.budget)
