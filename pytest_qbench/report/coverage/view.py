"""How coverage records are shown: Markdown, the terminal, the failure digest.

Works on ``CoverageReport`` records; no coverage.py here.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import CoverageFileRecord
    from pytest_qbench.report.records import CoverageReportRecord
    from pytest_qbench.report.records import DigestCoverageRecord
    from pytest_qbench.report.records import GateResultRecord


DIGEST_FILES = 5
DIGEST_MISSING_FILES = 10


def percent_text(value: float) -> str:
    """``43.75%``: the total as qbench prints it; as coverage.py shows it, never ``100.00%``
    short of 100 (99.996 is ``99.99%``, which the gate of 100 fails) nor ``0.00%`` above 0."""
    if 99.99 < value < 100.0:
        value = 99.99
    elif 0.0 < value < 0.01:
        value = 0.01
    return f"{value:.2f}%"


def total_text(coverage: Mapping[str, Any]) -> str:
    """``76.92% (8/9 lines, 2/4 branches)``: a ``CoverageReport``'s (or ``DigestCoverage``'s)
    total as coverage.py's report prints it (statements and branches together when branches
    were measured), with what it counts, so that the percentage is never read as the lines'
    alone."""
    detail = f"{coverage['lines_covered']}/{coverage['lines_total']} lines"
    if coverage.get("branches_total") is not None:
        detail += f", {coverage['branches_covered']}/{coverage['branches_total']} branches"
    return f"{percent_text(coverage['percentage'])} ({detail})"


def threshold_text(value: float) -> str:
    """``90%`` or ``92.5%``: a threshold as the user wrote it (``99.99999%``, not ``100%``)."""
    return f"{value:.15g}%"


def least_covered(files: Iterable[CoverageFileRecord], limit: int) -> list[CoverageFileRecord]:
    """The ``limit`` files that miss the most, by percentage (lowest first), then by path."""
    partial = [f for f in files if f["percent"] < 100.0 and f["statements"]]
    return sorted(partial, key=lambda f: (f["percent"], -f["missing"], f["path"]))[:limit]


def short_ranges(ranges: Sequence[str], limit: int = 8) -> str:
    """``3-5, 8, 10->12`` with at most ``limit`` ranges, then ``… (+N)``."""
    shown = ", ".join(ranges[:limit])
    return f"{shown}, … (+{len(ranges) - limit})" if len(ranges) > limit else shown


def digest_coverage(coverage: CoverageReportRecord) -> DigestCoverageRecord:
    """The digest's ``DigestCoverage`` block: totals, the worst files, files never executed."""
    missing = coverage["missing_files"]
    return new(
        "DigestCoverage",
        percentage=coverage["percentage"],
        lines_covered=coverage["lines_covered"],
        lines_total=coverage["lines_total"],
        branches_covered=coverage["branches_covered"],
        branches_total=coverage["branches_total"],
        threshold=coverage["threshold"],
        met=coverage["met"],
        least_covered=least_covered(coverage["files"], DIGEST_FILES),
        missing_files=missing[:DIGEST_MISSING_FILES],
        missing_files_total=len(missing),
    )


def gate_step(coverage: CoverageReportRecord) -> str | None:
    """The next step when the coverage gate failed, naming the least covered file."""
    threshold = coverage["threshold"]
    if coverage["met"] is not False or threshold is None:  # a failed gate has a threshold
        return None
    if not coverage["files"]:  # nothing measured: no total to raise
        return (
            f"Measure coverage to meet the required {threshold_text(threshold)}: no file was "
            "measured; check that --qbench-cov names a package or directory your tests import"
        )
    worst = least_covered(coverage["files"], 1)
    start = f": start with {worst[0]['path']} ({percent_text(worst[0]['percent'])} covered)"
    return (
        f"Raise coverage from {percent_text(coverage['percentage'])} to the required "
        f"{threshold_text(threshold)}{start if worst else ''}"
    )


def coverage_gate(coverage: CoverageReportRecord) -> GateResultRecord:
    """The coverage gate's ``GateResult`` record (the coverage has a threshold)."""
    threshold = coverage["threshold"]
    assert threshold is not None, "the coverage gate needs a threshold"
    total, required = percent_text(coverage["percentage"]), threshold_text(threshold)
    verdict = "meets" if coverage["met"] else "is below"
    detail = f"coverage {total} {verdict} the required {required}"
    if not coverage["files"] and not coverage["met"]:  # 0% of nothing is no verdict
        detail = (
            f"no file was measured (see the coverage warning), so the required {required} is "
            "not met"
        )
    return new(
        "GateResult",
        kind="coverage",
        name="coverage",
        passed=bool(coverage["met"]),
        value=coverage["percentage"],
        threshold=threshold,
        detail=detail,
    )


def pytest_cov_gate(total: float, fail_under: float, failed: bool) -> GateResultRecord:
    """pytest-cov's ``--cov-fail-under`` (or coverage's ``[report] fail_under``) as a coverage
    gate: ``failed`` is pytest-cov's own verdict on its ``total`` (it fails the run so), told
    in qbench's words, so that a run it fails says why."""
    required = threshold_text(fail_under)
    detail = (
        f"coverage {percent_text(total)} is under pytest-cov's fail-under {required} "
        "(--cov-fail-under, or coverage's [report] fail_under): pytest-cov failed the run"
        if failed
        else f"coverage {percent_text(total)} meets pytest-cov's fail-under {required}"
    )
    return new(
        "GateResult",
        kind="coverage",
        name="pytest-cov",
        passed=not failed,
        value=total,
        threshold=fail_under,
        detail=detail,
    )


def unmeasured_gate(threshold: float) -> GateResultRecord:
    """The coverage gate when no coverage was measured (coverage.py already measured the process,
    pytest-cov had no data): it cannot be met, so it fails (the warning beside it says why)."""
    return new(
        "GateResult",
        kind="coverage",
        name="coverage",
        passed=False,
        threshold=threshold,
        detail=(
            f"no coverage was measured (see the coverage warning), so the required "
            f"{threshold_text(threshold)} is not met"
        ),
    )


def untested_steps(coverage: CoverageReportRecord, limit: int = 2) -> list[str]:
    """Next steps for files no test executed."""
    return [f"Add tests for {path} (0% covered)" for path in coverage["missing_files"][:limit]]
