"""The last-resort report: what a run's configured outputs say when its real report cannot be.

Two moments need it (docs/fail-closed.md):

- a run's session end failed (a bug of qbench's in aggregating, rendering, publishing, the
  index): every output the user configured (``--qbench-json``, ``--qbench-md``,
  ``--qbench-html``) gets a report that says so, red and incomplete, with what is known without
  the machinery that failed (the run id, pytest's exit status, pytest's own counts);
- a run starts where an earlier run's outputs are: they are replaced by one that says this run
  started and did not finish, so that a run killed (``kill -9``, the OOM killer) leaves that,
  not an earlier run's verdict; the run's end replaces it with the real report.

GitHub's step summary (``$GITHUB_STEP_SUMMARY``), appended to, gets the Markdown of a failed
end's report (never silent, never green); a run's start leaves it as it is. An output whose
format qbench cannot write this simply (``--qbench-digest``, ``--qbench-ctrf``,
``--qbench-template`` outputs) is removed instead. The code path is kept small on purpose: the
standard library, the record shapes and the atomic writer, nothing of the renderers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import cast

from pytest_qbench.core.atomic import write_text_atomic
from pytest_qbench.core.summary_words import OUTCOME_FIELDS
from pytest_qbench.core.summary_words import SUMMARY_KEYS
from pytest_qbench.core.summary_words import summary_text
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import EnvironmentRecord
    from pytest_qbench.report.records import ReportMetaRecord
    from pytest_qbench.report.records import ReportSummaryRecord
    from pytest_qbench.report.records import RunMetaRecord
    from pytest_qbench.report.records import TestReportRecord

HEADLINE = "❌ Test report incomplete"
Kind = Literal["json", "md", "html", "summary", "other"]
"""How an output is written in last resort: a report in its format, the Markdown appended
(``summary``: GitHub's step summary, which earlier steps wrote to), or (``other``) removed."""
NO_REPORT = (
    f"# {HEADLINE}\n\nqbench's session end failed, and so did making its last-resort report: "
    "this run has no report (see the job's log for both errors).\n"
)
"""What the step summary gets when not even the last-resort report could be made."""


def last_resort_report(
    run: RunMetaRecord,
    environment: EnvironmentRecord,
    counts: Mapping[str, int] | None,
    error: str,
    meta: ReportMetaRecord,
    duration: float = 0.0,
) -> TestReportRecord:
    """A valid ``TestReport`` record, incomplete (``error`` is its one recording error, so its
    verdict is failed): ``meta``, ``run`` and ``environment`` as known, ``counts``
    (``ReportSummary`` fields: pytest's own counts; ``None``: unknown) as its summary, no
    results. A run without ``completed_at`` has not finished: its text names no counts."""
    summary = cast("ReportSummaryRecord", {**new("ReportSummary", duration=duration)})
    known = cast("dict[str, Any]", summary)
    for field, count in (counts or {}).items():
        if field in known and isinstance(count, int):
            known[field] = count
    summary["total"] = sum(known[field] for field in OUTCOME_FIELDS)
    return new(
        "TestReport",
        meta=meta,
        run={**run, "recording_errors": [error]},
        environment=environment,
        summary=summary,
    )


def last_resort_text(report: Mapping[str, Any], kind: Kind) -> str:
    """``report`` (`last_resort_report`) in the format of ``kind``."""
    if kind == "json":
        return json.dumps(report, ensure_ascii=False) + "\n"
    lines = _lines(report)
    if kind == "md":
        from pytest_qbench.core.markdown import md_text

        return "\n\n".join([f"# {HEADLINE}", *(md_text(line, 2000) for line in lines)]) + "\n"
    from html import escape

    body = "".join(f"<p>{escape(line)}</p>\n" for line in lines)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{HEADLINE}</title></head>\n<body>\n<h1>{HEADLINE}</h1>\n{body}</body></html>\n"
    )


def _lines(report: Mapping[str, Any]) -> list[str]:
    run = report["run"]
    status = run["exit_code"]
    exited = "has no exit status" if status is None else f"exited with status {status}"
    counted = (
        f"pytest counted {summary_text(report['summary'], OUTCOME_FIELDS)}"
        if run["completed_at"]
        else "it has not finished"
    )
    return [
        *run["recording_errors"],
        f"Run {run['run_id']} (started {run['started_at']}): pytest {exited}; {counted}.",
        "This is qbench's last-resort report: it is never green, and holds no test's result.",
    ]


def pytest_counts(stats: Mapping[str, Sequence[object]] | None) -> dict[str, int] | None:
    """pytest's own counts (its terminal reporter's ``stats``, by pytest's key) as
    ``ReportSummary`` fields, as its closing line counts them; ``None`` without them."""
    if stats is None:
        return None
    return {
        field: sum(bool(getattr(r, "count_towards_summary", True)) for r in stats.get(key, ()))
        for field, key in SUMMARY_KEYS
    }


def write_last_resort(
    report: Mapping[str, Any] | None, outputs: Iterable[tuple[Kind, Path]]
) -> tuple[list[Path], list[Path], list[tuple[Path, str]]]:
    """Write ``report`` to each output of a kind qbench writes in last resort, and remove each
    other one (every one, without ``report``): an earlier run's file there, or one this run
    wrote before it failed. One the disk refuses is removed too. Returns (written, removed,
    those that could not be written, with why)."""
    written: list[Path] = []
    removed: list[Path] = []
    failed: list[tuple[Path, str]] = []
    for kind, path in outputs:
        if str(path) == "-":
            continue
        if kind == "summary":  # appended to, never removed: it must not stay silent
            _append_summary(path, report, written, failed)
            continue
        try:
            if kind != "other" and report is not None:
                write_text_atomic(path, last_resort_text(report, kind))
                written.append(path)
                continue
        except Exception as exc:  # the disk's refusal, or a bug here: remove it rather
            failed.append((path, _why(exc)))
        if remove_file(path):
            removed.append(path)
    return written, removed, failed


def _append_summary(
    path: Path,
    report: Mapping[str, Any] | None,
    written: list[Path],
    failed: list[tuple[Path, str]],
) -> None:
    """Append the last-resort report (or `NO_REPORT`) to GitHub's step summary ``path``."""
    from pytest_qbench.report.github import append_step_summary

    try:
        text = NO_REPORT if report is None else last_resort_text(report, "md")
        written.append(append_step_summary(path, text))
    except Exception as exc:  # the disk's refusal, or a bug here: named, never raised
        failed.append((path, _why(exc)))


def _why(exc: Exception) -> str:
    """Why an output could not be written: the system's words for a refusal, else the error."""
    why = exc.strerror if isinstance(exc, OSError) else None
    return why or f"{type(exc).__name__}: {exc}"


def remove_file(path: Path) -> bool:
    """Remove ``path`` if it is a regular file (or a link to one); whether it was removed."""
    try:
        if not path.is_file():
            return False
        path.unlink()
    except OSError:
        return False
    return True


__all__ = [
    "HEADLINE",
    "Kind",
    "last_resort_report",
    "last_resort_text",
    "pytest_counts",
    "remove_file",
    "write_last_resort",
]
