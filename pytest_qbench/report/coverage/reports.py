"""coverage.py's own reports of a run's coverage (``--qbench-cov-report``, ``qbench coverage``).

Written by coverage.py from the data, never re-implemented: ``term`` and ``term-missing`` are
``Coverage.report``, ``xml`` (Cobertura) ``xml_report``, ``lcov`` ``lcov_report``, ``html``
``html_report`` and ``json`` ``json_report``. Standard library at import; coverage.py is used
through the ``Coverage`` object the caller gives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    import coverage

DATA_FILE = "coverage.db"
"""The coverage data qbench measured, kept in the run directory (``qbench coverage`` reads it)."""
TERMINAL_TYPES = ("term", "term-missing")
FILE_TYPES = ("xml", "lcov", "html", "json")
REPORT_TYPES = (*TERMINAL_TYPES, *FILE_TYPES)
DEFAULT_OUTPUTS = {
    "xml": "coverage.xml",
    "lcov": "coverage.lcov",
    "html": "htmlcov",
    "json": "coverage.json",
}
"""coverage.py's default outputs, used when no DEST is given and its configuration names none."""


class CoverageReportError(QBenchError):
    """A coverage report cannot be written: an unknown type, no data, or coverage.py's error."""


@dataclass(frozen=True)
class CoverageReportSpec:
    """One report asked for: its type and where it goes (``None``: the terminal, or coverage's
    configured output, else its default)."""

    kind: str
    dest: str | None = None

    @property
    def to_terminal(self) -> bool:
        """Whether it is printed rather than written to a file."""
        return self.kind in TERMINAL_TYPES


def parse_report_spec(value: str) -> CoverageReportSpec:
    """``TYPE[:DEST]``, as pytest-cov's ``--cov-report``; `ValueError` says what is wrong."""
    kind, sep, dest = value.strip().partition(":")
    if kind not in REPORT_TYPES:
        raise ValueError(
            f"must be TYPE[:DEST] with TYPE one of {', '.join(REPORT_TYPES)}, given: {value!r}; "
            "e.g. xml:coverage.xml"
        )
    if sep and not dest.strip():
        raise ValueError(f"has an empty DEST, given: {value!r}; e.g. {kind}:{_example(kind)}")
    if kind in TERMINAL_TYPES and sep:
        raise ValueError(
            f"{kind} prints to the terminal and takes no DEST, given: {value!r}; use {kind}"
        )
    return CoverageReportSpec(kind, dest.strip() or None)


def _example(kind: str) -> str:
    return DEFAULT_OUTPUTS.get(kind, "coverage.out")


def output_of(cov: coverage.Coverage, spec: CoverageReportSpec, base: Path) -> Path:
    """Where a file report goes: DEST (relative to ``base``), else coverage's configured output
    (``[xml] output``...), else coverage.py's default, relative to ``base``."""
    if spec.dest is not None:
        return base / spec.dest
    configured = {
        "xml": "xml_output",
        "lcov": "lcov_output",
        "html": "html_dir",
        "json": "json_output",
    }[spec.kind]
    value = getattr(cov.config, configured, None) or DEFAULT_OUTPUTS[spec.kind]
    return base / str(value)


def write_coverage_report(
    cov: coverage.Coverage, spec: CoverageReportSpec, base: Path, terminal: IO[str]
) -> Path | None:
    """Write one report with coverage.py; the path written (``None`` for the terminal ones).

    A file report is written beside its destination and renamed into place, so no half-written
    file is left; an html report is coverage.py's directory. Raises `CoverageReportError` with
    coverage.py's message (e.g. no data).
    """
    from coverage.exceptions import CoverageException

    try:
        if spec.to_terminal:
            cov.report(file=terminal, show_missing=spec.kind == "term-missing")
            return None
        path = output_of(cov, spec, base)
        if spec.kind == "html":
            cov.html_report(directory=str(path))
            return path
        return _write_file(cov, spec.kind, path)
    except CoverageException as exc:
        raise CoverageReportError(
            f"coverage.py cannot write the {spec.kind} report: {exc}", slug="coverage-report"
        ) from None


def _write_file(cov: coverage.Coverage, kind: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if kind == "xml":
            cov.xml_report(outfile=str(partial))
        elif kind == "lcov":
            cov.lcov_report(outfile=str(partial))
        else:
            cov.json_report(outfile=str(partial))
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()
    return path


__all__ = [
    "REPORT_TYPES",
    "CoverageReportError",
    "CoverageReportSpec",
    "parse_report_spec",
    "write_coverage_report",
]
