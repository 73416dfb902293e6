"""The run history's tools: ``list_runs`` (the most recent runs) and ``flaky_tests`` (tests
flaky on evidence), their result models and their text. The history index's queries are
imported when one of them is first called.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pydantic import Field

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.markdown import died_unseen
from pytest_qbench.core.text import first_line
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.mcp.runs import open_history_seeing_died
from pytest_qbench.mcp.text import counts_text
from pytest_qbench.mcp.text import fit_lines
from pytest_qbench.report import store
from pytest_qbench.report.models import QBenchModel
from pytest_qbench.report.shapes import iso


if TYPE_CHECKING:
    from datetime import datetime

    from pytest_qbench.history.backend import Index
    from pytest_qbench.mcp.service import RunService


class RunEntry(QBenchModel):
    """One indexed run."""

    run_id: str
    """The run's id."""
    started_at: str
    """Start (ISO, UTC)."""
    completed_at: str | None = None
    """End; ``None`` when it died."""
    exit_code: int | None = None
    """pytest's exit status."""
    interrupted: bool = False
    """Cut short (Ctrl-C, crash)."""
    summary: dict[str, int] = Field(default_factory=dict)
    """Counts (``subtests_*`` where known)."""
    duration: float = 0.0
    """Seconds."""
    branch: str | None = None
    """Branch, on CI."""
    commit: str | None = None
    """Commit, on CI."""
    has_output: bool = False
    """Output stored (this server's)."""
    shard: str | None = None
    """CI shard (``2/4``); ``None``: whole run."""
    recording_errors: int = 0
    """qbench's errors recording it; not 0: incomplete."""
    other: dict[str, int] = Field(default_factory=dict)
    """Plugins' own counts (``known``)."""


class RunList(QBenchModel):
    """The most recent runs, newest first."""

    runs: list[RunEntry] = Field(default_factory=list)
    """The runs."""
    note: str | None = None
    """Why the list is empty, when it is."""


class FlakyEntry(QBenchModel):
    """A test whose outcome flips across recent runs, on evidence."""

    nodeid: str
    """pytest's node id."""
    flaky_indicator: float
    """flips / (results - 1)."""
    flips: int
    """Outcome changes."""
    runs: int
    """Results looked at."""
    failed: int
    """Failed or errored."""
    trend: str
    """Improving, Stable or Declining."""
    last_failure: str | None = None
    """Its last failure, one line."""
    evidence: str = ""
    """The evidence."""
    broken: bool = False
    """Failing the same way every run."""
    quarantined: str | None = None
    """Why quarantined; leave its known failure."""


class FlakyList(QBenchModel):
    """Flaky tests, flakiest first."""

    runs_window: int
    """Runs looked at."""
    tests: list[FlakyEntry] = Field(default_factory=list)
    """The tests."""
    note: str | None = None
    """Why the list is empty, when it is."""


MAX_LIST = 100


def recent_runs(config: ServerConfig, limit: int) -> RunList:
    """The ``limit`` most recent indexed runs, newest first."""
    from pytest_qbench.history.queries import list_runs

    limit = _limit(limit)
    try:
        index = open_history_seeing_died(config)
    except HistoryError as exc:
        return RunList(note=str(exc))
    try:
        infos = list_runs(index, limit)
    finally:
        index.close()
    runs_dir = config.qbench_dir / store.RUNS_DIR
    indexed = [
        _entry(
            runs_dir / info.run_id,
            started=info.started_at,
            completed=info.completed_at,
            exit_code=info.exit_code,
            interrupted=info.interrupted,
            summary=info.counts,
            other=info.other,
            duration=info.duration,
            branch=info.branch,
            commit=info.commit,
            shard=info.shard,
            recording_errors=info.recording_errors or 0,
        )
        for info in infos
    ]
    unreported = _unreported_runs(runs_dir, {entry.run_id for entry in indexed})
    entries = _with_unreported(indexed, unreported, whole=len(indexed) < limit)[:limit]
    return RunList(runs=entries, note=None if entries else "the history index holds no runs yet")


def _unreported_runs(runs_dir: Path, listed: set[str]) -> list[RunEntry]:
    """The runs this server started whose pytest wrote no results (an INTERNALERROR at
    ``pytest_configure``, a usage error: no report, no stream, so nothing to index), from the
    metadata the server wrote for each, newest first; never a generation's. Without them, ``list_runs`` after
    such a run listed the run before it (exit 0) as the newest, while ``last`` named the
    failed one."""
    from pytest_qbench.mcp.command import is_generation
    from pytest_qbench.mcp.runs import META_NAME
    from pytest_qbench.report.models import RunMeta

    found: list[RunEntry] = []
    try:
        dirs = [d for d in runs_dir.iterdir() if d.name not in listed and not is_generation(d.name)]
    except OSError:
        return found
    for run_dir in dirs:
        meta = run_dir / META_NAME
        if not meta.is_file() or any(
            (run_dir / name).exists() for name in (store.REPORT_JSON, store.STREAM_NAME)
        ):
            continue
        try:
            run = RunMeta.model_validate_json(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found.append(
            _entry(
                run_dir,
                started=run.started_at,
                completed=run.completed_at,
                exit_code=run.exit_code,
                interrupted=run.interrupted,
            )
        )
    return sorted(found, key=lambda entry: entry.started_at, reverse=True)


def _entry(
    run_dir: Path,
    *,
    started: datetime,
    completed: datetime | None,
    exit_code: int | None,
    interrupted: bool,
    **more: Any,
) -> RunEntry:
    """A `RunEntry` of the run in ``run_dir``: its start, end, exit status and whether it was
    interrupted; ``more`` its other fields."""
    return RunEntry(
        run_id=run_dir.name,
        started_at=iso(started) or "",
        completed_at=iso(completed),
        exit_code=exit_code,
        interrupted=interrupted,
        has_output=(run_dir / OUTPUT_NAMES["stdout"]).is_file(),
        **more,
    )


def _with_unreported(
    indexed: list[RunEntry], unreported: list[RunEntry], whole: bool
) -> list[RunEntry]:
    """``indexed`` (the index's order, newest first) with each run of ``unreported`` before
    the first indexed run that started before it; those older than every indexed run only when
    the index listed all it holds (``whole``)."""
    merged: list[RunEntry] = []
    waiting = list(unreported)
    for entry in indexed:
        while waiting and waiting[0].started_at > entry.started_at:
            merged.append(waiting.pop(0))
        merged.append(entry)
    return merged + waiting if whole else merged


def flaky(config: ServerConfig, limit: int, runs: int) -> FlakyList:
    """Tests whose outcome flipped at least twice in the last ``runs`` runs and that the flaky
    rule calls flaky, flakiest first."""
    from pytest_qbench.history.compare import find_flaky
    from pytest_qbench.history.queries import runs_held
    from pytest_qbench.history.text import window_text

    limit, runs = _limit(limit), _limit(runs, "runs", 1000)
    try:
        index = open_history_seeing_died(config)
    except HistoryError as exc:
        return FlakyList(runs_window=runs, note=str(exc))
    note = None
    try:
        found = [
            f
            for f in find_flaky(index, runs, 0, statuses=("flaky", "broken"))
            if f.summary.flips >= 2 or (f.assessment and f.assessment.status == "broken")
        ][:limit]
        held = None if found else runs_held(index)
        try:
            quarantined = quarantine_list(config, index)
        except Exception as exc:  # the list still answers, and says the marks are missing
            quarantined = {}
            note = f"the quarantine could not be read ({type(exc).__name__}: {exc}): none marked"
    finally:
        index.close()
    tests = [
        FlakyEntry(
            nodeid=f.nodeid,
            flaky_indicator=f.summary.flaky_indicator,
            flips=f.summary.flips,
            runs=f.summary.total_runs,
            failed=f.summary.failed_runs,
            trend=f.summary.trend,
            evidence=f.evidence,
            broken=f.assessment is not None and f.assessment.status == "broken",
            quarantined=quarantined.get(f.nodeid),
            last_failure=(
                None
                if f.last_failure is None
                else f"{f.last_failure.error_type} at {f.last_failure.location}: "
                f"{f.last_failure.message}"
            ),
        )
        for f in found
    ]
    if not tests:
        note = note or f"no flaky or broken test in {window_text(runs, held)}"
    return FlakyList(runs_window=runs, tests=tests, note=note)


def quarantine_list(config: ServerConfig, index: Index) -> dict[str, str]:
    """The quarantined tests and why: the file ``qbench_quarantine_file`` names in the
    project's configuration, else the history index's list."""
    from pytest_qbench.history.database import ini_value
    from pytest_qbench.history.quarantine import FILE_INI
    from pytest_qbench.history.quarantine import FileQuarantine
    from pytest_qbench.history.quarantine import IndexQuarantine
    from pytest_qbench.history.quarantine import QuarantineStore
    from pytest_qbench.history.quarantine import file_path

    found = ini_value(config.root, FILE_INI)
    store: QuarantineStore = (
        FileQuarantine(file_path(found[0].parent, found[1]))
        if found is not None
        else IndexQuarantine(index)
    )
    return {e.nodeid: e.reason or "no reason given" for e in store.entries()}


def _limit(value: int, what: str = "limit", most: int = MAX_LIST) -> int:
    if not 1 <= value <= most:
        raise ToolFailure(f"{what} must be from 1 to {most}, given: {value}")
    return value


def runs_text(runs: RunList, limit: int) -> str:
    """One line per run."""
    if not runs.runs:
        return runs.note or "no runs"
    lines = [
        f"{run.run_id}  {run.started_at}  exit {run.exit_code}  "
        + (
            counts_text(
                {**run.summary, "other": run.other, "duration": run.duration},
                died=died_unseen(run.interrupted, run.exit_code),
            )
            if run.summary
            else "no results: pytest stopped before running tests (get_run_output says why)"
        )
        + ("  (interrupted)" if run.interrupted else "")
        + ("  (incomplete)" if run.recording_errors else "")
        + (f"  shard {run.shard}" if run.shard else "")
        for run in runs.runs
    ]
    return fit_lines(lines, limit, "... {n} more runs")


def flaky_text(flaky: FlakyList, limit: int) -> str:
    """One line per flaky test."""
    if not flaky.tests:
        return flaky.note or "no flaky tests"
    lines = [
        f"{t.nodeid}: "
        + ("BROKEN, " if t.broken else "")
        + (f"QUARANTINED ({t.quarantined}), " if t.quarantined else "")
        + f"flaky {t.flaky_indicator:.2f}, {t.flips} flips, failed {t.failed} of "
        f"{t.runs}, {t.trend}"
        + (f" ({t.evidence})" if t.evidence else "")
        + (f"; last: {first_line(t.last_failure)}" if t.last_failure else "")
        for t in flaky.tests
    ]
    return fit_lines(lines, limit, "... {n} more tests")


def list_runs(tools: RunService, limit: int = 10) -> RunList:
    """The most recent runs."""
    return recent_runs(tools.config, limit)


def flaky_tests(tools: RunService, limit: int = 10, runs_window: int = 30) -> FlakyList:
    """Tests whose outcome flips across recent runs."""
    return flaky(tools.config, limit, runs_window)
