"""Fold results into a summary and a bounded view, one result at a time.

Works on records (``shapes``); models are accepted too and turned into records. The same
``Aggregator`` serves a live pytest run (fed as each test finishes, so memory stays flat
however many tests run) and ``qbench render`` (fed from a stored report or a stream).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar
from typing import cast

from pytest_qbench.core.records import dataclass
from pytest_qbench.core.repeat import repeated_test_id
from pytest_qbench.core.summary_words import FIELD_OF_KEY
from pytest_qbench.report.shapes import expand
from pytest_qbench.report.shapes import new
from pytest_qbench.report.shapes import pass_rate


if TYPE_CHECKING:
    from typing import TypedDict

    from pytest_qbench.core.stats import ScoreAccumulator
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import MetricStatsRecord
    from pytest_qbench.report.records import RepeatStatsRecord
    from pytest_qbench.report.records import ReportSummaryRecord
    from pytest_qbench.report.records import TestResultRecord

    # for the type checker only: a TypedDict class costs 0.4 M instructions to make (issue 28)
    class MetricSummary(TypedDict):
        """The metric fields of a ``ReportSummary`` record."""

        metrics_evaluated: dict[str, int]
        average_scores: dict[str, float]
        metric_stats: dict[str, MetricStatsRecord]


CATEGORY_FIELDS = FIELD_OF_KEY
"""pytest's summary-line keys -> ReportSummary fields (`pytest_qbench.core.summary_words`)."""
# Counted from the subtests themselves, so pytest-subtests' extra word must not count twice.
IGNORED_CATEGORIES = frozenset({"subtests failed"})
OUTCOME_CATEGORY = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
}
SELECTED_FIELDS = frozenset(
    (
        "subtests",
        "flaky",
        "metric_results",
        "agent_response",
        "tool_calls",
        "attachments",
        "repeat",
    )
)
"""A passing result with any of these fields not at its default may be kept (``add_result``)."""
DEFAULT_MAX_ITEMS = 50
DEFAULT_SLOWEST = 10
SLOWEST_MIN_SECONDS = 0.005
"""Shorter tests are left out of the slowest (pytest's ``--durations`` hides them too): a list
of ``0.00s`` rows says nothing."""
_ONLY_PASSED = ["passed"]
_NOT_COUNTED: list[str] = []
RecordT = TypeVar("RecordT", bound=Mapping[str, object])
"""A record type (``TestResultRecord``...)."""


@dataclass
class Selection:
    """Up to ``limit`` items of one kind, and how many there were in all."""

    limit: int
    items: list[TestResultRecord] = field(default_factory=list)
    total: int = 0

    def offer(self, result: TestResultRecord) -> None:
        """Count ``result``; keep it while there is room."""
        self.total += 1
        if len(self.items) < self.limit:
            self.items.append(result)

    @property
    def omitted(self) -> int:
        """How many were counted but not kept."""
        return self.total - len(self.items)


@dataclass
class SkipGroup:
    """Skipped tests that share a reason."""

    reason: str
    count: int
    example: TestResultRecord


@dataclass
class ReportView:
    """What the Markdown needs, bounded: first failures, errors, skips by reason, slowest tests,
    agent tests (those with metric results or a recorded response)."""

    failures: Selection
    errors: Selection
    xfailed: Selection
    xpassed: Selection
    flaky: Selection
    skip_groups: list[SkipGroup]
    skip_groups_omitted: int
    slowest: list[TestResultRecord]
    agents: Selection = field(default_factory=lambda: Selection(DEFAULT_MAX_ITEMS))
    attached: Selection = field(default_factory=lambda: Selection(DEFAULT_MAX_ITEMS))
    """Tests with attachments."""


class Aggregator:
    """Accumulates counts and bounded selections from results and diagnostics."""

    def __init__(self, max_items: int = DEFAULT_MAX_ITEMS, slowest: int = DEFAULT_SLOWEST) -> None:
        self.max_items = max_items
        self.counts: dict[str, int] = {}
        self.other: dict[str, int] = {}
        self.total = 0
        self.flaky_count = 0
        self.subtests_failed = 0
        self.failures = Selection(max_items)
        self.errors = Selection(max_items)
        self.xfailed = Selection(max_items)
        self.xpassed = Selection(max_items)
        self.flaky = Selection(max_items)
        self._selections = {
            "failed": self.failures,
            "error": self.errors,
            "xfailed": self.xfailed,
            "xpassed": self.xpassed,
        }
        """The selection of each outcome ``_select`` offers a result to (a skip: ``skips``)."""
        self.skips: dict[str, SkipGroup] = {}
        self.slowest_n = slowest
        self._slowest: list[tuple[float, int, Mapping[str, Any], bool]] = []
        """The slowest tests so far, least first: (duration, -sequence, record, whether the
        record is stored: without its fields at their default, made whole by ``view``)."""
        self._seq = 0
        self._bar = SLOWEST_MIN_SECONDS if slowest else math.nan
        """The least duration that enters the slowest: ``SLOWEST_MIN_SECONDS`` while there is
        room, then just above the shortest kept (a later test of the same duration does not
        replace it), so that most tests are left out by one comparison; NaN (nothing enters)
        when no slowest test is kept."""
        self.metrics: dict[str, ScoreAccumulator] = {}
        self.agents = Selection(max_items)
        self.repeats: dict[str, RepeatAccumulator] = {}
        self.attached = Selection(max_items)
        self.attachments = 0

    def add_result(self, value: TestResultRecord | Any) -> None:
        """Count one test and keep it if a selection wants it."""
        # Calls inlined where the common case needs none: this runs once per test.
        result: TestResultRecord = (
            cast("TestResultRecord", value) if isinstance(value, dict) else as_record(value)
        )
        self.total += 1
        outcome = result["outcome"]
        for category in result["counted_as"] or [OUTCOME_CATEGORY[outcome]]:
            self._count(category)
        if result["subtests"]:
            self.subtests_failed += sum(1 for s in result["subtests"] if s["outcome"] == "failed")
        if result["flaky"]:
            self.flaky_count += 1
            self.flaky.offer(result)
        if outcome != "passed":
            self._select(result)
        if result["metric_results"] or result["agent_response"] is not None or result["tool_calls"]:
            self._add_agent(result)
        attachments = result.get("attachments")
        if attachments:
            self.attachments += len(attachments)
            self.attached.offer(result)
        repeat = result.get("repeat")
        if repeat is not None:
            self._add_repeat(result, repeat)
        duration = result["duration"]
        if duration >= self._bar:
            self._seq += 1
            self._offer_slowest((duration, -self._seq, result, False))

    def longest(self) -> float:
        """The duration of the slowest test kept (0 when none is: none as long as
        ``SLOWEST_MIN_SECONDS``, or no slowest kept)."""
        return max((entry[0] for entry in self._slowest), default=0.0)

    def _offer_slowest(self, entry: tuple[float, int, Mapping[str, Any], bool]) -> None:
        """Keep ``entry`` if it is among the ``slowest_n`` slowest so far (a later test of the
        same duration does not replace an earlier one), and raise the bar when they are all
        there."""
        slowest = self._slowest
        if len(slowest) < self.slowest_n:
            heapq.heappush(slowest, entry)
        elif entry[:2] > slowest[0][:2]:
            heapq.heapreplace(slowest, entry)
        else:
            return
        if len(slowest) >= self.slowest_n:
            self._bar = math.nextafter(slowest[0][0], math.inf)

    def add_stored(self, stored: Mapping[str, Any]) -> None:
        """``add_result`` of a result without its fields at their default (as the stream
        stores it). The whole record is made only when a selection may keep it: a passing
        test that none wants is counted from what it has. One among the slowest so far is
        kept as it is given, and made whole by ``view``: how many tests are slower than the
        ones before them depends on the clock (a loaded machine, a suite whose tests grow
        slower as it goes), and each would cost a whole record, made and dropped again."""
        outcome = stored["outcome"]
        # a field left out is at its default: one C call instead of a get() for each
        plain = SELECTED_FIELDS.isdisjoint(stored)
        if outcome != "passed" or not plain:
            if not (plain and self._counted_unkept(stored, outcome)):
                self.add_result(expand("TestResult", stored))
            return
        self.total += 1
        counted = stored.get("counted_as")
        if not counted or counted == _ONLY_PASSED:  # nearly every test: no _count call
            counts = self.counts
            counts["passed"] = counts.get("passed", 0) + 1
        else:
            for category in counted or ("passed",):
                self._count(category)
        duration = stored.get("duration", 0.0)
        if duration >= self._bar:
            self._seq += 1
            self._offer_slowest((duration, -self._seq, stored, True))

    def _counted_unkept(self, stored: Mapping[str, Any], outcome: str) -> bool:
        """``add_result`` of a result that did not pass, holds none of ``SELECTED_FIELDS``, and
        that no selection keeps (its selection full, a skip whose reason's group is there or
        whose groups are full), counted from what it has, without a whole record (issue 28);
        whether it was (else it is one to keep)."""
        counted = stored.get("counted_as") or _NOT_COUNTED  # as the whole record's default
        if outcome == "skipped":
            reason = stored.get("reason") or "(no reason given)"
            group = self.skips.get(reason)
            if group is not None:
                group.count += counted.count("skipped") or 1
            elif len(self.skips) < self.max_items * 4:
                return False
        else:
            selection = self._selections.get(outcome)
            if selection is None or len(selection.items) < selection.limit:
                return False
            selection.total += 1
        self.total += 1
        for category in counted or [OUTCOME_CATEGORY[outcome]]:
            self._count(category)
        duration = stored.get("duration", 0.0)
        if duration >= self._bar:
            self._seq += 1
            self._offer_slowest((duration, -self._seq, stored, True))
        return True

    def _add_agent(self, result: TestResultRecord) -> None:
        metrics = result["metric_results"]
        for metric in metrics:
            name = metric["metric_name"]
            acc = self.metrics.get(name)
            if acc is None:
                acc = self.metrics[name] = _score_accumulator()
            acc.add(metric)
        if metrics or result["agent_response"] is not None or result["tool_calls"]:
            self.agents.offer(result)

    def _add_repeat(self, result: TestResultRecord, repeat: int) -> None:
        test = repeated_test_id(result["nodeid"], repeat)
        acc = self.repeats.get(test)
        if acc is None:
            acc = self.repeats[test] = RepeatAccumulator()
        acc.add(result)

    def repeat_stats(self) -> list[RepeatStatsRecord]:
        """``RepeatStats`` records of the repeated tests, in the order they first finished."""
        return [acc.stats(test) for test, acc in self.repeats.items() if acc.runs]

    def _select(self, result: TestResultRecord) -> None:
        outcome = result["outcome"]
        if outcome == "failed":
            self.failures.offer(result)
        elif outcome == "error":
            self.errors.offer(result)
        elif outcome == "xfailed":
            self.xfailed.offer(result)
        elif outcome == "xpassed":
            self.xpassed.offer(result)
        elif outcome == "skipped":
            reason = result["reason"] or "(no reason given)"
            # a module skipped under --doctest-modules: pytest counts its two collectors' skips
            skips = result["counted_as"].count("skipped") or 1
            group = self.skips.get(reason)
            if group is not None:
                group.count += skips
            elif len(self.skips) < self.max_items * 4:
                self.skips[reason] = SkipGroup(reason, skips, result)

    def _count(self, category: str) -> None:
        if category in IGNORED_CATEGORIES or not category:
            return
        name = CATEGORY_FIELDS.get(category)
        if name is None:
            self.other[category] = self.other.get(category, 0) + 1
        else:
            self.counts[name] = self.counts.get(name, 0) + 1

    def add_collection_error(self, diagnostic: DiagnosticRecord | Any) -> None:
        """Count a collection error, as pytest does, among ``errors``."""
        self._count("error")

    def add_warning(self, diagnostic: DiagnosticRecord | Any) -> None:
        """Count a pytest warning (qbench's own notes are not pytest's and are not counted)."""
        record: DiagnosticRecord = as_record(diagnostic)
        if record["tool"] == "pytest":
            self._count("warnings")

    def add_deselected(self, count: int) -> None:
        """Count deselected tests."""
        self.counts["deselected"] = self.counts.get("deselected", 0) + count

    def summary(self, duration: float) -> ReportSummaryRecord:
        """The summary so far, as a ``ReportSummary`` record."""
        count = self.counts.get
        metrics = self.metric_summary()
        summary = new(
            "ReportSummary",
            passed=count("passed", 0),
            failed=count("failed", 0),
            errors=count("errors", 0),
            skipped=count("skipped", 0),
            xfailed=count("xfailed", 0),
            xpassed=count("xpassed", 0),
            reruns=count("reruns", 0),
            subtests_passed=count("subtests_passed", 0),
            subtests_skipped=count("subtests_skipped", 0),
            deselected=count("deselected", 0),
            warnings=count("warnings", 0),
            total=self.total,
            flaky=self.flaky_count,
            subtests_failed=self.subtests_failed,
            other=dict(self.other),
            duration=round(duration, 6),
            metrics_evaluated=metrics["metrics_evaluated"],
            average_scores=metrics["average_scores"],
            metric_stats=metrics["metric_stats"],
            attachments=self.attachments,
        )
        summary["pass_rate"] = pass_rate(summary)
        return summary

    def metric_summary(self) -> MetricSummary:
        """``metrics_evaluated``, ``average_scores`` and ``metric_stats``, by metric name."""
        stats: dict[str, MetricStatsRecord] = {}
        if self.metrics:  # a run without metrics never imports the statistics
            from pytest_qbench.core.stats import derived
        for name in sorted(self.metrics):
            record = new("MetricStats", **self.metrics[name].stored())
            record.update(cast("MetricStatsRecord", derived(record)))
            stats[name] = record
        scored = {name: s for name, s in stats.items() if s["n"]}
        return {
            "metrics_evaluated": {name: s["n"] for name, s in scored.items()},
            "average_scores": {name: cast(float, s["mean"]) for name, s in scored.items()},
            "metric_stats": stats,
        }

    def view(self) -> ReportView:
        """The bounded selections, skip groups by count, slowest first."""
        groups = sorted(self.skips.values(), key=lambda g: (-g.count, g.reason))
        skipped_total = self.counts.get("skipped", 0)
        shown = groups[: self.max_items]
        omitted = max(0, skipped_total - sum(g.count for g in shown))
        return ReportView(
            failures=self.failures,
            errors=self.errors,
            xfailed=self.xfailed,
            xpassed=self.xpassed,
            flaky=self.flaky,
            skip_groups=shown,
            skip_groups_omitted=omitted,
            slowest=[
                cast("TestResultRecord", expand("TestResult", record) if stored else record)
                for _duration, _seq, record, stored in sorted(self._slowest, reverse=True)
            ],
            agents=self.agents,
            attached=self.attached,
        )


def _score_accumulator() -> ScoreAccumulator:
    """A new metric's accumulator (the statistics are imported only by runs with metrics)."""
    from pytest_qbench.core.stats import ScoreAccumulator

    return ScoreAccumulator()


@dataclass
class RepeatAccumulator:
    """The runs of one test under ``--qbench-repeat``."""

    runs: int = 0
    passed: int = 0
    metrics: dict[str, ScoreAccumulator] = field(default_factory=dict)

    def add(self, result: TestResultRecord) -> None:
        """Count one run (a skipped run is left out)."""
        if result["outcome"] not in ("passed", "failed", "error"):
            return
        self.runs += 1
        self.passed += result["outcome"] == "passed"
        for metric in result["metric_results"]:
            acc = self.metrics.get(metric["metric_name"])
            if acc is None:
                acc = self.metrics[metric["metric_name"]] = _score_accumulator()
            acc.add(metric)

    def stats(self, nodeid: str) -> RepeatStatsRecord:
        """The ``RepeatStats`` record."""
        from pytest_qbench.core.stats import stats_mean
        from pytest_qbench.report.gates.stats import pass_at_k

        means = {name: stats_mean(float(acc.total), acc.n) for name, acc in self.metrics.items()}
        return new(
            "RepeatStats",
            nodeid=nodeid,
            runs=self.runs,
            passed=self.passed,
            pass_at_k=[pass_at_k(self.runs, self.passed, k) for k in range(1, self.runs + 1)],
            metric_means={name: mean for name, mean in sorted(means.items()) if mean is not None},
        )


def aggregate(
    results: Iterable[TestResultRecord | Any],
    collection_errors: Iterable[DiagnosticRecord | Any] = (),
    warnings: Iterable[DiagnosticRecord | Any] = (),
    deselected: int = 0,
    *,
    max_items: int = DEFAULT_MAX_ITEMS,
    slowest: int = DEFAULT_SLOWEST,
) -> Aggregator:
    """Feed everything to a new ``Aggregator``."""
    agg = Aggregator(max_items, slowest)
    for result in results:
        agg.add_result(result)
    for diagnostic in collection_errors:
        agg.add_collection_error(diagnostic)
    for diagnostic in warnings:
        agg.add_warning(diagnostic)
    if deselected:
        agg.add_deselected(deselected)
    return agg


__all__ = ["Aggregator", "ReportView", "Selection", "SkipGroup", "aggregate", "as_record"]


def as_record(value: RecordT | Any) -> RecordT:
    """A record as is; a model (from the public API or a test) dumped into one."""
    if isinstance(value, dict):
        return cast("RecordT", value)
    model: Any = value
    return cast("RecordT", model.model_dump(mode="json"))
