"""Stored results leave out the fields at their default; every reader gets the same models back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_qbench.cli import main
from pytest_qbench.cli.schemas import schema_for
from pytest_qbench.evaluation.schema_check import validate
from pytest_qbench.report import shapes
from pytest_qbench.report import store
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.outputs import StreamResults
from pytest_qbench.report.readers import load_source
from pytest_qbench.report.readers import read_stream

from conftest import RunQBench


SCHEMA_FILE = Path(__file__).parent.parent / "docs" / "report-schema.json"
SUITE = """
    import pytest

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2

    @pytest.mark.skip(reason="not today")
    def test_skip():
        pass
"""
# what a plain passing test holds beyond its defaults (line and durations are never default)
PASSING_KEYS = set(store.PASSING_FIELDS)


def stream_results(run_dir: Path) -> dict[str, dict[str, object]]:
    found = {}
    for raw in store.iter_result_json(run_dir / store.STREAM_NAME):
        result = json.loads(raw)
        found[result["nodeid"]] = result
    return found


def without_history(report: TestReport) -> list[TestResult]:
    """The results as the stream holds them: the history of failed tests is added at the end."""
    return [r.model_copy(update={"history": None}) for r in report.results]


def test_a_passing_test_stores_none_of_its_default_fields(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """report.json and results.jsonl hold a passing test's required and set fields only (no
    ``null``, ``[]``, ``false`` or ``0`` at their default); both still validate against the
    published schemas and read back as the same models (issue 19.8)."""
    pytester.makepyfile(test_suite=SUITE)
    run = run_qbench()
    text = (run.run_dir / store.REPORT_JSON).read_text(encoding="utf-8")
    stored = {r["nodeid"]: r for r in json.loads(text)["results"]}
    streamed = stream_results(run.run_dir)
    passing = "test_suite.py::test_pass"
    assert set(stored[passing]) == PASSING_KEYS
    assert streamed[passing] == stored[passing]
    defaults = shapes._defaults("TestResult")
    for record in (*stored.values(), *streamed.values()):
        assert [k for k, v in record.items() if k in defaults and v == defaults[k]] == []
    assert stored["test_suite.py::test_fail"]["failure"]["error_type"] == "AssertionError"
    assert stored["test_suite.py::test_skip"]["reason"] == "not today"

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert validate(json.loads(text), schema) is None
    stream_schema = schema_for("stream")
    for line in (run.run_dir / store.STREAM_NAME).read_text(encoding="utf-8").splitlines():
        assert validate(json.loads(line), stream_schema) is None, line

    report = TestReport.model_validate_json(text)
    assert TestReport.model_validate_json(report.model_dump_json()) == report
    # report.json's failed result also has its history, known only when the run ended
    assert read_stream(run.run_dir / store.STREAM_NAME).results == without_history(report)
    assert report.results == run.report.results
    by_id = {r.nodeid: r for r in report.results}
    assert by_id[passing].failure is None
    assert by_id[passing].attempts == []
    assert by_id[passing].flaky is False


def test_raw_readers_of_the_stream_get_every_field(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Readers of the stream's raw records (the renderers' results, crash recovery) see every
    field, at its default where the file left it out, and rebuild the same report."""
    pytester.makepyfile(test_suite=SUITE)
    run = run_qbench()
    stream = run.run_dir / store.STREAM_NAME
    records = list(StreamResults(stream))
    assert [set(r) for r in records] == [set(shapes._layout("TestResult").names)] * 3
    as_models = [r.model_dump(mode="json") | {"history": None} for r in run.report.results]
    assert records == as_models

    (run.run_dir / store.REPORT_JSON).unlink()  # as after a crash: only the stream is left
    assert main(["render", str(run.run_dir)]) == 0
    rebuilt = load_source(run.run_dir / store.REPORT_JSON)
    assert rebuilt.results == without_history(run.report)
    counts = ("total", "passed", "failed", "skipped")
    assert [getattr(rebuilt.summary, c) for c in counts] == [3, 1, 1, 1]
