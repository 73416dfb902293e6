"""A run that pytest stopped before its session started: another plugin's ``pytest_configure``
raised (pytest's ``INTERNALERROR``, exit 3; pytest-asyncio's deprecation warning under
``filterwarnings = error``), or a usage error. No session start, no session end: qbench's
reports were never written, and an earlier run's report at a configured output (a green one)
would stand for this run. At ``pytest_unconfigure`` each configured output gets a report that
says so (failed, no test ran)."""

from __future__ import annotations

import os

import pytest

from pytest_qbench._version import __version__
from pytest_qbench.core import clock
from pytest_qbench.plugin.options.declare import is_enabled


started_key = pytest.StashKey[bool]()
"""Set at the session's start: a run without it never started its session."""

NOT_STARTED = (
    "pytest stopped before its session started (an error in a plugin's pytest_configure, or "
    "a usage error): no test ran; pytest's output names the error"
)


def mark_started(config: pytest.Config) -> None:
    """Note that the session started (its end writes the reports)."""
    config.stash[started_key] = True


def settle(config: pytest.Config) -> None:
    """Write the not-started report to the configured outputs, when qbench was asked for and
    the session never started; never raises (the user's run ends with pytest's own status)."""
    if config.stash.get(started_key, False) or not _was_to_report(config):
        return
    try:
        _write_not_started(config)
    except Exception as exc:  # a bug here must not hide pytest's own error
        import sys

        sys.stderr.write(f"qbench: could not write the not-started report: {exc!r}\n")


def _was_to_report(config: pytest.Config) -> bool:
    """Whether this process was to write a report: the main process of a run with qbench on
    (not ``--help`` or ``--markers``, which configure and end with no session by design)."""
    if getattr(config, "workerinput", None) is not None:
        return False
    if getattr(config.option, "help", False) or getattr(config.option, "markers", False):
        return False
    return is_enabled(config)


def _write_not_started(config: pytest.Config) -> None:
    from pytest_qbench.core.redact import Redactor
    from pytest_qbench.plugin.options.settings import read_settings
    from pytest_qbench.plugin.session_end import configured_outputs
    from pytest_qbench.report import store
    from pytest_qbench.report.environment import describe_environment
    from pytest_qbench.report.last_resort import last_resort_report
    from pytest_qbench.report.last_resort import write_last_resort
    from pytest_qbench.report.shapes import iso
    from pytest_qbench.report.shapes import new

    try:
        settings = read_settings(config)
    except pytest.UsageError:  # qbench's own options were refused: no output is known
        return
    outputs = configured_outputs(settings)
    if not outputs:
        return
    now = iso(clock.utc_now())
    run = new(
        "RunMeta",
        run_id=settings.run_id or store.new_run_id(),
        started_at=now,
        completed_at=now,
        cwd=str(config.invocation_params.dir),
        command=Redactor(os.environ).argv(["pytest", *config.invocation_params.args]),
        interrupted=True,
    )
    environment = describe_environment(pytest.__version__, {}, os.environ)
    meta = new("ReportMeta", qbench_version=__version__, created_at=now)
    report = last_resort_report(run, environment, None, NOT_STARTED, meta)
    _, _, failed = write_last_resort(report, outputs)
    for path, why in failed:
        import sys

        sys.stderr.write(f"qbench: could not write {path}: {why}\n")
