"""Publishing a finished report: indexing it, and writing every output asked for.

One code path for the end of a live run (``QBenchSession``) and ``qbench render``: each builds an
``OutputPlan`` (which files, where) and hands it to ``Publisher`` with an ``OutputWriter`` (how
each format is written). One output failing never stops the others; each failure becomes a note
(a live run: its report must still be written) or, with ``strict``, an error (the CLI).

A new output format is a field of ``OutputPlan`` and a line of its ``outputs``, a method of
``OutputWriter`` and one entry in ``Publisher.jobs``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TypeVar

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.records import dataclass
from pytest_qbench.report import store
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.history.flakiness import Monitors
    from pytest_qbench.report.aggregate import ReportView
    from pytest_qbench.report.ctrf import CtrfHistory
    from pytest_qbench.report.html.trend import Trend
    from pytest_qbench.report.outputs import OutputWriter
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import TestHistoryRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord
    from pytest_qbench.report.store import Written

Job = Callable[[Path], Path]
Write = Callable[[], Path]
"""Writes an output already rendered; returns its path."""
Render = Callable[[Path], Write]
"""Renders an output for a path; returns what writes it."""
Pending = tuple[str, Path, Render, Write]
T = TypeVar("T")


# no __eq__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(eq=False, repr=False)
class OutputPlan:
    """Which outputs to write for one report, and where."""

    run_dir: Path | None = None
    """Where ``report.json`` and ``report.md`` go (and ``report.html`` with ``html``); ``None``:
    neither is written."""
    json: Path | None = None
    """``--qbench-json``: a copy of ``report.json`` (written from the report without a run
    directory)."""
    markdown: Path | None = None
    """``--qbench-md``: a copy of ``report.md``."""
    html: Path | None = None
    """The HTML page."""
    attachments_dir: Path | None = None
    """The run directory holding the attachments the HTML page embeds or links."""
    trend: Callable[[], Trend | None] | None = None
    """Loads the last runs for the HTML page, only when it is written."""
    digest: Path | None = None
    ctrf: Path | None = None
    """The CTRF document."""
    ctrf_history: Callable[[list[str]], CtrfHistory | None] | None = None
    """Loads the insights of the history index for the given node ids, only when ``ctrf`` is
    written."""
    templates: Sequence[tuple[str | Path, Path]] = ()
    """Templates (names or paths) rendered to files (``-`` is stdout)."""
    step_summary: Path | None = None
    """GitHub's ``$GITHUB_STEP_SUMMARY`` file, appended to."""

    def outputs(self) -> list[tuple[str, Path]]:
        """Every output of the plan, in the order written: its name in a note and its path.
        The one list of them: `Publisher.jobs` gives each its renderer by its name, and
        `paths` (what an earlier run may have left) is read from it without any renderer, so
        that a bug in making those still removes an earlier run's files."""
        found = []
        if self.run_dir is not None:
            found += [
                ("report.json", self.run_dir / store.REPORT_JSON),
                ("report.md", self.run_dir / store.REPORT_MD),
            ]
        if self.json:
            found.append(("--qbench-json", self.json))
        if self.markdown:
            found.append(("--qbench-md", self.markdown))
        if self.html:
            if self.run_dir is not None:  # also report.html in the run directory
                found.append(("report.html", self.run_dir / store.REPORT_HTML))
            found.append(("--qbench-html", self.html))
        if self.digest:
            found.append(("--qbench-digest", self.digest))
        if self.ctrf:
            found.append(("--qbench-ctrf", self.ctrf))
        found += [(f"{TEMPLATE} {template}", out) for template, out in self.templates]
        if self.step_summary is not None:
            found.append((STEP_SUMMARY, self.step_summary))
        return found

    def paths(self) -> list[Path]:
        """The files the plan writes (but the job summary, which is appended to)."""
        return [path for name, path in self.outputs() if name != STEP_SUMMARY]


TEMPLATE = "--qbench-template"
NONE_WRITTEN = "writing the outputs"
"""Where a bug of the loop that writes every output is (`Publisher.internal_errors`): none of
them was written, and the earlier runs' files at their paths are removed."""
STEP_SUMMARY = "$GITHUB_STEP_SUMMARY"


class _SourceNotRendered(Exception):
    """A copy's source could not be rendered (that failure is recorded already)."""


# no __eq__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(eq=False, repr=False)
class Publisher:
    """Writes an ``OutputPlan`` with an ``OutputWriter``; records what was written and why not.

    Every output is rendered before any is written, so that an output that cannot be rendered
    (a bug of qbench's, a template that fails) is in the report before it is final: its error
    goes into ``run.recording_errors`` (the report is incomplete, never green), and the outputs
    rendered before it are rendered again, so that every output, report.json first, says so
    (`recorded`). One that fails while being written after others were (a bug, not the disk's
    refusal) is recorded likewise, and the outputs after it are rendered again. An output not
    written leaves no earlier run's file at its path (`_remove_stale`)."""

    writer: OutputWriter
    plan: OutputPlan
    shown: Callable[[Path], str] = str
    """How a path is named in a note (relative to where pytest started, in a live run)."""
    strict: bool = False
    """Raise the first failure (the CLI) instead of noting it and going on (a live run)."""
    written: list[Path] = field(default_factory=list)
    unwritable: list[Path] = field(default_factory=list)
    """Outputs the system refused to write (a full disk, a read-only directory)."""
    notes: list[str] = field(default_factory=list)
    internal_errors: list[tuple[str, Exception]] = field(default_factory=list)
    """Bugs of qbench met while writing (where, the exception), for the caller to report."""
    recorded: list[str] = field(default_factory=list)
    """The outputs' failures put into the report's ``run.recording_errors``."""
    failed: list[Path] = field(default_factory=list)
    """Outputs that could not be rendered or written (recorded)."""
    trend_loaded: list[Trend | None] = field(default_factory=list)
    """The trend of the HTML pages, once loaded."""

    def jobs(self) -> list[tuple[str, Path, Render]]:
        """Every output of the plan (`OutputPlan.outputs`): its name in a note, its path, what
        renders it."""
        plan, writer = self.plan, self.writer
        run_json = run_md = None
        if plan.run_dir is not None:
            run_json, run_md = plan.run_dir / store.REPORT_JSON, plan.run_dir / store.REPORT_MD
        renders: dict[str, Render] = {
            "report.json": _unrendered(writer.json),
            "report.md": writer.rendered_markdown,
            "--qbench-json": self._copy_of(run_json, writer.json),
            "--qbench-md": self._copy_of(run_md, writer.markdown),
            "report.html": partial(self._html, run_dir=plan.run_dir),
            "--qbench-html": partial(self._html, run_dir=plan.attachments_dir or plan.run_dir),
            "--qbench-digest": writer.rendered_digest,
            "--qbench-ctrf": self._ctrf,
            STEP_SUMMARY: writer.rendered_step_summary,
        }
        renders.update(
            (f"{TEMPLATE} {template}", partial(writer.rendered_template, template))
            for template, _ in plan.templates
        )
        return [(name, path, renders[name]) for name, path in plan.outputs()]

    def publish(self) -> list[Path]:
        """Render every output, then write them; return the paths written. A bug of qbench's
        here, outside any one output's rendering or writing, leaves no earlier run's file at
        a path it did not write (it is recorded in `internal_errors`; strict: raised)."""
        try:
            jobs = self.jobs()
            while jobs:
                jobs = self._write(self._render_all(jobs))
        except Exception as exc:
            if self.strict:
                raise
            self.internal_errors.append((NONE_WRITTEN, exc))
            for path in self.plan.paths():
                self._remove_stale(path)
        return self.written

    def _render_all(self, jobs: list[tuple[str, Path, Render]]) -> list[Pending]:
        """Every job rendered; after a failure (recorded in the report), the others are
        rendered again, until a round records none."""
        while True:
            before = len(self.recorded)
            pending = []
            for name, path, render in jobs:
                write = self._render(name, path, render)
                if write is not None:
                    pending.append((name, path, render, write))
            if len(self.recorded) == before:
                return pending
            self.writer.forget_rendered()
            jobs = [(name, path, render) for name, path, render, _ in pending]

    def _render(self, name: str, path: Path, render: Render) -> Write | None:
        try:
            return render(path)
        except _SourceNotRendered as exc:
            self._not_written(name, path, f"{name} not written: {exc}")
        except Exception as exc:
            self._failed(name, path, exc)
        return None

    def _write(self, pending: list[Pending]) -> list[tuple[str, Path, Render]]:
        """Write each rendered output; when one fails (recorded), the jobs to render again, so
        that every output says so: those after it, and those written before it (but the job
        summary, appended to), else none."""
        for at, (name, path, _, write) in enumerate(pending):
            before = len(self.recorded)
            try:
                done = write()
                if done not in self.written:
                    self.written.append(done)
            except Exception as exc:
                self._failed(name, path, exc)
            if len(self.recorded) > before:
                self.writer.forget_rendered()
                again = [
                    (n, p, render)
                    for n, p, render, _ in pending[:at]
                    if p in self.written and n != STEP_SUMMARY
                ]
                return again + [(n, p, render) for n, p, render, _ in pending[at + 1 :]]
        return []

    def failure_of(self, path: Path) -> str:
        """Why ``path`` was not written: the disk's refusal said of it, else the first error
        recorded or met (a bug of qbench's, a template's error)."""
        refused = f"could not write {self.shown(path)}:"
        found = [note for note in self.notes if note.startswith(refused)] + self.recorded
        found += [
            f"internal error in {where}: {type(exc).__name__}: {exc}"
            for where, exc in self.internal_errors
        ]
        return found[0] if found else "not written"

    def _failed(self, name: str, path: Path, exc: Exception) -> None:
        """An output that could not be rendered or written (the disk's refusal, a template's
        error, a bug of qbench's): a note, and recorded in the report. One this run wrote
        before, failing as it is written again, is removed."""
        if self.strict:
            raise exc
        self._remove_own(path)
        if isinstance(exc, OSError):  # the user's disk or path, not a qbench bug: the outputs
            # written (before or after) say so, else they would disagree with this one missing
            self.unwritable.append(path)
            refused = f"could not write {self.shown(path)}: {exc.strerror or exc}"
            self._not_written(name, path, refused)
            self._record(" ".join(refused.split()))
            return
        if isinstance(exc, QBenchError):  # the user's template, not a qbench bug
            error = f"could not write {name}: {exc}"
            self.notes.append(error)
        else:
            error = f"internal error in writing {name}: {type(exc).__name__}: {exc}"
            self.internal_errors.append((f"writing {name}", exc))
        self.failed.append(path)
        self._record(" ".join(error.split()))
        self._remove_stale(path)
        if path == self.plan.step_summary:  # the job page says so, rather than nothing
            self._say_in_step_summary(path, error)

    def _say_in_step_summary(self, path: Path, error: str) -> None:
        from pytest_qbench.core.markdown import md_text
        from pytest_qbench.report.github import append_step_summary

        text = f"# ❌ qbench: this job summary could not be written\n\n{md_text(error, 1000)}\n"
        try:
            self.written.append(append_step_summary(path, text))
        except OSError as exc:
            self.notes.append(f"could not write {self.shown(path)}: {exc.strerror or exc}")

    def _record(self, error: str) -> None:
        """Put an output's failure into the report's ``run.recording_errors``: every output
        rendered from here on is incomplete, and names it."""
        from pytest_qbench.report.verdict import bounded_errors

        run = self.writer.report["run"]
        run["recording_errors"] = bounded_errors([*run["recording_errors"], error])
        self.recorded.append(error)

    def _not_written(self, name: str, path: Path, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)
        self._remove_stale(path)

    def _remove_own(self, path: Path) -> None:
        """An output written before another failed, which could not be written again to say
        so: removed, as it would disagree with the others."""
        if path not in self.written or path == self.plan.step_summary:
            return
        self.written.remove(path)
        try:
            path.unlink()
        except OSError:
            return
        self.notes.append(
            f"removed {self.shown(path)}: written before another output failed, it could not "
            "be written again to say so"
        )

    def _remove_stale(self, path: Path) -> None:
        """Remove an earlier run's file at the path of an output not written this time, so that
        nobody reads it for this run's (a green report.md beside a red run); appending to the
        job summary leaves what earlier steps wrote."""
        if str(path) == "-" or path == self.plan.step_summary or path in self.written:
            return
        try:
            path.unlink()
        except OSError:  # none there, a directory, or the disk refuses
            return
        self.notes.append(f"removed {self.shown(path)}, an earlier run's, as it was not written")

    def _copy_of(self, source: Path | None, write: Job) -> Render:
        """``path`` as a copy of ``source``; written from the report itself without one, or when
        the disk refused ``source`` (the run directory could not be written, say). A source that
        could not be rendered has no copy (its failure is recorded)."""

        def render(path: Path) -> Write:
            if source is None:
                return partial(write, path)
            if source in self.failed:
                raise _SourceNotRendered(f"{source.name} could not be rendered")

            def copy() -> Path:
                if source in self.unwritable:
                    return write(path)
                return self.writer.copy(source, path)

            return copy

        return render

    def _html(self, path: Path, run_dir: Path | None) -> Write:
        """The HTML page at ``path``, with the trend of the history index when there is one."""
        return self.writer.rendered_html(path, self._trend(), run_dir)

    def _trend(self) -> Trend | None:
        if self.plan.trend is None:
            return None
        if not self.trend_loaded:  # once for every page
            self.trend_loaded.append(
                self._from_index(self.plan.trend, "no trend in the HTML report")
            )
        return self.trend_loaded[0]

    def _ctrf(self, path: Path) -> Write:
        """The CTRF document, with the insights of the history index when there are some."""
        history = None
        loader = self.plan.ctrf_history
        if loader is not None:
            nodeids = self.writer.nodeids()
            history = self._from_index(lambda: loader(nodeids), "no insights in the CTRF document")
        return self.writer.rendered_ctrf(path, history)

    def _from_index(self, load: Callable[[], T], missing: str) -> T | None:
        """What ``load`` reads from the history index; ``None`` and a note when it cannot."""
        try:
            return load()
        except Exception as exc:
            detail = str(exc) if isinstance(exc, QBenchError) else f"{type(exc).__name__}: {exc}"
            self.notes.append(f"{missing}: {detail}")
            return None


def _unrendered(write: Job) -> Render:
    """An output written as it is rendered (report.json: streamed from the results)."""
    return lambda path: partial(write, path)


def index_trend(qbench_dir: Path, db: str | None) -> Callable[[], Trend | None]:
    """The trend loader of a live run: the last runs of its history index (the module is
    imported only when a page is written)."""

    def load() -> Trend | None:
        from pytest_qbench.history.trend import load_trend

        return load_trend(qbench_dir, db)

    return load


def index_insights(
    qbench_dir: Path, db: str | None, run_id: str
) -> Callable[[list[str]], CtrfHistory | None]:
    """The CTRF insights loader of a live run: its tests' history in its history index
    (imported only when the document is written)."""

    def load(nodeids: list[str]) -> CtrfHistory | None:
        from pytest_qbench.history.ctrf_insights import load_ctrf_history

        return load_ctrf_history(qbench_dir, db, run_id, nodeids)

    return load


def add_history(
    results: Sequence[TestResultRecord], history: Mapping[str, TestHistoryRecord] | None
) -> None:
    """Give each of ``results`` that failed its ``TestHistory`` record (by node id)."""
    if not history:
        return
    for result in results:
        if result["nodeid"] in history:
            result["history"] = history[result["nodeid"]]


def history_patches(
    history: Mapping[str, TestHistoryRecord] | None,
) -> dict[str, dict[str, object]]:
    """The fields to set on the stream's failed results when they are spliced in: their history."""
    return {nodeid: {"history": h} for nodeid, h in (history or {}).items()}


# no __eq__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(eq=False, repr=False)
class Indexed:
    """What indexing a live run gave."""

    histories: dict[str, TestHistoryRecord] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    indexed: bool = False
    failed: bool = False
    """Whether indexing it failed (the index, or a bug of qbench's): the run keeps its mark,
    so that the next run and the history's commands index it (``files.died_runs``)."""


def index_live_run(
    qbench_dir: Path,
    report: TestReportRecord,
    stream: Path | None,
    unstreamed: Sequence[TestResultRecord],
    keep_runs: int,
    db: str | None,
    deselected: Sequence[str],
    monitors: Monitors | None = None,
    quarantined: Mapping[str, bool] | None = None,
    written: Written | None = None,
) -> Indexed:
    """Index a finished run in the history index; the failing tests' history comes back.
    ``written``: what the run's own writer wrote to ``stream`` (``record_run``).

    A failure here is a note and a warning in ``report``: the reports are written all the same,
    without history. A run in which no test ran (``--collect-only``, a ``-k`` matching nothing)
    is not indexed; a run whose only outcome is collection errors is, and so is one qbench
    could not record (``recording_errors``): the history then knows it is incomplete.
    """
    summary, run = report["summary"], report["run"]
    ran = summary["total"] or report.get("collection_errors") or run.get("recording_errors")
    if not ran or run["collect_only"]:  # imports none of the indexing (issue 28: `pytest --co`)
        return Indexed()
    from pytest_qbench.history.session_end import record_run

    try:
        recorded = record_run(
            qbench_dir,
            report,
            stream,
            unstreamed,
            keep_runs,
            db,
            deselected,
            monitors,
            quarantined,
            written,
        )
    except Exception as exc:
        detail = str(exc) if isinstance(exc, QBenchError) else f"{type(exc).__name__}: {exc}"
        message = (
            f"run not indexed, so no history in its reports: {detail}; the next run or "
            "history command indexes it"
        )
        warning = new(
            "Diagnostic", tool="qbench", severity="warning", code="history", message=message
        )
        report["warnings"].append(warning)
        return Indexed(notes=[message], failed=True)
    return Indexed(recorded.histories, list(recorded.problems), indexed=True)


def forget_unwritten_run(
    qbench_dir: Path, run_dir: Path, failure: str, db: str | None, *, indexed: bool
) -> list[str]:
    """A run whose report.json was not written (``failure``: why): out of the history index
    again (``indexed``: it was in), and why kept beside its stream (``store.note_unwritten``):
    its mark stays (the caller keeps it), so that the next run and the history's commands
    index it from its stream as incomplete (``store.killed_at_end``), never leave it out. The
    note saying so."""
    from contextlib import suppress

    from pytest_qbench.history.session_end import forget_run

    if indexed:
        with suppress(Exception):
            forget_run(qbench_dir, run_dir.name, db)
    store.note_unwritten(run_dir, failure)
    return [
        "run not indexed as complete: its report.json could not be written; the next run or "
        f"history command indexes it from its {store.STREAM_NAME}, incomplete"
    ]


def mark_incomplete(qbench_dir: Path, run_id: str, errors: int, db: str | None) -> list[str]:
    """Tell the history index that an indexed run's report is incomplete (``errors`` recording
    errors: an output failed after it was indexed); the note when it cannot."""
    from pytest_qbench.history.session_end import set_recording_errors

    try:
        set_recording_errors(qbench_dir, run_id, errors, db)
    except Exception as exc:
        detail = str(exc) if isinstance(exc, QBenchError) else f"{type(exc).__name__}: {exc}"
        return [f"the history index does not know this run's report is incomplete: {detail}"]
    return []


def step_summary_path(enabled: bool) -> Path | None:
    """``$GITHUB_STEP_SUMMARY`` when the step summary is asked for and GitHub names one."""
    if not enabled or "GITHUB_STEP_SUMMARY" not in os.environ:  # only GitHub's jobs import it
        return None
    from pytest_qbench.report.github import step_summary_path as from_env

    return from_env(os.environ)


def github_annotations(
    view: ReportView,
    diagnostics: Sequence[DiagnosticRecord],
    gates: Sequence[GateResultRecord],
    rootpath: Path,
) -> list[str]:
    """GitHub workflow commands for the failures, the checkers' findings and the failed gates."""
    from pytest_qbench.report import github

    failed = [*view.failures.items, *view.errors.items]
    root = github.checkout_prefix(rootpath, os.environ)
    return [
        *github.failure_annotations(failed, root),
        *github.diagnostic_annotations(diagnostics, root),
        *github.gate_annotations(gates),
    ]


def publish_test_run(
    report: TestReportRecord,
    qbench_dir: Path,
    run_dir: Path,
    *,
    html: Path | None = None,
    db: str | None = None,
    keep_runs: int = 200,
    index: bool = True,
) -> list[str]:
    """Write a run that ``qbench test`` (or the MCP server) gathered from several runners as a
    pytest run's end does: indexed (unless ``index`` is false: pytest's own end indexed it
    already), then report.json, report.md and, when asked, the HTML page; the notes to show."""
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.outputs import OutputWriter

    notes: list[str] = []
    if index:
        indexed = index_live_run(qbench_dir, report, None, report["results"], keep_runs, db, [])
        add_history(report["results"], indexed.histories)
        notes += indexed.notes
    view = aggregate(report["results"]).view()
    writer = OutputWriter(report, None, view, template_dir=None, max_items=50)
    plan = OutputPlan(run_dir=run_dir, attachments_dir=run_dir)
    if html is not None:
        plan.html = html
        plan.trend = index_trend(qbench_dir, db)
    publisher = Publisher(writer, plan, strict=True)
    publisher.publish()
    return notes + publisher.notes
