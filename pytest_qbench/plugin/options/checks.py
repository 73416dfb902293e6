"""Options of the static checks run beside the tests (issue 13.4): ``--qbench-check``,
``--qbench-max-errors`` and ``--qbench-check-timeout``, their ini twins and their parsers.

Standard library and pytest only (imported whenever pytest starts).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

import pytest

from pytest_qbench.core.numbers import parse_count
from pytest_qbench.core.numbers import parse_seconds
from pytest_qbench.core.records import dataclass
from pytest_qbench.plugin.options.values import OptionReader
from pytest_qbench.plugin.options.values import number_ini_type


DEFAULT_CHECK_TIMEOUT = 300.0
"""Seconds a checker may still run after the tests are done before it is stopped."""
TIMEOUT_ENV = "QBENCH_CHECK_TIMEOUT"
"""Environment variable giving the timeout: the command line wins over it, and it wins over the
ini value (as ``QBENCH_DB`` does for ``--qbench-db``)."""


def parse_check_tools(value: str) -> tuple[str, ...]:
    """``ruff,tsc``: registered checker names (the built-ins' and installed plugins'), in
    order, without repeats (``type=`` for argparse; the registry is loaded only when checkers
    are asked for)."""
    from pytest_qbench.tools.names import parse_checker_names
    from pytest_qbench.tools.registry import registry

    try:
        return parse_checker_names(value, registry().checker_names())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_check_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """Register the static-check options and ini values."""
    group.addoption(
        "--qbench-check",
        dest="qbench_check",
        metavar="TOOLS",
        type=parse_check_tools,
        default=None,
        help="Run static checkers while the tests run and put their diagnostics in the report: "
        "a comma list of ruff, mypy, pyright, build, tsc, eslint, js.build or an installed "
        "plugin's checker (qbench check --list)",
    )
    parser.addini("qbench_check", "Checkers to run, like --qbench-check", type="linelist")
    parser.addini(
        "qbench_frontend",
        "The JavaScript/TypeScript front end's directory, for qbench check and the MCP build "
        "workflow (default: the nearest directory with a package.json)",
    )
    group.addoption(
        "--qbench-max-errors",
        dest="qbench_max_errors",
        metavar="N",
        type=parse_count,
        default=None,
        help="Fail the run (exit status 1) when the checkers of --qbench-check found more than "
        "N errors",
    )
    parser.addini(
        "qbench_max_errors",
        "Most checker errors a run may have (--qbench-max-errors)",
        type=number_ini_type(int),
        default="",
    )
    group.addoption(
        "--qbench-check-timeout",
        dest="qbench_check_timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=None,
        help="How long a checker may still run once the tests are done before it is stopped. "
        f"Default: ${TIMEOUT_ENV}, else {DEFAULT_CHECK_TIMEOUT:g}",
    )
    parser.addini(
        "qbench_check_timeout",
        "Seconds a checker may still run after the tests (--qbench-check-timeout)",
        type=number_ini_type(float),
        default="",
    )


def checks_asked(reader: OptionReader) -> bool:
    """Whether ``--qbench-check`` or ini ``qbench_check`` asks for checkers."""
    return bool(reader.cli("check") or reader.ini("check"))


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class CheckSettings:
    """The static checks asked for."""

    tools: tuple[str, ...] = ()
    max_errors: int | None = None
    timeout: float = DEFAULT_CHECK_TIMEOUT

    @property
    def active(self) -> bool:
        """Whether checkers run."""
        return bool(self.tools)


def read_check_settings(reader: OptionReader, environ: Mapping[str, str]) -> CheckSettings:
    """Validate the static-check options; raise ``UsageError`` on the first problem."""
    tools = reader.parsed("check", parse_check_tools, ())
    max_errors = reader.parsed("max_errors", parse_count, None)
    timeout = reader.cli("check_timeout")
    if timeout is None and environ.get(TIMEOUT_ENV):
        try:
            timeout = parse_seconds(environ[TIMEOUT_ENV])
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"${TIMEOUT_ENV} {exc}") from None
    if timeout is None:
        timeout = reader.parsed("check_timeout", parse_seconds, None)
    if max_errors is not None and not tools:
        raise pytest.UsageError(
            f"--qbench-max-errors needs checkers to count errors, and none runs, given: "
            f"{max_errors}; add --qbench-check=ruff,mypy"
        )
    if reader.cli("check_timeout") is not None and not tools:  # the ini and $ are a project's
        raise pytest.UsageError(
            f"--qbench-check-timeout needs checkers to time, and none runs, given: "
            f"{reader.cli('check_timeout'):g}; add --qbench-check=ruff,mypy, or leave it out"
        )
    return CheckSettings(
        tools=tools, max_errors=max_errors, timeout=timeout or DEFAULT_CHECK_TIMEOUT
    )
