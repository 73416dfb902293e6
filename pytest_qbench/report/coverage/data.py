"""coverage.py data -> ``CoverageReport`` records, with coverage.py's own arithmetic.

No pytest here: this reads a ``coverage.Coverage`` whose data is complete (stopped, combined)
and turns coverage.py's per-file analysis into records (``shapes``). Totals are coverage.py's
``Numbers`` summed over the same files its reports use, so ``percentage`` equals what
``coverage report`` prints for the same data file, before rounding.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal

from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    import coverage
    from coverage.results import Analysis

    from pytest_qbench.report.records import CoverageFileRecord
    from pytest_qbench.report.records import CoverageReportRecord

CONTEXTS_FORMAT = 1
PHASE_SUFFIXES = ("|setup", "|run", "|teardown")  # pytest-cov's --cov-context=test names


def coverage_record(
    cov: coverage.Coverage,
    rootpath: Path,
    *,
    measured_by: Literal["qbench", "pytest-cov"],
    sources: Iterable[str] = (),
    threshold: float | None = None,
    data_file: str | None = None,
    contexts_file: str | None = None,
    leave_out: Sequence[str] = (),
) -> CoverageReportRecord:
    """A ``CoverageReport`` record of everything ``cov`` reports on (its omit/include apply)
    but the files under the directories ``leave_out``; with no file measured a threshold is not
    met, even 0 (as coverage.py's "No data to report")."""
    from coverage.exceptions import NoDataError
    from coverage.results import Numbers

    total = Numbers(precision=cov.config.precision)
    files: list[CoverageFileRecord] = []
    try:
        for path, analysis in _analyses(cov, rootpath, leave_out):
            total += analysis.numbers
            files.append(file_record(path, analysis))
    except NoDataError:
        pass  # nothing measured: an empty report, and 0% (as pytest-cov counts it)
    branch = bool(total.n_branches) or _has_arcs(cov)
    percentage = total.pc_covered if files else 0.0
    return new(
        "CoverageReport",
        percentage=percentage,
        lines_covered=total.n_executed,
        lines_total=total.n_statements,
        branches_covered=total.n_executed_branches if branch else None,
        branches_total=total.n_branches if branch else None,
        files=sorted(files, key=lambda f: f["path"]),
        missing_files=sorted(f["path"] for f in files if f["statements"] and not f["covered"]),
        threshold=threshold,
        met=None if threshold is None else bool(files) and meets(percentage, threshold),
        measured_by=measured_by,
        sources=list(sources),
        data_file=data_file,
        contexts_file=contexts_file,
    )


def _analyses(
    cov: coverage.Coverage, rootpath: Path, leave_out: Sequence[str]
) -> Iterator[tuple[str, Analysis]]:
    from coverage.report_core import get_analysis_to_report

    for reporter, analysis in get_analysis_to_report(cov, None):
        if not (leave_out and is_under(reporter.filename, leave_out)):
            yield project_path(reporter.filename, rootpath), analysis


def is_under(filename: str, directories: Sequence[str]) -> bool:
    """Whether ``filename`` lies in one of ``directories`` (absolute, resolved)."""
    absolute = os.path.realpath(filename)
    return any(absolute.startswith(os.path.join(d, "")) for d in directories)


def files_under(cov: coverage.Coverage, directories: Sequence[str]) -> list[str]:
    """The files ``cov`` measured in ``directories``."""
    return sorted(f for f in cov.get_data().measured_files() if is_under(f, directories))


def _has_arcs(cov: coverage.Coverage) -> bool:
    return bool(cov.get_data().has_arcs())


def file_record(path: str, analysis: Analysis) -> CoverageFileRecord:
    """One file's row, as ``coverage report -m`` computes it."""
    nums = analysis.numbers
    branch = analysis.has_arcs
    return new(
        "CoverageFile",
        path=path,
        statements=nums.n_statements,
        covered=nums.n_executed,
        missing=nums.n_missing,
        excluded=nums.n_excluded,
        branches=nums.n_branches if branch else None,
        branches_covered=nums.n_executed_branches if branch else None,
        percent=nums.pc_covered,
        missing_ranges=split_ranges(analysis.missing_formatted(branches=branch)),
    )


def split_ranges(formatted: str) -> list[str]:
    """``"3-5, 7->9"`` -> ``["3-5", "7->9"]``."""
    return [part.strip() for part in formatted.split(",") if part.strip()]


def project_path(filename: str, rootpath: Path) -> str:
    """``filename`` relative to the rootdir with ``/`` separators; absolute when outside it."""
    absolute = os.path.abspath(filename)
    try:
        relative = os.path.relpath(absolute, rootpath)
    except ValueError:  # another drive on Windows
        return Path(absolute).as_posix()
    if relative.startswith(".."):
        return Path(absolute).as_posix()
    return Path(relative).as_posix()


def meets(percentage: float, threshold: float) -> bool:
    """Whether ``percentage`` reaches ``threshold``, compared at the 2 decimals qbench shows.

    coverage.py's own rule (``should_fail_under``) rounds at its display precision, so the
    message qbench prints never contradicts the decision: 89.996% shows as 90.00% and passes 90.
    """
    from coverage.results import should_fail_under

    return not should_fail_under(percentage, threshold, 2)


def contexts_map(
    data: coverage.CoverageData, rootpath: Path, leave_out: Sequence[str] = ()
) -> dict[str, list[str]]:
    """Which tests executed each file (none under ``leave_out``): ``{path: [nodeid, ...]}``
    (sorted).

    Contexts are the node ids qbench switched to, or pytest-cov's ``nodeid|run`` names (the phase
    suffix is dropped). The empty context (code run outside any test) is left out.
    """
    files: dict[str, list[str]] = {}
    for filename in data.measured_files():
        if leave_out and is_under(filename, leave_out):
            continue
        tests: set[str] = set()
        for contexts in data.contexts_by_lineno(filename).values():
            tests.update(test_of_context(c) for c in contexts if c)
        if tests:
            files[project_path(filename, rootpath)] = sorted(tests)
    return dict(sorted(files.items()))


def test_of_context(context: str) -> str:
    """The node id of a context name."""
    for suffix in PHASE_SUFFIXES:
        if context.endswith(suffix):
            return context[: -len(suffix)]
    return context


def contexts_document(files: dict[str, list[str]]) -> str:
    """The JSON text of ``coverage-contexts.json``."""
    tests = sorted({t for names in files.values() for t in names})
    body = {"format": CONTEXTS_FORMAT, "tests": len(tests), "files": files}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


@contextmanager
def coverage_warnings(sink: list[str]) -> Iterator[None]:
    """Collect coverage.py's warnings into ``sink`` instead of letting them reach the terminal
    (or fail a run that turns warnings into errors)."""
    from coverage.exceptions import CoverageWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CoverageWarning)
        yield
    for warning in caught:
        if issubclass(warning.category, CoverageWarning):
            sink.append(str(warning.message))
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )


__all__ = [
    "contexts_document",
    "contexts_map",
    "coverage_record",
    "coverage_warnings",
    "meets",
    "project_path",
]
