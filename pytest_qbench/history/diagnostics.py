"""Static-check diagnostics in history (issue 13.5): whether each diagnostic of a run is new or
has existed since an earlier run, and which are new or fixed between two runs.

A diagnostic is recognised by its fingerprint (``fingerprint.diagnostic_fingerprint``: tool,
code, file, message without numbers; not the line). Only the runs that ran its checker to the
end count (``sql.CHECKED_TABLE``): a run without ``--qbench-check=ruff`` says nothing about
ruff's diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.fingerprint import diagnostic_fingerprint_of
from pytest_qbench.history.indexer import Record
from pytest_qbench.history.indexer import checked_tools
from pytest_qbench.history.json_config import JSON_CONFIG


WINDOW = 50
"""Earlier checker runs (run and checker pairs) that ``existing since`` looks back over."""
NEW = "new"
"""``Diagnostic.history`` of a diagnostic no earlier run had."""


def existing_since(run_id: str) -> str:
    """``Diagnostic.history`` of a diagnostic that earlier runs had: ``existing since <run>``."""
    return f"existing since {run_id}"


def mark_diagnostics(index: Index, report: Record) -> None:
    """Set ``history`` of each diagnostic of ``report`` whose checker ran to the end: ``new``,
    or ``existing since <run id>``, the oldest run of the unbroken series of earlier runs of
    that checker (indexed before this run), up to the last one, that had it."""
    tools = checked_tools(report)
    found = [d for d in report.get("diagnostics") or [] if d.get("tool") in tools]
    if not found:
        return
    run_id = str(report["run"]["run_id"])

    def work(cursor: Cursor) -> tuple[list[tuple[int, str, str]], set[tuple[int, str]]]:
        cursor.execute(sql.CHECKED_BEFORE, (run_id, WINDOW))
        runs = [(int(ref), str(rid), str(tool)) for ref, rid, tool in cursor.fetchall()]
        refs = list(dict.fromkeys(ref for ref, _rid, _tool in runs))
        had: set[tuple[int, str]] = set()
        for chunk in sql.batches(refs):
            cursor.execute(sql.diagnostics_of_runs(len(chunk)), chunk)
            had.update((int(ref), str(fp)) for ref, fp in cursor.fetchall())
        return runs, had

    runs, had = index.read(work)
    for diagnostic in found:
        fp = diagnostic_fingerprint_of(diagnostic)
        since = None
        for ref, earlier, tool in runs:  # newest first
            if tool != diagnostic["tool"]:
                continue
            if (ref, fp) not in had:
                break
            since = earlier
        diagnostic["history"] = NEW if since is None else existing_since(since)


@dataclass(frozen=True)
class IndexedDiagnostic:
    """One fingerprint of a run's diagnostics, as the index holds it."""

    __pydantic_config__ = JSON_CONFIG  # the --json output's model (history/json_models.py)

    fingerprint: str
    tool: str
    severity: str
    code: str | None
    file: str | None
    line: int | None
    message: str
    occurrences: int


@dataclass
class DiagnosticDiff:
    """New and fixed diagnostics from one run to another, for the checkers both ran."""

    compared: list[str] = field(default_factory=list)
    """Checkers both runs ran to the end: only their diagnostics are compared."""
    only_base: list[str] = field(default_factory=list)
    """Checkers only the base run ran."""
    only_head: list[str] = field(default_factory=list)
    """Checkers only the other run ran."""
    new: list[IndexedDiagnostic] = field(default_factory=list)
    fixed: list[IndexedDiagnostic] = field(default_factory=list)


def run_diagnostics(index: Index, run_id: str) -> tuple[list[str], list[IndexedDiagnostic]]:
    """The checkers a run ran to the end, and its diagnostics' fingerprints."""

    def work(cursor: Cursor) -> tuple[list[str], list[IndexedDiagnostic]]:
        cursor.execute(sql.CHECKED_OF_RUN, (run_id,))
        tools = sorted(str(row[0]) for row in cursor.fetchall())
        cursor.execute(sql.DIAGNOSTICS_OF_RUN, (run_id,))
        found = [IndexedDiagnostic(*row) for row in cursor.fetchall()]
        return tools, found

    return index.read(work)


def diff_diagnostics(index: Index, base: str, head: str) -> DiagnosticDiff:
    """New (only in ``head``) and fixed (only in ``base``) diagnostics of the checkers both
    runs ran."""
    base_tools, before = run_diagnostics(index, base)
    head_tools, after = run_diagnostics(index, head)
    both = sorted(set(base_tools) & set(head_tools))
    old = {d.fingerprint for d in before}
    now = {d.fingerprint for d in after}
    return DiagnosticDiff(
        compared=both,
        only_base=sorted(set(base_tools) - set(head_tools)),
        only_head=sorted(set(head_tools) - set(base_tools)),
        new=[d for d in after if d.tool in both and d.fingerprint not in old],
        fixed=[d for d in before if d.tool in both and d.fingerprint not in now],
    )


def diagnostic_line(d: IndexedDiagnostic) -> str:
    """``mod.py:3  ruff.lint F401  `os` imported but unused`` (``(x2)`` when it occurs twice)."""
    where = ":".join(str(p) for p in (d.file, d.line) if p is not None) or "-"
    code = f"{d.tool} {d.code}" if d.code else d.tool
    times = f" (x{d.occurrences})" if d.occurrences > 1 else ""
    return f"{where}  {code}  {d.message}{times}"


def unchecked_lines(diff: DiagnosticDiff) -> Sequence[str]:
    """What the comparison leaves out: checkers only one run ran."""
    lines = []
    for tools, side, other in ((diff.only_base, "A", "B"), (diff.only_head, "B", "A")):
        for tool in tools:
            lines.append(f"{tool}: checked only in {side}, not in {other}: not compared")
    return lines
