"""How coverage is shown: the Markdown section on a large project, the digest block, next steps."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone

from hypothesis import given
from hypothesis import strategies as st

from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.coverage import view as coverage_view
from pytest_qbench.report.digest import build_digest
from pytest_qbench.report.models import FailureDigest
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.records import CoverageFileRecord
from pytest_qbench.report.records import CoverageReportRecord
from pytest_qbench.report.records import TestReportRecord
from pytest_qbench.report.render import render
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new


T0 = iso(datetime(2026, 11, 22, tzinfo=timezone.utc))


def file_row(path: str, statements: int, covered: int, ranges: list[str]) -> CoverageFileRecord:
    percent = 100.0 * covered / statements if statements else 100.0
    return new(
        "CoverageFile",
        path=path,
        statements=statements,
        covered=covered,
        missing=statements - covered,
        percent=percent,
        missing_ranges=ranges,
    )


def coverage_report(
    files: list[CoverageFileRecord], threshold: float | None = None
) -> CoverageReportRecord:
    covered = sum(f["covered"] for f in files)
    total = sum(f["statements"] for f in files)
    percentage = 100.0 * covered / total
    return new(
        "CoverageReport",
        percentage=percentage,
        lines_covered=covered,
        lines_total=total,
        files=files,
        missing_files=[f["path"] for f in files if f["statements"] and not f["covered"]],
        threshold=threshold,
        met=None if threshold is None else percentage >= threshold,
        sources=["src/big"],
    )


def report_with(coverage: CoverageReportRecord) -> TestReportRecord:
    return new(
        "TestReport",
        meta=new("ReportMeta", qbench_version="0", created_at=T0),
        run=new("RunMeta", run_id="r1", started_at=T0, cwd="/p", command=["pytest"], exit_code=0),
        environment=new(
            "Environment",
            python="3.12",
            implementation="CPython",
            platform="Linux",
            pytest_version="9",
            qbench_version="0",
        ),
        summary=aggregate([]).summary(0.1),
        coverage=coverage,
    )


def big_project(n: int = 3000) -> list[CoverageFileRecord]:
    files = []
    for i in range(n):
        covered = i % 20  # 5% of the files never ran, the others miss some lines
        ranges = [f"{j * 3}-{j * 3 + 1}" for j in range(1, 20 - covered)]
        files.append(file_row(f"src/big/m{i:04d}.py", 20, covered, ranges))
    return files


def test_markdown_section_stays_short_on_thousands_of_files() -> None:
    report = report_with(coverage_report(big_project(), threshold=90))
    TestReport.model_validate(report)  # the synthetic record is a valid report
    md = render(report, max_items=50)
    section = md[md.index("## Coverage") :]
    assert len(section.splitlines()) < 30
    assert "## Coverage 47.50% ❌ required 90%" in section
    assert "28500 of 60000 lines covered in 3000 files" in section
    rows = [line for line in section.splitlines() if line.startswith("| `src/big/")]
    assert len(rows) == 10
    assert rows[0].startswith("| `src/big/m0000.py` | 0.00% | 3-4, 6-7, 9-10")
    assert "… (+11)" in rows[0]  # 19 ranges: 8 shown, the count of the others
    assert "…and 2990 more files below 100%" in section
    assert "**Never executed (150):**" in section
    assert "…and 100 more" in section


def test_digest_block_and_steps_are_bounded() -> None:
    report = report_with(coverage_report(big_project(), threshold=90))
    digest = FailureDigest.model_validate(build_digest(report, aggregate([]).view()))
    assert digest.success is False
    assert digest.coverage is not None
    assert len(digest.coverage.least_covered) == 5
    assert len(digest.coverage.missing_files) == 10
    assert digest.coverage.missing_files_total == 150
    assert digest.next_steps == [
        "Raise coverage from 47.50% to the required 90%: start with src/big/m0000.py "
        "(0.00% covered)",
        "Add tests for src/big/m0000.py (0% covered)",
        "Add tests for src/big/m0020.py (0% covered)",
    ]


def test_a_met_gate_adds_no_step_and_keeps_success() -> None:
    files = [file_row("a.py", 10, 10, []), file_row("b.py", 10, 9, ["4"])]
    report = report_with(coverage_report(files, threshold=90))
    digest = build_digest(report, aggregate([]).view())
    assert digest["success"] is True
    assert not any("coverage" in step.lower() for step in digest["next_steps"])


def test_least_covered_order() -> None:
    files = [
        file_row("z.py", 10, 5, ["1-5"]),
        file_row("a.py", 4, 2, ["1-2"]),
        file_row("full.py", 3, 3, []),
        file_row("empty.py", 0, 0, []),
        file_row("worse.py", 10, 1, ["2-10"]),
    ]
    assert [f["path"] for f in coverage_view.least_covered(files, 10)] == [
        "worse.py",
        "z.py",  # 50% like a.py, but misses more lines
        "a.py",
    ]


@given(st.lists(st.text(alphabet="0123456789->", min_size=1, max_size=6), max_size=30))
def test_short_ranges_shows_at_most_eight_and_counts_the_rest(ranges: list[str]) -> None:
    text = coverage_view.short_ranges(ranges)
    shown = min(len(ranges), 8)
    assert text.startswith(", ".join(ranges[:shown]))
    if len(ranges) > 8:
        assert text.endswith(f"… (+{len(ranges) - 8})")
    else:
        assert text == ", ".join(ranges)
