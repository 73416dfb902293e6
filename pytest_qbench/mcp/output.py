"""``get_run_output``: pages of a run's raw output, by lines, within the size budget.

The server keeps pytest's stdout and stderr of the runs it starts (``stdout.txt``,
``stderr.txt`` in the run directory); ``markdown`` pages through ``report.md``, which every run
has.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.models import OutputStream
from pytest_qbench.mcp.models import RunOutputPage
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.report import store
from pytest_qbench.report.environment import Redactor
from pytest_qbench.report.models import RunMeta


MAX_LINE = 2000
"""Characters kept of one line."""
MAX_PAGE = 1000
"""Lines in one page at most."""
STREAM_FILES = {**OUTPUT_NAMES, "markdown": store.REPORT_MD}


def output_page(
    run_dir: Path, meta: RunMeta, stream: OutputStream, offset: int, limit: int, budget: int
) -> RunOutputPage:
    """Lines ``offset`` to ``offset + limit`` of ``stream``, fewer when the budget is reached.

    Raises:
        ToolFailure: ``offset`` or ``limit`` out of range.
    """
    if offset < 0:
        raise ToolFailure(f"offset must be 0 or more, given: {offset}")
    if not 1 <= limit <= MAX_PAGE:
        raise ToolFailure(f"limit must be from 1 to {MAX_PAGE} lines, given: {limit}")
    page = RunOutputPage(run=meta, stream=stream, offset=offset, text="", lines=0, total_lines=0)
    path = run_dir / STREAM_FILES[stream]
    if not path.is_file():
        return page.model_copy(update={"note": _missing(stream, run_dir.name)})
    room = budget - json_size(page) - 64
    kept, total, full = _read_lines(path, offset, limit, room)
    next_offset = offset + len(kept) if offset + len(kept) < total else None
    note = None
    if full and next_offset is not None and len(kept) < limit:
        note = f"page cut at {len(kept)} lines to stay within the size budget"
    elif total == 0:
        note = f"the {stream} of run {run_dir.name} is empty: pytest wrote nothing to it"
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
