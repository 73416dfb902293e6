"""Reading report.json into records without models (``report/record_schema.py``): the records
are the models' dumps, and what the models refuse is refused with the models' own words."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import pytest
from test_store import T0
from test_store import report_of
from test_store import result

from pytest_qbench.core.errors import ReportFormatError
from pytest_qbench.report import readers
from pytest_qbench.report import store
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.record_schema import record_validator
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestReportRecord


def rich_report() -> dict[str, Any]:
    """A report using the models' harder corners: datetimes, nested models, model defaults,
    a model with validators and computed fields (the summary and its metric stats)."""
    frame = new("Frame", path="t.py", line=3, function="test_b")
    failure = new("Failure", error_type="AssertionError", error_message="no", frames=[frame])
    history = new(
        "TestHistory",
        status="failing",
        summary="failed 2 of the last 3 runs",
        runs=2,
        failed=1,
        flips=1,
        flaky_indicator=0.5,
        last_passed_at="2026-01-01T10:00:00.250000+00:00",
    )
    metric = new("MetricResult", metric_name="relevance", score=0.75, threshold=0.5, passed=True)
    attempt = new("Attempt", outcome="failed", duration=0.5, failure=failure)
    results = [
        result("test_a", started_at=T0 + timedelta(seconds=1)),
        result("test_b", "failed", failure=failure, history=history, attempts=[attempt]),
        result("test_c", metric_results=[metric], reason="because"),
    ]
    report: dict[str, Any] = dict(report_of(results))
    report["summary"]["metric_stats"] = {"relevance": {"n": 1, "passed": 1, "score_sum": 0.75}}
    return report


def written(tmp_path: Path, data: dict[str, Any] | str) -> Path:
    path = tmp_path / "report.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_record_is_the_models_dump(tmp_path: Path) -> None:
    """The record read equals model_validate_json(...).model_dump(mode="json"), key order too;
    compacted report.json (fields at their default left out) reads back whole."""
    path = tmp_path / "compact.json"
    dumped = TestReport.model_validate(rich_report()).model_dump(mode="json")
    store.write_report_json(path, cast("TestReportRecord", dumped), None)
    for source in (written(tmp_path, rich_report()), path):
        text = source.read_text(encoding="utf-8")
        expected = TestReport.model_validate_json(text).model_dump(mode="json")
        record = readers.read_report_record(source)
        assert record == expected
        assert json.dumps(record) == json.dumps(expected)
        assert record["summary"]["metric_stats"]["relevance"]["mean"] == 0.75
        history = record["results"][1]["history"]
        assert history is not None
        assert history["last_passed_at"] == "2026-01-01T10:00:00.250000Z"


def breakages() -> list[tuple[str, Any]]:
    return [
        ("results.0.outcome", lambda r: r["results"][0].update(outcome="pased")),
        ("results.0.unknown", lambda r: r["results"][0].update(unknown=1)),
        ("results.0.duration", lambda r: r["results"][0].update(duration=float("nan"))),
        (
            "results.1.history.flaky_indicator",
            lambda r: r["results"][1]["history"].update(flaky_indicator=2),
        ),
        (
            "results.1.history.last_passed_at",
            lambda r: r["results"][1]["history"].update(last_passed_at="noon"),
        ),
        ("summary", lambda r: r["summary"].update(failed=-1)),
        (
            "summary.metric_stats.relevance.n",
            lambda r: r["summary"]["metric_stats"]["relevance"].update(n="many"),
        ),
        ("run.started_at", lambda r: r["run"].pop("started_at")),
    ]


@pytest.mark.parametrize(("where", "breakage"), breakages(), ids=[b[0] for b in breakages()])
def test_what_the_model_refuses_is_refused_in_its_words(
    tmp_path: Path, where: str, breakage: Any
) -> None:
    """Each malformed report is refused by the record validator as by the model, and
    read_report_record gives read_report's one-line error, word for word."""
    report = rich_report()
    breakage(report)
    path = written(tmp_path, json.dumps(report))
    with pytest.raises(ReportFormatError) as by_model:
        readers.read_report(path)
    with pytest.raises(ReportFormatError) as by_record:
        readers.read_report_record(path)
    assert str(by_record.value) == str(by_model.value)
    assert f"is not a qbench report: {where}" in str(by_model.value)
    with pytest.raises(ValueError):
        record_validator(TestReport).validate_json(path.read_text(encoding="utf-8"))


def stream_dir(tmp_path: Path, *, end: bool) -> Path:
    """A run directory whose stream holds ``rich_report()``'s results: one line written as
    another writer would (spaces), one torn last line when the run did not end."""
    report = rich_report()
    run_dir = tmp_path / ("ended" if end else "killed")
    run_dir.mkdir()
    writer = store.StreamWriter(run_dir / store.STREAM_NAME)
    writer.write_start(
        new(
            "StreamStart", meta=report["meta"], run=report["run"], environment=report["environment"]
        )
    )
    for item in report["results"][:-1]:
        writer.write_result(item)
    if end:
        writer.write_end(new("StreamEnd", run=report["run"], environment=report["environment"]))
    writer.close()
    with (run_dir / store.STREAM_NAME).open("a", encoding="utf-8") as stream:
        stream.write(json.dumps({"kind": "result", "result": report["results"][-1]}) + "\n")
        if not end:
            stream.write('{"kind":"result","result":{"nodeid":"t.py::torn')
    return run_dir


@pytest.mark.parametrize("end", [True, False], ids=["ended", "killed"])
def test_run_directory_is_read_into_records(tmp_path: Path, end: bool) -> None:
    """``qbench render RUN_DIR`` reads the stream's results as records, not models, and gets
    what the models' dump gave (an interrupted run's end time from the last result too)."""
    run_dir = stream_dir(tmp_path, end=end)
    contents = readers.read_stream(run_dir / store.STREAM_NAME, records=True)
    assert contents.results == []  # no model built
    assert [r["nodeid"] for r in contents.result_records] == [
        "t.py::test_a",
        "t.py::test_b",
        "t.py::test_c",
    ]
    assert contents.bad_lines == (0 if end else 1)
    record: dict[str, Any] = dict(readers.load_source_record(run_dir))
    expected = readers.load_source(run_dir).model_dump(mode="json")
    for whole in (record, expected):
        whole["meta"].pop("created_at")
    assert json.dumps(record) == json.dumps(expected)
    assert record["run"]["interrupted"] is not end


def test_rebuilt_report_json_copies_the_streams_results(tmp_path: Path) -> None:
    """``qbench render RUN_DIR`` writes into report.json each result's JSON as the stream holds
    it (validated, not dumped again: ``1.50`` stays spelt so); a line the writer would not write
    (a result given twice) is validated whole by the model and dumped, so report.json stays one
    valid report, holding what the model read."""
    from pytest_qbench.cli import main

    run_dir = stream_dir(tmp_path, end=True)
    spelt = '{"nodeid":"t.py::test_d","test_name":"test_d","file":"t.py","outcome":"passed","duration":1.50}'
    twice = spelt.replace("test_d", "test_e")
    with (run_dir / store.STREAM_NAME).open("a", encoding="utf-8") as stream:
        stream.write(f"{store.RESULT_PREFIX}{spelt}}}\n")
        stream.write(f'{store.RESULT_PREFIX}{spelt},"result":{twice}}}\n')
    assert main(["render", str(run_dir)]) == 0
    text = (run_dir / store.REPORT_JSON).read_text(encoding="utf-8")
    assert f",{spelt}," in text
    report = readers.read_report(run_dir / store.REPORT_JSON)
    assert [r.nodeid for r in report.results][-2:] == ["t.py::test_d", "t.py::test_e"]
    assert report.summary.total == 5
