"""The report models: JSON round trip, strictness, the stream records, addable summaries."""

from __future__ import annotations

import statistics
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from pydantic import ValidationError

from pytest_qbench.core.stats import ScoreAccumulator
from pytest_qbench.core.types import OUTCOMES
from pytest_qbench.report import models
from pytest_qbench.report.models import SCHEMA_VERSION
from pytest_qbench.report.models import Attempt
from pytest_qbench.report.models import Captured
from pytest_qbench.report.models import CIInfo
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import Frame
from pytest_qbench.report.models import MetricResult
from pytest_qbench.report.models import MetricStats
from pytest_qbench.report.models import PhaseDurations
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSection
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import StreamEnd
from pytest_qbench.report.models import StreamRecord
from pytest_qbench.report.models import StreamResult
from pytest_qbench.report.models import StreamStart
from pytest_qbench.report.models import SubtestResult
from pytest_qbench.report.models import TestCaseMetadata
from pytest_qbench.report.models import TestStep


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

# --- strategies ---------------------------------------------------------------------------

text = st.text()
"""Arbitrary text (Hypothesis includes newlines, controls, astral characters, quotes...)."""
opt_text = st.none() | text
line = st.none() | st.integers(min_value=1, max_value=2**31)
seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30))]),
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)

failures = st.builds(
    Failure,
    error_type=text,
    error_message=text,
    phase=st.sampled_from(["setup", "call", "teardown", "collect"]),
    file=opt_text,
    line=line,
    stack_trace=text,
    frames=st.lists(st.builds(Frame, path=text, line=line, function=text), max_size=2),
    falsifying_example=opt_text,
)
results = st.builds(
    models.TestResult,
    nodeid=text,
    test_name=text,
    file=text,
    line=line,
    outcome=st.sampled_from(OUTCOMES),
    duration=seconds,
    durations=st.builds(PhaseDurations, setup=seconds, call=seconds, teardown=seconds),
    started_at=st.none() | timestamps,
    failure=st.none() | failures,
    teardown_failure=st.none() | failures,
    reason=opt_text,
    captured=st.none() | st.builds(Captured, stdout=text, stderr=text, log=text),
    markers=st.lists(text, max_size=2),
    metadata=st.none()
    | st.builds(
        TestCaseMetadata,
        key=opt_text,
        title=opt_text,
        tags=st.lists(text, max_size=2),
        steps=st.lists(
            st.builds(TestStep, index=st.integers(1, 9), action=text, expected=opt_text), max_size=2
        ),
        description=opt_text,
    ),
    user_properties=st.lists(st.tuples(text, json_values), max_size=2),
    reruns=st.integers(0, 5),
    attempts=st.lists(
        st.builds(
            Attempt,
            outcome=st.sampled_from(["failed", "error"]),
            duration=seconds,
            failure=st.none() | failures,
        ),
        max_size=2,
    ),
    flaky=st.booleans(),
    subtests=st.lists(
        st.builds(
            SubtestResult,
            description=text,
            msg=opt_text,
            params=st.dictionaries(text, json_values, max_size=2),
            outcome=st.sampled_from(["passed", "failed", "skipped", "xfailed"]),
            duration=seconds,
            reason=opt_text,
            failure=st.none() | failures,
        ),
        max_size=2,
    ),
    worker=opt_text,
    counted_as=st.lists(text, max_size=2),
    metric_results=st.lists(
        st.builds(
            MetricResult,
            metric_name=text,
            score=st.none() | st.floats(0, 1),
            passed=st.booleans(),
            error=opt_text,
            model_used=opt_text,
        ),
        max_size=2,
    ),
    agent_response=opt_text,
    tool_calls=st.lists(json_values, max_size=2),
    expected_tools=st.none() | st.lists(text, max_size=2),
    tools_matched=st.none() | st.booleans(),
    ground_truth=opt_text,
)
counts = st.integers(min_value=0, max_value=10**6)
summaries = st.builds(
    ReportSummary,
    total=counts,
    passed=counts,
    failed=counts,
    errors=counts,
    skipped=counts,
    xfailed=counts,
    xpassed=counts,
    reruns=counts,
    flaky=counts,
    subtests_passed=counts,
    subtests_failed=counts,
    subtests_skipped=counts,
    deselected=counts,
    warnings=counts,
    other=st.dictionaries(text, counts, max_size=3),
    duration=st.floats(0, 1e5),
)
diagnostics = st.builds(
    Diagnostic,
    tool=text,
    severity=st.sampled_from(["error", "warning", "info"]),
    message=text,
    code=opt_text,
    file=opt_text,
    line=line,
    column=line,
    nodeid=opt_text,
)
reports = st.builds(
    models.TestReport,
    meta=st.builds(ReportMeta, qbench_version=text, created_at=timestamps),
    run=st.builds(
        RunMeta,
        run_id=text,
        tool=text,
        started_at=timestamps,
        completed_at=st.none() | timestamps,
        exit_code=st.none() | st.integers(-255, 255),
        cwd=text,
        command=st.lists(text, max_size=4),
        interrupted=st.booleans(),
    ),
    environment=st.builds(
        Environment,
        python=text,
        implementation=text,
        platform=text,
        pytest_version=text,
        qbench_version=text,
        plugins=st.dictionaries(text, text, max_size=2),
        ci=st.none() | st.builds(CIInfo, provider=text, commit=opt_text, branch=opt_text),
        extra=st.dictionaries(text, text, max_size=2),
    ),
    summary=summaries,
    results=st.lists(results, max_size=3),
    collection_errors=st.lists(diagnostics, max_size=2),
    warnings=st.lists(diagnostics, max_size=2),
    sections=st.lists(st.builds(ReportSection, title=text, body=text), max_size=2),
)


def minimal_report(**changes: Any) -> models.TestReport:
    """The smallest valid report."""
    report = models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RunMeta(run_id="r1", started_at=T0, cwd="/src", command=["pytest"]),
        environment=Environment(
            python="3.12.4",
            implementation="CPython",
            platform="Linux",
            pytest_version="9.0.0",
            qbench_version="0.1.0",
        ),
        summary=ReportSummary(),
    )
    return report.model_copy(update=changes)


# --- round trip -----------------------------------------------------------------------------


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reports)
def test_report_json_round_trip(report: models.TestReport) -> None:
    """Any report, whatever text it holds, survives model_dump_json -> model_validate_json."""
    assert models.TestReport.model_validate_json(report.model_dump_json()) == report


@given(results)
def test_result_round_trip_through_python_json(result: models.TestResult) -> None:
    """A result also survives the JSON-mode dict round trip (what templates and tojson see)."""
    assert models.TestResult.model_validate(result.model_dump(mode="json")) == result


def test_report_json_is_compact_and_versioned() -> None:
    """report.json carries meta.schema_version and the derived pass_rate."""
    data = minimal_report().model_dump(mode="json")
    assert data["meta"]["schema_version"] == SCHEMA_VERSION == 1
    assert data["summary"]["pass_rate"] is None  # no test ran (issue 11.2)


# --- strictness ---------------------------------------------------------------------------


def test_unknown_fields_are_refused() -> None:
    """extra='forbid': a misspelt or future field is an error, not silently dropped."""
    data = minimal_report().model_dump(mode="json")
    data["run"]["exitcode"] = 1
    with pytest.raises(ValidationError, match=r"run\.exitcode"):
        models.TestReport.model_validate(data)


def test_unknown_outcome_is_refused() -> None:
    """Outcomes are pytest's six words only."""
    with pytest.raises(ValidationError, match="outcome"):
        models.TestResult(nodeid="a", test_name="a", file="a", outcome="passedish")  # type: ignore[arg-type]


def test_every_field_is_documented() -> None:
    """Every field of every model has a description in the JSON schema (attribute docstrings)."""
    schema = models.TestReport.model_json_schema(mode="serialization")
    undocumented = [
        f"{name}.{field}"
        for name, definition in schema["$defs"].items()
        for field, spec in definition.get("properties", {}).items()
        if not spec.get("description")
    ]
    assert undocumented == []


# --- stream records -------------------------------------------------------------------------

record_adapter: TypeAdapter[StreamRecord] = TypeAdapter(StreamRecord)


def test_stream_records_are_told_apart_by_kind() -> None:
    """results.jsonl lines parse into the record class their ``kind`` names."""
    report = minimal_report()
    result = models.TestResult(nodeid="t.py::a", test_name="a", file="t.py", outcome="passed")
    lines = [
        StreamStart(meta=report.meta, run=report.run, environment=report.environment),
        StreamResult(result=result),
        models.StreamDiagnostic(
            kind="warning", diagnostic=Diagnostic(severity="warning", message="w")
        ),
        models.StreamDeselected(count=3),
        StreamEnd(run=report.run),
    ]
    for record in lines:
        assert record_adapter.validate_json(record.model_dump_json()) == record


def test_stream_record_with_unknown_kind_is_refused() -> None:
    """A record of an unknown kind fails on the discriminator, naming the kinds allowed."""
    with pytest.raises(ValidationError) as excinfo:
        record_adapter.validate_json('{"kind": "bogus", "count": 1}')
    error = excinfo.value.errors()[0]
    assert error["type"] == "union_tag_invalid"
    assert "'deselected'" in error["msg"] and "'result'" in error["msg"]


def test_stream_record_without_kind_is_refused() -> None:
    """A record without ``kind`` fails with a missing-discriminator error."""
    with pytest.raises(ValidationError) as excinfo:
        record_adapter.validate_json('{"count": 1}')
    assert excinfo.value.errors()[0]["type"] == "union_tag_not_found"


def test_stream_record_with_wrong_body_names_the_kind() -> None:
    """A known kind with a bad body reports the error under that kind."""
    with pytest.raises(ValidationError) as excinfo:
        record_adapter.validate_json('{"kind": "deselected", "count": "many"}')
    assert excinfo.value.errors()[0]["loc"] == ("deselected", "count")


# --- summaries ------------------------------------------------------------------------------

INT_FIELDS = [
    name for name, field in ReportSummary.model_fields.items() if field.annotation in (int, "int")
]


def test_int_fields_are_found() -> None:
    """The helper list of integer counts covers the counts (guards the property below)."""
    assert {"total", "passed", "failed", "errors", "warnings", "deselected"} <= set(INT_FIELDS)


@given(st.lists(summaries, min_size=1, max_size=5))
def test_summaries_add_up_field_by_field(parts: list[ReportSummary]) -> None:
    """sum(summaries) is the field-wise sum; pass_rate is derived from the summed counts."""
    total = sum(parts)
    assert isinstance(total, ReportSummary)
    for name in INT_FIELDS:
        assert getattr(total, name) == sum(getattr(p, name) for p in parts), name
    keys = {k for p in parts for k in p.other}
    assert total.other == {k: sum(p.other.get(k, 0) for p in parts) for k in keys}
    assert total.duration == pytest.approx(sum(p.duration for p in parts), abs=1e-5)
    ran = total.passed + total.failed + total.errors
    assert total.pass_rate == (round(100 * total.passed / ran, 2) if ran and total.total else None)


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["relevance", "faithfulness", "tone"]),
            st.tuples(st.integers(1, 100), st.floats(0, 1)),
            max_size=3,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_metric_averages_are_weighted_by_counts(parts: list[dict[str, tuple[int, float]]]) -> None:
    """Adding summaries weights each metric's mean score by how often it was evaluated."""
    summary_parts = [
        ReportSummary(
            metrics_evaluated={k: n for k, (n, _) in part.items()},
            average_scores={k: mean for k, (_, mean) in part.items()},
        )
        for part in parts
    ]
    total = sum(summary_parts)
    assert isinstance(total, ReportSummary)
    for name in {k for part in parts for k in part}:
        weights = [part[name] for part in parts if name in part]
        count = sum(n for n, _ in weights)
        assert total.metrics_evaluated[name] == count
        assert total.average_scores[name] == pytest.approx(
            sum(n * mean for n, mean in weights) / count
        )


def metric_stats(scores: list[float], errors: int = 0, threshold: float = 0.5) -> MetricStats:
    """The stats of ``scores`` (passing at ``threshold``) and ``errors`` errored evaluations."""
    acc = ScoreAccumulator()
    for score in scores:
        acc.add({"score": score, "passed": score >= threshold, "skipped": False})
    for _ in range(errors):
        acc.add({"score": None, "passed": False, "skipped": False})
    return MetricStats(**acc.stored())


unit_scores = st.floats(0, 1) | st.sampled_from([0.0, 0.1, 0.7, 1.0])


@given(st.lists(st.tuples(st.lists(unit_scores, max_size=6), st.integers(0, 2)), min_size=1))
def test_metric_stats_of_shards_add_up_to_the_stats_of_all_scores(
    parts: list[tuple[list[float], int]],
) -> None:
    """Stats of shards added are the stats of all their scores: counts, min and max exactly,
    mean and stdev as the statistics module computes them from the raw scores (issue 4)."""
    total = sum((metric_stats(s, e) for s, e in parts[1:]), metric_stats(*parts[0]))
    scores = [score for s, _ in parts for score in s]
    errors = sum(e for _, e in parts)
    assert (total.n, total.errors, total.skipped) == (len(scores), errors, 0)
    assert total.passed == sum(score >= 0.5 for score in scores)
    assert total.min == (min(scores) if scores else None)
    assert total.max == (max(scores) if scores else None)
    ran = len(scores) + errors
    assert total.pass_rate == (round(100 * total.passed / ran, 2) if ran else 0.0)
    if not scores:
        assert total.mean is None and total.stdev is None
        return
    assert total.mean == pytest.approx(statistics.fmean(scores), abs=1e-12)
    if len(scores) < 2:
        assert total.stdev is None
    else:
        assert total.stdev == pytest.approx(statistics.stdev(scores), abs=1e-7)


def test_metric_stats_of_equal_scores_have_no_spread() -> None:
    """Ten scores of 0.1 (not exact in binary) have stdev 0, not a rounding residue."""
    stats = metric_stats([0.1] * 10)
    assert stats.stdev == 0.0
    assert stats.mean == pytest.approx(0.1, abs=1e-15)
    assert (metric_stats([0.1] * 4) + metric_stats([0.1] * 6)).stdev == pytest.approx(0, abs=1e-9)


def test_metric_stats_derived_fields_are_ignored_on_input() -> None:
    """mean, stdev and pass_rate are computed from the stored sums; stale input values drop."""
    stats = metric_stats([0.2, 0.6, 1.0], errors=1)
    data = stats.model_dump()
    assert data["mean"] == pytest.approx(0.6) and data["pass_rate"] == 50.0
    stale = {**data, "mean": 9.0, "stdev": -1.0, "pass_rate": 1.0}
    assert MetricStats.model_validate(stale) == stats
    assert MetricStats.model_validate_json(stats.model_dump_json()) == stats


def test_summary_metric_averages_come_from_the_added_stats() -> None:
    """Adding summaries with metric stats adds the stats, and each average is their mean."""
    a = ReportSummary(
        metrics_evaluated={"f1": 2},
        average_scores={"f1": 0.5},
        metric_stats={"f1": metric_stats([0.0, 1.0]), "judge": metric_stats([], errors=1)},
    )
    b = ReportSummary(
        metrics_evaluated={"f1": 1},
        average_scores={"f1": 0.25},
        metric_stats={"f1": metric_stats([0.25])},
    )
    total = a + b
    assert total.metrics_evaluated == {"f1": 3}
    assert total.average_scores == {"f1": pytest.approx(1.25 / 3)}
    assert total.metric_stats["f1"] == metric_stats([0.0, 1.0, 0.25])
    assert total.metric_stats["judge"].errors == 1
    assert sum([a, b]) == total


def test_pass_rate_is_derived_and_ignored_on_input() -> None:
    """pass_rate is computed from the counts; a stale value in the input is dropped."""
    summary = ReportSummary.model_validate(
        {"total": 3, "passed": 1, "failed": 2, "pass_rate": 99.0}
    )
    assert summary.pass_rate == 33.33
    assert ReportSummary.model_validate_json(summary.model_dump_json()) == summary


@pytest.mark.parametrize(
    "counts", [{}, {"errors": 1}, {"total": 2, "skipped": 2}, {"total": 1, "xfailed": 1}]
)
def test_no_pass_rate_when_no_test_ran(counts: dict[str, int]) -> None:
    """No test passed, failed or errored (only a collection error, say): pass_rate is None,
    not 0.0 (issue 11.2)."""
    assert ReportSummary.model_validate(counts).pass_rate is None


def test_sum_of_one_and_of_nothing() -> None:
    """sum() of one summary is that summary; adding something else is a TypeError."""
    one = ReportSummary(passed=2)
    assert sum([one]) == one
    with pytest.raises(TypeError):
        one + 1  # type: ignore[operator]
