"""The configured outputs in last resort: marked unfinished as the run starts, and a
last-resort report in their place when the session's end fails (`report/last_resort.py`).

Plain functions of the session they settle for (`Ending`: what they read of
`session.QBenchSession`), kept out of its class: one concern a module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
from typing import cast

from pytest_qbench._version import __version__
from pytest_qbench.core import clock
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    import pytest

    from pytest_qbench.plugin.options.settings import Settings
    from pytest_qbench.report.last_resort import Kind
    from pytest_qbench.report.records import EnvironmentRecord
    from pytest_qbench.report.records import RunMetaRecord
    from pytest_qbench.report.records import TestReportRecord


LAST_RESORT_KINDS: dict[str, Kind] = {
    "--qbench-json": "json",
    "--qbench-md": "md",
    "--qbench-html": "html",
    "$GITHUB_STEP_SUMMARY": "summary",
}
"""The outputs (by `publish.OutputPlan`'s names) a last-resort report is written to in their
format (GitHub's step summary: appended); every other one is removed
(`report/last_resort.py`)."""


class Ending(Protocol):
    """What the session's end in last resort reads and notes of the run's session."""

    settings: Settings
    run_id: str
    run: RunMetaRecord
    environment: EnvironmentRecord
    written: list[Path]
    end_broke: bool
    session: pytest.Session | None
    terminal_stats: dict[str, list[Any]] | None
    start_clock: float
    notes: list[str]

    def note_internal_error(self, where: str, exc: BaseException | str) -> None:
        """Note a qbench bug (`QBenchSession.note_internal_error`)."""

    def shown(self, path: Path) -> str:
        """``path`` as the terminal shows it."""


def configured_outputs(settings: Settings) -> list[tuple[Kind, Path]]:
    """The outputs the user asked for (outside the run directory), as `publish.OutputPlan`
    lists them, and how each is written in last resort (`report/last_resort.py`)."""
    from pytest_qbench.history import publish  # imported at the end of every run anyway

    plan = publish.OutputPlan(
        json=settings.json_path,
        markdown=settings.md_path,
        html=settings.html_path,
        digest=settings.digest_path,
        ctrf=settings.ctrf_path,
        templates=settings.templates,
        step_summary=publish.step_summary_path(settings.github_summary),
    )
    return [(LAST_RESORT_KINDS.get(name, "other"), path) for name, path in plan.outputs()]


def mark_outputs_unfinished(qbench: Ending) -> None:
    """Where an earlier run's output is, put one saying this run started and has not
    finished (or remove it, in a format qbench cannot write so simply): a run killed
    before its end then leaves that, never the earlier run's verdict. Where none is,
    nothing is written: a missing file says no more than this one would."""
    outputs: list[tuple[Kind, Path]] = [
        (kind, path)
        for kind, path in configured_outputs(qbench.settings)
        if kind != "summary" and path.is_file()  # appended to at the end only
    ]
    if not outputs:
        return

    def unfinished() -> TestReportRecord:
        from pytest_qbench.report.last_resort import last_resort_report

        error = (
            f"run {qbench.run_id} started at {qbench.run['started_at']} and did not finish: "
            "qbench put this here as the run started, and the run's end writes its report "
            "in its place; read after the run, its process was killed or died before the "
            "session's end"
        )
        meta = new("ReportMeta", qbench_version=__version__, created_at=qbench.run["started_at"])
        run = cast("RunMetaRecord", {**qbench.run, "interrupted": True})
        return last_resort_report(run, qbench.environment, None, error, meta)

    settle_outputs(qbench, outputs, unfinished)


def fail_end_closed(qbench: Ending, error: str) -> None:
    """The session's end failed (``error``, noted): every configured output says so, with
    what is known without the machinery that failed (`report/last_resort.py`), unless each
    was written whole before it failed; one that cannot be written is removed. The run
    keeps its mark in the run store, which reads it as a run that died at its end."""
    outputs = configured_outputs(qbench.settings)
    if all(path in qbench.written for _, path in outputs):
        return

    def failed_end() -> TestReportRecord:
        from pytest_qbench.report.last_resort import last_resort_report
        from pytest_qbench.report.last_resort import pytest_counts

        session = qbench.session
        status = None if qbench.end_broke or session is None else session.exitstatus
        run = qbench.run
        run["exit_code"] = None if status is None else int(status)
        run["completed_at"] = created = iso(clock.utc_now())
        meta = new("ReportMeta", qbench_version=__version__, created_at=created)
        counts = pytest_counts(qbench.terminal_stats)
        took = clock.monotonic() - qbench.start_clock
        return last_resort_report(run, qbench.environment, counts, error, meta, took)

    written, removed = settle_outputs(qbench, outputs, failed_end)
    if written:
        qbench.notes.append(
            f"{', '.join(map(qbench.shown, written))}: a last-resort report (incomplete, "
            "never green), as the session's end failed"
        )
    if removed:
        qbench.notes.append(
            f"removed {', '.join(map(qbench.shown, removed))}: the session's end failed "
            "before writing it, and no earlier run's may stand for this one"
        )


def settle_outputs(
    qbench: Ending,
    outputs: list[tuple[Kind, Path]],
    build: Callable[[], TestReportRecord],
) -> tuple[list[Path], list[Path]]:
    """Write the report ``build`` makes to ``outputs`` in last resort; when it cannot be
    made (a bug, noted), remove them all: no report is better than an earlier run's."""
    from pytest_qbench.report.last_resort import write_last_resort

    report: TestReportRecord | None = None
    try:
        report = build()
    except Exception as exc:
        qbench.note_internal_error("the last-resort report", exc)
    written, removed, failed = write_last_resort(report, outputs)
    qbench.notes.extend(f"could not write {qbench.shown(path)}: {why}" for path, why in failed)
    return written, removed
