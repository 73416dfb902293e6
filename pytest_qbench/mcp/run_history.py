"""The run history's tools: ``list_runs`` (the most recent runs) and ``flaky_tests`` (tests
flaky on evidence), their result models and their text. The history index's queries are
imported when one of them is first called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import ToolFailure
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
    from pytest_qbench.history.backend import Index
    from pytest_qbench.mcp.service import RunService


class RunEntry(QBenchModel):
    """One indexed run."""

    run_id: str
    """The run's id."""
    started_at: str
    """When it started (ISO 8601, UTC)."""
    completed_at: str | None = None
    """When it ended; ``None`` when it died."""
    exit_code: int | None = None
    """pytest's exit status."""
    interrupted: bool = False
    """Cut short (Ctrl-C, a timeout, a crash)."""
    summary: dict[str, int] = Field(default_factory=dict)
    """Counts: total, passed, failed, errors, skipped, ...; ``subtests_*`` where known."""
    duration: float = 0.0
    """Seconds."""
    branch: str | None = None
    """The branch, on CI."""
    commit: str | None = None
    """The commit, on CI."""
    has_output: bool = False
    """Whether its raw output is stored (runs started by this server)."""
    shard: str | None = None
    """The CI shard the run was (``2/4``, ``queue NAME``); ``None`` for a whole run."""
    recording_errors: int = 0
    """qbench's errors recording the run (not 0: the run is incomplete, its counts are only what
    was recorded, and it is never green: a run killed at its session's end, say)."""


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
    entries = [
        RunEntry(
            run_id=info.run_id,
            started_at=iso(info.started_at) or "",
            completed_at=iso(info.completed_at),
            exit_code=info.exit_code,
            interrupted=info.interrupted,
            summary=info.counts,
            duration=info.duration,
            branch=info.branch,
            commit=info.commit,
            has_output=(runs_dir / info.run_id / OUTPUT_NAMES["stdout"]).is_file(),
            shard=info.shard,
            recording_errors=info.recording_errors or 0,
        )
        for info in infos
    ]
    return RunList(runs=entries, note=None if entries else "the history index holds no runs yet")


def flaky(config: ServerConfig, limit: int, runs: int) -> FlakyList:
    """Tests whose outcome flipped at least twice in the last ``runs`` runs and that the flaky
    rule calls flaky, flakiest first."""
    from pytest_qbench.history.compare import find_flaky

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
        note = note or f"no flaky or broken test in the last {runs} runs"
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
        f"{counts_text({**run.summary, 'duration': run.duration})}"
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
