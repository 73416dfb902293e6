"""How coverage records are shown: Markdown, the terminal, the failure digest.

Works on ``CoverageReport`` records; no coverage.py here.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import new


DIGEST_FILES = 5
DIGEST_MISSING_FILES = 10


def percent_text(value: float) -> str:
    """``43.75%``: the total as qbench prints it."""
    return f"{value:.2f}%"


def threshold_text(value: float) -> str:
    """``90%`` or ``92.5%``: a threshold as the user wrote it."""
    return f"{value:g}%"


def least_covered(files: Iterable[Record], limit: int) -> list[Record]:
    """The ``limit`` files that miss the most, by percentage (lowest first), then by path."""
    partial = [f for f in files if f["percent"] < 100.0 and f["statements"]]
    return sorted(partial, key=lambda f: (f["percent"], -f["missing"], f["path"]))[:limit]


def short_ranges(ranges: Sequence[str], limit: int = 8) -> str:
    """``3-5, 8, 10->12`` with at most ``limit`` ranges, then ``… (+N)``."""
    shown = ", ".join(ranges[:limit])
    return f"{shown}, … (+{len(ranges) - limit})" if len(ranges) > limit else shown


def digest_coverage(coverage: Record) -> Record:
    """The digest's ``DigestCoverage`` block: totals, the worst files, files never executed."""
    missing = coverage["missing_files"]
    return new(
        "DigestCoverage",
        percentage=coverage["percentage"],
        lines_covered=coverage["lines_covered"],
        lines_total=coverage["lines_total"],
        threshold=coverage["threshold"],
        met=coverage["met"],
        least_covered=least_covered(coverage["files"], DIGEST_FILES),
        missing_files=missing[:DIGEST_MISSING_FILES],
        missing_files_total=len(missing),
    )


def gate_step(coverage: Record) -> str | None:
    """The next step when the coverage gate failed, naming the least covered file."""
    if coverage["met"] is not False:
        return None
    worst = least_covered(coverage["files"], 1)
    start = f": start with {worst[0]['path']} ({percent_text(worst[0]['percent'])} covered)"
    return (
        f"Raise coverage from {percent_text(coverage['percentage'])} to the required "
        f"{threshold_text(coverage['threshold'])}{start if worst else ''}"
    )


def coverage_gate(coverage: Record) -> Record:
    """The coverage gate's ``GateResult`` record (the coverage has a threshold)."""
    total, required = percent_text(coverage["percentage"]), threshold_text(coverage["threshold"])
    verdict = "meets" if coverage["met"] else "is below"
    return new(
        "GateResult",
        kind="coverage",
        name="coverage",
        passed=bool(coverage["met"]),
        value=coverage["percentage"],
        threshold=coverage["threshold"],
        detail=f"coverage {total} {verdict} the required {required}",
    )


def untested_steps(coverage: Record, limit: int = 2) -> list[str]:
    """Next steps for files no test executed."""
    return [f"Add tests for {path} (0% covered)" for path in coverage["missing_files"][:limit]]
