"""``QBenchSession``: the per-run state, registered as a plugin while qbench is active.

``QBenchWorker`` runs wherever tests run and puts plain facts on each pytest report.
``QBenchSession`` (which is also a ``QBenchWorker``) runs where reports arrive: it folds them into
results, streams each result to ``results.jsonl`` as the test finishes, and writes the reports
when the session ends. An exception inside qbench never escapes a hook: it becomes a note in the
report and on the terminal, and the user's run goes on untouched.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import ExitStack
from contextlib import contextmanager
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast
from typing import final

import pytest
from pytest import TestReport

from pytest_qbench._version import __version__
from pytest_qbench.core import clock
from pytest_qbench.core import real_os
from pytest_qbench.core.gc_pause import paused_gc
from pytest_qbench.core.limits import AttachLimits
from pytest_qbench.core.limits import Limits
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.summary_words import OUTCOME_FIELDS
from pytest_qbench.core.summary_words import SUMMARY_KEYS
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.types import Outcome
from pytest_qbench.plugin import session_end
from pytest_qbench.plugin.agent.hooks import agent_state_key
from pytest_qbench.plugin.attach import AttachBudget
from pytest_qbench.plugin.attach import Attacher
from pytest_qbench.plugin.attach import attach_from_hook
from pytest_qbench.plugin.attach import attacher_key
from pytest_qbench.plugin.attach import close
from pytest_qbench.plugin.attach import opened_list
from pytest_qbench.plugin.attach import over_total
from pytest_qbench.plugin.attach import records_for_report
from pytest_qbench.plugin.collectors import AGENT_ATTR
from pytest_qbench.plugin.collectors import ATTACH_ATTR
from pytest_qbench.plugin.collectors import FACTS_ATTR
from pytest_qbench.plugin.collectors import FAILURE_ATTR
from pytest_qbench.plugin.collectors import FORKED
from pytest_qbench.plugin.collectors import ITEM_ATTR
from pytest_qbench.plugin.collectors import NO_FACTS
from pytest_qbench.plugin.collectors import TestAccumulator
from pytest_qbench.plugin.collectors import captured_output
from pytest_qbench.plugin.collectors import collection_error
from pytest_qbench.plugin.collectors import failure_facts
from pytest_qbench.plugin.collectors import item_facts
from pytest_qbench.plugin.collectors import joined_facts
from pytest_qbench.plugin.collectors import plain_pass_result
from pytest_qbench.plugin.collectors import put_fact
from pytest_qbench.plugin.collectors import sanitize_user_properties
from pytest_qbench.plugin.collectors import skipped_collector
from pytest_qbench.plugin.collectors import warning_diagnostic
from pytest_qbench.plugin.options.settings import Settings
from pytest_qbench.plugin.options.settings import run_id_taken
from pytest_qbench.report import store
from pytest_qbench.report.aggregate import Aggregator
from pytest_qbench.report.environment import describe_environment
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import expand
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new
from pytest_qbench.report.shapes import pass_rate


if TYPE_CHECKING:
    from pytest_qbench.report.records import AttachmentRecord
    from pytest_qbench.report.records import CheckRunRecord
    from pytest_qbench.report.records import CoverageReportRecord
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


qbench_session_key = pytest.StashKey["QBenchSession"]()
INTERNAL_ERROR_ATTR = "qbench_internal_error"
MAX_DIAGNOSTICS = 1000
MOVED_CLOCK_SECONDS = 2.0
"""How far ``time.time()`` may be from qbench's clock before the clock is taken for moved."""
ALL_PASSED = {"setup": "passed", "call": "passed", "teardown": "passed"}
"""A test's phases' outcomes when each passed (`TestAccumulator.outcome`), compared whole."""
NOT_PLAIN = frozenset(("wasxfail", FACTS_ATTR, INTERNAL_ERROR_ATTR, "node"))
"""A report's attributes that take its test off the plain pass's path (`plain_tests`): an
xfail's, facts sent with it (an xdist worker's, a forked child's), qbench's error, a worker's
node; looked for in one call."""


class QBenchWorker:
    """Adds JSON-safe facts to reports where the test runs (the process, or an xdist worker)."""

    def __init__(self, config: pytest.Config, limits: Limits, worker: str | None) -> None:
        self.config = config
        self.limits = limits
        self.worker = worker
        self.rootpath = config.rootpath
        self.redact = Redactor(os.environ)
        self.runtime_secrets = Redactor({})
        """The secrets set while the tests run (``monkeypatch.setenv``): only this process
        knows them, so a worker redacts them from the reports it sends."""
        self.attacher: Attacher | None = None
        """Stores the files tests attach, once the run directory is known."""
        self.phase_map: Any = bytearray(1)
        """The phase of the test going (``store.PHASE_NAME``), set as each phase ends: the
        session's ``store.PhaseMark`` map; else a byte of memory nobody reads, so that it is
        set without a test."""
        self.beside: dict[tuple[str, str], dict[str, Any]] = {}
        """The facts of the reports this process made, by node id and phase, until the report
        is logged (`annotate`)."""
        self.raised: dict[tuple[str, str], pytest.ExceptionInfo[BaseException]] = {}
        """The exception of each phase that raised, by node id and phase, until its report is
        logged or sent (`late_failure`), when `make_report` made it."""
        self.items: list[pytest.Item] = []
        """The session's tests (`item_facts_of`), once collected."""
        self.items_by_id: dict[str, pytest.Item] | None = None
        self.report_maker = pytest_report_maker(config)
        """pytest's own ``pytest_runtest_makereport``, which `make_report` calls; ``None`` when
        another implementation would come between (`hook_overrides`,
        `give_way_to_report_makers`)."""
        self.known_makers: tuple[Any, ...] = ()
        """The ``pytest_runtest_makereport`` implementations there when `make_report` was
        registered (`give_way_to_report_makers`)."""
        self.attachments_hook = config.hook.pytest_qbench_attachments
        """The hook ``attach_from_hook`` calls at a test's teardown."""
        self.modify_result_hook = config.hook.pytest_qbench_modify_result
        """Called with each result where one arrives (`QBenchSession._finish_test`)."""
        self.attach_hooked = False
        """Whether a plugin implements `attachments_hook`: asked as each plugin is registered
        (`pytest_plugin_registered`), not at each test's teardown (issue 28); a plugin
        unregistered since leaves it true, and ``attach_from_hook`` asks again."""
        self.modify_hooked = False
        """Whether a plugin implements `modify_result_hook`, asked as `attach_hooked` is."""
        self.opened = opened_list(config)
        """Not empty once a test of this run was opened for attachments (`attach.reopen`: the
        ``qbench`` fixture's setup, the attachments hook), which an agent's state also needs:
        until then no test can attach or hold an agent's state, so `annotate` asks pytest's
        ``Stash`` nothing (issue 28)."""

    def enable_attachments(self, run_dir: Path, limits: AttachLimits) -> None:
        """Let tests attach files (``qbench.attach``), into ``run_dir``."""
        self.attacher = Attacher(run_dir, limits, self.redact)
        self.config.stash[attacher_key] = self.attacher

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Around the other implementations, when pytest's own is not the one that follows
        qbench's (`hook_overrides`): the report as they all left it."""
        report = yield
        try:
            self.annotate(report, item, call, final=True)
        except Exception as exc:  # never break the user's test because of qbench
            setattr(report, INTERNAL_ERROR_ATTR, f"{type(exc).__name__}: {exc}")
        return report

    @pytest.hookimpl
    def make_report(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> pytest.TestReport | None:
        """``pytest_runtest_makereport`` in place of pytest's own implementation, which it calls
        (`pytest_report_maker`): one plain implementation called by pluggy, instead of a
        wrapper's generator around pytest's (issue 28). The wrappers (pytest's xfail, other
        plugins') change the report after this, so a failure's facts, which need the report
        as they leave it, are made when it is logged (`raised`)."""
        maker = self.report_maker
        if maker is None:  # not registered then (`hook_overrides`)
            return None
        report = maker(item, call)
        try:
            if (
                call.excinfo is None
                and not (self.raised or self.beside or self.opened or self.attach_hooked)
                and not (report.sections or report.user_properties)
            ):
                # A passing phase with nothing to hand on (no output, properties or exception,
                # nothing attached, opened or waiting by node id): of `annotate`'s work only
                # the item's facts (setup), the environment's look for secrets (call) and the
                # phase mark are left, done here without its call (issue 28).
                attacher = self.attacher
                if attacher is None or not attacher.records:
                    when = report.when
                    if when == "setup" and self.worker is None and not FORKED:
                        facts = {ITEM_ATTR: item_facts(item, None)}  # handed beside the report
                        self.phase_map[0] = 1  # the call goes next
                        self.beside[(report.nodeid, "setup")] = facts
                        return report
                    if when == "call":  # `learn_secrets`, in this frame
                        redact = self.redact
                        before = redact.known
                        if redact.refresh(os.environ):
                            self.runtime_secrets.learn(redact.known - before)
                        self.phase_map[0] = 2  # the teardown goes next
                        return report
                    if when == "teardown":
                        if attacher is not None:  # as `annotate`: its mark goes with them
                            self.phase_map[0] = 0  # the next test's setup goes next
                        return report
            self.annotate(report, item, call, False)
        except Exception as exc:  # never break the user's test because of qbench
            setattr(report, INTERNAL_ERROR_ATTR, f"{type(exc).__name__}: {exc}")
        return report

    def learn_secrets(self) -> None:
        """The secret-looking variables set since the last look, learnt (cheap when none)."""
        redact = self.redact
        before = redact.known
        if redact.refresh(os.environ):
            self.runtime_secrets.learn(redact.known - before)

    def hook_overrides(self) -> dict[str, Callable[..., Any] | None]:
        """The hooks registered in place of this class's (``registered.Hooks``; ``None``: not
        registered): `make_report` when pytest's runner's implementation is the one qbench's
        would be called before; no ``pytest_report_to_serializable`` where the reports are
        logged (``worker`` ``None``: the session's process), whose wrapper would hand each
        report's data back as it is, a generator a call (pytest-reportlog, pytest-forked call
        the hook there; issue 28)."""
        overrides: dict[str, Callable[..., Any] | None] = {}
        if self.worker is None:
            overrides["pytest_report_to_serializable"] = None
        if self.report_maker is None:
            return overrides
        hook = self.config.pluginmanager.hook.pytest_runtest_makereport
        self.known_makers = tuple(hook.get_hookimpls())
        overrides["pytest_runtest_makereport"] = self.make_report
        return overrides

    def give_way_to_report_makers(self) -> None:
        """Once the tests are collected, and at a setup report another plugin made: when a
        plugin registered after `make_report` (the conftest of a directory found while
        collecting, a plugin a fixture registers) has a plain ``pytest_runtest_makereport``
        called first, returning its own report, `make_report` would never see that report,
        and its failure's frames, agent facts and attachments would be lost. qbench's
        makereport becomes the wrapper then (`ReportWrapper`), as when such a plugin came
        before qbench's (`pytest_report_maker`), and `make_report` gives way to pytest's."""
        if self.report_maker is None:
            return
        manager = self.config.pluginmanager
        if makes_reports_before(manager, self.known_makers, self.make_report):
            from pytest_qbench.plugin import registered

            self.report_maker = None
            registered.register(self.config, ReportWrapper(self), REPORT_WRAPPER_NAME)

    def annotate(
        self,
        report: pytest.TestReport,
        item: pytest.Item,
        call: pytest.CallInfo[None],
        final: bool = True,
    ) -> None:
        """Hand on item facts (setup), failure facts (a failed phase), agent facts (call).

        ``final``: the report is as every implementation left it (the wrapper's); else it is
        pytest's own, before the wrappers (`make_report`), and a failure's facts are made when
        the report is logged or sent (`late_failure`), but in a forked child, whose reports
        are sent as they are (pytest-forked sends their attributes)."""
        # report.outcome and report.when compared, not report.passed/failed (a property each)
        when = report.when
        outcome = report.outcome
        if when == "call" or outcome != "passed" or report.sections or report.user_properties:
            # The secret-looking variables set since the last report, learnt (cheap when
            # none): after each test's call, and after a setup or teardown whose report can
            # hold a secret (a failure or skip, captured output, user properties); a passing
            # setup or teardown without them adds no text to redact, and what the test sets in
            # between is still set at its call's report (``monkeypatch`` undoes it only in the
            # teardown).
            self.learn_secrets()
        facts: dict[str, Any] = {}
        excinfo = call.excinfo
        forked = bool(FORKED)  # in a forked child (pytest-forked's)
        try:
            if when == "setup":
                facts[ITEM_ATTR] = item_facts(item, self.worker)
                # the call goes next (store.PHASE_NAME); after a setup that failed (its error
                # kept: `_keep_setup_error`), skipped or xfailed, the teardown (no call)
                self.phase_map[0] = 1 if outcome == "passed" else 3 if outcome == "failed" else 2
            if not final and not forked:
                # the exception waits for the report as the wrappers leave it (a kept one, of a
                # report never logged, goes when the next report of that test and phase is made)
                # keyed by node id and phase, the key made only when one is kept or waits
                if excinfo is not None:
                    self.raised[(report.nodeid, when)] = excinfo
                elif self.raised:
                    self.raised.pop((report.nodeid, when), None)
            elif outcome == "failed" and excinfo is not None:
                facts[FAILURE_ATTR] = failure_facts(
                    excinfo, self.rootpath, report.location[0], self.limits, report.longrepr
                )
            if when == "call":
                self.phase_map[0] = 2  # the teardown goes next
                if self.opened and agent_state_key in item.stash:
                    from pytest_qbench.plugin.agent.state import agent_facts

                    agent = agent_facts(item.stash[agent_state_key], self.limits.max_output)
                    if agent is not None:
                        facts[AGENT_ATTR] = agent
            attacher = self.attacher
            if attacher is not None:
                if when == "teardown":
                    self.phase_map[0] = 0  # the next test's setup goes next
                    if self.attach_hooked:  # `attach_from_hook` asks again
                        attach_from_hook(item, attacher)
                if attacher.records:
                    attached = records_for_report(item, report)
                    if attached:
                        facts[ATTACH_ATTR] = attached
                elif when == "teardown" and self.opened:  # nothing attached in this process
                    close(item)  # yet: nothing to send; a test never opened cannot attach
        finally:  # what was found before a failure still goes
            # Handed to where the report is logged: beside it when this process logs it (kept
            # by node id and phase until then), on it (`FACTS_ATTR`) when it travels (an xdist
            # worker's, a forked child's). A report of this process then carries no attribute
            # of qbench's, and pytest's reports, which the terminal reporter keeps to the end
            # of the run, no slot for one (8 bytes a report; issue 28).
            if self.worker is None and not forked:
                if facts:
                    self.beside[(report.nodeid, when)] = facts
                elif self.beside:  # an unlogged report's facts (flaky's kept ones): not these
                    self.beside.pop((report.nodeid, when), None)
            else:
                for kind, value in facts.items():
                    put_fact(report, kind, value)
        if forked and self.worker is not None and report.user_properties:
            # execnet only carries builtins, and a forked child sends the report as it is
            report.user_properties = sanitize_user_properties(report.user_properties)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = session.items
        self.give_way_to_report_makers()

    @pytest.hookimpl
    def pytest_plugin_registered(self, plugin: object) -> None:
        """A plugin was registered (and, pytest's hook being historic, each one registered
        before this object, as it is): whether any plugin implements the hooks qbench calls
        at each test's end, asked here rather than for every test."""
        self.attach_hooked = bool(self.attachments_hook.get_hookimpls())
        self.modify_hooked = bool(self.modify_result_hook.get_hookimpls())

    def item_facts_of(self, nodeid: str) -> dict[str, Any] | None:
        """The item facts of a setup report that came without them: another plugin's makereport
        returned it before qbench's was called. ``None`` for a test this process did not
        collect (an xdist controller's)."""
        if self.items_by_id is None:
            self.items_by_id = {item.nodeid: item for item in self.items}
        item = self.items_by_id.get(nodeid)
        return None if item is None else item_facts(item, self.worker)

    def late_failure(self, report: pytest.TestReport, facts: Any, problem: Any) -> tuple[Any, Any]:
        """A report's facts with its failure's, and its problem: the one place the failure of a
        phase that raised (`raised`, taken off) is described when `make_report` made its report,
        as the report is logged (`pytest_runtest_logreport`) or sent (an xdist worker's
        ``pytest_report_to_serializable``), from the report as it is then: failed or a rerun
        (pytest-rerunfailures'), its location and text as every implementation of
        ``pytest_runtest_makereport`` left them. ``facts``: the report's so far (a mapping,
        else none), returned as they are when nothing is added; ``problem``: qbench's error
        while the report was made, which stays the first; an error here is the problem when
        there was none, never raised (the run, xdist's transport, go on). Called only while a
        phase's exception waits (`raised`): nothing of it on a passing test's path."""
        try:
            excinfo = self.raised.pop((report.nodeid, report.when), None)
            outcome: str = report.outcome  # pytest-rerunfailures' "rerun" too
            if excinfo is None or (outcome != "failed" and outcome != "rerun"):
                return facts, problem
            failure = failure_facts(
                excinfo, self.rootpath, report.location[0], self.limits, report.longrepr
            )
        except Exception as exc:  # as an exception while the report was made
            return facts, problem or f"{type(exc).__name__}: {exc}"
        if isinstance(facts, Mapping):
            return {**facts, FAILURE_ATTR: failure}, problem
        return {FAILURE_ATTR: failure}, problem

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(
        self, config: pytest.Config, report: Any
    ) -> Generator[None, Any, Any]:
        data = yield
        if not isinstance(data, dict):  # registered only by an xdist worker (`hook_overrides`)
            return data
        if self.raised:  # the failure of a report made by `make_report`, as the wrappers left it
            facts = data.get(FACTS_ATTR)
            joined, problem = self.late_failure(report, facts, data.get(INTERNAL_ERROR_ATTR))
            if joined is not facts:
                data[FACTS_ATTR] = joined
            if problem:
                data[INTERNAL_ERROR_ATTR] = problem
        if data.get("when") == "setup":
            facts = data.get(FACTS_ATTR)
            if not isinstance(facts, dict) or ITEM_ATTR not in facts:
                with suppress(Exception):  # another plugin's report: found as the session does
                    self.give_way_to_report_makers()
                    found = self.item_facts_of(report.nodeid)
                    if found is not None:
                        data[FACTS_ATTR] = {**(facts or {}), ITEM_ATTR: found}
        if data.get("user_properties"):
            # execnet only carries builtins: one odd object would crash xdist's transport.
            data["user_properties"] = sanitize_user_properties(data["user_properties"])
        if self.runtime_secrets.known:
            try:  # the controller cannot know a secret a test set on this worker
                data = redact_report_data(data, self.runtime_secrets)
            except Exception as exc:  # never break xdist's transport because of qbench
                data[INTERNAL_ERROR_ATTR] = f"redacting the report: {type(exc).__name__}: {exc}"
        return data


class QBenchSession(QBenchWorker):
    """Per-run state where reports arrive: accumulation, streaming, and the reports at the end."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        super().__init__(config, settings.limits, worker=None)
        self.settings = settings
        self.run_id = settings.run_id or store.new_run_id()
        self.aggregator = Aggregator(settings.md_max_items)
        self.pending: dict[str | tuple[str, Any], TestAccumulator] = {}
        """The tests going, by node id (and an xdist report's node: the worker's)."""
        self.plain_tests: dict[str, list[Any]] = {}
        """The tests going whose reports so far are a plain pass's (`pytest_runtest_logreport`):
        their setup report and item facts, then their call report, by node id. Their teardown
        makes the result from the three (`plain_pass_result`), else they are folded into a
        ``TestAccumulator`` in `pending` (`_fold_plain`). The terminal reporter keeps the
        reports anyway."""
        self.passed_output_kept = "passed" in settings.capture
        """Whether passing tests' captured output is kept: their results are then not made
        from their reports alone (`plain_tests`)."""
        self.collection_errors: list[DiagnosticRecord] = []
        self.warnings: list[DiagnosticRecord] = []
        self.notes: list[str] = []
        self.notes_shown = 0
        """The notes the terminal summary wrote; `pytest_unconfigure` writes the others (its
        own, and an internal error of the summary's)."""
        self.internal_errors: list[str] = []
        """qbench's own errors while recording (``RunMeta.recording_errors``)."""
        self.crashed_workers: list[str] = []
        """The xdist workers that went down with an error: ``gw0: <error>``."""
        self.deselected: list[str] = []
        """Node ids of the deselected tests, for the history index (``qbench diff``)."""
        self.written: list[Path] = []
        self.skipped_collectors: dict[str, TestResultRecord] = {}
        """The modules skipped at collection, by node id (emitted when collection ends)."""
        self.collected = False
        """Whether collection ended (the skipped modules were emitted)."""
        self.unstreamed: list[TestResultRecord] = []
        self.result_listeners: list[Callable[[TestResultRecord], None]] = []
        """Called with each finished result (the quarantine reads its failure's fingerprint)."""
        self.quarantined: dict[str, bool] = {}
        """The quarantined tests that failed, and whether each failure is a known one (set by
        the quarantine when the session ends, before the run is indexed)."""
        self.interrupted = False
        self.end_broke = False
        """Whether a ``pytest_sessionfinish`` implementation raised (`session_end_broke`)."""
        self.session: pytest.Session | None = None
        """The session, once it finishes (`end` reads its exit status)."""
        self.ended = False
        """The reports are written (`end`): the stream is closed."""
        self.pid = store.process_id()
        """The run's process: a child a test forked that went on with the session is not it."""
        self.late_warnings = 0
        """Warnings pytest recorded after the reports were written (another plugin's terminal
        summary): not in them, and said so on the terminal."""
        self.stream: store.StreamWriter | None = None
        self.stream_written: store.Written | None = None
        """What the stream holds, as the index reads it (``StreamWriter.written``)."""
        self.order_written = False
        """Whether the tests' order was written (``order_path``), to be removed at the end."""
        self.phase_mark: store.PhaseMark | None = None
        self.keep_mark = False
        """Whether its session end could not write its report.json, or index the run: its mark
        then stays, so that the next run and the history's commands index it."""
        self.marked = False
        """Whether the run is marked unfinished (``store.mark_unfinished``) until it ends: if it
        dies, the next run's session end finds and indexes it."""
        self.stream_failures = 0
        """Writes to the stream that failed (a full disk)."""
        self.stream_damaged = False
        """The stream holds a torn line that could not be taken out."""
        self.run_lock = store.RunLock(self.run_dir)
        self.terminal_stats: dict[str, list[Any]] | None = None
        self.coverage: CoverageReportRecord | None = None
        self.gates: list[GateResultRecord] = []
        """``GateResult`` records of the gates asked for (coverage, metrics)."""
        self.attach_budget = AttachBudget(settings.attach.max_total)
        self.checks: list[CheckRunRecord] = []
        """The static checkers' runs (``--qbench-check``), without their diagnostics."""
        self.diagnostics: list[DiagnosticRecord] = []
        """What the static checkers found, errors first (bounded)."""
        self.diagnostic_counts: dict[str, dict[str, int]] = {}
        """Their findings per tool and severity (all of them)."""
        self.started_at = clock.utc_now()
        self.start_clock = clock.monotonic()
        self.run = new(
            "RunMeta",
            run_id=self.run_id,
            started_at=iso(self.started_at),
            cwd=str(config.invocation_params.dir),
            command=self.redact.argv(["pytest", *config.invocation_params.args]),
            collect_only=bool(config.option.collectonly),
        )
        self.environment = describe_environment(
            pytest.__version__, _plugin_versions(config), os.environ
        )

    # --- safety ---------------------------------------------------------------------------

    @contextmanager
    def guard(self, where: str) -> Iterator[None]:
        """Turn an exception inside qbench into a note; the user's run goes on."""
        try:
            yield
        except Exception as exc:
            self.note_internal_error(where, exc)

    def note_internal_error(self, where: str, exc: BaseException | str) -> None:
        """Record a qbench bug as a warning in the report and on the terminal."""
        if isinstance(exc, BaseException):
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        else:
            detail = exc
        message = self.redact(f"internal error in {where}: {detail}")
        line = " ".join(message.split())[:500]  # one terminal line
        self.notes.append(line)
        if len(self.internal_errors) < MAX_DIAGNOSTICS:
            self.internal_errors.append(line)
        diagnostic = new(
            "Diagnostic", tool="qbench", severity="warning", code="internal-error", message=message
        )
        if len(self.warnings) < MAX_DIAGNOSTICS:
            self.warnings.append(diagnostic)
        if self.stream is not None:
            with suppress(Exception):  # the stream itself may be what broke
                self.stream.write_diagnostic("warning", diagnostic)

    @property
    def run_dir(self) -> Path:
        """This run's directory in the run store."""
        return store.run_dir(self.settings.qbench_dir, self.run_id)

    @property
    def stream_path(self) -> Path:
        """This run's ``results.jsonl``."""
        return self.run_dir / store.STREAM_NAME

    @property
    def order_path(self) -> Path:
        """The node ids of the tests this run is to run, in order (``store.write_order``)."""
        return self.run_dir / store.ORDER_NAME

    # --- hooks ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.claim_run_dir()  # a UsageError stops pytest before any test runs
        with self.guard("pytest_sessionstart"):
            # pytest's own "in 1.23s" also counts from here
            self.started_at = clock.utc_now()
            self.start_clock = clock.monotonic()
            self.run["started_at"] = iso(self.started_at)
            terminal = self.config.pluginmanager.get_plugin("terminalreporter")
            self.terminal_stats = getattr(terminal, "stats", None)
            try:
                self.open_stream()
            finally:  # marked even when the start failed by a bug: a run that died unrecorded
                # (store.unrecorded), never one the history skips; not when the disk refused
                # the stream (its results are kept in memory for the reports)
                if self.stream is not None or not self.stream_failures:
                    self.marked = store.mark_unfinished(self.settings.qbench_dir, self.run_id)
                    if not self.marked:
                        self.notes.append(store.unmarked_note(self.settings.qbench_dir))
            self.enable_attachments(self.run_dir, self.settings.attach)
        with self.guard("pytest_sessionstart"):  # after the run's start: its id and time
            session_end.mark_outputs_unfinished(self)

    def claim_run_dir(self) -> None:
        """Make this run's directory, atomically: a run id that another run holds (even one
        started at the same moment) is refused; a generated one is drawn again. A directory
        on the way that another run starting at once removes (its start-up probe cleaning up
        what it made, `settings._probe`) is made again."""
        attempts = 5
        for attempt in range(1, attempts + 1):
            try:
                store.prepare_store(self.settings.qbench_dir)
                self.run_lock.claim()
                return
            except FileExistsError:
                if not os.path.lexists(self.run_dir):  # of a directory since removed: again
                    continue
                if self.settings.run_id is not None:
                    raise run_id_taken(self.run_id, self.run_dir.parent) from None
                self._set_run_id(store.new_run_id())
            except OSError as exc:
                if isinstance(exc, FileNotFoundError) and attempt < attempts:
                    continue
                raise self._unwritable(exc.strerror or str(exc)) from None
        raise self._unwritable(f"tried {attempts} times")

    def _unwritable(self, reason: str) -> pytest.UsageError:
        return pytest.UsageError(
            f"{self.settings.dir_source} is not writable, given: {self.settings.qbench_dir} "
            f"(cannot create {self.run_dir}: {reason}); choose a writable path"
        )

    def _set_run_id(self, run_id: str) -> None:
        self.run_id = self.run["run_id"] = run_id
        self.run_lock = store.RunLock(self.run_dir)

    def open_stream(self) -> None:
        """Open ``results.jsonl`` and write the start record; when the disk refuses, the
        results are kept in memory for the reports."""
        meta = new("ReportMeta", qbench_version=__version__, created_at=iso(self.started_at))
        start = new("StreamStart", meta=meta, run=self.run, environment=self.environment)
        try:
            self.stream = store.StreamWriter(self.stream_path, batched=True)
            self.stream.write_start(start)
        except OSError as exc:
            self.stream_failed(exc)

    def stream_failed(self, exc: OSError) -> None:
        """Note (once) that a write to the stream failed (a full disk): the results it could
        not take are kept in memory, and written to it when it takes writes again."""
        if self.stream_failures == 0:
            self.notes.append(
                f"could not write {self.shown(self.stream_path)}: {exc.strerror or exc}; "
                "the results are kept in memory for the reports"
            )
        self.stream_failures += 1

    def _stream_write(self, write: Callable[[store.StreamWriter], None]) -> None:
        """One record to the stream, if it is open; a failed write is noted, never raised."""
        if self.stream is None:
            return
        try:
            write(self.stream)
        except OSError as exc:
            self.stream_failed(exc)

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.passed:
            return
        with self.guard("pytest_collectreport"):
            if report.failed:
                self._add_collection_error(collection_error(report, self.limits, self.redact))
            elif report.nodeid in self.skipped_collectors:
                # one file, two collectors (--doctest-modules' DoctestModule beside the
                # Module): pytest counts each skip, under one node id
                if not self.collected:
                    self.skipped_collectors[report.nodeid]["counted_as"].append("skipped")
            else:
                skipped = skipped_collector(report, self.redact)
                self.skipped_collectors[report.nodeid] = skipped
                if self.collected:
                    self._emit(skipped)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = session.items
        with self.guard("pytest_collection_finish"):
            self.give_way_to_report_makers()
            self._emit_skipped_collectors()
        if self.run["collect_only"]:  # pytest's "N tests collected" of a collection
            self.run["collected"] = len(session.items)
        elif session.items and self.stream is not None:
            # the order the tests run in: a run killed mid-test (pytest-timeout's thread
            # method, a signal) is then known to have died in the first test without a result
            with self.guard("pytest_collection_finish"), suppress(OSError):
                nodeids = self.redact.data([item.nodeid for item in session.items])
                self.order_written = store.write_order(self.order_path, nodeids)
                if self.order_written:  # and the phase it died in
                    self.phase_mark = store.PhaseMark(self.run_dir / store.PHASE_NAME)
                    self.phase_map = self.phase_mark.map
                    self.stream.count_into(self.phase_mark.made)

    @pytest.hookimpl
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        with self.guard("pytest_deselected"):
            self.aggregator.add_deselected(len(items))
            self.deselected.extend(self.redact(item.nodeid) for item in items)
            self._stream_write(lambda stream: stream.write_deselected(len(items)))

    @pytest.hookimpl
    def pytest_warning_recorded(
        self, warning_message: Any, when: str, nodeid: str, location: Any
    ) -> None:
        if self.ended:  # the reports are written and the stream closed: counted, said at the end
            self.late_warnings += 1
            return
        with self.guard("pytest_warning_recorded"):
            diagnostic = warning_diagnostic(
                self.redact(str(warning_message.message)),
                warning_message.category.__name__,
                str(warning_message.filename),
                warning_message.lineno,
                self.redact(nodeid),
                self.rootpath,
            )
            self.aggregator.add_warning(diagnostic)
            if len(self.warnings) < MAX_DIAGNOSTICS:
                self.warnings.append(diagnostic)
            self._stream_write(lambda stream: stream.write_diagnostic("warning", diagnostic))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take a test's report into its result (the result written with its last one)."""
        try:  # not self.guard(): this runs three times per test
            nodeid = report.nodeid
            when = report.when
            # The word the terminal reporter has just filed the report under, found without
            # `_category`'s call where it is the one a report of this phase and outcome gets
            # nearly always ("" for a passing setup or teardown, else its outcome), which the
            # report's being the last of that word's list tells exactly.
            outcome: str = report.outcome
            category = outcome if when == "call" or outcome != "passed" else ""
            stats = self.terminal_stats
            filed = stats.get(category) if stats is not None else None
            attributes = report.__dict__
            beside = self.beside
            facts: Mapping[str, Any] = beside.pop((nodeid, when), NO_FACTS) if beside else NO_FACTS
            if not filed or filed[-1] is not report:
                category = self._category(report)
            elif (
                outcome == "passed"
                and type(report) is TestReport  # pytest's own (a subtest's is of a subclass)
                and not self.raised
                and attributes.keys().isdisjoint(NOT_PLAIN)
            ):
                # A phase of a plain passing test, filed under its phase's word, with no facts
                # but its item's (setup): held until its teardown makes the result from the
                # three reports in one call (`plain_tests`; issue 28).
                plain_tests = self.plain_tests
                if when == "call":
                    held = plain_tests.get(nodeid)
                    if held is not None and len(held) == 2 and not facts:
                        held.append(report)
                        return
                elif when == "setup":
                    if (
                        len(facts) == 1
                        and ITEM_ATTR in facts
                        and nodeid not in plain_tests
                        and nodeid not in self.pending
                    ):
                        plain_tests[nodeid] = [report, facts[ITEM_ATTR]]
                        return
                elif when == "teardown":
                    held = plain_tests.pop(nodeid, None)
                    if held is not None:
                        # its result from the three reports, unless passing tests' output is
                        # kept, it has user properties or item facts but markers (the
                        # accumulator's path then: `_fold_plain`)
                        stored = None
                        if len(held) == 3 and not (
                            facts or self.passed_output_kept or report.user_properties
                        ):
                            try:
                                stored = plain_pass_result(held[0], held[2], report, held[1])
                            except Exception:  # the accumulator's path says what went wrong
                                stored = None
                        if stored is not None:
                            self._send(stored, nodeid)
                            return
                        plain_tests[nodeid] = held
            # Consumed here: the terminal reporter keeps every report, so do not let ours grow
            # them (looked for first: a report of this process carries neither).
            problem = None
            if INTERNAL_ERROR_ATTR in attributes:
                problem = attributes.pop(INTERNAL_ERROR_ATTR)
            if FACTS_ATTR in attributes:  # an xdist worker's, a forked child's, a plugin's
                facts = joined_facts(facts, attributes.pop(FACTS_ATTR))
            if self.raised:  # a phase raised: its failure's facts, from the report as logged
                facts, problem = self.late_failure(report, facts, problem)
            if when == "setup" and ITEM_ATTR not in facts:  # another plugin made it
                self.give_way_to_report_makers()  # one registered while the tests run
                found = self.item_facts_of(nodeid)
                if found is not None:
                    facts = {**facts, ITEM_ATTR: found}
            if problem:
                self.note_internal_error(f"pytest_runtest_makereport ({nodeid})", str(problem))
            node = attributes.get("node")  # an xdist worker's: ids repeat across them
            key = nodeid if node is None else (nodeid, node)
            pending = self.pending
            if self.plain_tests:  # a plain test's phases so far, folded as they would have been
                held = self.plain_tests.pop(nodeid, None)
                if held is not None:
                    pending[key] = self._fold_plain(held)
            acc = pending.get(key)
            if acc is None:
                acc = pending[key] = TestAccumulator(
                    report, self.limits, self.redact, self.rootpath
                )
            try:
                finished = acc.add(report, category, facts)
            except Exception as exc:  # the test still finishes when its teardown arrives
                self.note_internal_error(f"reading the {when} report of {nodeid}", exc)
                finished = when == "teardown"
            if finished:
                del pending[key]
                if acc.counted_as or "call" in acc.outcome or self.terminal_stats is None:
                    self._finish_test(acc, report)
                # else an attempt whose call report a plugin kept from pytest (flaky's runs before
                # the last): pytest counted nothing of it, and neither does qbench
            elif category == "error" and self.phase_mark is not None:
                self._keep_setup_error(acc)
        except Exception as exc:
            self.note_internal_error("pytest_runtest_logreport", exc)

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest stops after collection errors by raising Session.Interrupted: not an interruption
        collection_stop = isinstance(excinfo.value, pytest.Session.Interrupted)
        self.interrupted = not (collection_stop and self.collection_errors)
        # session.shouldstop (--sw) raises pytest's Interrupted; pytest-xdist's own (its -x,
        # --maxfail) raises its class of the same name
        stopped = collection_stop or type(excinfo.value).__name__ == "Interrupted"
        if stopped and self.interrupted:
            with self.guard("pytest_keyboard_interrupt"):
                why = str(excinfo.value).strip().rstrip(".") or "session.shouldstop"
                self.note_warning("run-stopped", f"pytest stopped the run: {why}", None, None)

    # A wrapper, so that the reports are written after pytest's warnings wrapper has recorded
    # what the other implementations warned (a conftest's pytest_sessionfinish): they are in the
    # reports, and no warning reaches the stream after it is closed. pluggy calls the wrappers of
    # one priority last registered first: this one is registered (qbench's pytest_configure)
    # after pytest's warnings plugin and before the terminal reporter, so its code after the
    # yield runs after the warnings wrapper's and before the terminal summary, which prints
    # qbench's lines (pytest_terminal_summary writes the reports if it comes first). It reads
    # session.exitstatus, not the argument: the gates' wrapper (verdicts.py, tryfirst, so
    # outermost) has set the final status by now. pytest 9's --max-warnings status (6) is set by
    # the terminal reporter's wrapper after the terminal summary, so finish() foresees it. When an
    # implementation raises (a warning turned into an error by -W error), pytest stops with the
    # traceback, without its closing line: the reports are written all the same, incomplete
    # (never green), naming the exception, and the exception goes on.
    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, object, object]:
        self.session = session
        try:
            result = yield
        except BaseException as exc:
            self.session_end_broke(exc)
            raise
        failed = session.shouldfail
        if failed and isinstance(failed, str) and not session.testsfailed:
            # a plugin failed the session without a failing test (pytest-timeout's
            # --session-timeout): pytest's banner says why, and so does the report
            with self.guard("pytest_sessionfinish"):
                self.note_warning(
                    "session-failed", f"pytest failed the session: {failed}", None, None
                )
        self.end()
        return result

    def session_end_broke(self, exc: BaseException) -> None:
        """A ``pytest_sessionfinish`` implementation raised (another plugin's, a conftest's, or
        a warning made an error by ``-W error``): pytest stops with its traceback and no closing
        line, so the session's end is not what qbench records; write the reports, incomplete."""
        with self.guard("pytest_sessionfinish"):
            detail = " ".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.note_internal_error(
                "the session's end",
                f"a pytest_sessionfinish implementation raised {detail}; pytest stopped there "
                "with a traceback, without its summary line (with -W error or filterwarnings = "
                "error, a warning raises), so what came after it at the session's end is missing",
            )
        self.end_broke = True  # pytest's exit status is the traceback's, not the session's
        self.end()

    def end(self) -> None:
        """Write the reports (once), with the session's exit status as it is now."""
        if self.ended or self.session is None:
            return
        self.ended = True
        if store.process_id() != self.pid:  # a test's forked child went on with the session
            self.notes.append(
                f"this process ({store.process_id()}) was forked by a test of run {self.run_id} "
                f"(process {self.pid}) and went on with pytest's session: its results and "
                "closing line are not the run's, and nothing of it is recorded (end the "
                "child's branch with os._exit)"
            )
            return
        with ExitStack() as stack:
            mocked = self.real_os(stack, "pytest_sessionfinish")
            try:
                if mocked:
                    self.notes.append(
                        f"a test left {', '.join(mocked)} replaced (a mock never stopped): "
                        "qbench wrote the run's files with the real functions, and put the "
                        "replacement back"
                    )
                self.finish(int(self.session.exitstatus))
            except Exception as exc:
                self.note_internal_error("pytest_sessionfinish", exc)
                with self.guard("the last-resort report"):  # the user's run still ends as pytest's
                    session_end.fail_end_closed(
                        self, self.internal_errors[-1] if self.internal_errors else str(exc)
                    )

    def real_os(self, stack: ExitStack, hook: str) -> list[str]:
        """The real ``os`` functions put back on ``stack`` for the rest of ``hook``
        (`real_os.restored`: a mock a test left on); the names put back. A bug there is an
        internal error of ``hook``, and the run's end goes on without them."""
        with self.guard(hook):
            return stack.enter_context(real_os.restored())
        return []

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.end()  # a terminal reporter registered before qbench: its summary comes first
        with self.guard("pytest_terminal_summary"):
            for note in self.notes:
                terminalreporter.write_line(f"qbench: {note}", yellow=True)
                self.notes_shown += 1
            if self.written:
                terminalreporter.write_line(f"qbench: wrote {', '.join(self._shown_paths())}")
            if self.settings.annotations:
                for command in self._annotations():
                    terminalreporter.write_line(command)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        with ExitStack() as stack:
            self.real_os(stack, "pytest_unconfigure")  # a mock a test left on (see end)
            if self.stream is not None:
                with self.guard("pytest_unconfigure"):  # closing writes the lines still waiting
                    self.stream.close()
            self.run_lock.release()
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        # suppressed: a test may have closed the terminal's stream (sys.stdout under -s), and
        # the other plugins' pytest_unconfigure must still run
        with suppress(Exception):
            if terminal is not None:  # the summary's notes are written: these come after it
                for note in self.notes[self.notes_shown :]:
                    terminal.write_line(f"qbench: {note}", yellow=True)
            if self.late_warnings and terminal is not None:  # after pytest's closing line
                from pytest_qbench.core.summary_words import pluralize

                terminal.write_line(
                    f"qbench: not in the reports: {pluralize(self.late_warnings, 'warnings')} "
                    "recorded after they were written (in a pytest_terminal_summary hook)",
                    yellow=True,
                )

    # --- accumulation ---------------------------------------------------------------------

    def _emit_skipped_collectors(self) -> None:
        """Emit the modules skipped at collection, each once with every skip pytest counted
        (they are held until collection ends for that)."""
        if self.collected:
            return
        self.collected = True
        for skipped in self.skipped_collectors.values():
            self._emit(skipped)

    def _keep_setup_error(self, acc: TestAccumulator) -> None:
        """Keep the error of a setup beside the phase mark (`store.PhaseMark.
        keep_setup_error`), so that a death in the test's teardown keeps it; a disk that
        refuses loses only that."""
        failure = acc.failures.get("setup")
        if failure is not None and self.phase_mark is not None:
            nodeid = self.redact(acc.nodeid) if self.redact.active else acc.nodeid
            with suppress(OSError):
                self.phase_mark.keep_setup_error(nodeid, failure)

    def _category(self, report: pytest.TestReport) -> str:
        """The word pytest's summary line counts this report under ("" for uncounted phases).

        The terminal reporter has just filed the report under that word (this hook runs last);
        reading it back is exact and cheap. Without a terminal reporter, ask the hook, as it does.
        """
        stats = self.terminal_stats
        if stats is not None:
            for category, reports in stats.items():
                if reports and reports[-1] is report:
                    return str(category)
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        if status:
            return str(status[0])
        # no plugin said (``-p no:terminal`` takes away the terminal's answer): its default
        outcome = report.outcome
        return "error" if outcome == "failed" and report.when != "call" else outcome

    def _finish_test(self, acc: TestAccumulator, last: pytest.TestReport | None) -> None:
        """Emit the test's result, made from its last report (``None``: it never came)."""
        try:  # the result without its fields at their default (as the stream stores it)
            captured = None
            properties = None
            if acc.outcome == ALL_PASSED and not acc.wasxfail and not acc.subtests:
                outcome: Outcome = "passed"  # nearly every test: `final_outcome`'s word
            else:
                outcome = acc.final_outcome()
            if last is not None:
                if outcome in self.settings.capture:
                    captured = captured_output(last.sections, self.limits, self.redact)
                if last.user_properties:
                    properties = self.redact.data(sanitize_user_properties(last.user_properties))
            stored = acc.result(captured, outcome, properties)
            if acc.case_error:
                self.note_warning(
                    "qbench-case", f"{acc.nodeid}: {acc.case_error}", acc.file, acc.line
                )
            if acc.attachments:  # the result has them (`TestAccumulator.result`)
                self.admit_attachments(acc, stored["attachments"])
        except Exception as exc:  # keep the test in the report, with what is certain
            self.note_internal_error(f"building the result of {acc.nodeid}", exc)
            self._emit_modified(acc.minimal_result(), acc.nodeid)
            return
        self._send(stored, acc.nodeid)

    def _send(self, stored: Record, nodeid: str) -> None:
        """Count and stream a finished test's result, given without its fields at their
        default (as the stream stores it)."""
        if self.modify_hooked:  # `_emit_modified` asks again
            self._emit_modified(cast("TestResultRecord", expand(store.RESULT, stored)), nodeid)
            return
        # Most runs have no such hook: no model, no whole record. Straight to the aggregator and
        # the stream when nothing else reads it (the whole record is made only for a result
        # that is kept or read), in this frame (issue 28).
        stream = self.stream
        if self.result_listeners or self.unstreamed or stream is None:
            self._emit(cast("TestResultRecord", expand(store.RESULT, stored)))
            return
        if self.redact.active:  # a parametrized secret is in the id
            self._redact_ids(stored)
        self.aggregator.add_stored(stored)
        try:  # nothing waits before it: straight to the stream's writer (it batches writes)
            stream.write_stored(stored)
        except OSError as exc:  # a full disk, say: the writer keeps it (`take_unwritten`)
            self.stream_failed(exc)

    def _fold_plain(self, held: list[Any]) -> TestAccumulator:
        """The accumulator of a plain test's phases held so far (`plain_tests`), as it would be
        had it taken each report as it came: one that turns out otherwise goes on there."""
        setup = held[0]
        acc = TestAccumulator(setup, self.limits, self.redact, self.rootpath)
        acc.add(setup, "", {ITEM_ATTR: held[1]})
        if len(held) == 3:
            acc.add(held[2], "passed", NO_FACTS)
        return acc

    def _emit_modified(self, result: TestResultRecord, nodeid: str) -> None:
        """``_emit`` of the result as the ``pytest_qbench_modify_result`` hooks leave it (the
        hooks may change any field)."""
        hook = self.config.hook.pytest_qbench_modify_result
        if hook.get_hookimpls():
            with self.guard(f"pytest_qbench_modify_result ({nodeid})"):
                result = self._modify_result(result, hook)
        self._emit(result)

    def _modify_result(self, result: TestResultRecord, hook: Any) -> TestResultRecord:
        """Hand the result to the hook as a ``TestResult`` model; keep what the hook left."""
        from pytest_qbench.report.models import TestResult

        model = TestResult.model_validate(result)
        hook(result=model, config=self.config)
        # Revalidated: a hook may have assigned a value of the wrong type.
        modified = TestResult.model_validate(model.model_dump(warnings=False))
        return cast("TestResultRecord", modified.model_dump(mode="json"))

    def admit_attachments(self, acc: TestAccumulator, attachments: list[AttachmentRecord]) -> None:
        """Hold the run to ``qbench_attach_max_total`` (xdist workers each know only their own
        files); the first attachment removed for it is a warning."""
        budget = self.attach_budget
        refused = budget.refused
        budget.admit(self.run_dir, attachments)
        if budget.refused and not refused:
            self.note_warning(
                "attachments",
                f"{acc.nodeid}: attachments not stored: {over_total(budget.max_total)}; "
                "raise it in the ini file if you need them",
                acc.file,
                acc.line,
            )

    def _redact_ids(self, result: Mapping[str, Any]) -> None:
        """Redact a result's node id and test name (a parametrized secret is in them), in
        place: the one copy of it for `_finish_test`'s stored result and `_emit`'s record.
        Called only while the redactor knows a secret (``self.redact.active``), so that a run
        without one pays no call."""
        record = cast("dict[str, Any]", result)
        redact = self.redact
        record["nodeid"] = redact(record["nodeid"])
        record["test_name"] = redact(record["test_name"])

    def _emit(self, result: TestResultRecord) -> None:
        """Count a finished result and stream it."""
        if self.redact.active:  # a parametrized secret is in the id
            self._redact_ids(result)
        self.aggregator.add_result(result)
        for listener in self.result_listeners:
            with self.guard(f"reading the result of {result['nodeid']}"):
                listener(result)
        self.unstreamed.append(result)
        self._drain_unstreamed()

    def _drain_unstreamed(self) -> None:
        """Hand the results kept in memory to the stream, oldest first (nearly always the one
        just finished). A write the disk refuses (a full disk) is noted: the writer keeps the
        lines it could not write, in order, and hands them back when closed
        (`take_unwritten`)."""
        stream = self.stream
        if stream is None:  # the stream could not be opened: keep results in memory
            return
        for result in self.unstreamed:
            try:
                stream.write_result(result)
            except OSError as exc:  # the writer keeps it
                self.stream_failed(exc)
        self.unstreamed.clear()

    def flush_stream(self) -> None:
        """Write the stream's records that wait (its writes are batched: ``store.BATCH_*``)
        before something reads the stream or marks a phase of the run elsewhere (the gates'
        reading, a queue's unit marked finished)."""
        self._stream_write(store.StreamWriter.flush)

    def take_unwritten(self, stream: store.StreamWriter) -> None:
        """The results a closed stream's disk never took (``StreamWriter.unwritten``): kept in
        memory for the reports, after the stream's."""
        prefix = store.RESULT_PREFIX.encode()
        for line in stream.unwritten:
            if line.startswith(prefix):
                raw = line[len(prefix) :].decode("utf-8", "replace").rstrip()[:-1]
                self.unstreamed.append(store.read_result(raw))

    def _add_collection_error(self, diagnostic: DiagnosticRecord) -> None:
        if diagnostic["nodeid"]:
            diagnostic["nodeid"] = self.redact(diagnostic["nodeid"])
        self.aggregator.add_collection_error(diagnostic)
        if len(self.collection_errors) < MAX_DIAGNOSTICS:
            self.collection_errors.append(diagnostic)
        self._stream_write(lambda stream: stream.write_diagnostic("collection_error", diagnostic))

    def _note_moved_clock(self, duration: float) -> None:
        """Say so when a test froze or moved the clock pytest times the tests by (freezegun,
        time-machine): still off at the end, or a test longer than the whole run. The run's
        dates and duration are qbench's own clock's (``core.clock``), the tests' pytest's."""
        off = abs(time.time() - clock.wall_time())
        if off > MOVED_CLOCK_SECONDS or self.aggregator.longest() > duration + MOVED_CLOCK_SECONDS:
            self.note_warning(
                "clock-moved",
                "the clock was frozen or moved during the run (freezegun, time-machine): the "
                "tests' start times and durations are pytest's, read from that clock, as its "
                "closing line's time is; the run's dates and duration are the real clock's",
                None,
                None,
            )

    def note_warning(self, code: str, message: str, file: str | None, line: int | None) -> None:
        """A qbench warning about the user's tests (not a pytest warning, so not counted)."""
        message = self.redact(message)
        diagnostic = new(
            "Diagnostic",
            tool="qbench",
            severity="warning",
            code=code,
            message=message,
            file=file,
            line=line,
        )
        self.notes.append(message)
        if len(self.warnings) < MAX_DIAGNOSTICS:
            self.warnings.append(diagnostic)
        self._stream_write(lambda stream: stream.write_diagnostic("warning", diagnostic))

    def _flush_pending(self) -> None:
        """Tests whose last report never came (a crashed xdist worker, Ctrl-C).

        Those pytest counted (a crash report is a failure) become results; the others (a setup
        that passed before Ctrl-C) were not counted by pytest either, and are dropped.
        """
        folded = [self._fold_plain(held) for held in self.plain_tests.values()]
        self.plain_tests.clear()
        for acc in [*self.pending.values(), *folded]:
            if acc.counted_as:
                self._finish_test(acc, None)
        self.pending.clear()

    # --- the end --------------------------------------------------------------------------

    def finish(self, exitstatus: int) -> None:
        """Complete the run: the other plugins' hooks, the stream's end record, every file."""
        with self.guard("the skipped modules"):  # collection did not end (Ctrl-C, pytest.exit)
            self._emit_skipped_collectors()
        self._flush_pending()
        self.run["completed_at"] = iso(clock.utc_now())
        self.run["exit_code"] = None if self.end_broke else exitstatus
        # pytest exits 2 after collection errors too ("Interrupted: 1 error during collection"):
        # that run finished, with its errors; only Ctrl-C or pytest.exit interrupts one.
        stopped = exitstatus == pytest.ExitCode.INTERRUPTED and not self.collection_errors
        self.run["interrupted"] = self.interrupted or stopped or self._workers_gave_up(exitstatus)
        # what pytest settled from every source (addopts, PYTEST_ADDOPTS), for qbench diff
        self.run["max_failures"] = _max_failures(self.config)
        self.run["last_failed"] = _ran_last_failed(self.config)
        summary = self.aggregator.summary(clock.monotonic() - self.start_clock)
        summary["diagnostics"] = self.diagnostic_counts
        self._note_moved_clock(summary["duration"])
        if exitstatus == pytest.ExitCode.OK and _over_max_warnings(
            self.config, summary["warnings"]
        ):
            self.run["exit_code"] = MAX_WARNINGS_ERROR  # what pytest sets after its summary
        if exitstatus != pytest.ExitCode.INTERNAL_ERROR:  # else pytest broke off (a plugin's
            # hook raised as pytest logged a report, which then never reached qbench's hook): the
            # run is red already, and no count of qbench's is to blame
            self._check_counts(summary)
        report = new(
            "TestReport",
            meta=new("ReportMeta", qbench_version=__version__, created_at=iso(clock.utc_now())),
            run=self.run,
            environment=self.environment,
            summary=summary,
            collection_errors=self.collection_errors,
            warnings=self.warnings,
            coverage=self.coverage,
            gates=self.gates,
            repeats=self.aggregator.repeat_stats(),
            diagnostics=self.diagnostics,
            checks=self.checks,
        )
        report = self._report_hooks(report)
        if self.internal_errors:  # the report is incomplete: never green (report/verdict.py)
            from pytest_qbench.report.verdict import bounded_errors

            errors = [*report["run"]["recording_errors"], *self.internal_errors]
            report["run"]["recording_errors"] = bounded_errors(errors)
        self.restore_run_dir(report)
        self._drain_unstreamed()
        self.repair_stream()
        if self.stream is not None:
            end = new(
                "StreamEnd",
                run=report["run"],
                environment=report["environment"],
                sections=report["sections"],
                coverage=report["coverage"],
                gates=report["gates"],
            )
            self._stream_write(lambda stream: stream.write_end(end))
            self.stream.close()
            self.take_unwritten(self.stream)
            self.stream_written = self.stream.written  # what the index need not read back
            self.stream = None  # nothing goes into it after its end record (a late internal error)
        if self.phase_mark is not None:
            self.phase_map = bytearray(1)
            self.phase_mark.close()
        if self.order_written:  # the end record says the run did not die mid-test
            with suppress(OSError):
                self.order_path.unlink()
        with paused_gc():  # the outputs' imports (Jinja's) and rendering make no cyclic garbage
            self.publish(report)
        if self.marked and not self.keep_mark:  # its reports are written: not a run that died
            # (killed before this, or its report.json not written, it is one killed at its
            # session's end, store.killed_at_end)
            store.unmark_unfinished(self.settings.qbench_dir, self.run_id)

    def _check_counts(self, summary: Mapping[str, Any]) -> None:
        """Note (as an internal error: the report is incomplete) the tests pytest's closing
        line counts that qbench did not record, whatever lost them on the way."""
        stats = self.terminal_stats
        if stats is None or self.run["interrupted"]:  # an interrupted run is red already
            return
        missing = []
        for field, key in SUMMARY_KEYS:
            reports = stats.get(key, ())
            if field in OUTCOME_FIELDS and len(reports) > summary[field]:  # rarely: count them
                counted = sum(getattr(r, "count_towards_summary", True) for r in reports)
                if counted > summary[field]:
                    missing.append(f"{counted - summary[field]} {key}")
        if missing:
            self.note_internal_error(
                "recording the results",
                f"pytest counted {', '.join(missing)} that qbench did not record",
            )

    def _workers_gave_up(self, exitstatus: int) -> bool:
        """Whether pytest-xdist stopped the run because its workers crashed more often than
        ``--max-worker-restart`` allows ("maximum crashed workers reached"): the tests it had
        not run have no result, so the run did not finish, whatever pytest's counts say.
        Before any test ran pytest says "no tests ran" (exit status 5), which is not green."""
        if not self.crashed_workers:
            return False
        first = self.crashed_workers[0]
        crashes = plural(len(self.crashed_workers), "xdist worker")
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            message = f"no test ran: {crashes} crashed (first {first}); run without -n to see why"
        else:
            limit = _worker_restarts(self.config)
            if limit is None or len(self.crashed_workers) <= limit:
                return False  # xdist replaced each crashed worker and ran every test
            message = (
                f"pytest-xdist stopped the run: {crashes} crashed, more than the "
                f"{limit} restarts allowed (--max-worker-restart; first {first}); "
                "the tests it had not run have no result"
            )
        self.note_warning("workers-crashed", message, None, None)
        return True

    def restore_run_dir(self, report: TestReportRecord) -> None:
        """When the run directory was deleted while the run went on (by hand, say: retention
        spares a run in progress), make it again, with the stream the run still holds open."""
        if not self.run_lock.vanished():
            return
        message = (
            f"the run directory {self.shown(self.run_dir)} was deleted while the run went on; "
            "it was made again, with the reports of what the run holds"
        )
        self.notes.append(message)
        report["warnings"].append(
            new(
                "Diagnostic",
                tool="qbench",
                severity="warning",
                code="run-dir-deleted",
                message=message,
            )
        )
        try:
            store.prepare_store(self.settings.qbench_dir)
            self.run_lock.reclaim()
            if self.stream is not None and self.stream.vanished():
                self.stream.restore()
        except OSError as exc:
            self.stream_failed(exc)

    def repair_stream(self) -> None:
        """After a failed write that left a torn line in ``results.jsonl`` (the disk refused
        even to cut it off), rewrite the stream without it, so every reader gets whole records."""
        if self.stream is None or not self.stream.damaged:
            return
        try:
            self.stream.flush()
            store.repair_stream(self.stream_path)
        except OSError as exc:
            self.stream_damaged = True  # the reports parse what they splice
            self.notes.append(f"could not write {self.shown(self.stream_path)}: {exc}")
        else:
            self.stream.reopen()

    def _report_hooks(self, report: TestReportRecord) -> TestReportRecord:
        """Let other plugins change the report and add Markdown sections (as models)."""
        hook = self.config.hook
        if not (
            hook.pytest_qbench_modify_report.get_hookimpls()
            or hook.pytest_qbench_markdown_sections.get_hookimpls()
        ):
            return report
        from pytest_qbench.report.models import TestReport

        model = TestReport.model_validate(report)
        with self.guard("pytest_qbench_modify_report"):
            hook.pytest_qbench_modify_report(report=model, config=self.config)
        with self.guard("pytest_qbench_markdown_sections"):
            for sections in hook.pytest_qbench_markdown_sections(report=model, config=self.config):
                model.sections.extend(sections or [])
        with self.guard("the report as the hooks left it"):  # what they changed must be valid
            modified = TestReport.model_validate(model.model_dump(warnings=False))
            record = cast("TestReportRecord", modified.model_dump(mode="json"))
            record["summary"]["pass_rate"] = pass_rate(record["summary"])
            return record
        return report

    def publish(self, report: TestReportRecord) -> None:
        """Index the run, then write report.json, report.md and every extra output (one failing
        does not stop the rest); a run whose report.json was not written leaves the index again.
        The failing tests' history from the index goes into their results."""
        from pytest_qbench.history import publish
        from pytest_qbench.report.outputs import OutputWriter

        settings = self.settings
        stream = self.stream_path if self.stream_path.exists() else None
        indexed = publish.index_live_run(
            settings.qbench_dir,
            report,
            stream,
            self.unstreamed,
            settings.keep_runs,
            settings.db,
            self.deselected,
            settings.monitors,
            self.quarantined,
            self.stream_written,
        )
        self.notes.extend(indexed.notes)
        if self.unstreamed:  # report.json gets them after the stream's
            report["results"] = self.unstreamed
        view = self.aggregator.view()
        publish.add_history([*view.failures.items, *view.errors.items], indexed.histories)
        publish.add_history(self.unstreamed, indexed.histories)
        writer = OutputWriter(
            report=report,
            stream=stream,
            view=view,
            template_dir=settings.template_dir,
            max_items=settings.md_max_items,
            patches=publish.history_patches(indexed.histories),
            check=self.stream_damaged,
        )
        plan = publish.OutputPlan(
            run_dir=self.run_dir,
            json=settings.json_path,
            markdown=settings.md_path,
            html=settings.html_path,
            trend=publish.index_trend(settings.qbench_dir, settings.db),
            digest=settings.digest_path,
            ctrf=settings.ctrf_path,
            ctrf_history=publish.index_insights(settings.qbench_dir, settings.db, self.run_id),
            templates=settings.templates,
            step_summary=publish.step_summary_path(settings.github_summary),
        )
        publisher = publish.Publisher(writer, plan, shown=self.shown)
        self.written.extend(publisher.publish())
        self.notes.extend(publisher.notes)
        for where, exc in publisher.internal_errors:
            self.note_internal_error(where, exc)
            if where == publish.NONE_WRITTEN:  # the loop itself failed: no output says so
                session_end.fail_end_closed(self, self.internal_errors[-1])
        if self.run_dir / store.REPORT_JSON not in self.written:
            self.keep_mark = True  # its mark stays: store.killed_at_end
            failure = publisher.failure_of(self.run_dir / store.REPORT_JSON)
            self.notes.extend(
                publish.forget_unwritten_run(
                    settings.qbench_dir, self.run_dir, failure, settings.db, indexed=indexed.indexed
                )
            )
        elif indexed.failed:  # its mark stays: files.died_runs indexes it
            self.keep_mark = True
        elif indexed.indexed and publisher.recorded:  # an output failed: the report is incomplete
            errors = len(report["run"]["recording_errors"])
            self.notes.extend(
                publish.mark_incomplete(settings.qbench_dir, self.run_id, errors, settings.db)
            )

    def _annotations(self) -> list[str]:
        """GitHub workflow commands for the failures and the failed gates."""
        from pytest_qbench.history.publish import github_annotations

        found = self.diagnostics[: self.settings.md_max_items]
        return github_annotations(self.aggregator.view(), found, self.gates, self.config.rootpath)

    def _shown_paths(self) -> list[str]:
        return [self.shown(path) for path in self.written]

    def shown(self, path: Path) -> str:
        """``path`` as the terminal shows it: relative to where pytest was started."""
        try:
            return os.path.relpath(path, self.config.invocation_params.dir)
        except ValueError:  # another drive on Windows
            return str(path)


def pytest_report_maker(
    config: pytest.Config,
) -> Callable[[pytest.Item, pytest.CallInfo[None]], pytest.TestReport] | None:
    """pytest's own ``pytest_runtest_makereport`` (its runner's), when it is the only plain
    implementation registered so far (neither a wrapper, nor ``tryfirst`` or ``trylast``):
    pluggy calls plain implementations last registered first, so one of qbench's registered
    now would be called right before it, and the report it returns is pytest's, made by the
    same function. ``None`` when another (a conftest's, a plugin's) would be called between:
    qbench's implementation is then a wrapper, and that one is called as before."""
    hook = config.pluginmanager.hook.pytest_runtest_makereport
    impls = hook.get_hookimpls()
    plain = [
        impl
        for impl in impls
        if not (impl.wrapper or impl.hookwrapper or impl.tryfirst or impl.trylast)
    ]
    if len(plain) != 1 or any(_may_make_reports_first(impl) for impl in impls):
        return None
    impl = plain[0]
    if getattr(impl.plugin, "__name__", None) != "_pytest.runner":
        return None
    if tuple(impl.argnames) != ("item", "call") or impl.kwargnames:
        return None
    return cast("Callable[[pytest.Item, pytest.CallInfo[None]], pytest.TestReport]", impl.function)


REPORT_WRAPPER_NAME = "qbench-makereport"
"""The name `ReportWrapper` is registered under, when it is."""


@final
class ReportWrapper:
    """qbench's ``pytest_runtest_makereport`` as a wrapper, registered when a plugin came to
    make the reports before `QBenchWorker.make_report` (`QBenchWorker.give_way_to_report_makers`):
    the worker's own wrapper (`QBenchWorker.pytest_runtest_makereport`) registered under this
    holder's name, so that pluggy resumes one generator a phase, not one delegating to another
    (issue 28)."""

    def __init__(self, worker: QBenchWorker) -> None:
        self.worker = worker

    def hook_overrides(self) -> dict[str, Callable[..., Any] | None]:
        """The hook ``registered.Hooks`` registers for this holder: the worker's wrapper."""
        return {"pytest_runtest_makereport": self.worker.pytest_runtest_makereport}


def makes_reports_before(
    manager: pytest.PytestPluginManager, known: tuple[Any, ...], ours: Callable[..., Any]
) -> bool:
    """Whether a plain ``pytest_runtest_makereport`` registered since ``known`` (the
    implementations there when ``ours`` was registered) is called before ``ours``: any but a
    ``trylast`` one (pluggy calls the plain ones last registered first, the ``tryfirst`` ones
    before all)."""
    return any(
        not (impl.wrapper or impl.hookwrapper or impl.trylast)
        and impl not in known
        and impl.function != ours
        for impl in manager.hook.pytest_runtest_makereport.get_hookimpls()
    )


def _may_make_reports_first(impl: Any) -> bool:
    """Whether a ``tryfirst`` plain implementation may return a report before pytest's runner's
    (any but pytest's unittest support's, which only sets ``call.excinfo``)."""
    plain_first = impl.tryfirst and not (impl.wrapper or impl.hookwrapper)
    return bool(plain_first) and getattr(impl.plugin, "__name__", None) != "_pytest.unittest"


def redact_report_data(data: dict[str, Any], redact: Redactor) -> dict[str, Any]:
    """A serialized report with ``redact`` applied to every string but the test's id and
    location, which xdist matches against the collected items."""
    kept: dict[str, Any] = {key: data[key] for key in ("nodeid", "location") if key in data}
    redacted: dict[str, Any] = {**redact.data(data), **kept}
    longrepr = data.get("longrepr")
    if isinstance(longrepr, tuple):  # a skip's (path, line, reason): a tuple, as pytest reads it
        redacted["longrepr"] = tuple(redacted["longrepr"])
    return redacted


MAX_WARNINGS_ERROR = 6
"""pytest 9's exit status when every test passed but the warnings exceed ``--max-warnings``."""


def _over_max_warnings(config: pytest.Config, warnings: int) -> bool:
    """Whether pytest 9 will end the run with status 6 (``MAX_WARNINGS_ERROR``): its terminal
    reporter sets it after the terminal summary, after qbench wrote the reports, when the run
    ended 0 and counted more warnings than ``--max-warnings`` (or the ``max_warnings`` ini).
    Without the terminal reporter (``-p no:terminal``) nothing sets it: pytest exits 0."""
    if config.pluginmanager.get_plugin("terminalreporter") is None:
        return False
    limit = getattr(config.option, "max_warnings", None)
    if limit is None:
        try:
            limit = config.getini("max_warnings")
        except ValueError:  # a pytest without the option
            return False
    if limit is None or limit == "":
        return False
    try:
        return warnings > int(limit)
    except (TypeError, ValueError):
        return False


def _max_failures(config: pytest.Config) -> int:
    """The failures and errors at which pytest stops the run, as it settled them from every
    source: the least of ``--maxfail`` (``-x`` is 1) and the stepwise plugin's 1 (2 with
    ``--sw-skip``, which goes on past the first); 0 when nothing stops it."""
    limits = [max(0, int(getattr(config.option, "maxfail", 0) or 0))]
    if config.pluginmanager.has_plugin("stepwiseplugin"):
        limits.append(2 if getattr(config.option, "stepwise_skip", False) else 1)
    return min((n for n in limits if n), default=0)


def _ran_last_failed(config: pytest.Config) -> bool:
    """Whether pytest ran with ``--lf`` and the cache that serves it."""
    return bool(getattr(config.option, "lf", False)) and config.pluginmanager.has_plugin("lfplugin")


def _plugin_versions(config: pytest.Config) -> dict[str, str]:
    versions: dict[str, str] = {}
    for _plugin, dist in config.pluginmanager.list_plugin_distinfo():
        name, version = _name_and_version(dist)
        versions[name] = version
    return versions


def _name_and_version(dist: Any) -> tuple[str, str]:
    """A distribution's name and version, read from its metadata's first lines: parsing the
    whole file with the email parser (what ``dist.metadata`` does, twice) costs more than the
    rest of qbench's start."""
    with suppress(Exception):
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
        found: dict[str, str] = {}
        for line in text.splitlines():
            if not line:  # the headers end at the first empty line
                break
            key, sep, value = line.partition(":")
            if sep and key in ("Name", "Version"):
                found.setdefault(key, value.strip())
        if len(found) == 2:
            return found["Name"], found["Version"]
    name = getattr(dist, "project_name", None) or dist.metadata["Name"]
    return str(name), str(dist.version)


def _worker_restarts(config: pytest.Config) -> int | None:
    """How many crashed workers pytest-xdist replaces before it stops the run, by xdist's rule
    (its ``get_default_max_worker_restart``: ``--max-worker-restart``, else four times ``-n``;
    ``None``: no limit); 0 when it cannot be told, so that a crash is taken to have stopped
    the run (fail closed)."""
    option = config.option
    try:
        given = getattr(option, "maxworkerrestart", None)
        if given is not None:
            return int(given)
        workers = getattr(option, "numprocesses", None)
        return int(workers) * 4 if workers else None
    except (TypeError, ValueError):
        return 0


__all__ = ["QBenchSession", "QBenchWorker", "qbench_session_key"]
