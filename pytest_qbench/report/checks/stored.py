"""A check run in the run store (issue 13): ``<qbench-dir>/runs/<run id>/check.json`` beside the
raw output it was read from."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone
from pathlib import Path

from pytest_qbench._version import __version__
from pytest_qbench.core import atomic
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import INCOMPLETE
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.report import store
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import RunMeta


def now() -> datetime:
    """The time, in UTC."""
    return datetime.now(timezone.utc)


def new_check_dir(qbench_dir: Path, started: datetime) -> Path:
    """A new run directory for a check run (the store made first, with its ``.gitignore``)."""
    store.prepare_store(qbench_dir)
    directory = store.run_dir(qbench_dir, store.new_run_id(started))
    directory.mkdir(parents=True)
    return directory


def exit_status(checks: list[CheckRun]) -> int:
    """1 on an error or a crash, 3 when a checker did not run, else 0."""
    if any(check.status in ("failed", "crashed") for check in checks):
        return ERR
    if any(check.status == "not_run" for check in checks):
        return INCOMPLETE
    return OK


def finish_check_run(
    directory: Path,
    started: datetime,
    cwd: Path,
    command: list[str],
    paths: list[str],
    checks: list[CheckRun],
) -> CheckReport:
    """The run's ``CheckReport``, written to ``check.json`` in ``directory``."""
    run = RunMeta(
        run_id=directory.name,
        tool="qbench." + command[1],
        started_at=started,
        completed_at=now(),
        exit_code=exit_status(checks),
        cwd=str(cwd),
        command=command,
    )
    meta = ReportMeta(qbench_version=__version__, created_at=now())
    report = CheckReport(meta=meta, run=run, paths=paths, checks=checks)
    # As bytes, written as they are: a run of many diagnostics is not held twice more as text.
    raw = report.__pydantic_serializer__.to_json(report, indent=1)
    atomic.write_bytes_atomic(directory / store.CHECK_JSON, (raw, b"\n"))
    return report
