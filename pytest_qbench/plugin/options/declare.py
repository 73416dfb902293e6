"""The ``--qbench-*`` options and their ini twins, and whether qbench was asked for.

Standard library and pytest only: this module is imported whenever pytest starts, so it must not
import pydantic or jinja2 (installed but not asked for, qbench costs nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_qbench.core.numbers import parse_cap
from pytest_qbench.core.numbers import parse_count
from pytest_qbench.core.numbers import parse_seconds
from pytest_qbench.plugin.options.agent import add_agent_options
from pytest_qbench.plugin.options.agent import gates_asked
from pytest_qbench.plugin.options.checks import add_check_options
from pytest_qbench.plugin.options.checks import checks_asked
from pytest_qbench.plugin.options.shards import add_shard_options
from pytest_qbench.plugin.options.shards import shards_asked
from pytest_qbench.plugin.options.values import CAPTURE_DEFAULT
from pytest_qbench.plugin.options.values import DEFAULT_KEEP_RUNS
from pytest_qbench.plugin.options.values import DEFAULT_MAX_OUTPUT
from pytest_qbench.plugin.options.values import DEFAULT_MAX_TRACE
from pytest_qbench.plugin.options.values import DEFAULT_MD_MAX_ITEMS
from pytest_qbench.plugin.options.values import DEFAULT_NEW_TESTS_BUDGET
from pytest_qbench.plugin.options.values import OUTPUT_OPTIONS
from pytest_qbench.plugin.options.values import OptionReader
from pytest_qbench.plugin.options.values import number_ini_type
from pytest_qbench.plugin.options.values import parse_capture
from pytest_qbench.plugin.options.values import parse_cov_report
from pytest_qbench.plugin.options.values import parse_percent
from pytest_qbench.plugin.options.values import parse_quarantine
from pytest_qbench.plugin.options.values import parse_repeat
from pytest_qbench.plugin.options.values import parse_run_id
from pytest_qbench.plugin.options.values import parse_size
from pytest_qbench.plugin.options.values import parse_template_spec


def add_options(parser: pytest.Parser) -> None:
    """Register the ``qbench`` option group and the ini twins."""
    group = parser.getgroup("qbench", "pytest-qbench reporting")
    group.addoption(
        "--no-qbench",
        dest="qbench_off",
        action="store_true",
        default=False,
        help="Switch qbench off for this run, whatever the configuration and the other "
        "--qbench-* options ask (like pytest-cov's --no-cov)",
    )
    parser.addini(
        "qbench", "Write qbench reports for every run. Default: false", type="bool", default=False
    )
    _option(
        group,
        parser,
        "--qbench-dir",
        "dir",
        "DIR",
        "Run store root; each run goes to DIR/runs/<run id>/. Default: .qbench in the rootdir",
    )
    _option(group, parser, "--qbench-json", "json", "PATH", "Also write the JSON report to PATH")
    _option(group, parser, "--qbench-md", "md", "PATH", "Also write the Markdown report to PATH")
    _option(
        group,
        parser,
        "--qbench-html",
        "html",
        "PATH",
        "Write the HTML report (one self-contained file) to PATH and report.html into the run "
        "directory",
    )
    _option(
        group,
        parser,
        "--qbench-digest",
        "digest",
        "PATH",
        "Write the failure digest (failures only, next steps) as JSON to PATH",
    )
    _option(
        group,
        parser,
        "--qbench-ctrf",
        "ctrf",
        "PATH",
        "Write the run as a CTRF document (Common Test Report Format JSON, with insights from "
        "the history) to PATH",
    )
    group.addoption(
        "--qbench-template",
        dest="qbench_templates",
        action="append",
        metavar="TEMPLATE=OUTPUT",
        type=parse_template_spec,
        default=None,
        help="Render a Jinja template (name in --qbench-template-dir, or a file) to OUTPUT. "
        "Repeatable.",
    )
    parser.addini(
        "qbench_templates", "TEMPLATE=OUTPUT lines, like --qbench-template", type="linelist"
    )
    _option(
        group,
        parser,
        "--qbench-template-dir",
        "template_dir",
        "DIR",
        "Directory searched for templates before the built-in ones",
    )
    _option(
        group,
        parser,
        "--qbench-capture",
        "capture",
        "OUTCOMES",
        "Outcomes whose captured stdout/stderr/log are kept: all, none, or a comma list. "
        f"Default: {CAPTURE_DEFAULT}",
        parse_capture,
        ini_type="linelist",
    )
    _option(
        group,
        parser,
        "--qbench-max-output",
        "max_output",
        "CHARS",
        f"Characters kept per captured stream. Default: {DEFAULT_MAX_OUTPUT}",
        parse_cap,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-max-trace",
        "max_trace",
        "CHARS",
        f"Characters kept per stack trace. Default: {DEFAULT_MAX_TRACE}",
        parse_cap,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-attach-max-size",
        "attach_max_size",
        "SIZE",
        "Largest attachment stored, in bytes or with KiB/MiB/GiB (a larger one is listed, not "
        "stored). Default: 10MiB",
        parse_size,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-attach-max-total",
        "attach_max_total",
        "SIZE",
        "Bytes of all the run's attachments stored, in bytes or with KiB/MiB/GiB. Default: 100MiB",
        parse_size,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-md-max-items",
        "md_max_items",
        "N",
        f"Failures, errors, skips... listed in the Markdown. Default: {DEFAULT_MD_MAX_ITEMS}",
        parse_count,
        ini_type=number_ini_type(int),
    )
    _coverage_options(group, parser)
    _github_options(group, parser)
    add_agent_options(group, parser)
    add_check_options(group, parser)
    add_shard_options(group, parser)
    parser.addini(
        "qbench_thresholds",
        "Default thresholds of agent-evaluation metrics, one metric=value per line "
        "(the marker's and the qbench fixture's thresholds win)",
        type="linelist",
    )
    _option(
        group,
        parser,
        "--qbench-run-id",
        "run_id",
        "ID",
        "Id of this run (a new directory name). Default: UTC time plus a random suffix",
        parse_run_id,
    )
    _option(
        group,
        parser,
        "--qbench-keep-runs",
        "keep_runs",
        "N",
        f"Runs kept in the run store's index; older runs leave it and their directories are "
        f"deleted. 0 keeps all. Default: {DEFAULT_KEEP_RUNS}",
        parse_count,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-db",
        "db",
        "URL",
        "History database that several machines share: a postgresql:// URL (needs "
        "pytest-qbench[postgres]), or 'sqlite' for the run store's index.sqlite. Default: "
        "$QBENCH_DB, else sqlite",
    )


def _coverage_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption(
        "--qbench-cov",
        dest="qbench_cov",
        action="append",
        nargs="?",
        const=True,
        metavar="SOURCE",
        default=None,
        help="Measure coverage of SOURCE (a directory or an importable package) with coverage.py "
        "and put it in the report. Repeatable. Without a value, coverage's own configuration "
        "says what to measure. With pytest-cov's --cov, pytest-cov measures and qbench reads its "
        "data",
    )
    parser.addini("qbench_cov", "SOURCE lines, like --qbench-cov", type="linelist")
    _option(
        group,
        parser,
        "--qbench-cov-fail-under",
        "cov_fail_under",
        "PERCENT",
        "Fail the run (exit status 1) when total coverage is below PERCENT",
        parse_percent,
        ini_type=number_ini_type(float),
    )
    group.addoption(
        "--qbench-cov-report",
        dest="qbench_cov_report",
        action="append",
        metavar="TYPE[:DEST]",
        type=parse_cov_report,
        default=None,
        help="Also write coverage.py's own report of the run's coverage: term, term-missing, "
        "xml (Cobertura), lcov, html, json; DEST for the files (default: coverage.py's). "
        "Repeatable, like pytest-cov's --cov-report",
    )
    parser.addini(
        "qbench_cov_report", "TYPE[:DEST] lines, like --qbench-cov-report", type="linelist"
    )
    group.addoption(
        "--qbench-cov-contexts",
        dest="qbench_cov_contexts",
        action="store_true",
        default=None,
        help="Record which tests executed which file (coverage-contexts.json in the run "
        "directory). Slower: coverage.py switches context at every test",
    )
    parser.addini(
        "qbench_cov_contexts",
        "Record which tests executed which file (--qbench-cov-contexts). Default: false",
        type="bool",
        default=False,
    )


def _github_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption(
        "--qbench-annotations",
        dest="qbench_annotations",
        action="store_true",
        default=None,
        help="Print GitHub Actions workflow commands (::error file=...,line=...::) for failures "
        "and failed gates (coverage, metric mean, baseline)",
    )
    parser.addini(
        "qbench_annotations",
        "Print GitHub Actions annotations for failures and failed gates (--qbench-annotations). "
        "Default: false",
        type="bool",
        default=False,
    )
    parser.addini(
        "qbench_flaky_monitors",
        "Settings of the flaky monitors, KEY=VALUE pairs separated by spaces or commas: "
        "min_evidence, min_runs, min_rate, recovery, outage_share, outage_min_failing, window "
        "(as qbench flaky --monitor). Default: none (the monitors' defaults)",
        default="",
    )
    _option(
        group,
        parser,
        "--qbench-quarantine",
        "quarantine",
        "off|on|auto",
        "A quarantined test (qbench quarantine add) still runs, but its failure does not fail "
        "the run unless it is new for that test (a failure fingerprint never seen in its "
        "history). auto also quarantines the tests the flaky monitors call flaky, never "
        "broken ones. Default: off",
        parse_quarantine,
    )
    _option(
        group,
        parser,
        "--qbench-new-tests-repeat",
        "new_tests_repeat",
        "N",
        "Run each test the history has never seen N times (fewer when slow, within "
        "--qbench-new-tests-budget); a new test that does not give the same outcome each time is "
        "reported flaky. Its reported outcome is its last run's. Default: 1 (off)",
        parse_repeat,
        ini_type=number_ini_type(int),
    )
    _option(
        group,
        parser,
        "--qbench-new-tests-budget",
        "new_tests_budget",
        "SECONDS",
        "Most seconds the extra runs of new tests may take in all (split between xdist "
        f"workers). Default: {DEFAULT_NEW_TESTS_BUDGET:g}",
        parse_seconds,
        ini_type=number_ini_type(float),
    )
    parser.addini(
        "qbench_quarantine_file",
        "The quarantine as a text file of the repository (one node id a line, # comments), "
        "instead of the history database; relative to this file. Default: none",
        default="",
    )
    parser.addini(
        "qbench_github_summary",
        "Append the Markdown summary to $GITHUB_STEP_SUMMARY when it is set. Default: true",
        type="bool",
        default=True,
    )


def _option(
    group: pytest.OptionGroup,
    parser: pytest.Parser,
    flag: str,
    name: str,
    metavar: str,
    help: str,
    parse: object = None,
    ini_type: Any = "string",
) -> None:
    kwargs = {"type": parse} if parse is not None else {}
    group.addoption(flag, dest=f"qbench_{name}", metavar=metavar, default=None, help=help, **kwargs)
    default = [] if ini_type == "linelist" else ""
    parser.addini(f"qbench_{name}", f"{help} ({flag})", type=ini_type, default=default)


def is_enabled(config: pytest.Config) -> bool:
    """Whether qbench was asked for: ``-p qbench``, any output option, or ini ``qbench = true``;
    never with ``--no-qbench``."""
    switched_on = _ini_switch(config)
    if switched_off(config):
        return False
    plugins = getattr(config.known_args_namespace, "plugins", None) or []
    if any(p in ("qbench", "pytest_qbench.plugin") for p in plugins):
        return True
    reader = OptionReader(config)
    if any(
        reader.cli(name)
        for name in (
            *OUTPUT_OPTIONS,
            *("dir", "run_id", "db", "cov", "cov_contexts", "cov_report", "annotations"),
            "quarantine",
            "new_tests_repeat",
        )
    ):
        return True
    for name in ("cov_fail_under", "max_errors"):  # 0 is a value; read_settings checks it
        if reader.cli(name) is not None:
            return True
    if gates_asked(reader) or checks_asked(reader) or shards_asked(reader):
        return True
    return switched_on or any(reader.ini(name) for name in (*OUTPUT_OPTIONS, "cov"))


def switched_off(config: pytest.Config) -> bool:
    """Whether ``--no-qbench`` switched qbench off for this run."""
    return bool(
        config.getoption("qbench_off", None)
        or getattr(config.known_args_namespace, "qbench_off", False)
    )


def coverage_asked(config: pytest.Config) -> bool:
    """Whether qbench was asked to measure coverage itself (``--qbench-cov`` or ini); never with
    ``--no-qbench``."""
    if switched_off(config):
        return False
    reader = OptionReader(config)
    return bool(reader.cli("cov") or reader.ini("cov"))


def pytest_cov_asked(config: pytest.Config) -> bool:
    """Whether pytest-cov will measure this run (``--cov`` given, no ``--no-cov``).

    A bare ``--cov`` (the source from coverage's configuration) leaves ``cov_source`` ``None``
    once pytest-cov has started (it rewrites its option so), so its plugin, registered only
    for a ``--cov``, says so too."""
    namespace = config.known_args_namespace
    if getattr(namespace, "no_cov", False):
        return False
    given = bool(getattr(namespace, "cov_source", None))
    return given or config.pluginmanager.get_plugin("_cov") is not None


def _ini_switch(config: pytest.Config) -> bool:
    """The ini ``qbench`` value, checked even when the command line already decided."""
    try:
        return bool(config.getini("qbench"))
    except (ValueError, pytest.UsageError) as exc:  # pytest 9 wraps the ValueError
        raise pytest.UsageError(
            f"ini qbench must be true or false ({exc}); e.g. qbench = true"
        ) from None
