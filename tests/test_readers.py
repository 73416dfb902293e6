"""Reading back: results.jsonl streams, rebuilding reports from them, report.json."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest
from test_store import ENVIRONMENT
from test_store import RUN
from test_store import T0
from test_store import report_of
from test_store import result
from test_store import write_stream

from pytest_qbench.core.errors import ReportFormatError
from pytest_qbench.report import readers
from pytest_qbench.report import store
from pytest_qbench.report.models import SCHEMA_VERSION
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.shapes import Record


# --- reading streams --------------------------------------------------------------------------


def test_read_stream_round_trip(tmp_path: Path) -> None:
    """Every record written is read back into StreamContents, as models equal to the records."""
    stream = tmp_path / "results.jsonl"
    streamed = [result("test_a"), result("test_b", "failed")]
    write_stream(stream, streamed)
    contents = readers.read_stream(stream)
    assert contents.start is not None and contents.start.run == RUN
    assert contents.start.environment == ENVIRONMENT
    assert [r.model_dump(mode="json") for r in contents.results] == streamed
    assert [d.message for d in contents.collection_errors] == ["boom"]
    assert [d.message for d in contents.warnings] == ["careful", "note"]
    assert contents.deselected == 2
    assert contents.end is not None and contents.end.run.exit_code == 1
    assert contents.bad_lines == 0


@pytest.mark.parametrize(
    "torn",
    [
        '{"kind":"result","result":{"nodeid":"t.py::test_c","test',
        '{"kind":"result","result":{"nodeid":"t.py::test_\u00e9\u20ac'.encode()[:-1],
        "\n\n",
    ],
    ids=["cut-json", "cut-inside-utf8-character", "blank-lines"],
)
def test_read_stream_tolerates_torn_last_line(tmp_path: Path, torn: str | bytes) -> None:
    """A last line cut short by a dying process (even mid-character) is skipped, not fatal."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a"), result("test_b")], end=False, diagnostics=False)
    with stream.open("ab") as handle:
        handle.write(torn if isinstance(torn, bytes) else torn.encode())
    contents = readers.read_stream(stream)
    assert [r.test_name for r in contents.results] == ["test_a", "test_b"]
    assert contents.bad_lines == (0 if torn == "\n\n" else 1)
    assert [json.loads(raw)["test_name"] for raw in store.iter_result_json(stream)] == [
        "test_a",
        "test_b",
    ]


def test_read_stream_missing(tmp_path: Path) -> None:
    """No stream file is a ReportFormatError."""
    with pytest.raises(ReportFormatError, match="no result stream") as excinfo:
        readers.read_stream(tmp_path / "results.jsonl")
    assert excinfo.value.slug == "stream-missing"


def test_read_stream_without_start(tmp_path: Path) -> None:
    """A file without a start record is not a stream."""
    stream = tmp_path / "results.jsonl"
    stream.write_text('{"kind":"deselected","count":1}\nnot json\n')
    with pytest.raises(ReportFormatError, match="no start record") as excinfo:
        readers.read_stream(stream)
    assert excinfo.value.slug == "stream-invalid"


# --- rebuilding a report from a stream --------------------------------------------------------


def test_report_from_stream_without_end_is_interrupted(tmp_path: Path) -> None:
    """A stream with no end record is a run that died: interrupted, finished at its last test."""
    stream = tmp_path / "results.jsonl"
    streamed = [
        result("test_a", started_at=T0 + timedelta(seconds=1), duration=2.0),
        result("test_b", "failed", started_at=T0 + timedelta(seconds=4), duration=1.5),
    ]
    write_stream(stream, streamed, end=False)
    report = readers.report_from_stream(readers.read_stream(stream))
    assert isinstance(report, TestReport)
    assert report.run.interrupted is True
    assert report.run.exit_code is None
    assert report.run.completed_at == T0 + timedelta(seconds=5.5)
    assert report.summary.duration == 5.5
    assert report.results == [TestResult.model_validate(r) for r in streamed]
    summary = report.summary
    assert (summary.total, summary.passed, summary.failed, summary.errors) == (2, 1, 1, 1)
    assert (summary.warnings, summary.deselected) == (1, 2)  # qbench's own note is not counted
    assert report.meta.schema_version == SCHEMA_VERSION


def test_report_from_stream_with_end_uses_the_end_record(tmp_path: Path) -> None:
    """A complete stream gives the run as its end record describes it."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a")])
    report = readers.report_from_stream(readers.read_stream(stream))
    assert report.run.interrupted is False
    assert report.run.exit_code == 1
    assert report.summary.duration == timedelta(9).total_seconds()


def test_report_from_stream_without_end_or_timings(tmp_path: Path) -> None:
    """An interrupted stream whose results have no start times has no completion time."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a")], end=False, diagnostics=False)
    report = readers.report_from_stream(readers.read_stream(stream))
    assert report.run.interrupted is True
    assert report.run.completed_at is None
    assert report.summary.duration == 0.0


# --- reading reports --------------------------------------------------------------------------


def test_read_report_round_trip(tmp_path: Path) -> None:
    """A written report reads back as the model of the record written."""
    report = report_of([result("test_a")])
    store.write_report_json(tmp_path / "report.json", report, None)
    read = readers.read_report(tmp_path / "report.json")
    assert read == TestReport.model_validate(report)
    assert read.model_dump(mode="json") == report


def test_read_report_takes_a_string_path(tmp_path: Path) -> None:
    """``pytest_qbench.read_report("report.json")``, as the report format page shows it: a
    string path reads the report as a `Path` does (it was an AttributeError)."""
    import pytest_qbench

    report = report_of([result("test_a")])
    store.write_report_json(tmp_path / "report.json", report, None)
    read = pytest_qbench.read_report(str(tmp_path / "report.json"))
    assert read == readers.read_report(tmp_path / "report.json")
    with pytest.raises(ReportFormatError):
        pytest_qbench.read_report(str(tmp_path / "missing.json"))


@pytest.mark.parametrize("with_new_field", [False, True], ids=["same-shape", "new-field"])
def test_read_report_refuses_other_schema_version(tmp_path: Path, with_new_field: bool) -> None:
    """Another schema_version is a ReportFormatError naming both versions."""
    data = cast("Record", report_of())  # a document of another shape than TestReportRecord's
    data["meta"]["schema_version"] = SCHEMA_VERSION + 1
    if with_new_field:
        data["run"]["shard"] = 3
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportFormatError) as excinfo:
        readers.read_report(path)
    message = str(excinfo.value)
    assert f"schema_version {SCHEMA_VERSION + 1}" in message
    assert f"this qbench reads {SCHEMA_VERSION}" in message
    assert excinfo.value.slug == "schema-version"


@pytest.mark.parametrize(
    ("content", "slug", "match"),
    [
        (None, "report-read", "cannot read report"),
        (b"{not json", "report-invalid", "is not a qbench report"),
        (b'{"meta": {}}', "report-invalid", r"is not a qbench report: meta\.qbench_version"),
        (b"\xff\xfe{}", "report-invalid", "not UTF-8 text"),
    ],
    ids=["missing", "not-json", "not-a-report", "not-utf8"],
)
def test_read_report_errors(tmp_path: Path, content: bytes | None, slug: str, match: str) -> None:
    """Unreadable input is a one-line ReportFormatError with a slug, never a traceback."""
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ReportFormatError, match=match) as excinfo:
        readers.read_report(path)
    assert excinfo.value.slug == slug
    assert "\n" not in str(excinfo.value)
