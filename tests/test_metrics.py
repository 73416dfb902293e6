"""Built-in deterministic metrics: text, numbers, JSON and JSON Schema, budgets (issue 4)."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic import Field

from pytest_qbench.evaluation import Evaluation
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation import get
from pytest_qbench.evaluation import metric_names
from pytest_qbench.evaluation.metrics import lcs_length
from pytest_qbench.evaluation.metrics import levenshtein_distance
from pytest_qbench.evaluation.metrics import parse_number
from pytest_qbench.evaluation.metrics import rouge_l_score
from pytest_qbench.evaluation.metrics import squad_tokens
from pytest_qbench.evaluation.metrics import token_f1_score
from pytest_qbench.evaluation.registry import MetricError
from pytest_qbench.evaluation.schema_check import SchemaError
from pytest_qbench.evaluation.schema_check import validate


def run(name: str, response: Any, ground_truth: Any = None, **params: Any) -> Evaluation:
    return evaluate(name, Sample(response, ground_truth=ground_truth), params=params)


def score(name: str, response: Any, ground_truth: Any = None, **params: Any) -> float | None:
    evaluation = run(name, response, ground_truth, **params)
    assert evaluation.error is None, evaluation.error
    return evaluation.score


def error(name: str, response: Any, ground_truth: Any = None, **params: Any) -> str:
    evaluation = run(name, response, ground_truth, **params)
    assert evaluation.score is None and evaluation.error, evaluation
    return evaluation.error


# ---------------------------------------------------------------- exact_match, contains, regex


@pytest.mark.parametrize(
    ("response", "truth", "params", "expected"),
    [
        ("Paris", "Paris", {}, 1.0),
        ("  Paris\n", "Paris", {}, 1.0),
        ("  Paris\n", "Paris", {"normalize_whitespace": False}, 0.0),
        ("New   York", "New York", {}, 1.0),
        ("paris", "Paris", {}, 0.0),
        ("paris", "Paris", {"ignore_case": True}, 1.0),
        ("Lyon", ["Paris", "Lyon"], {}, 1.0),
        ("42", 42, {}, 1.0),
        ({"b": 1, "a": 2}, '{"a": 2, "b": 1}', {}, 1.0),
    ],
)
def test_exact_match(response: Any, truth: Any, params: dict[str, Any], expected: float) -> None:
    """exact_match folds white space by default and case on request; a list holds alternatives."""
    assert score("exact_match", response, truth, **params) == expected


def test_exact_match_without_ground_truth_is_an_error_naming_the_fix() -> None:
    """A missing ground truth is an evaluation error, never an exception."""
    assert error("exact_match", "Paris") == (
        "metric 'exact_match' needs ground_truth; pass ground_truth= to qbench.record(...)"
    )


def test_empty_list_of_ground_truths_is_an_error() -> None:
    assert "empty list" in error("exact_match", "x", [])


@pytest.mark.parametrize(
    ("params", "truth", "expected"),
    [
        ({"substrings": ["cat", "mat"]}, None, 1.0),
        ({"substrings": ["cat", "dog"]}, None, 0.0),
        ({"substrings": ["cat", "dog"], "mode": "any"}, None, 1.0),
        ({"substrings": "CAT"}, None, 0.0),
        ({"substrings": "CAT", "ignore_case": True}, None, 1.0),
        ({}, ["cat", "mat"], 1.0),
        ({}, "sat on", 1.0),
    ],
)
def test_contains(params: dict[str, Any], truth: Any, expected: float) -> None:
    """contains looks for the substrings param, else the ground truth(s)."""
    assert score("contains", "the cat sat on the mat", truth, **params) == expected


def test_contains_says_what_is_missing() -> None:
    evaluation = run("contains", "the cat", substrings=["cat", "dog"])
    assert evaluation.reason == "missing: ['dog']"


def test_contains_with_nothing_to_look_for_names_both_ways() -> None:
    assert error("contains", "x").endswith("or the substrings= param")


def test_contains_rejects_an_unknown_mode() -> None:
    assert "mode must be 'all' or 'any'" in error("contains", "x", substrings="x", mode="most")


@pytest.mark.parametrize(
    ("params", "truth", "expected"),
    [
        ({"pattern": r"\d{3}-\d{4}"}, None, 1.0),
        ({"pattern": r"^\d+$"}, None, 0.0),
        ({}, r"call \d+", 1.0),
        ({"pattern": "CALL"}, None, 0.0),
        ({"pattern": "CALL", "flags": "i"}, None, 1.0),
        ({"pattern": r"call", "match": "fullmatch"}, None, 0.0),
        ({"pattern": r"call.*", "match": "fullmatch"}, None, 1.0),
        ({"pattern": r"555", "match": "match"}, None, 0.0),
    ],
)
def test_regex(params: dict[str, Any], truth: Any, expected: float) -> None:
    """regex uses the pattern param, else the ground truth, with search/match/fullmatch."""
    assert score("regex", "call 555-1234", truth, **params) == expected


def test_invalid_regex_is_an_error_not_a_crash() -> None:
    message = error("regex", "x", pattern="(unclosed")
    assert message.startswith("regex: invalid pattern '(unclosed': missing )")


def test_regex_unknown_flag_and_no_pattern() -> None:
    assert "unknown flag 'q'" in error("regex", "x", pattern="x", flags="q")
    assert error("regex", "x").endswith("or the pattern= param")


# ---------------------------------------------------------------- token_f1, rouge_l, levenshtein


def test_squad_normalisation() -> None:
    """Lower case, punctuation and articles removed, as in the SQuAD evaluation script."""
    assert squad_tokens("The  Eiffel-Tower, in Paris!") == ["eiffeltower", "in", "paris"]
    assert squad_tokens("an apple a day") == ["apple", "day"]


@pytest.mark.parametrize(
    ("response", "truth", "expected"),
    [
        ("The cat sat.", "cat sat", 1.0),
        ("cat sat on mat", "cat sat", 2 * (2 / 4) * 1 / (2 / 4 + 1)),
        ("dog", "cat", 0.0),
        ("the", "a", 1.0),  # both normalise to nothing
        ("the", "cat", 0.0),
        ("cat cat", "cat", 2 * 0.5 * 1 / 1.5),
    ],
)
def test_token_f1(response: str, truth: str, expected: float) -> None:
    assert score("token_f1", response, truth) == pytest.approx(expected)


def test_token_f1_takes_the_best_ground_truth() -> None:
    assert score("token_f1", "blue whale", ["elephant", "the blue whale"]) == 1.0


def test_rouge_l_known_value() -> None:
    """LCS of 'the cat was found under the bed' / 'the cat was under the bed' is 6 words."""
    candidate, reference = "the cat was found under the bed", "the cat was under the bed"
    precision, recall = 6 / 7, 6 / 6
    expected = 2 * precision * recall / (precision + recall)
    assert score("rouge_l", candidate, reference) == pytest.approx(expected)
    assert score("rouge_l", "a b c", "c b a") == pytest.approx(1 / 3)


def test_rouge_l_beta_weights_recall() -> None:
    precision, recall = 1.0, 0.5
    f2 = 5 * precision * recall / (recall + 4 * precision)
    assert score("rouge_l", "a b", "a b c d", beta=2) == pytest.approx(f2)
    assert "beta must be a positive number" in error("rouge_l", "a", "a", beta=0)


def test_levenshtein_similarity_known_values() -> None:
    assert score("levenshtein_similarity", "kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert score("levenshtein_similarity", "", "") == 1.0
    assert score("levenshtein_similarity", "ABC", "abc") == 0.0
    assert score("levenshtein_similarity", "ABC", "abc", ignore_case=True) == 1.0
    assert score("levenshtein_similarity", "ß", "x", ignore_case=True) == 0.0  # folds to "ss"


def test_levenshtein_length_guard() -> None:
    """A text over max_length is an error, not minutes of work."""
    assert "more than max_length=10" in error(
        "levenshtein_similarity", "x" * 11, "x", max_length=10
    )


def test_long_texts_are_fast() -> None:
    """Bit-parallel: 10 000 x 10 000 characters in well under a second."""
    text = "lorem ipsum dolor sit amet " * 400
    assert levenshtein_distance(text, text[1:] + "!") == 2
    assert lcs_length(text.split() * 5, text.split()[::-1] * 5) > 0


def reference_levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def reference_lcs(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


SHORT_TEXT = st.text(alphabet="abcd ", max_size=40)


@settings(max_examples=150)
@given(SHORT_TEXT, SHORT_TEXT)
def test_bit_parallel_distances_equal_the_textbook_tables(a: str, b: str) -> None:
    assert levenshtein_distance(a, b) == reference_levenshtein(a, b)
    assert lcs_length(a, b) == reference_lcs(a, b)


@settings(max_examples=60)
@given(st.text(max_size=60))
def test_similarity_metrics_are_one_on_identical_text(text: str) -> None:
    assert token_f1_score(text, text) == 1.0
    assert rouge_l_score(text, text) == 1.0
    assert score("levenshtein_similarity", text, text) == 1.0
    assert score("exact_match", text, text) == 1.0


@settings(max_examples=60)
@given(SHORT_TEXT, SHORT_TEXT)
def test_similarity_metrics_are_symmetric(a: str, b: str) -> None:
    assert token_f1_score(a, b) == pytest.approx(token_f1_score(b, a))
    assert rouge_l_score(a, b) == pytest.approx(rouge_l_score(b, a))
    assert levenshtein_distance(a, b) == levenshtein_distance(b, a)


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("value", "pick", "expected"),
    [
        (42, "last", 42.0),
        (2.5, "last", 2.5),
        ("The answer is 1,234.5 km.", "last", 1234.5),
        ("from 3 to 7", "first", 3.0),
        ("from 3 to 7", "last", 7.0),
        ("-0.5", "only", -0.5),
        ("x = -12", "last", -12.0),
        ("3-4", "last", 4.0),
        ("1e3 requests", "last", 1000.0),
        (".5 of it", "last", 0.5),
        ("gpt4 said 12", "last", 12.0),
    ],
)
def test_parse_number(value: object, pick: Any, expected: float) -> None:
    assert parse_number(value, pick) == expected


@pytest.mark.parametrize(
    ("value", "pick", "message"),
    [
        ("no digits", "last", "no number in 'no digits'"),
        ("1 and 2", "only", "2 numbers in '1 and 2', expected one"),
        ("1e999", "last", "not a finite number"),
        (math.nan, "last", "not a finite number"),
    ],
)
def test_parse_number_errors(value: object, pick: Any, message: str) -> None:
    with pytest.raises(MetricError, match=message):
        parse_number(value, pick)


@pytest.mark.parametrize(
    ("response", "truth", "params", "expected"),
    [
        ("The total is 100.", 100, {}, 1.0),
        ("The total is 101.", 100, {}, 0.0),
        ("The total is 101.", 100, {"rel_tol": 0.01}, 1.0),
        ("The total is 102.", "100", {"rel_tol": 0.01}, 0.0),
        ("0.3", 0.1 + 0.2, {}, 1.0),
        ("0.004", 0, {"abs_tol": 0.005}, 1.0),
        ("3 apples, then 5", "5", {"pick": "first"}, 0.0),
    ],
)
def test_numeric_closeness(
    response: str, truth: Any, params: dict[str, Any], expected: float
) -> None:
    """Within max(rel_tol * |truth|, abs_tol) scores 1, else 0."""
    assert score("numeric_closeness", response, truth, **params) == expected


def test_numeric_closeness_errors_and_reason() -> None:
    assert error("numeric_closeness", "no idea", 5) == "no number in 'no idea'"
    assert "non-negative" in error("numeric_closeness", "1", 1, abs_tol=-1)
    assert run("numeric_closeness", "12", 10).reason == "|12 - 10| = 2 > tolerance 1e-08"


# ---------------------------------------------------------------- JSON


@pytest.mark.parametrize(
    ("response", "params", "expected"),
    [
        ('{"a": [1, 2]}', {}, 1.0),
        ("[1, 2,]", {}, 0.0),
        ("NaN", {}, 0.0),
        ('{"a": Infinity}', {}, 0.0),
        ('```json\n{"a": 1}\n```', {}, 0.0),
        ('```json\n{"a": 1}\n```', {"allow_code_fence": True}, 1.0),
        ({"already": "parsed"}, {}, 1.0),
        ({"bad": object()}, {}, 0.0),
    ],
)
def test_json_valid(response: Any, params: dict[str, Any], expected: float) -> None:
    """Strict JSON: no NaN or Infinity; a Markdown code fence only when allowed."""
    assert score("json_valid", response, **params) == expected


def test_json_valid_reason_points_at_the_problem() -> None:
    assert run("json_valid", "{").reason == (
        "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


PERSON = {
    "$defs": {"name": {"type": "string", "minLength": 1}},
    "type": "object",
    "properties": {
        "name": {"$ref": "#/$defs/name"},
        "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["name"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("instance", "schema", "problem"),
    [
        ({"name": "Ada", "age": 36, "tags": ["x"]}, PERSON, None),
        ({"name": "Ada", "age": 36.0}, PERSON, None),
        ({"age": 3}, PERSON, "$: 'name' is a required property"),
        ({"name": ""}, PERSON, "$.name: '' should be non-empty"),
        (
            {"name": "A", "age": 150},
            PERSON,
            "$.age: 150 is greater than or equal to the maximum of 150",
        ),
        ({"name": "A", "age": -1}, PERSON, "$.age: -1 is less than the minimum of 0"),
        ({"name": "A", "age": True}, PERSON, "$.age: True is not of type 'integer'"),
        ({"name": "A", "age": 1.5}, PERSON, "$.age: 1.5 is not of type 'integer'"),
        ({"name": "A", "tags": ["a", 1]}, PERSON, "$.tags[1]: 1 is not of type 'string'"),
        ({"name": "A", "tags": ["a"] * 3}, PERSON, "$.tags: ['a', 'a', 'a'] is too long"),
        (
            {"name": "A", "x y": 1},
            PERSON,
            "$: Additional properties are not allowed ('x y' was unexpected)",
        ),
        ([1, "a"], {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, None),
        (
            [1, 2],
            {"prefixItems": [{"type": "integer"}], "items": False},
            "$: Expected at most 1 item but found 1 extra: 2",
        ),
        ([1, 1.0], {"uniqueItems": True}, "$: [1, 1.0] has non-unique elements"),
        ([1, True], {"uniqueItems": True}, None),
        (True, {"enum": [1, "a"]}, "$: True is not one of [1, 'a']"),
        ({"k": [1]}, {"const": {"k": [1.0]}}, None),
        ("abc", {"pattern": "^a.c$", "maxLength": 3}, None),
        ("👍👍", {"maxLength": 2}, None),
        ("abd", {"pattern": "^a.c$"}, "$: 'abd' does not match '^a.c$'"),
        (
            5,
            {"anyOf": [{"type": "string"}, {"minimum": 10}]},
            "$: 5 is not valid under any of the given schemas",
        ),
        (
            5,
            {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
            "$: 5 is valid under each of {'minimum': 0}, {'type': 'integer'}",
        ),
        (
            5,
            {"allOf": [{"type": "integer"}, {"maximum": 4}]},
            "$: 5 is greater than the maximum of 4",
        ),
        (5, {"not": {"type": "integer"}}, "$: 5 should not be valid under {'type': 'integer'}"),
        (None, False, "$: False schema does not allow None"),
        (None, True, None),
        (
            {"a": {"b": 1}},
            {"additionalProperties": {"additionalProperties": {"type": "string"}}},
            "$.a.b: 1 is not of type 'string'",
        ),
        (
            {"t": "date"},
            {"properties": {"t": {"type": "string", "format": "date-time", "title": "T"}}},
            None,
        ),
    ],
)
def test_json_schema_keywords(instance: Any, schema: Any, problem: str | None) -> None:
    """Common keywords, with the path to the problem jsonschema finds most relevant."""
    assert validate(instance, schema) == problem


def test_json_schema_recursive_ref() -> None:
    """A $ref to the root describes a tree of any depth."""
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    assert validate({"children": [{"children": [{"children": []}]}]}, tree) is None
    assert validate({"children": [{"children": [5]}]}, tree) == (
        "$.children[0].children[0]: 5 is not of type 'object'"
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"$ref": "#/$defs/missing"},
            "$ref '#/$defs/missing' cannot be resolved inside the schema",
        ),
        ({"$ref": "other.json#/a"}, "$ref 'other.json#/a' cannot be resolved inside the schema"),
        ({"type": "text"}, "invalid schema at #/type: 'text' is not valid under any"),
        ({"pattern": "("}, "invalid schema at #/pattern: '(' is not a 'regex'"),
        ({"anyOf": []}, "invalid schema at #/anyOf: [] should be non-empty"),
        ({"minItems": -1}, "invalid schema at #/minItems: -1 is less than the minimum of 0"),
        ([], "invalid schema at #: [] is not of type 'object', 'boolean'"),
        ({"$ref": "#"}, "the schema's references never reach a value to check"),
    ],
)
def test_json_schema_refuses_what_it_cannot_check(schema: Any, message: str) -> None:
    """A schema that cannot be used is an error naming where, never a pass (nothing fetched)."""
    with pytest.raises(SchemaError, match=re.escape(message)):
        validate({}, schema)


def test_json_schema_metric() -> None:
    """Conformance scores 1, a violation or non-JSON scores 0 with the reason, a bad schema is an
    error naming the keyword."""
    assert score("json_schema", '{"name": "Ada"}', schema=PERSON) == 1.0
    violation = run("json_schema", '{"name": 3}', schema=PERSON)
    assert (violation.score, violation.reason) == (0.0, "$.name: 3 is not of type 'string'")
    not_json = run("json_schema", "not json", schema=PERSON)
    assert not_json.reason is not None and not_json.reason.startswith("not JSON: ")
    assert error("json_schema", "{}", schema={"minLength": "x"}) == (
        "json_schema: invalid schema at #/minLength: 'x' is not of type 'integer'"
    )


# ---------------------------------------------------------------- budgets


@pytest.mark.parametrize(
    ("name", "field", "used", "params", "expected"),
    [
        ("latency_budget", "latency_ms", 80, {"budget_ms": 100}, 1.0),
        ("latency_budget", "latency_ms", 100, {"budget_ms": 100}, 1.0),
        ("latency_budget", "latency_ms", 200, {"budget_ms": 100}, 0.5),
        ("latency_budget", "latency_ms", 200, {"budget_ms": 100, "over": "zero"}, 0.0),
        ("cost_budget", "cost", 0.02, {"budget": 0.01}, 0.5),
        ("cost_budget", "cost", 0, {"budget": 0.01}, 1.0),
        ("token_budget", "tokens", 4000, {"budget": 1000}, 0.25),
    ],
)
def test_budgets(
    name: str, field: str, used: float, params: dict[str, Any], expected: float
) -> None:
    """1 within budget; over it, budget / used, or 0 with over='zero'."""
    amount: dict[str, Any] = {field: used}
    evaluation = evaluate(name, Sample("r", **amount), params=params)
    assert evaluation.score == pytest.approx(expected)


def test_budget_errors() -> None:
    assert evaluate("latency_budget", Sample("r"), params={"budget_ms": 1}).error == (
        "metric 'latency_budget' needs latency_ms; pass latency_ms= to qbench.record(...)"
    )
    bad = evaluate("cost_budget", Sample("r", cost=1), params={"budget": 0})
    assert bad.error == "cost_budget: the budget must be a positive number, given: 0"


# ---------------------------------------------------------------- all of them


DETERMINISTIC_PARAMS: dict[str, dict[str, Any]] = {
    "json_schema": {"schema": {"type": "object"}},
    "latency_budget": {"budget_ms": 100},
    "cost_budget": {"budget": 0.5},
    "token_budget": {"budget": 100},
    "contains": {"substrings": ["a"]},
    "regex": {"pattern": "a+"},
}

VALUES = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.integers(-1000, 1000),
    st.floats(allow_nan=True),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


@settings(max_examples=40, deadline=None)
@given(
    response=VALUES,
    ground_truth=VALUES,
    latency=st.none() | st.floats(0, 1e6),
    tokens=st.none() | st.integers(0, 10**6),
    tools=st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
)
def test_every_metric_scores_in_unit_range_or_errors(
    response: Any, ground_truth: Any, latency: float | None, tokens: int | None, tools: list[str]
) -> None:
    """Whatever the sample, every built-in metric gives a score in 0..1 or an error, never an
    exception."""
    sample = Sample.from_record(
        response,
        ground_truth=ground_truth,
        latency_ms=latency,
        tokens=tokens,
        cost=latency,
        tool_calls=tools,
        expected_tools=tools[::-1],
    )
    for name in metric_names():
        if get(name).kind == "judge":
            continue
        evaluation = evaluate(name, sample, params=DETERMINISTIC_PARAMS.get(name, {}))
        if evaluation.score is None:
            assert evaluation.error, (name, evaluation)
            # Built-ins explain a sample they cannot score; an escaped exception is a bug.
            assert not re.match(r"[A-Z]\w*(Error|Exception): ", evaluation.error), evaluation
        else:
            assert evaluation.error is None
            assert 0.0 <= evaluation.score <= 1.0, (name, evaluation)


class Order(BaseModel):
    """A pydantic model whose schema uses keywords beyond the old hand-written subset."""

    quantity: int = Field(multiple_of=5)
    notes: dict[str, str] = Field(min_length=1)


ORDER = {
    **Order.model_json_schema(),
    "propertyNames": {"pattern": "^[a-z]+$"},
    "if": {"properties": {"quantity": {"minimum": 100}}},
    "then": {"required": ["approved"]},
}
ORDER["properties"] = {
    **ORDER["properties"],
    "approved": {"type": "boolean"},
    "lines": {"type": "array", "contains": {"const": "total"}},
}


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        ({"quantity": 10, "notes": {"a": "b"}, "lines": ["x", "total"]}, None),
        ({"quantity": 100, "notes": {"a": "b"}, "approved": True}, None),
        ({"quantity": 12, "notes": {"a": "b"}}, "$.quantity: 12 is not a multiple of 5"),
        ({"quantity": 10, "notes": {}}, "$.notes: {} should be non-empty"),
        ({"quantity": 10, "notes": {"a": "b"}, "Bad": 1}, "$: 'Bad' does not match '^[a-z]+$'"),
        ({"quantity": 100, "notes": {"a": "b"}}, "$: 'approved' is a required property"),
        (
            {"quantity": 10, "notes": {"a": "b"}, "lines": ["x"]},
            "$.lines: ['x'] does not contain items matching the given schema",
        ),
    ],
)
def test_json_schema_checks_every_keyword_of_pydantic_schemas(
    response: dict[str, Any], problem: str | None
) -> None:
    """multipleOf, minProperties, propertyNames, contains and if/then are checked, not refused."""
    verdict = run("json_schema", json.dumps(response), schema=ORDER)
    assert verdict.error is None, verdict.error
    assert (verdict.score, verdict.reason) == (0.0 if problem else 1.0, problem)


def test_json_schema_without_the_package_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without jsonschema installed the metric errs (never passes), naming the command."""
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    message = error("json_schema", "{}", schema={"type": "object"})
    assert message.startswith("json_schema: the jsonschema package is not installed"), message
    assert f"{sys.executable} -m pip install" in message and "jsonschema" in message
