"""Options and ini values -> validated ``Settings``, before any test runs.

Every problem raises ``pytest.UsageError`` as ``<option> <problem>, given: <value>; <fix>``.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import tempfile
from contextlib import suppress
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_qbench.core.atomic import is_special_file
from pytest_qbench.core.atomic import link_target
from pytest_qbench.core.atomic import names_a_descriptor
from pytest_qbench.core.limits import DEFAULT_ATTACH_MAX_SIZE
from pytest_qbench.core.limits import DEFAULT_ATTACH_MAX_TOTAL
from pytest_qbench.core.limits import AttachLimits
from pytest_qbench.core.limits import Limits
from pytest_qbench.core.numbers import parse_cap
from pytest_qbench.core.numbers import parse_count
from pytest_qbench.core.numbers import parse_seconds
from pytest_qbench.core.records import dataclass
from pytest_qbench.plugin.options.agent import GateSettings
from pytest_qbench.plugin.options.agent import read_gate_settings
from pytest_qbench.plugin.options.checks import CheckSettings
from pytest_qbench.plugin.options.checks import read_check_settings
from pytest_qbench.plugin.options.declare import coverage_asked
from pytest_qbench.plugin.options.declare import pytest_cov_asked
from pytest_qbench.plugin.options.values import CAPTURE_DEFAULT
from pytest_qbench.plugin.options.values import DEFAULT_KEEP_RUNS
from pytest_qbench.plugin.options.values import DEFAULT_MAX_OUTPUT
from pytest_qbench.plugin.options.values import DEFAULT_MAX_TRACE
from pytest_qbench.plugin.options.values import DEFAULT_MD_MAX_ITEMS
from pytest_qbench.plugin.options.values import DEFAULT_NEW_TESTS_BUDGET
from pytest_qbench.plugin.options.values import OptionReader
from pytest_qbench.plugin.options.values import parse_capture
from pytest_qbench.plugin.options.values import parse_percent
from pytest_qbench.plugin.options.values import parse_quarantine
from pytest_qbench.plugin.options.values import parse_repeat
from pytest_qbench.plugin.options.values import parse_run_id
from pytest_qbench.plugin.options.values import parse_size
from pytest_qbench.plugin.options.values import parse_template_spec
from pytest_qbench.plugin.options.values import read_cov_reports
from pytest_qbench.report import store


if TYPE_CHECKING:
    from pytest_qbench.history.flakiness import Monitors
    from pytest_qbench.report.coverage.reports import CoverageReportSpec


PACKAGE_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class CoverageSettings:
    """What was asked about coverage."""

    measure: bool = False
    """qbench measures itself (``--qbench-cov``, and pytest-cov is not measuring)."""
    sources: tuple[str, ...] | None = None
    """Directories (absolute) and package names; ``None``: coverage's configured ``source``."""
    from_pytest_cov: bool = False
    """pytest-cov measures; qbench reads its data."""
    fail_under: float | None = None
    """The required total percentage."""
    contexts: bool = False
    """Record which tests executed which file."""
    reports: tuple[tuple[CoverageReportSpec, Path], ...] = ()
    """coverage.py's reports to write (``--qbench-cov-report``), each with its DEST's base."""
    notes: tuple[str, ...] = ()
    """Things to tell the user about these settings."""

    @property
    def active(self) -> bool:
        """Whether the report gets coverage."""
        return self.measure or self.from_pytest_cov


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class Settings:
    """Everything the plugin was asked to do, validated."""

    qbench_dir: Path
    run_id: str | None
    dir_source: str = "--qbench-dir"
    """Where ``qbench_dir`` came from, for messages: ``--qbench-dir`` or ``ini qbench_dir``."""
    json_path: Path | None = None
    md_path: Path | None = None
    html_path: Path | None = None
    """``--qbench-html``: the HTML report, also written as report.html into the run directory."""
    digest_path: Path | None = None
    ctrf_path: Path | None = None
    """``--qbench-ctrf``: the CTRF document."""
    templates: tuple[tuple[str | Path, Path], ...] = ()
    template_dir: Path | None = None
    capture: frozenset[str] = frozenset({"failed", "error"})
    limits: Limits = field(default_factory=Limits)
    md_max_items: int = DEFAULT_MD_MAX_ITEMS
    coverage: CoverageSettings = field(default_factory=CoverageSettings)
    annotations: bool = False
    github_summary: bool = True
    keep_runs: int = DEFAULT_KEEP_RUNS
    monitors: Monitors | None = None
    """The flaky monitors' settings (ini ``qbench_flaky_monitors``); ``None``: the defaults."""
    quarantine: str = "off"
    """``--qbench-quarantine``: ``off``, ``on`` or ``auto``."""
    quarantine_file: Path | None = None
    """Ini ``qbench_quarantine_file``; ``None``: the quarantine is in the history database."""
    new_tests_repeat: int = 1
    """``--qbench-new-tests-repeat``: runs of each test the history has never seen (1: off)."""
    new_tests_budget: float = DEFAULT_NEW_TESTS_BUDGET
    """``--qbench-new-tests-budget``: seconds the extra runs of new tests may take in all."""
    db: str | None = None
    """The PostgreSQL URL of the history database; ``None``: the run store's index.sqlite."""
    gates: GateSettings = field(default_factory=GateSettings)
    checks: CheckSettings = field(default_factory=CheckSettings)
    """The static checkers run beside the tests (``--qbench-check``)."""
    attach: AttachLimits = field(default_factory=AttachLimits)
    """Caps on the files tests attach."""


def run_id_taken(run_id: str, runs: Path) -> pytest.UsageError:
    """The error for a ``--qbench-run-id`` that names a run already in ``runs``."""
    return pytest.UsageError(
        f"--qbench-run-id {run_id!r} already exists in {runs}; "
        "choose a new id (run ids are never reused, so no run is overwritten)"
    )


def read_settings(config: pytest.Config) -> Settings:
    """Validate every option; raise ``UsageError`` on the first problem."""
    reader = OptionReader(config)
    qbench_dir, dir_source = reader.path("dir")
    if qbench_dir is None:
        qbench_dir = config.rootpath / ".qbench"
    # a run store made before needs its runs/ writable, not itself: a read-only .qbench (a
    # cache restored by another user) only keeps this run out of the index, which the run's
    # end names (index-read-only), its exit status unchanged
    if not (qbench_dir.is_dir() and (qbench_dir / store.RUNS_DIR).is_dir()):
        ensure_writable_dir(qbench_dir, dir_source)
    runs = qbench_dir / store.RUNS_DIR
    probe_directory(runs, dir_source, shown=qbench_dir)
    run_id = reader.parsed("run_id", parse_run_id, None)
    if run_id is not None and (runs / run_id).exists():
        raise run_id_taken(run_id, runs)
    outputs: dict[str, Path | None] = {}
    for name in ("json", "md", "html", "digest", "ctrf"):
        path, source = reader.path(name)
        if path is not None:
            refuse_stdout(path, source)
            ensure_writable_file(path, source)
        outputs[name] = path
    template_dir, tdir_source = reader.path("template_dir")
    if template_dir is not None and not template_dir.is_dir():
        raise pytest.UsageError(
            f"{tdir_source} is not a directory, given: {template_dir}; create it or fix the path"
        )
    refuse_budget_alone(reader)
    return Settings(
        qbench_dir=qbench_dir,
        run_id=run_id,
        dir_source=dir_source,
        json_path=outputs["json"],
        md_path=outputs["md"],
        html_path=outputs["html"],
        digest_path=outputs["digest"],
        ctrf_path=outputs["ctrf"],
        templates=_templates(reader, template_dir),
        template_dir=template_dir,
        capture=reader.parsed("capture", parse_capture, parse_capture(CAPTURE_DEFAULT)),
        limits=Limits(
            max_output=reader.parsed("max_output", parse_cap, DEFAULT_MAX_OUTPUT),
            max_trace=reader.parsed("max_trace", parse_cap, DEFAULT_MAX_TRACE),
        ),
        md_max_items=reader.parsed("md_max_items", parse_count, DEFAULT_MD_MAX_ITEMS),
        coverage=read_coverage_settings(config),
        annotations=bool(reader.cli("annotations") or reader.ini("annotations")),
        github_summary=bool(reader.ini("github_summary")),
        keep_runs=reader.parsed("keep_runs", parse_count, DEFAULT_KEEP_RUNS),
        monitors=reader.parsed("flaky_monitors", parse_flaky_monitors, None),
        quarantine=reader.parsed("quarantine", parse_quarantine, "off"),
        quarantine_file=reader.path("quarantine_file")[0],
        new_tests_repeat=reader.parsed("new_tests_repeat", parse_repeat, 1),
        new_tests_budget=reader.parsed("new_tests_budget", parse_seconds, DEFAULT_NEW_TESTS_BUDGET),
        db=read_db(reader),
        gates=read_gate_settings(config),
        checks=read_check_settings(reader, os.environ),
        attach=AttachLimits(
            max_size=reader.parsed("attach_max_size", parse_size, DEFAULT_ATTACH_MAX_SIZE),
            max_total=reader.parsed("attach_max_total", parse_size, DEFAULT_ATTACH_MAX_TOTAL),
        ),
    )


def refuse_budget_alone(reader: OptionReader) -> None:
    """``--qbench-new-tests-budget`` on the command line bounds the repeats of new tests: without
    them (``--qbench-new-tests-repeat`` 1 or not set) it would do nothing (the ini value may be
    a project's, set for the runs that repeat).

    Raises:
        pytest.UsageError: naming both options.
    """
    budget = reader.cli("new_tests_budget")
    if budget is not None and reader.parsed("new_tests_repeat", parse_repeat, 1) == 1:
        raise pytest.UsageError(
            f"--qbench-new-tests-budget bounds the repeats of new tests, and none is asked, "
            f"given: {budget:g}; add --qbench-new-tests-repeat=N (2 or more), or leave it out"
        )


def parse_flaky_monitors(text: str) -> Monitors:
    """``min_evidence=3 outage_share=0.6`` as the monitors' settings."""
    from pytest_qbench.history.flakiness import parse_monitors

    try:
        return parse_monitors([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}; fix the ini value") from None


def read_db(reader: OptionReader) -> str | None:
    """The history database's URL: ``--qbench-db``, else ``$QBENCH_DB``, else ini ``qbench_db``
    (``None``, or the value ``sqlite``: the local index). psycopg must import for a URL."""
    from pytest_qbench.core.errors import HistoryError
    from pytest_qbench.history.dburl import ENV_VAR
    from pytest_qbench.history.dburl import parse_db

    cli = reader.cli("db")
    if cli is not None and not cli.strip():  # read as not given: the local index, or $QBENCH_DB
        raise pytest.UsageError(
            f"--qbench-db is empty, given: {cli!r} (an empty variable?); give "
            "postgresql://USER@HOST:PORT/DBNAME or 'sqlite', or leave --qbench-db out"
        )
    given = [
        ("--qbench-db", cli),
        (f"${ENV_VAR}", os.environ.get(ENV_VAR)),
        ("ini qbench_db", reader.ini("db")),
    ]
    source, value = next(((s, v) for s, v in given if v), ("", None))
    try:
        url = parse_db(value, source)
        if url is not None:  # the database module only for a URL (issue 28: not every run's)
            from pytest_qbench.history.database import require_psycopg

            require_psycopg(source)
    except HistoryError as exc:
        raise pytest.UsageError(str(exc)) from None
    return url


def read_coverage_settings(config: pytest.Config) -> CoverageSettings:
    """Validate the coverage options; raise ``UsageError`` on the first problem."""
    reader = OptionReader(config)
    fail_under = reader.parsed("cov_fail_under", parse_percent, None)
    contexts = bool(reader.cli("cov_contexts") or reader.ini("cov_contexts"))
    reports = read_cov_reports(reader)
    asked, by_pytest_cov = coverage_asked(config), pytest_cov_asked(config)
    if not (asked or by_pytest_cov):
        for flag, value in (
            ("--qbench-cov-fail-under", fail_under),
            ("--qbench-cov-contexts", contexts),
            ("--qbench-cov-report", reports),
        ):
            if value:
                raise pytest.UsageError(
                    f"{flag} needs coverage data, and none is measured; add --qbench-cov=SOURCE "
                    "(e.g. --qbench-cov=src/mypkg), or pytest-cov's --cov=SOURCE"
                )
        return CoverageSettings()
    sources = coverage_sources(reader) if asked else None
    notes: tuple[str, ...] = ()
    if by_pytest_cov:
        if contexts and getattr(config.known_args_namespace, "cov_context", None) != "test":
            raise pytest.UsageError(
                "--qbench-cov-contexts with pytest-cov: pytest-cov records the per-test "
                "contexts; add --cov-context=test"
            )
        if asked:
            notes = ("coverage measured by pytest-cov (--cov); --qbench-cov is not used",)
    return CoverageSettings(
        measure=asked and not by_pytest_cov,
        sources=sources,
        from_pytest_cov=by_pytest_cov,
        fail_under=fail_under,
        contexts=contexts,
        reports=reports,
        notes=notes,
    )


def coverage_sources(reader: OptionReader) -> tuple[str, ...] | None:
    """``--qbench-cov`` values (or the ini lines): directories made absolute, package names kept.

    ``None`` when a bare ``--qbench-cov`` leaves the choice to coverage's configuration.
    """
    cli = reader.cli("cov")
    if cli:
        if True in cli:
            return None
        return tuple(_source(str(v), reader.cli_dir, "--qbench-cov") for v in cli)
    lines = reader.ini("cov") or []
    return tuple(_source(line, reader.ini_dir, "ini qbench_cov") for line in lines)


def _source(value: str, base: Path, flag: str) -> str:
    if not value.strip():  # read as the directory it is given from
        raise pytest.UsageError(
            f"{flag} is empty, given: {value!r} (an empty variable?); give a SOURCE (e.g. "
            f"{flag}=src/mypkg), or --qbench-cov alone for coverage.py's configured source"
        )
    path = base / value
    if path.is_dir():
        return str(path.resolve())
    if path.exists():
        raise pytest.UsageError(
            f"{flag} must be a directory or an importable package, given: {value} (a file); "
            f"use its directory, e.g. {flag}={Path(value).parent.as_posix() or '.'}"
        )
    if re.match(PACKAGE_NAME, value):
        return value
    raise pytest.UsageError(
        f"{flag} is neither a directory nor a package name, given: {value}; "
        f"e.g. {flag}=src/mypkg or {flag}=mypkg"
    )


def _templates(
    reader: OptionReader, template_dir: Path | None
) -> tuple[tuple[str | Path, Path], ...]:
    specs: list[tuple[str, Path, str]] = [
        (tmpl, reader.cli_dir / out, "--qbench-template")
        for tmpl, out in reader.cli("templates") or []
    ]
    if not specs:
        for line in reader.ini("templates") or []:
            try:
                tmpl, target = parse_template_spec(line)
            except argparse.ArgumentTypeError as exc:
                raise pytest.UsageError(f"ini qbench_templates {exc}") from None
            specs.append((tmpl, reader.ini_dir / target, "ini qbench_templates"))
    if not specs:  # most runs: Jinja is imported at the end, not at pytest's start-up
        return ()
    from pytest_qbench.core.errors import TemplateError
    from pytest_qbench.report.render import find_template
    from pytest_qbench.report.render import make_environment
    from pytest_qbench.report.render import template_option

    env = make_environment(template_dir)
    resolved: list[tuple[str | Path, Path]] = []
    for tmpl, out, source in specs:
        base = reader.cli_dir if source.startswith("--") else reader.ini_dir
        name = template_option(tmpl, base)
        try:
            find_template(env, name)
        except TemplateError as exc:
            raise pytest.UsageError(f"{source} {exc}") from None
        refuse_stdout(out, source)
        ensure_writable_file(out, source)
        resolved.append((name, out))
    return tuple(resolved)


def _kind(path: Path) -> bool | None:
    """Whether ``path`` is a directory (``True``), something else (``False``) or absent, by one
    ``stat``."""
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except OSError:
        return None


def ensure_writable_dir(path: Path, source: str) -> None:
    """Refuse a directory that cannot be created or written: it is created, and a temporary
    file is made (and removed) in it."""
    if _kind(path) is False:
        raise pytest.UsageError(
            f"{source} must be a directory, given: {path} (a file); choose another path"
        )
    _check_creatable(path, source)
    probe_directory(path, source)


def refuse_stdout(path: Path, source: str) -> None:
    """Refuse ``-`` as an output: ``qbench render``'s stdout, which inside pytest would mix the
    report with pytest's own output (and was a file named ``-``)."""
    if path.name == "-":
        raise pytest.UsageError(
            f"{source} is -, given: {path} (stdout, as in qbench render: inside pytest the "
            "report would be mixed into pytest's own output); give a file path, and print "
            "that file after the run"
        )


def ensure_writable_file(path: Path, source: str) -> None:
    """Refuse an output file that cannot be written: a directory, or a location where no file
    can be created (its directory is created, and a temporary file made and removed in it).

    A device or a FIFO (``/dev/null``, ``/dev/stdout``) is written in place, so only its being
    writable is checked."""
    if path.is_dir():
        raise pytest.UsageError(
            f"{source} must be a file path, given: {path} (a directory); e.g. {path / 'report.json'}"
        )
    if is_special_file(path) or names_a_descriptor(path):
        if not os.access(path, os.W_OK):
            raise pytest.UsageError(
                f"{source} is not writable, given: {path} (no write permission); "
                "choose a writable path"
            )
        return
    _check_creatable(path.parent, source, shown=path)
    try:
        target = link_target(path)
    except OSError as exc:  # a symlink loop
        raise pytest.UsageError(
            f"{source} is not writable, given: {path} ({exc.strerror}); choose another path"
        ) from None
    probe_directory(target.parent, source, shown=path)


def probe_directory(directory: Path, source: str, shown: Path | None = None) -> None:
    """Create ``directory`` and a temporary file in it, as the reports will be, then remove what
    was made (so that ``pytest --help`` leaves nothing behind); refuse with a ``UsageError``
    naming the path and the system's reason when that fails."""
    made = [d for d in (directory, *directory.parents) if not d.exists()]
    try:
        _probe(directory)
    except OSError as exc:
        raise pytest.UsageError(
            f"{source} is not writable, given: {shown or directory} (cannot create a file in "
            f"{directory}: {exc.strerror or exc}); choose a writable path"
        ) from None
    finally:
        for path in made:  # innermost first
            with suppress(OSError):
                path.rmdir()


PROBE_ATTEMPTS = 5


def _probe(directory: Path) -> None:
    # Several pytest processes starting at once in a fresh project (CI shards, a queue's
    # machines) each create the directory, probe it and remove what they made: another
    # process can remove the directory between this one's mkdir and its probe (the probe
    # finds no directory), or between its failed mkdir and mkdir's own check that the
    # directory exists (mkdir says "File exists" of a path that is gone). Either way the
    # directory is created again, a few times, before the error counts.
    for attempt in range(PROBE_ATTEMPTS):
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(prefix=".qbench-probe.", suffix=".tmp", dir=directory):
                return
        except (FileNotFoundError, FileExistsError):
            if attempt == PROBE_ATTEMPTS - 1:
                raise


def _check_creatable(directory: Path, source: str, shown: Path | None = None) -> None:
    # One stat a path, and a look again when the path went away: another pytest process
    # starting at once (a queue's machines) may remove the directory its probe made between
    # two looks, which read a directory gone as "a file" or as "no write permission".
    existing = directory
    for _ in range(PROBE_ATTEMPTS):
        existing = directory
        kind = _kind(existing)
        while kind is None and existing.parent != existing:
            existing = existing.parent
            kind = _kind(existing)
        if kind is False:
            raise pytest.UsageError(
                f"{source} cannot be created, given: {shown or directory} ({existing} is a "
                "file); choose another path"
            )
        if os.access(existing, os.W_OK | os.X_OK):
            return
        if _kind(existing) is not None:
            break
    raise pytest.UsageError(
        f"{source} is not writable, given: {shown or directory} (no write permission on "
        f"{existing}); choose a writable path"
    )
