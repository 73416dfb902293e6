"""Folding results into a summary and a bounded view."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_qbench.core.types import OUTCOMES
from pytest_qbench.core.types import Outcome
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import SubtestResult
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.records import ReportSummaryRecord
from pytest_qbench.report.shapes import Record


def result(name: str, outcome: Outcome = "passed", **fields: Any) -> Record:
    """The record of a result named ``t.py::<name>`` (validated by the model on the way)."""
    return TestResult(
        nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome=outcome, **fields
    ).model_dump(mode="json")


CATEGORIES = [
    "passed",
    "failed",
    "error",
    "skipped",
    "xfailed",
    "xpassed",
    "rerun",
    "subtests passed",
    "subtests skipped",
    "subtests failed",
    "warnings",
    "",
    "custom",
    "other plugin word",
]
results = st.builds(
    result,
    name=st.text(max_size=5),
    outcome=st.sampled_from(OUTCOMES),
    counted_as=st.lists(st.sampled_from(CATEGORIES), max_size=3),
    reason=st.none() | st.sampled_from(["a", "b", "c"]),
    flaky=st.booleans(),
    reruns=st.integers(0, 2),
    duration=st.floats(0, 100),
    subtests=st.lists(
        st.builds(
            SubtestResult,
            description=st.just("sub"),
            outcome=st.sampled_from(["passed", "failed", "skipped", "xfailed"]),
        ),
        max_size=3,
    ),
)
diagnostics = st.builds(
    Diagnostic,
    tool=st.sampled_from(["pytest", "qbench"]),
    severity=st.sampled_from(["error", "warning"]),
    message=st.just("m"),
).map(lambda diagnostic: diagnostic.model_dump(mode="json"))
runs = st.tuples(
    st.lists(results, max_size=15),
    st.lists(diagnostics, max_size=3),
    st.lists(diagnostics, max_size=3),
    st.integers(0, 5),
)


Run = tuple[list[Record], list[Record], list[Record], int]
"""Results, collection errors, warnings (records) and the deselected count of one run."""


def summary_of(run: Run) -> ReportSummaryRecord:
    """The summary record ``aggregate`` makes of a run (duration 0)."""
    return aggregate(*run).summary(0.0)


def as_models(run: Run) -> tuple[list[TestResult], list[Diagnostic], list[Diagnostic], int]:
    """The same run, as models."""
    results, collection_errors, warnings, deselected = run
    return (
        [TestResult.model_validate(r) for r in results],
        [Diagnostic.model_validate(d) for d in collection_errors],
        [Diagnostic.model_validate(d) for d in warnings],
        deselected,
    )


@given(st.lists(runs, min_size=1, max_size=4))
def test_aggregate_of_concatenation_is_sum_of_aggregates(parts: list[Run]) -> None:
    """Aggregating shards together gives the sum of the shards' summaries."""
    together = aggregate(
        [r for part in parts for r in part[0]],
        [d for part in parts for d in part[1]],
        [d for part in parts for d in part[2]],
        sum(part[3] for part in parts),
    ).summary(0.0)
    total = sum(ReportSummary.model_validate(summary_of(part)) for part in parts)
    assert isinstance(total, ReportSummary)
    assert together == total.model_dump(mode="json")


@given(runs)
def test_summary_counts_follow_counted_as(run: Run) -> None:
    """Counts come from counted_as (the outcome when empty); collection errors are errors."""
    results, collection_errors, warnings, deselected = run
    summary = summary_of(run)
    words = [w for r in results for w in (r["counted_as"] or [r["outcome"]])]
    assert summary["total"] == len(results)
    assert summary["passed"] == words.count("passed")
    assert summary["errors"] == words.count("error") + len(collection_errors)
    assert summary["reruns"] == words.count("rerun")
    assert summary["warnings"] == words.count("warnings") + sum(
        d["tool"] == "pytest" for d in warnings
    )
    assert summary["deselected"] == deselected
    assert summary["other"] == {
        w: words.count(w) for w in ("custom", "other plugin word") if w in words
    }
    assert summary["flaky"] == sum(r["flaky"] for r in results)
    assert summary["subtests_failed"] == sum(
        s["outcome"] == "failed" for r in results for s in r["subtests"]
    )
    # A valid ReportSummary, pass_rate included, exactly as the model dumps it.
    assert ReportSummary.model_validate(summary).model_dump(mode="json") == summary


@given(runs)
def test_models_aggregate_as_their_records(run: Run) -> None:
    """Models (the public API) are accepted, and count and select exactly as their records."""
    by_records, by_models = aggregate(*run), aggregate(*as_models(run))
    assert by_models.summary(1.5) == by_records.summary(1.5)
    assert by_models.view() == by_records.view()


def test_pytest_subtests_failed_word_is_not_counted_twice() -> None:
    """pytest-subtests' 'subtests failed' word is ignored; failed subtests are counted directly."""
    failing = SubtestResult(description="[x]", outcome="failed")
    item = result("test_s", "failed", counted_as=["failed", "subtests failed"], subtests=[failing])
    summary = aggregate([item]).summary(0.0)
    assert (summary["failed"], summary["subtests_failed"], summary["other"]) == (1, 1, {})


def test_summary_duration_is_rounded() -> None:
    """The session duration is kept to microseconds."""
    assert aggregate([]).summary(1.23456789)["duration"] == 1.234568
    empty = aggregate([]).summary(0.0)
    assert empty == ReportSummary().model_dump(mode="json")
    assert list(empty) == list(ReportSummary().model_dump(mode="json"))  # pass_rate last


def test_view_selections_are_capped() -> None:
    """Each selection keeps the first max_items and counts the rest."""
    failed = [result(f"test_{i}", "failed") for i in range(7)]
    view = aggregate([*failed, result("test_e", "error")], max_items=5).view()
    assert [r["test_name"] for r in view.failures.items] == [f"test_{i}" for i in range(5)]
    assert view.failures.items == failed[:5]  # the records, whole
    assert (view.failures.total, view.failures.omitted) == (7, 2)
    assert (view.errors.total, view.errors.omitted) == (1, 0)


def test_view_groups_skips_by_reason() -> None:
    """Skips are grouped by reason, most frequent first; a missing reason gets a label."""
    skips = [result(f"test_{i}", "skipped", reason="slow") for i in range(3)]
    skips += [result("test_win", "skipped", reason="windows"), result("test_none", "skipped")]
    view = aggregate(skips).view()
    assert [(g.reason, g.count, g.example["test_name"]) for g in view.skip_groups] == [
        ("slow", 3, "test_0"),
        ("(no reason given)", 1, "test_none"),
        ("windows", 1, "test_win"),
    ]
    assert view.skip_groups_omitted == 0


def test_view_skip_groups_capped_and_counted() -> None:
    """Past max_items groups, the skipped tests of the other reasons are counted."""
    skips = [result(f"test_{i}", "skipped", reason=f"r{i:02}") for i in range(8)]
    view = aggregate(skips, max_items=3).view()
    assert [g.reason for g in view.skip_groups] == ["r00", "r01", "r02"]
    assert view.skip_groups_omitted == 5


def test_view_slowest_first_ties_keep_order() -> None:
    """The slowest tests, slowest first; among equal durations the earlier one wins."""
    timed = [result(f"test_{i}", duration=d) for i, d in enumerate([1.0, 5.0, 3.0, 5.0, 0.0, 2.0])]
    view = aggregate(timed, slowest=3).view()
    assert [r["test_name"] for r in view.slowest] == ["test_1", "test_3", "test_2"]
    assert aggregate(timed, slowest=0).view().slowest == []


def test_view_flaky_and_expected_failures() -> None:
    """Flaky tests, xfailed and xpassed get their own selections."""
    items = [
        result("test_f", flaky=True, reruns=1),
        result("test_xf", "xfailed"),
        result("test_xp", "xpassed"),
    ]
    view = aggregate(items).view()
    assert [r["test_name"] for r in view.flaky.items] == ["test_f"]
    assert [r["test_name"] for r in view.xfailed.items] == ["test_xf"]
    assert [r["test_name"] for r in view.xpassed.items] == ["test_xp"]


RESULT_FIELDS = st.fixed_dictionaries(
    {
        "outcome": st.sampled_from(OUTCOMES),
        "duration": st.sampled_from([0.0, 0.001, 0.005, 0.0051, 0.02, 0.02, 0.3, 1.5]),
        "flaky": st.booleans(),
    },
    optional={
        "counted_as": st.lists(st.sampled_from(CATEGORIES), max_size=3),
        "repeat": st.integers(1, 3),
        "reason": st.sampled_from(["a", "b"]),
    },
)


@given(st.lists(RESULT_FIELDS, max_size=40), st.integers(0, 4))
def test_a_stored_result_folds_as_the_whole_record(
    fields: list[dict[str, Any]], slowest: int
) -> None:
    """``add_stored`` (a result without its fields at their default, as the live run hands it
    over) gives the summary and the view ``add_result`` gives of the whole record."""
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    whole, stored = Aggregator(3, slowest), Aggregator(3, slowest)
    for index, extra in enumerate(fields):
        record = result(f"t{index}", **extra)
        whole.add_result(record)
        stored.add_stored(compact("TestResult", record))
    assert stored.summary(1.0) == whole.summary(1.0)
    assert stored.view() == whole.view()
    assert stored.repeat_stats() == whole.repeat_stats()


def test_a_passing_test_among_the_slowest_is_not_made_whole_as_it_goes(monkeypatch: Any) -> None:
    """A passing test slower than those before it (a suite whose tests grow slower, a loaded
    machine) is kept among the slowest as the stream stores it: how many are made whole does
    not grow with the tests, nor depend on their times; the view is the whole records'."""
    from pytest_qbench.report import aggregate as module
    from pytest_qbench.report import shapes
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    made = []
    expand = shapes.expand

    def counted(model: str, record: Any) -> Any:
        made.append(record["nodeid"])
        return expand(model, record)

    whole = Aggregator(3, 10)
    records = [result(f"t{i}", duration=0.01 + i / 1000) for i in range(500)]  # each slower
    for record in records:
        whole.add_result(record)
    monkeypatch.setattr(module, "expand", counted)
    stored = Aggregator(3, 10)
    for record in records:
        stored.add_stored(compact("TestResult", record))
    assert made == []
    assert stored.view() == whole.view()
    assert len(made) == 10  # the slowest ten, when the view is made
    assert stored.summary(1.0) == whole.summary(1.0)


def _slowest_reference(durations: list[float], keep: int) -> list[int]:
    """The indexes of the ``keep`` slowest at or above ``SLOWEST_MIN_SECONDS``, slowest first,
    the earlier first among equal durations: what the view lists."""
    from pytest_qbench.report.aggregate import SLOWEST_MIN_SECONDS

    timed = [(d, i) for i, d in enumerate(durations) if d >= SLOWEST_MIN_SECONDS]
    return [i for _d, i in sorted(timed, key=lambda t: (-t[0], t[1]))[:keep]]


@given(
    st.lists(st.sampled_from([0.0, 0.004, 0.005, 0.0051, 0.02, 0.3, 0.3, 1.5]), max_size=60),
    st.integers(0, 5),
)
def test_the_slowest_are_those_of_a_sort_whatever_the_order(
    durations: list[float], keep: int
) -> None:
    """The slowest kept, ties and the ``SLOWEST_MIN_SECONDS`` bar included, are those of a
    sort of every test, for results stored and whole; once they are all kept, a test no slower
    than the shortest of them is not even offered (issue 28: left out by one comparison)."""
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    class Watched(Aggregator):
        def _offer_slowest(self, entry: Any) -> None:
            full = len(self._slowest) >= self.slowest_n
            assert not full or entry[0] > self._slowest[0][0], (entry[0], self._slowest)
            super()._offer_slowest(entry)

    want = [f"t{i}" for i in _slowest_reference(durations, keep)]
    for stored in (False, True):
        agg = Watched(3, keep)
        for index, duration in enumerate(durations):
            record = result(f"t{index}", duration=duration)
            agg.add_stored(compact("TestResult", record)) if stored else agg.add_result(record)
        assert [r["test_name"] for r in agg.view().slowest] == want


def test_a_test_not_slower_than_the_slowest_kept_is_not_offered(monkeypatch: Any) -> None:
    """Once the slowest are all kept, a test no slower than the shortest of them is left out
    without a call (issue 28: under a loaded machine every test takes 5 ms or more); one
    slower, or of the first ten, is offered."""
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    offered: list[float] = []
    offer = Aggregator._offer_slowest

    def counted(self: Aggregator, entry: Any) -> None:
        offered.append(entry[0])
        offer(self, entry)

    monkeypatch.setattr(Aggregator, "_offer_slowest", counted)
    agg = Aggregator(3, 10)
    durations = [0.5] * 10 + [0.02, 0.5, 0.3] * 100 + [0.7]
    for index, duration in enumerate(durations):
        agg.add_stored(compact("TestResult", result(f"t{index}", duration=duration)))
    assert offered == [0.5] * 10 + [0.7]
    slowest = [r["test_name"] for r in agg.view().slowest]
    assert slowest == [f"t{i}" for i in _slowest_reference(durations, 10)]


def test_a_plain_pass_is_counted_without_a_call(monkeypatch: Any) -> None:
    """A stored pass that pytest counts as ``passed`` alone is counted in place (issue 28);
    any other word still goes through ``_count``, and the summary is the whole records'."""
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    words: list[str] = []
    count = Aggregator._count

    def counted(self: Aggregator, category: str) -> None:
        words.append(category)
        count(self, category)

    records = [result(f"t{i}", counted_as=["passed"]) for i in range(5)] + [result("t_none")]
    records += [result("t_rerun", counted_as=["rerun", "passed"]), result("t_w", counted_as=["w"])]
    whole = aggregate(records)
    monkeypatch.setattr(Aggregator, "_count", counted)
    agg = Aggregator()
    for record in records:
        agg.add_stored(compact("TestResult", record))
    assert words == ["rerun", "passed", "w"]
    assert agg.summary(1.0) == whole.summary(1.0)
    assert agg.counts == whole.counts


def test_results_no_selection_keeps_are_counted_without_a_whole_record(monkeypatch: Any) -> None:
    """A failure, error, xfail or xpass whose selection is full, and a skip whose reason has
    its group (or whose groups are full), are counted from the result as the stream stores it:
    only the kept ones are made whole; the summary and the view are the whole records'."""
    from pytest_qbench.report import aggregate as module
    from pytest_qbench.report import shapes
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.shapes import compact

    made = []
    expand = shapes.expand

    def counted(model: str, record: Any) -> Any:
        made.append(record["nodeid"])
        return expand(model, record)

    records = [
        *(result(f"f{i}", "failed", duration=0.01 * i) for i in range(6)),
        *(result(f"e{i}", "error") for i in range(4)),
        *(result(f"x{i}", "xfailed") for i in range(4)),
        *(result(f"p{i}", "xpassed") for i in range(3)),
        *(result(f"s{i}", "skipped", reason=["a", "b", None][i % 3]) for i in range(9)),
        result("sub", "failed", counted_as=["failed", "subtests failed"]),
    ]
    whole = Aggregator(2, 3)
    for record in records:
        whole.add_result(record)
    monkeypatch.setattr(module, "expand", counted)
    stored = Aggregator(2, 3)
    for record in records:
        stored.add_stored(compact("TestResult", record))
    # two of each selection, the first skip of each reason; main made all 27
    assert made == [f"t.py::{n}" for n in ("f0", "f1", "e0", "e1", "x0", "x1", "p0", "p1")] + [
        "t.py::s0",
        "t.py::s1",
        "t.py::s2",
    ]
    assert stored.summary(1.0) == whole.summary(1.0)
    assert stored.view() == whole.view()
