"""Coverage inside pytest: qbench's own measurement, pytest-cov's data, xdist, and the gate.

- Serial run or xdist controller: measurement starts in ``pytest_load_initial_conftests``, before
  conftest files import the code under test (as pytest-cov does), and stops when the test loop
  ends.
- xdist workers measure their tests and send the data back through ``workeroutput`` (bytes,
  no shared files); the controller combines it with its own.
- With pytest-cov active, qbench measures nothing: it reads pytest-cov's combined data after
  pytest-cov has finished with it; a loop stopped early (``-x``, ``pytest.exit``) leaves
  pytest-cov's data unfinished, so the report has none, and says why.
- ``--qbench-cov-fail-under`` is judged when the test loop ends, or stops early, through
  `pytest_qbench.plugin.verdicts`, which fails the run for every gate; an error while measuring
  or judging fails the gate (pytest-cov's failed measurement is a total of 0, which fails too).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Generator
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.core import atomic
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.summary_words import plural
from pytest_qbench.plugin import registered
from pytest_qbench.plugin.options.settings import CoverageSettings
from pytest_qbench.report.coverage import data as coverage_data
from pytest_qbench.report.coverage.reports import DATA_FILE
from pytest_qbench.report.coverage.view import coverage_gate
from pytest_qbench.report.coverage.view import pytest_cov_gate
from pytest_qbench.report.coverage.view import total_text
from pytest_qbench.report.coverage.view import unmeasured_gate


if TYPE_CHECKING:
    import coverage

    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.verdicts import Verdicts
    from pytest_qbench.report.records import CoverageReportRecord
    from pytest_qbench.report.records import GateResultRecord

measurement_key = pytest.StashKey["Measurement"]()
PLUGIN_NAME = "qbench-coverage"
CONTEXTS_PLUGIN_NAME = "qbench-coverage-contexts"
WORKER_INPUT = "qbench_cov"  # plugin.COVERAGE_FLAG
WORKER_OUTPUT = "qbench_cov_data"
WORKER_UNIMPORTED = "qbench_cov_unimported"
CONTEXTS_FILE = "coverage-contexts.json"
IGNORED_AT_END = ("no-data-collected",)
"""coverage.py warnings that qbench states better itself (a worker sees only part of the run)."""
UNIMPORTED = "(module-not-imported)"
"""coverage.py's warning that a source package was never imported: under xdist it holds for the
run only when every process says it."""


class Measurement:
    """A coverage.py measurement that qbench started and stops."""

    def __init__(self, sources: Sequence[str] | None, root: Path) -> None:
        import coverage

        self.sources = sources
        self.warnings: list[str] = []
        self.unimported: list[str] = []
        """coverage.py's "Module X was never imported." warnings of this process."""
        # data_file=None keeps the data in memory: the combined data is written once, at the end.
        self.cov = coverage.Coverage(source=list(sources) if sources else None, data_file=None)
        self.left_out: list[str] = []
        """The directories not measured (``leave_out_own``)."""
        if not sources and not _configured_source(self.cov):
            self.left_out = own_directories(root)
            omit = list(self.cov.get_option("run:omit") or [])  # type: ignore[arg-type]
            self.cov.set_option("run:omit", [*omit, *omit_patterns(self.left_out)])
        self.started = False

    def start(self) -> None:
        """Start tracing."""
        with coverage_data.coverage_warnings(self.warnings):
            self.cov.start()
        self.started = True

    def switch_context(self, context: str) -> None:
        """Attribute what runs next to ``context`` (a test's node id, or ``""``)."""
        if self.started:
            self.cov.switch_context(context)

    def stop(self) -> coverage.CoverageData:
        """Stop tracing; the data (unexecuted source files included, at 0%)."""
        end_warnings: list[str] = []
        with coverage_data.coverage_warnings(end_warnings):
            if self.started:
                self.cov.stop()
                self.started = False
            data = self.cov.get_data()
        slugs = [f"({name})" for name in IGNORED_AT_END]
        kept = [w for w in end_warnings if not any(slug in w for slug in slugs)]
        self.unimported += [w for w in kept if UNIMPORTED in w]
        self.warnings += [w for w in kept if UNIMPORTED not in w]
        return data


def own_directories(root: Path) -> list[str]:
    """The directories whose code is not the project's, left out of a measurement that names no
    source (``--qbench-cov`` alone, coverage.py's default: whatever runs outside the standard
    library and site-packages): qbench's own package, pytest's and pluggy's, and the virtual
    environment. Installed from a checkout (editable), qbench's and pytest's files run in every
    test and are outside site-packages: they were measured, and pulled the total down (38 %
    where the project's own files had 88 %). A directory inside ``root`` (the rootdir) is the
    project's own (qbench's suite, pytest's) and stays; a virtual environment is left out
    unless ``root`` lies inside it."""
    import _pytest
    import pluggy

    import pytest_qbench

    root = root.resolve()
    found: list[str] = []
    for module in (pytest_qbench, pytest, _pytest, pluggy):
        directory = Path(module.__file__ or "").resolve().parent
        if not directory.is_relative_to(root):
            found.append(str(directory))
    if sys.prefix != sys.base_prefix:  # a virtual environment
        venv = Path(sys.prefix).resolve()
        if not root.is_relative_to(venv):
            found.append(str(venv))
    return sorted(set(found))


def omit_patterns(directories: Sequence[str]) -> list[str]:
    """coverage.py's ``omit`` patterns of every file under ``directories``."""
    return [os.path.join(directory, "*") for directory in directories]


def _configured_source(cov: coverage.Coverage) -> bool:
    """Whether coverage's configuration names a source (``[run] source`` or ``source_pkgs``)."""
    return bool(cov.get_option("run:source") or cov.get_option("run:source_pkgs"))


def start_early(config: pytest.Config) -> None:
    """Start qbench's measurement before conftest files load (serial run, xdist controller)."""
    from pytest_qbench.plugin.options.settings import read_coverage_settings

    settings = read_coverage_settings(config)  # a UsageError stops pytest here
    if not settings.measure:
        return
    # xdist workers start here too (their conftest files import code as well); lines are sets,
    # so what the controller and a worker both measured counts once when combined.
    if _already_measured():
        return  # the collector says so; a second tracer would pause the first one
    measurement = Measurement(settings.sources, config.rootpath)
    measurement.start()
    config.stash[measurement_key] = measurement


def _already_measured() -> bool:
    """Whether coverage.py already measures this process (``coverage run -m pytest``)."""
    import coverage

    return coverage.Coverage.current() is not None


def worker_spec(settings: CoverageSettings) -> dict[str, Any]:
    """What an xdist worker needs to measure its share (plain data for execnet)."""
    sources = list(settings.sources) if settings.sources is not None else None
    return {"sources": sources, "contexts": settings.contexts}


# --- xdist workers --------------------------------------------------------------------------


class WorkerCoverage:
    """Measures one xdist worker's tests and sends the data to the controller."""

    def __init__(self, config: pytest.Config, measurement: Measurement) -> None:
        self.config = config
        self.measurement = measurement

    # tryfirst: the outermost wrapper, so the data is taken after every other plugin's loop
    # ended; session data crosses xdist only in workeroutput, sent when the worker finishes
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            data = self.measurement.stop()
            output = self.config.workeroutput  # type: ignore[attr-defined]
            output[WORKER_OUTPUT] = data.dumps()
            output[WORKER_UNIMPORTED] = list(self.measurement.unimported)


def configure_worker(config: pytest.Config, spec: dict[str, Any] | None) -> None:
    """An xdist worker: measure its share when the controller sent a ``spec``, else drop the
    measurement its own early start may have begun."""
    if spec is None:
        stop_unused(config)
    else:
        start_worker(config, spec)


def start_worker(config: pytest.Config, spec: dict[str, Any]) -> None:
    """Measure in an xdist worker (from ``pytest_configure``): go on with the measurement started
    before the worker's conftest files loaded, or start one now."""
    measurement = config.stash.get(measurement_key, None)
    if measurement is None:
        measurement = Measurement(spec.get("sources"), config.rootpath)
        measurement.start()
    registered.register(config, WorkerCoverage(config, measurement), PLUGIN_NAME)
    if spec.get("contexts"):
        registered.register(config, ContextSwitcher(measurement), CONTEXTS_PLUGIN_NAME)


def stop_unused(config: pytest.Config) -> None:
    """A worker whose controller does not measure: drop the measurement started early."""
    measurement = config.stash.get(measurement_key, None)
    if measurement is not None:
        measurement.stop()
        del config.stash[measurement_key]


class ContextSwitcher:
    """Attributes each test's lines to its node id (``--qbench-cov-contexts``)."""

    def __init__(self, measurement: Measurement) -> None:
        self.measurement = measurement
        self.redact = Redactor(os.environ)  # a secret in a parametrized id is no context

    # tryfirst: the outermost wrapper, so the test's context also covers the work other
    # plugins' wrappers do around the test
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self.measurement.switch_context(self.redact(item.nodeid))
        try:
            return (yield)
        finally:
            self.measurement.switch_context("")


# --- where reports arrive -------------------------------------------------------------------


class CoverageCollector:
    """Collects the run's coverage where reports arrive, applies the gate, tells the user."""

    def __init__(
        self,
        config: pytest.Config,
        session: QBenchSession,
        settings: CoverageSettings,
        verdicts: Verdicts,
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.verdicts = verdicts
        self.measurement = config.stash.get(measurement_key, None)
        self.worker_data: list[bytes] = []
        self.worker_unimported: list[list[str]] = []
        self.lost_workers: list[str] = []
        self.record: CoverageReportRecord | None = None
        self.lines: list[tuple[str, dict[str, bool]]] = []
        self.report_lines: list[str] = []
        """coverage.py's terminal reports (``--qbench-cov-report=term``), printed as they are."""
        self.loop_stopped = False
        """Whether pytest's test loop stopped by an exception (``-x``, ``pytest.exit``...):
        pytest-cov then neither finishes its measurement nor reports it."""
        self.outer = settings.measure and self.measurement is None and _already_measured()
        if settings.measure and self.measurement is None and not self.outer:
            # not started early (another plugin loaded qbench late): measure from here on
            self.measurement = Measurement(settings.sources, config.rootpath)
            self.measurement.start()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.settings.measure:
            node.workerinput[WORKER_INPUT] = worker_spec(self.settings)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        output = getattr(node, "workeroutput", {})
        data = output.get(WORKER_OUTPUT)
        if data is not None:
            self.worker_data.append(data)
            self.worker_unimported.append(list(output.get(WORKER_UNIMPORTED, [])))
        elif self.settings.measure:
            self.lost_workers.append(str(getattr(node.gateway, "id", "?")))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # tryfirst: the outermost wrapper, so this runs after pytest-cov has combined its data
        try:
            result = yield
        except BaseException:
            # the loop stopped (-x, --maxfail, --sw, pytest.exit, Ctrl-C): the gate is judged
            # all the same, as pytest.exit(returncode=0) leaves a status a failed gate turns to 1
            self.loop_stopped = True
            self._collect_and_gate()
            raise
        self._collect_and_gate()
        return result

    def _collect_and_gate(self) -> None:
        try:
            gated = self._gated()
        except Exception as exc:  # whether a threshold applies is unknown: one may, fail closed
            self.verdicts.fail("coverage", "coverage", exc)
            gated = False
        if gated:
            self.verdicts.judge("coverage", "coverage", self._collect_and_judge)
        else:
            with self.session.guard("collecting coverage"):
                self.collect()
        if self.settings.from_pytest_cov and not self.config.option.collectonly:
            # pytest-cov's verdict is in pytest's status already: a bug in reading it makes the
            # report incomplete (never green), and leaves that status as pytest-cov set it
            with self.session.guard("reading pytest-cov's fail-under"):
                self.verdicts.gates.extend(self._pytest_cov_gate())

    def _pytest_cov_gate(self) -> list[GateResultRecord]:
        """pytest-cov's fail-under as a gate of the report, with pytest-cov's own verdict
        (which fails the run: pytest exits 1 with every test passed); none without one, or
        when pytest-cov judged nothing (a loop stopped early, ``--no-cov``)."""
        plugin = self.config.pluginmanager.get_plugin("_cov")
        options = getattr(plugin, "options", None)
        fail_under = getattr(options, "cov_fail_under", None)
        total = getattr(plugin, "cov_total", None)
        if not fail_under or total is None or self.loop_stopped:
            return []
        from coverage.results import should_fail_under  # pytest-cov's own rule

        precision = getattr(options, "cov_precision", None)
        failed = should_fail_under(float(total), float(fail_under), int(precision or 0))
        gate = pytest_cov_gate(float(total), float(fail_under), failed)
        self.lines.append((gate["detail"], {"red": True, "bold": True} if failed else {}))
        return [gate]

    def _gated(self) -> bool:
        """Whether a threshold applies: the option's, or coverage's ``fail_under`` when qbench
        measures (then an error while measuring fails the gate, as a failed measurement does
        with pytest-cov)."""
        if self.config.option.collectonly:
            return False
        if self.settings.fail_under is not None:
            return True
        measurement = self.measurement if self.settings.measure else None
        return measurement is not None and _configured_fail_under(measurement.cov) is not None

    def _collect_and_judge(self) -> list[GateResultRecord]:
        self.collect()
        gate = self._gate()
        if gate is None and self.settings.fail_under is not None:  # nothing measured: not met
            gate = unmeasured_gate(self.settings.fail_under)
            self.lines.append((gate["detail"], {"red": True, "bold": True}))
        return [] if gate is None else [gate]

    def _gate(self) -> GateResultRecord | None:
        """The coverage gate's ``GateResult``, when a threshold applies (no verdict without tests:
        ``--collect-only``)."""
        record = self.record
        if record is None or record["threshold"] is None or self.config.option.collectonly:
            return None
        return coverage_gate(record)

    def collect(self) -> None:
        """Build the coverage record from qbench's measurement or pytest-cov's data."""
        if self.outer:
            self._warn(
                "coverage: coverage.py already measures this process (coverage run?), so qbench "
                "does not measure and the report has no coverage; use --qbench-cov or "
                "coverage run, not both"
            )
        elif self.settings.measure and self.measurement is not None:
            self.record = self._own_record(self.measurement)
        elif self.settings.from_pytest_cov:
            self.record = self._pytest_cov_record()
        if self.record is not None:
            self.session.coverage = self.record
            self._describe(self.record)
            measured = self.measurement.cov if self.measurement is not None else None
            self._write_reports(self._pytest_cov() if self.settings.from_pytest_cov else measured)

    def _write_reports(self, cov: coverage.Coverage | None) -> None:
        """coverage.py's own reports (``--qbench-cov-report``): the terminal ones are printed in
        the summary, the files named there; a report coverage.py cannot write is a warning."""
        from pytest_qbench.report.coverage.reports import CoverageReportError
        from pytest_qbench.report.coverage.reports import write_coverage_report

        if cov is None or self.config.option.collectonly:
            return
        for spec, base in self.settings.reports:
            terminal = io.StringIO()
            try:
                with coverage_data.coverage_warnings([]):
                    path = write_coverage_report(cov, spec, base, terminal)
            except (CoverageReportError, OSError) as exc:
                self._warn(f"coverage: {exc}")
                continue
            if path is None:
                self.report_lines.append(terminal.getvalue())
            else:
                shown = coverage_data.project_path(str(path), self.config.rootpath)
                self.lines.append((f"coverage {spec.kind} report: {shown}", {}))

    def _own_record(self, measurement: Measurement) -> CoverageReportRecord:
        from coverage import CoverageData

        data = measurement.stop()
        for raw in self.worker_data:
            part = CoverageData(no_disk=True)
            part.loads(raw)
            data.update(part)
        run_dir = self.session.run_dir
        data_path = save_data(data, run_dir / DATA_FILE)
        contexts_path = None
        if self.settings.contexts:
            contexts_path = self._write_contexts(data, run_dir / CONTEXTS_FILE)
        for warning in measurement.warnings:
            self._warn(f"coverage.py: {warning}")
        for warning in unimported_everywhere(measurement.unimported, self.worker_unimported):
            self._warn(
                f"coverage.py: {warning}; so no file of it is in the report: check that "
                "--qbench-cov (or coverage's source_pkgs) names a package your tests import"
            )
        for worker in self.lost_workers:
            self._warn(f"coverage of xdist worker {worker} is missing: the worker died")
        record = coverage_data.coverage_record(
            measurement.cov,
            self.config.rootpath,
            measured_by="qbench",
            sources=self._shown_sources(),
            threshold=self._threshold(measurement),
            data_file=self._shown(data_path),
            contexts_file=self._shown(contexts_path),
        )
        if not record["lines_covered"]:
            self._warn(
                f"coverage: no data collected for {', '.join(self._shown_sources()) or 'the run'}"
                ": no test executed code there; check that --qbench-cov names a directory or "
                "package your tests import"
            )
        return record

    def _threshold(self, measurement: Measurement) -> float | None:
        """The option's threshold (0 is one), else coverage's ``fail_under``."""
        if self.settings.fail_under is not None:
            return self.settings.fail_under
        return _configured_fail_under(measurement.cov)

    def _pytest_cov(self) -> coverage.Coverage | None:
        plugin = self.config.pluginmanager.get_plugin("_cov")
        cov: coverage.Coverage | None = getattr(
            getattr(plugin, "cov_controller", None), "cov", None
        )
        return cov

    def _pytest_cov_record(self) -> CoverageReportRecord | None:
        plugin = self.config.pluginmanager.get_plugin("_cov")
        controller = getattr(plugin, "cov_controller", None)
        cov = getattr(controller, "cov", None)
        if cov is None:
            self._warn("coverage: pytest-cov is active but has no data; no coverage in the report")
            return None
        if self.loop_stopped:
            # its wrapper of the loop never got past the exception: its data was neither
            # stopped, saved nor combined, and read here it was 0 of 0 lines, "0.00%"
            self._warn(
                "coverage: pytest-cov did not finish measuring: the test loop stopped early "
                "(-x, --maxfail, --sw, pytest.exit or an interrupt), and pytest-cov reports "
                "nothing then; no coverage in the report"
            )
            return None
        sources = [str(s) for s in getattr(controller, "cov_source", None) or []]
        leave_out = self._left_out_of(cov, sources)
        contexts_path = None
        if self.settings.contexts:
            contexts_path = self._write_contexts(
                cov.get_data(), self.session.run_dir / CONTEXTS_FILE, leave_out
            )
        data_file = cov.config.data_file
        return coverage_data.coverage_record(
            cov,
            self.config.rootpath,
            measured_by="pytest-cov",
            sources=sources,
            threshold=self.settings.fail_under,
            data_file=self._shown(Path(data_file)) if data_file else None,
            contexts_file=self._shown(contexts_path),
            leave_out=leave_out,
        )

    def _left_out_of(self, cov: coverage.Coverage, sources: Sequence[str]) -> list[str]:
        """The directories left out of pytest-cov's data (``own_directories``) when it names no
        source; a warning when it measured files there, which its own total counts."""
        if sources or _configured_source(cov):
            return []
        leave_out = own_directories(self.config.rootpath)
        left = coverage_data.files_under(cov, leave_out)
        if left:
            self._warn(
                f"coverage: pytest-cov measured {plural(len(left), 'file')} of qbench's own, "
                "pytest's or the virtual environment's (--cov names no source), and its total "
                "counts them; qbench's leaves them out; name your code (--cov=PACKAGE) and the "
                "two agree"
            )
        return leave_out

    def _write_contexts(
        self, data: coverage.CoverageData, path: Path, leave_out: Sequence[str] = ()
    ) -> Path:
        files = coverage_data.contexts_map(data, self.config.rootpath, leave_out)
        atomic.write_text_atomic(path, coverage_data.contexts_document(files))
        return path

    def _shown_sources(self) -> list[str]:
        if self.settings.sources is None:
            return []
        return [
            coverage_data.project_path(s, self.config.rootpath) if os.path.isabs(s) else s
            for s in self.settings.sources
        ]

    def _shown(self, path: Path | None) -> str | None:
        return None if path is None else coverage_data.project_path(str(path), self.config.rootpath)

    def _warn(self, message: str) -> None:
        self.session.note_warning("coverage", message, None, None)

    def _describe(self, record: CoverageReportRecord) -> None:
        """The terminal lines: the total, and the gate's verdict when there is one."""
        total = total_text(record)
        missing = len(record["missing_files"])
        if missing:
            total = f"{total[:-1]}, {plural(missing, 'file')} never executed)"
        by = " (measured by pytest-cov)" if record["measured_by"] == "pytest-cov" else ""
        self.lines.append((f"coverage {total}{by}", {}))
        gate = self._gate()
        if gate is not None:
            markup = {"green": True} if gate["passed"] else {"red": True, "bold": True}
            self.lines.append((gate["detail"], markup))

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for note in self.settings.notes:
            terminalreporter.write_line(f"qbench: {note}", yellow=True)
        for text in self.report_lines:
            terminalreporter.write_sep("-", "coverage (qbench, coverage.py's report)")
            terminalreporter.write(text)
        for line, markup in self.lines:
            terminalreporter.write_line(f"qbench: {line}", **markup)


def unimported_everywhere(own: list[str], workers: list[list[str]]) -> list[str]:
    """coverage.py's "never imported" warnings that hold for the whole run: said by this process
    and by every xdist worker that sent data (a package one worker imported was measured)."""
    return [w for w in own if all(w in theirs for theirs in workers)]


def _configured_fail_under(cov: coverage.Coverage) -> float | None:
    """coverage's ``[report] fail_under``, honoured when qbench measures (as pytest-cov does)."""
    value = float(getattr(cov.config, "fail_under", 0.0) or 0.0)
    return value or None


def save_data(data: coverage.CoverageData, path: Path) -> Path:
    """Write ``data`` as a coverage.py SQLite data file at ``path``, atomically."""
    from coverage import CoverageData

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with suppress(FileNotFoundError):
        partial.unlink()
    out = CoverageData(basename=str(partial))
    out.update(data)
    out.write()
    close = getattr(out, "close", None)  # coverage 7.6+; older versions commit as they go
    if close is not None:
        close(force=True)
    os.replace(partial, path)
    return path


def register(
    config: pytest.Config, session: QBenchSession, settings: CoverageSettings, verdicts: Verdicts
) -> None:
    """Register the collector where reports arrive, when the report gets coverage."""
    if not settings.active:
        return
    collector = CoverageCollector(config, session, settings, verdicts)
    registered.register(config, collector, PLUGIN_NAME)
    if settings.contexts and collector.measurement is not None:
        registered.register(config, ContextSwitcher(collector.measurement), CONTEXTS_PLUGIN_NAME)


__all__ = ["CoverageCollector", "Measurement", "configure_worker", "register", "start_early"]
