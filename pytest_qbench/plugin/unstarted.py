"""A run that pytest stopped before its session started: another plugin's ``pytest_configure``
raised (pytest's ``INTERNALERROR``, exit 3; pytest-asyncio's deprecation warning under
``filterwarnings = error``), a usage error, or an initial ``conftest.py`` pytest could not
import. No session start, no session end: qbench's reports were never written, and an earlier
run's report at a configured output (a green one) would stand for this run. Each configured
output then gets a report that says so (failed, no test ran): at ``pytest_unconfigure`` when
pytest configured the run, else as the initial conftests are loaded (`foresee_refusal`: pytest
refuses its arguments, or a conftest, right after that, and ends with no hook of qbench's).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence

import pytest

from pytest_qbench._version import __version__
from pytest_qbench.core import clock
from pytest_qbench.core.text import exception_line
from pytest_qbench.plugin.options.declare import is_enabled


started_key = pytest.StashKey[bool]()
"""Set at the session's start: a run without it never started its session."""
internal_error_key = pytest.StashKey[str]()
"""pytest's ``INTERNALERROR`` before the session started (`StartWatch`), as one line."""

NOT_STARTED = (
    "pytest stopped before its session started (an error in a plugin's pytest_configure, or "
    "a usage error): no test ran; pytest's output names the error"
)


INTERNAL_ERROR = (
    "pytest stopped with an internal error before its session started ({}): no test ran"
)
REFUSED = "pytest refused its arguments ({}): no test ran; pytest's output names the error"
CONFTEST_FAILED = (
    "pytest could not import an initial conftest.py ({}): no test ran; pytest's output names "
    "the error"
)


def foresee_refusal(config: pytest.Config, parser: pytest.Parser, args: Sequence[str]) -> None:
    """Write the not-started report now, when pytest will refuse ``args`` (an unknown option,
    a value an option's type refuses) as it parses them once the initial conftests are
    loaded: a usage error then ends the run, exit status 4, with no hook of qbench's. Parsed
    as pytest does, on a copy of its options; never raises."""
    if not _was_to_report(config, ("help", "version")):  # they end before the usage error
        return
    try:
        namespace = copy.copy(config.option)
        _, unknown = parser.parse_known_and_unknown_args(args, namespace=namespace)
        detail = f"unrecognized arguments: {' '.join(unknown)}" if unknown else None
    except pytest.UsageError as exc:
        detail = _usage_error_line(str(exc))
    except Exception:  # a plugin's option type broke: pytest's own parse says what it says
        return
    if detail is not None:
        settle_now(config, REFUSED.format(detail))


def conftest_failed(config: pytest.Config, error: BaseException) -> None:
    """Write the not-started report now: pytest could not import an initial ``conftest.py``
    and ends the run (exit status 4) with no hook of qbench's; never raises."""
    if _was_to_report(config):
        settle_now(config, CONFTEST_FAILED.format(exception_line(error, 300)))


class StartWatch:
    """Registered as the initial conftests are loaded (`watch`): the one hook of it notes
    pytest's ``INTERNALERROR`` while the session has not started (a plugin's
    ``pytest_configure`` raised, e.g. pytest-asyncio's deprecation warning under
    ``filterwarnings = error``), so that the not-started report names it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        stash = self.config.stash
        if not stash.get(started_key, False) and internal_error_key not in stash:
            try:
                stash[internal_error_key] = exception_line(excinfo.value, 300)
            except Exception:  # an exception whose str() raises: pytest's exit status stays 3
                stash[internal_error_key] = type(excinfo.value).__name__


def watch(config: pytest.Config) -> None:
    """Register `StartWatch` when this process is to write a report."""
    if _was_to_report(config):
        from pytest_qbench.plugin import registered

        registered.register(config, StartWatch(config), "qbench-unstarted")


def _usage_error_line(message: str) -> str:
    """The line of argparse's usage error that says what is wrong (``... error: ...``)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = [line.split("error: ", 1)[1] for line in lines if "error: " in line]
    return (said[0] if said else lines[0] if lines else "usage error")[:300]


def mark_started(config: pytest.Config) -> None:
    """Note that the session started (its end writes the reports)."""
    config.stash[started_key] = True


def settle(config: pytest.Config) -> None:
    """Write the not-started report to the configured outputs, when qbench was asked for and
    the session never started; never raises (the user's run ends with pytest's own status)."""
    if config.stash.get(started_key, False) or not _was_to_report(config):
        return
    error = config.stash.get(internal_error_key, None)
    if error is None:
        settle_now(config, NOT_STARTED)
    else:  # pytest's wrap_session: any error but a usage error or an interrupt, exit status 3
        settle_now(config, INTERNAL_ERROR.format(error), int(pytest.ExitCode.INTERNAL_ERROR))


def settle_now(config: pytest.Config, why: str, exit_code: int | None = None) -> None:
    """Write a not-started report saying ``why`` (and pytest's ``exit_code`` when known) to the
    configured outputs; never raises (the user's run ends with pytest's own status)."""
    try:
        _write_not_started(config, why, exit_code)
    except Exception as exc:  # a bug here must not hide pytest's own error
        import sys

        sys.stderr.write(f"qbench: could not write the not-started report: {exc!r}\n")


NO_SESSION = ("help", "markers", "version")
"""The options with which pytest ends with no session by design: their outputs are left alone."""


def _was_to_report(config: pytest.Config, by_design: tuple[str, ...] = NO_SESSION) -> bool:
    """Whether this process was to write a report: the main process of a run with qbench on,
    without an option of ``by_design``."""
    if getattr(config, "workerinput", None) is not None:
        return False
    for options in (config.option, config.known_args_namespace):  # the latter before parsing
        if any(getattr(options, name, False) for name in by_design):
            return False
    return is_enabled(config)


def _write_not_started(config: pytest.Config, why: str, exit_code: int | None) -> None:
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
        exit_code=exit_code,
    )
    environment = describe_environment(pytest.__version__, {}, os.environ)
    meta = new("ReportMeta", qbench_version=__version__, created_at=now)
    report = last_resort_report(run, environment, None, why, meta)
    _, _, failed = write_last_resort(report, outputs)
    for path, why in failed:
        import sys

        sys.stderr.write(f"qbench: could not write {path}: {why}\n")
