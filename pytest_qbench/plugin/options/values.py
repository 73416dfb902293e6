"""Parsing option values: the ``parse_*`` callables given to argparse as ``type=``, and
`OptionReader`, which reads one setting from the command line or the ini file.

Standard library and pytest only: imported whenever pytest starts, so no pydantic or jinja2.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.core.numbers import parse_whole
from pytest_qbench.core.text import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
from pytest_qbench.core.text import DEFAULT_MAX_TRACE as DEFAULT_MAX_TRACE
from pytest_qbench.core.types import OUTCOMES


if TYPE_CHECKING:
    from pytest_qbench.report.coverage.reports import CoverageReportSpec


CAPTURE_DEFAULT = "failed,error"
RUN_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A run id's pattern (compiled at first use by ``re``'s cache: a run without the option
never compiles it; the same for the other options' patterns)."""
RUN_ID_SEPARATORS = "._-"
"""A run id ending in one of these lost its suffix: ``ci-$BUILD_NUMBER`` with the variable empty."""
OUTPUT_OPTIONS = ("json", "md", "html", "digest", "templates", "ctrf")
DEFAULT_MD_MAX_ITEMS = 50
DEFAULT_KEEP_RUNS = 200


def number_ini_type(kind: type[int] | type[float]) -> Any:
    """The ini type of a number: ``int | str`` or ``float | str`` where pytest takes a union
    (9.2 and later), so that native TOML (``[tool.pytest]``) may give a number or a string and an
    ini file a string our parsers check; a string in older pytest, which reads TOML only as
    ``[tool.pytest.ini_options]`` (numbers there arrive as strings)."""
    if pytest.version_tuple[:2] >= (9, 2):
        return kind | str
    return "string"


SIZE = r"^\s*(\d+)\s*(|b|bytes?|kib|k|mib|m|gib|g)\s*$"
SIZE_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(value: str) -> int:
    """A size in bytes: ``1048576``, ``512KiB``, ``10MiB``, ``1GiB`` (``type=`` for argparse)."""
    match = re.match(SIZE, str(value), re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"must be a size in bytes, or with KiB, MiB or GiB, given: {value!r}; e.g. 10MiB"
        )
    number, unit = match.groups()
    return int(number) * SIZE_UNITS.get(unit[:1].lower(), 1)


def parse_capture(value: str) -> frozenset[str]:
    """``all``, ``none``, or a comma list of outcomes (``type=`` for argparse)."""
    words = [w.strip() for w in value.split(",") if w.strip()]
    if not words:  # read as none: say it
        raise argparse.ArgumentTypeError(
            f"is empty, given: {value!r}; use all, none, or a comma list of {', '.join(OUTCOMES)}"
        )
    if words == ["all"]:
        return frozenset(OUTCOMES)
    if words == ["none"]:
        return frozenset()
    unknown = [w for w in words if w not in OUTCOMES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"has unknown outcome {unknown[0]!r}, given: {value!r}; use all, none, or a comma "
            f"list of {', '.join(OUTCOMES)}"
        )
    return frozenset(words)


def parse_template_spec(value: str) -> tuple[str, str]:
    """``TEMPLATE=OUTPUT`` (``type=`` for argparse)."""
    template, sep, output = value.partition("=")
    if not sep or not template.strip() or not output.strip():
        raise argparse.ArgumentTypeError(
            f"must be TEMPLATE=OUTPUT, given: {value!r}; e.g. junit.xml.j2=reports/junit.xml"
        )
    return template.strip(), output.strip()


def parse_percent(value: str) -> float:
    """A percentage from 0 to 100 (``type=`` for argparse)."""
    try:
        number = float(value.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a percentage from 0 to 100, given: {value!r}; e.g. 90"
        ) from None
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError(
            f"must be a percentage from 0 to 100, given: {value}; e.g. 90"
        )
    return number


def parse_cov_report(value: str) -> CoverageReportSpec:
    """``TYPE[:DEST]``: a coverage.py report (``type=`` for argparse)."""
    from pytest_qbench.report.coverage.reports import parse_report_spec

    try:
        return parse_report_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def read_cov_reports(reader: OptionReader) -> tuple[tuple[CoverageReportSpec, Path], ...]:
    """``--qbench-cov-report`` values (else the ini lines), each with the directory its DEST is
    relative to (the invocation directory, or the ini file's)."""
    given = reader.cli("cov_report")
    if given:
        return tuple((spec, reader.cli_dir) for spec in given)
    lines = reader.ini("cov_report")
    if not lines:  # most runs: the reports' module stays unimported
        return ()
    from pytest_qbench.report.coverage.reports import parse_report_spec

    reports = []
    for line in lines:
        try:
            reports.append((parse_report_spec(line), reader.ini_dir))
        except ValueError as exc:
            raise pytest.UsageError(f"ini qbench_cov_report {exc}") from None
    return tuple(reports)


def parse_run_id(value: str) -> str:
    """A run id usable as a directory name (``type=`` for argparse)."""
    if not re.match(RUN_ID, value):
        raise argparse.ArgumentTypeError(
            f"must be 1-128 letters, digits, '.', '_' or '-' and start with a letter or digit, "
            f"given: {value!r}; e.g. ci-1234"
        )
    if value[-1] in RUN_ID_SEPARATORS:
        raise argparse.ArgumentTypeError(
            f"must not end with {value[-1]!r}, given: {value!r} (an empty variable, as in "
            f'"ci-$BUILD_NUMBER"?); set the variable, or drop the {value[-1]!r}'
        )
    return value


def split_metric_value(text: str) -> tuple[str, float] | None:
    """``metric=value`` with a finite number of 0 or more, else ``None``."""
    name, sep, value = (part.strip() for part in text.partition("="))
    try:
        number = float(value) if sep and name else math.nan
    except ValueError:
        number = math.nan
    return (name, number) if math.isfinite(number) and number >= 0 else None


def parse_thresholds(lines: list[str]) -> dict[str, float]:
    """ini ``qbench_thresholds``: ``metric=value`` lines -> thresholds by metric name.

    Raises ``pytest.UsageError`` naming the line and the fix.
    """
    thresholds: dict[str, float] = {}
    for line in lines:
        pair = split_metric_value(line)
        if pair is None:
            raise pytest.UsageError(
                f"ini qbench_thresholds must hold metric=value lines with a number of 0 or more, "
                f"given: {line!r}; e.g. token_f1=0.7"
            )
        thresholds[pair[0]] = pair[1]
    return thresholds


class OptionReader:
    """Reads one setting: the command line wins over the ini file; paths resolve from each."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.cli_dir = config.invocation_params.dir
        self.ini_dir = config.inipath.parent if config.inipath else config.rootpath

    def cli(self, name: str) -> Any:
        value = self.config.getoption(f"qbench_{name}", None)
        if value is None:  # before pytest_configure only the known args are parsed
            value = getattr(self.config.known_args_namespace, f"qbench_{name}", None)
        return value

    def ini(self, name: str) -> Any:
        try:
            return self.config.getini(f"qbench_{name}")
        except (ValueError, pytest.UsageError) as exc:  # pytest 9 wraps the ValueError
            fix = f"fix it in {self.config.inipath}"
            if "expects a list" in str(exc):  # the native [tool.pytest] table keeps TOML types
                fix = f'write a TOML list of strings: qbench_{name} = ["...", "..."] ({fix})'
            raise pytest.UsageError(f"ini qbench_{name} is malformed: {exc}; {fix}") from None

    def path(self, name: str) -> tuple[Path | None, str]:
        """The path and where it came from (for error messages).

        Raises:
            pytest.UsageError: an empty path on the command line (it read as not given).
        """
        value = self.cli(name)
        if value is not None and not str(value).strip():
            flag = f"--qbench-{name.replace('_', '-')}"
            raise pytest.UsageError(
                f"{flag} is empty, given: {value!r} (an empty variable?); give a path, or leave "
                f"{flag} out"
            )
        if value:
            return self.cli_dir / value, f"--qbench-{name.replace('_', '-')}"
        value = self.ini(name)
        if value:
            return self.ini_dir / str(value), f"ini qbench_{name}"
        return None, f"--qbench-{name.replace('_', '-')}"

    def parsed(self, name: str, parse: Callable[[str], Any], default: Any) -> Any:
        value = self.cli(name)
        if value is not None:
            return value  # parsed by argparse already
        raw = self.ini(name)
        if raw in (None, "", []):
            return default
        text = ",".join(str(item) for item in raw) if isinstance(raw, list) else str(raw)
        try:
            return parse(text)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini qbench_{name} {exc}") from None


QUARANTINE_MODES = ("off", "on", "auto")
"""``--qbench-quarantine``'s values."""


def parse_quarantine(value: str) -> str:
    """``off``, ``on`` or ``auto`` (``type=`` for argparse)."""
    mode = value.strip().lower()
    if mode not in QUARANTINE_MODES:
        raise argparse.ArgumentTypeError(
            f"must be off, on or auto, given: {value!r}; use on (the listed tests) or auto (and "
            "the tests the flaky monitors call flaky)"
        )
    return mode


DEFAULT_NEW_TESTS_BUDGET = 60.0
"""``--qbench-new-tests-budget``'s default: seconds the extra runs of new tests may take."""


def parse_repeat(value: str) -> int:
    """``--qbench-new-tests-repeat``: how many times to run a new test, 1 (off) to 100."""
    return parse_whole(
        value, minimum=1, maximum=100, what="a whole number of runs", example="5", unit=" runs"
    )
