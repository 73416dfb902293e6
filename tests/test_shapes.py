"""Records: ``shapes.json`` is current, ``new()`` builds what the models dump, ``iso()`` and
``dumps()`` write what pydantic writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any
from typing import cast

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from test_models import results as result_strategy
from test_models import summaries as summary_strategy

from pytest_qbench.core.stats import derived
from pytest_qbench.report import models
from pytest_qbench.report import shapes
from pytest_qbench.report.records import ReportSummaryRecord
from pytest_qbench.report.shapes import dumps
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
META = models.ReportMeta(qbench_version="0.1.0", created_at=T0)
RUN = models.RunMeta(run_id="r1", started_at=T0, cwd="/src", command=["pytest"])
ENVIRONMENT = models.Environment(
    python="3.12.4",
    implementation="CPython",
    platform="Linux",
    pytest_version="9.0.0",
    qbench_version="0.1.0",
)
RESULT = models.TestResult(nodeid="t.py::a", test_name="a", file="t.py", outcome="passed")
DIAGNOSTIC = models.Diagnostic(severity="warning", message="w")

# ``new`` for a model name known only at run time: its typed overloads take a literal name.
new_of_any_model = cast("Callable[..., Any]", new)

REQUIRED: dict[str, dict[str, Any]] = {
    "Attachment": {"name": "shot.png", "mime": "image/png"},
    "Attempt": {"outcome": "failed", "duration": 0.5},
    "ByteOffsets": {},
    "CheckReport": {"meta": META, "run": RUN},
    "CheckRun": {"run": RUN, "status": "not_run"},
    "CIInfo": {"provider": "github-actions"},
    "Captured": {},
    "CoverageFile": {
        "path": "pkg/a.py",
        "statements": 4,
        "covered": 3,
        "missing": 1,
        "percent": 75.0,
    },
    "CoverageReport": {"percentage": 75.0, "lines_covered": 3, "lines_total": 4},
    "Diagnostic": {"severity": "error", "message": "boom"},
    "DigestCoverage": {"percentage": 75.0, "lines_covered": 3, "lines_total": 4},
    "DigestFailure": {
        "test_name": "t.py::a",
        "outcome": "failed",
        "file": "t.py",
        "line": 3,
        "error_type": "AssertionError",
        "error_message": "assert 1 == 2",
        "stack_trace": "E   assert 1 == 2",
    },
    "Environment": {
        "python": "3.12.4",
        "implementation": "CPython",
        "platform": "Linux",
        "pytest_version": "9.0.0",
        "qbench_version": "0.1.0",
    },
    "Failure": {"error_type": "ValueError", "error_message": "bad"},
    "FailureDigest": {
        "success": False,
        "run_id": "r1",
        "exit_code": 1,
        "summary": models.ReportSummary(passed=1, failed=1),
    },
    "Frame": {"path": "t.py", "line": 3, "function": "test_a"},
    "LogRange": {},
    "GateResult": {
        "kind": "metric_min",
        "name": "token_f1",
        "passed": False,
        "detail": "mean 0.61 is below the required 0.70 (20 scores)",
    },
    "MetricResult": {"metric_name": "relevance", "passed": True},
    "MetricStats": {},
    "PhaseDurations": {},
    "RepeatStats": {"nodeid": "t.py::a", "runs": 3, "passed": 2},
    "ReportMeta": {"qbench_version": "0.1.0", "created_at": T0},
    "ReportSection": {"title": "Coverage", "body": "91%"},
    "ReportSummary": {},
    "RunMeta": {"run_id": "r1", "started_at": T0, "cwd": "/src", "command": ["pytest", "-x"]},
    "ShardInfo": {"index": 2},
    "Shard": {
        "source": "shard-1/report.json",
        "run": RUN,
        "environment": ENVIRONMENT,
        "summary": models.ReportSummary(total=1, passed=1),
    },
    "StreamDeselected": {"count": 2},
    "StreamDiagnostic": {"kind": "warning", "diagnostic": DIAGNOSTIC},
    "StreamEnd": {"run": RUN},
    "StreamResult": {"result": RESULT},
    "StreamStart": {"meta": META, "run": RUN, "environment": ENVIRONMENT},
    "SubtestResult": {"description": "[x] (i=1)", "outcome": "passed"},
    "TestCaseMetadata": {},
    "TestHistory": {
        "status": "failing",
        "summary": "failed 2 of the last 3 runs",
        "runs": 2,
        "failed": 1,
        "flips": 1,
        "flaky_indicator": 0.5,
    },
    "TestReport": {
        "meta": META,
        "run": RUN,
        "environment": ENVIRONMENT,
        "summary": models.ReportSummary(),
    },
    "TestResult": {"nodeid": "t.py::a", "test_name": "a", "file": "t.py", "outcome": "passed"},
    "TestStep": {"index": 1, "action": "Open the cart"},
}
"""Values for every model's required fields (the models' own values: models, datetimes...)."""

ALL_MODELS = sorted(models._all_models())


# --- shapes.json ------------------------------------------------------------------------------


def test_shapes_json_is_current() -> None:
    """shapes.json is what the models say, field order included (else: python -m
    pytest_qbench.report.shapes)."""
    stored = json.loads(shapes.SHAPES_FILE.read_text(encoding="utf-8"))
    current = models.field_shapes()
    hint = "pytest_qbench/report/shapes.json is stale: run python -m pytest_qbench.report.shapes"
    assert stored == current, hint
    assert {name: list(fields) for name, fields in stored.items()} == {
        name: list(fields) for name, fields in current.items()
    }, hint
    assert shapes.REQUIRED == models.REQUIRED


def test_records_py_is_current() -> None:
    """records.py (the TypedDicts and the overloads of new) is what the models say (else:
    python -m pytest_qbench.report.shapes)."""
    from pytest_qbench.report import records_gen

    stored = records_gen.RECORDS_FILE.read_text(encoding="utf-8")
    hint = "pytest_qbench/report/records.py is stale: run python -m pytest_qbench.report.shapes"
    assert stored == records_gen.records_source(), hint


def test_only_summaries_have_computed_fields() -> None:
    """Records hold no computed fields but ReportSummary's pass_rate and MetricStats' mean, stdev
    and pass_rate, which the Aggregator adds (a new computed field must be added to records too,
    or report.json stops matching)."""
    computed = {
        name: list(model.model_computed_fields)
        for name, model in models._all_models().items()
        if model.model_computed_fields
    }
    assert computed == {
        "ReportSummary": ["pass_rate"],
        "MetricStats": ["mean", "stdev", "pass_rate"],
    }


# --- new() ------------------------------------------------------------------------------------


def test_required_values_cover_every_model() -> None:
    """The table above gives exactly the required fields of every model (and every model)."""
    required = {
        name: {field for field, info in model.model_fields.items() if info.is_required()}
        for name, model in models._all_models().items()
    }
    assert {name: set(values) for name, values in REQUIRED.items()} == required


@pytest.mark.parametrize("name", ALL_MODELS)
def test_new_is_the_models_dump(name: str) -> None:
    """new(model, **required) is Model(**required).model_dump(mode="json"): same defaults, same
    field order (computed fields aside)."""
    model = models._all_models()[name]
    expected = model(**REQUIRED[name]).model_dump(mode="json")
    computed = {field: expected.pop(field) for field in model.model_computed_fields}
    # The required values as JSON: how the model itself dumps them.
    record = new_of_any_model(name, **{field: expected[field] for field in REQUIRED[name]})
    assert record == expected
    assert list(record) == list(expected)
    if name == "ReportSummary":
        assert computed == {"pass_rate": shapes.pass_rate(record)}
    if name == "MetricStats":
        assert computed == derived(record)


def dumped(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``Model(**REQUIRED[name])`` dumped without computed fields, and its required values."""
    model = models._all_models()[name]
    record = model(**REQUIRED[name]).model_dump(
        mode="json", exclude=set(model.model_computed_fields)
    )
    return record, {field: record[field] for field in REQUIRED[name]}


@pytest.mark.parametrize("name", ALL_MODELS)
def test_new_defaults_are_not_shared(name: str) -> None:
    """Every record gets its own lists and dicts: changing one changes no other record."""
    expected, values = dumped(name)
    first, second = new_of_any_model(name, **values), new_of_any_model(name, **values)
    for field, value in first.items():
        if isinstance(value, list) and field not in values:
            value.append("changed")
        elif isinstance(value, dict) and field not in values:
            value["changed"] = 1
    assert second == expected
    assert new_of_any_model(name, **values) == expected


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(result_strategy)
def test_new_keeps_given_values(result: models.TestResult) -> None:
    """Given every field of a dumped result, new() gives that record back, in field order."""
    dumped = result.model_dump(mode="json")
    record = new("TestResult", **dumped)
    assert record == dumped
    assert list(record) == list(dumped)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(result_strategy)
def test_compact_leaves_out_defaults_and_expand_restores_them(result: models.TestResult) -> None:
    """compact() drops exactly the top-level fields at their default; expand() and the model
    both give the whole result back, in field order."""
    dumped = result.model_dump(mode="json")
    stored = shapes.compact("TestResult", dumped)
    defaults = shapes._defaults("TestResult")
    assert set(dumped) - set(stored) == {k for k, v in dumped.items() if v == defaults.get(k, [1])}
    assert {"nodeid", "test_name", "file", "outcome"} <= set(stored)
    restored = shapes.expand("TestResult", stored)
    assert restored == dumped
    assert list(restored) == list(dumped)
    assert models.TestResult.model_validate(stored) == result


def test_compact_of_a_bare_result_keeps_its_required_fields_only() -> None:
    """A result with nothing set is stored as its required fields; expand() gives fresh lists."""
    record = new("TestResult", nodeid="t.py::t", test_name="t", file="t.py", outcome="passed")
    stored = shapes.compact("TestResult", record)
    assert stored == {"nodeid": "t.py::t", "test_name": "t", "file": "t.py", "outcome": "passed"}
    assert record["markers"] == []  # the record itself is left alone
    first, second = (shapes.expand("TestResult", stored) for _ in range(2))
    assert first == record
    first["markers"].append("slow")
    assert second["markers"] == []


def test_new_keeps_text_that_reads_like_the_required_marker() -> None:
    """A value that happens to be the text ``<required>`` (user data) is a value, not a gap."""
    text = "".join(["<req", "uired>"])  # built at run time, as user data is
    assert new("ReportSection", title=text, body=text) == {"title": text, "body": text}


def key_error(model: str, **values: Any) -> str:
    """The message of the KeyError that ``new(model, **values)`` raises."""
    with pytest.raises(KeyError) as excinfo:
        new_of_any_model(model, **values)
    return str(excinfo.value)


def test_new_refuses_unknown_fields() -> None:
    """A field the model does not have is a KeyError naming it, even with the required ones."""
    message = key_error("TestStep", index=1, action="a", actoin="typo")
    assert "TestStep has no field" in message and "'actoin'" in message
    assert "'action'" not in message


def test_new_refuses_missing_required_fields() -> None:
    """A required field left out is a KeyError naming every missing one (and only those)."""
    message = key_error("TestResult", nodeid="t.py::a", file="t.py")
    assert "TestResult needs field" in message
    assert "'test_name'" in message and "'outcome'" in message
    assert "'nodeid'" not in message and "'file'" not in message
    message = key_error("Frame")
    assert all(f"'{name}'" in message for name in ("path", "line", "function"))
    # A required field whose value may be None must still be given.
    assert "'line'" in key_error("Frame", path="t.py", function="f")
    assert new("Frame", path="t.py", line=None, function="f")["line"] is None


def test_new_refuses_unknown_models() -> None:
    """A model name that does not exist is a KeyError."""
    with pytest.raises(KeyError, match="TestResults"):
        new("TestResults", nodeid="t.py::a")  # type: ignore[call-overload]


# --- pass_rate(), iso(), dumps() --------------------------------------------------------------


@given(summary_strategy)
def test_pass_rate_is_the_models(summary: models.ReportSummary) -> None:
    """pass_rate() of a summary record is the model's computed pass_rate."""
    record = cast("ReportSummaryRecord", summary.model_dump(mode="json"))
    assert shapes.pass_rate(record) == summary.pass_rate == record["pass_rate"]


datetime_adapter: TypeAdapter[datetime] = TypeAdapter(datetime)


@pytest.mark.parametrize(
    "moment",
    [
        T0,
        T0.replace(microsecond=120_000),
        T0.replace(microsecond=5),
        T0.replace(microsecond=999_999),
    ],
    ids=["whole-seconds", "trailing-zeros", "leading-zeros", "max-microseconds"],
)
def test_iso_is_pydantics_datetime_format(moment: datetime) -> None:
    """iso() writes a UTC datetime exactly as pydantic's JSON does."""
    assert iso(moment) == datetime_adapter.dump_python(moment, mode="json")
    assert iso(moment) == json.loads(datetime_adapter.dump_json(moment))
    assert datetime_adapter.validate_python(iso(moment)) == moment


offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))


@given(
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=offsets)
)
def test_iso_of_any_aware_datetime_is_pydantics_utc_format(moment: datetime) -> None:
    """An aware datetime in any time zone is written as pydantic writes that moment in UTC, and
    reads back as the same moment."""
    utc = moment.astimezone(timezone.utc)
    assert iso(moment) == datetime_adapter.dump_python(utc, mode="json")
    assert datetime_adapter.validate_python(iso(moment)) == moment


def test_iso_of_a_non_utc_datetime() -> None:
    """2026-01-02 05:04:05.5 at +02:00 is 03:04:05.5 UTC."""
    moment = datetime(2026, 1, 2, 5, 4, 5, 500_000, tzinfo=timezone(timedelta(hours=2)))
    assert iso(moment) == "2026-01-02T03:04:05.500000Z"
    assert iso(moment) == datetime_adapter.dump_python(moment.astimezone(timezone.utc), mode="json")
    assert iso(None) is None


@settings(max_examples=300)
@given(st.dictionaries(st.text(), st.text() | st.lists(st.text(), max_size=2), max_size=3))
def test_dumps_writes_text_as_pydantic_does(data: dict[str, Any]) -> None:
    """Strings (quotes, controls, non-ASCII, U+2028...) come out byte for byte as pydantic's
    compact JSON writes them."""
    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
    assert dumps(data) == adapter.dump_json(data).decode()


def test_dumps_refuses_nan() -> None:
    """NaN is not JSON: dumps() refuses it rather than writing an invalid report."""
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps({"duration": float("nan")})
