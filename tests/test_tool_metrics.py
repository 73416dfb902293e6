"""Tool calls: normalising what the agent recorded, and the ``tool_calls`` metric's modes (issue 4)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import ToolCall
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation import normalize_tool_calls
from pytest_qbench.evaluation import score_tool_calls
from pytest_qbench.evaluation import tools_matched
from pytest_qbench.evaluation.tools import is_subset


# ---------------------------------------------------------------- normalising


def test_tool_calls_are_normalised_from_names_and_mappings() -> None:
    calls = normalize_tool_calls(
        [
            "search",
            {"name": "calc", "arguments": {"x": 1}},
            {"name": "calc", "args": {"x": 2}, "id": "call_1", "type": "function"},
            {"name": "fetch", "arguments": '{"url": "u"}'},
            ToolCall("done"),
        ]
    )
    assert calls == (
        ToolCall("search"),
        ToolCall("calc", {"x": 1}),
        ToolCall("calc", {"x": 2}),
        ToolCall("fetch", {"url": "u"}),
        ToolCall("done"),
    )


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        (
            ["ok", 5],
            "tool_calls[1]: expected a tool name (str) or a mapping "
            "{'name': str, 'arguments': {...}}, got int",
        ),
        ([{"arguments": {}}], "tool_calls[0]: expected a tool name (str) or a mapping"),
        ([""], "the name must be a non-empty str"),
        ([{"name": "a", "arguments": {}, "args": {}}], "tool_calls[0]: give 'arguments' or 'args'"),
        ([{"name": "a", "arguments": [1]}], "tool_calls[0]: arguments must be a mapping"),
        ([{"name": "a", "arguments": "{oops"}], "tool_calls[0]: arguments is a str but not JSON"),
        ([{"name": "a", "arguments": "[1]"}], "tool_calls[0]: arguments must be a mapping"),
        ("search", "got a str; wrap it in a list: ['search']"),
        ({"name": "a"}, "tool_calls: expected a list of tool calls, got a dict"),
    ],
)
def test_malformed_tool_calls_name_the_index_and_the_shape(calls: Any, message: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        normalize_tool_calls(calls)
    assert message in str(excinfo.value)


def test_sample_normalises_and_checks_what_record_receives() -> None:
    """Sample.from_record takes qbench.record's arguments; extra keywords land in extra."""
    sample = Sample.from_record(
        "hi", tool_calls=["a"], expected_tools=[{"name": "a"}], latency_ms=3, tokens=10, run=2
    )
    assert sample.tool_calls == sample.expected_tools == (ToolCall("a"),)
    assert sample.extra == {"run": 2}
    assert Sample("hi").expected_tools is None
    with pytest.raises(ValueError, match=r"expected_tools\[0\]"):
        Sample("hi", expected_tools=[3])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("latency_ms", -1, "latency_ms must be a non-negative number, got -1"),
        ("latency_ms", "fast", "latency_ms must be a non-negative number, got str"),
        ("cost", True, "cost must be a non-negative number, got bool"),
        ("cost", float("nan"), "cost must be a non-negative number, got nan"),
        ("tokens", 1.5, "tokens must be a non-negative int, got float"),
    ],
)
def test_sample_rejects_bad_amounts(field: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sample("r", **{field: value})


# ---------------------------------------------------------------- modes

CALLS = ["search", "calc", "search"]


@pytest.mark.parametrize(
    ("actual", "expected", "mode", "score"),
    [
        (CALLS, ["calc", "search"], "set", 1.0),
        (CALLS, ["calc"], "set", 0.0),
        (CALLS, ["calc", "search", "mail"], "set", 0.0),
        (CALLS, ["search", "search", "calc"], "multiset", 1.0),
        (CALLS, ["search", "calc"], "multiset", 0.0),
        (CALLS, ["search", "calc", "search"], "exact", 1.0),
        (CALLS, ["search", "search", "calc"], "exact", 0.0),
        (CALLS, ["search", "calc"], "exact", 0.0),
        (CALLS, ["search", "search"], "ordered", 1.0),
        (CALLS, ["calc", "search"], "ordered", 1.0),
        (CALLS, ["calc", "calc"], "ordered", 0.0),
        (CALLS, ["search", "mail"], "precision", 1 / 3),
        (CALLS, ["search", "mail"], "recall", 1 / 2),
        (CALLS, ["search", "mail"], "f1", 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2)),
        (CALLS, ["mail"], "f1", 0.0),
        ([], [], "precision", 1.0),
        ([], ["a"], "precision", 0.0),
        (["a"], [], "recall", 1.0),
        ([], [], "f1", 1.0),
        ([], [], "set", 1.0),
        ([], ["a"], "set", 0.0),
        (CALLS, ["delete"], "forbidden", 1.0),
        (CALLS, ["delete", "calc"], "forbidden", 0.0),
    ],
)
def test_modes(actual: list[str], expected: list[str], mode: Any, score: float) -> None:
    assert score_tool_calls(actual, expected, mode=mode) == pytest.approx(score)


def search(**arguments: Any) -> dict[str, Any]:
    return {"name": "search", "arguments": arguments}


@pytest.mark.parametrize(
    ("actual", "expected", "arguments", "matched"),
    [
        ([search(q="x", k=5)], [search(q="x")], "subset", True),
        ([search(q="x", k=5)], [search(q="x")], "exact", False),
        ([search(q="x")], [search(q="x")], "exact", True),
        ([search(q="y")], [search(q="x")], "subset", False),
        ([search(q="y")], [search(q="x")], "ignore", True),
        ([search(q="y")], ["search"], "exact", True),  # no expected arguments: any call
        (["search"], [search(q="x")], "subset", False),  # a bare actual call has no arguments
        ([search(f={"a": 1, "b": {"c": 2, "d": 3}})], [search(f={"b": {"c": 2}})], "subset", True),
        ([search(f={"b": {"c": 2}})], [search(f={"b": {"c": 2, "d": 3}})], "subset", False),
        ([search(ids=[1, 2, 3])], [search(ids=[1, 2])], "subset", False),  # lists compare equal
    ],
)
def test_argument_matching(actual: Any, expected: Any, arguments: Any, matched: bool) -> None:
    """Subset is recursive for mappings; exact means equal; ignore compares names only."""
    assert tools_matched(actual, expected, "exact", arguments) is matched


def test_matching_pairs_calls_optimally_not_greedily() -> None:
    """A loose expected call must not take the only call a stricter one fits."""
    actual = [search(q="a"), search(q="b")]
    expected = ["search", search(q="a")]
    assert score_tool_calls(actual, expected, mode="multiset") == 1.0
    assert score_tool_calls(actual, expected, mode="recall") == 1.0


def test_is_subset() -> None:
    assert is_subset({}, {"a": 1})
    assert is_subset(1, 1.0)
    assert not is_subset({"a": 1}, 5)


def test_unknown_mode_or_argument_match() -> None:
    with pytest.raises(ValueError, match="mode must be one of set, multiset, exact, ordered"):
        score_tool_calls([], [], mode="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="arguments must be one of subset, exact, ignore"):
        score_tool_calls([], [], arguments="loose")  # type: ignore[arg-type]


# ---------------------------------------------------------------- the metric


def tool_eval(sample: Sample, **params: Any) -> Any:
    return evaluate("tool_calls", sample, params=params)


def test_metric_scores_recorded_calls_against_expected() -> None:
    sample = Sample.from_record(
        "r", tool_calls=["search", "calc"], expected_tools=["calc", "search"]
    )
    assert tool_eval(sample).score == 1.0
    assert tool_eval(sample, mode="exact").score == 0.0
    assert tool_eval(sample, mode="exact").reason == "called ['search', 'calc']"


def test_metric_without_expected_tools_is_an_error() -> None:
    assert tool_eval(Sample.from_record("r", tool_calls=["a"])).error == (
        "metric 'tool_calls' needs expected_tools; pass expected_tools= to qbench.record(...)"
    )


def test_metric_forbidden_mode() -> None:
    sample = Sample.from_record("r", tool_calls=["search", "delete_user"])
    assert tool_eval(sample, mode="forbidden", forbidden=["delete_user"]).score == 0.0
    assert tool_eval(sample, mode="forbidden", forbidden=["drop_table"]).score == 1.0
    assert "forbidden=[...] goes with mode='forbidden'" in tool_eval(sample, mode="forbidden").error
    assert "goes with mode='forbidden'" in tool_eval(sample, forbidden=["x"]).error


def test_metric_bad_mode_is_an_error_not_an_exception() -> None:
    evaluation = tool_eval(Sample.from_record("r", expected_tools=[]), mode="fuzzy")
    assert evaluation.error is not None and "mode must be one of" in evaluation.error


# ---------------------------------------------------------------- properties

NAMES = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=6)


@settings(max_examples=40)
@given(NAMES, NAMES, st.randoms())
def test_set_and_multiset_ignore_order(actual: list[str], expected: list[str], rnd: Any) -> None:
    shuffled = list(actual)
    rnd.shuffle(shuffled)
    for mode in ("set", "multiset", "precision", "recall", "f1"):
        assert score_tool_calls(actual, expected, mode=mode) == score_tool_calls(
            shuffled, expected, mode=mode
        )


@settings(max_examples=50)
@given(NAMES, NAMES)
def test_modes_are_ordered_by_strictness(actual: list[str], expected: list[str]) -> None:
    """exact implies multiset implies set and ordered; every score is in 0..1."""
    matched = {mode: tools_matched(actual, expected, mode) for mode in ("exact", "multiset", "set")}
    assert not matched["exact"] or matched["multiset"]
    assert not matched["multiset"] or matched["set"]
    assert not matched["exact"] or tools_matched(actual, expected, "ordered")
    for mode in ("precision", "recall", "f1"):
        assert 0.0 <= score_tool_calls(actual, expected, mode=mode) <= 1.0
    assert score_tool_calls(actual, expected, mode="f1") == pytest.approx(
        score_tool_calls(expected, actual, mode="f1")
    )


@settings(max_examples=50)
@given(NAMES, st.lists(st.booleans(), min_size=6, max_size=6))
def test_a_subsequence_is_ordered(actual: list[str], keep: list[bool]) -> None:
    expected = [call for call, kept in zip(actual, keep, strict=False) if kept]
    assert tools_matched(actual, expected, "ordered")
    assert score_tool_calls(actual, expected, mode="recall") == 1.0
