"""``shapes.dumps`` (the stream's and the reports' JSON) writes exactly what ``json.dumps`` with
the same options writes, and refuses what it refuses."""

from __future__ import annotations

import json
import math

import pytest

from pytest_qbench.report.shapes import dumps


def reference(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@pytest.mark.parametrize(
    "value",
    [
        {"nodeid": "t.py::test[é-\u2603]", "line": 3, "ok": True, "none": None},
        {"duration": 1e-05, "durations": {"setup": 0.1, "call": 123456789.123, "teardown": 0.0}},
        {"nested": [{"a": [1, 2.5, 'x\n\t"\\']}, [], {}], "big": 10**30, "neg": -0.0},
        {"surrogate": "\udcff", "control": "\x00\x1f", "emoji": "\U0001f600"},
        "a top-level string",
        [1, "two", 3.0],
    ],
)
def test_same_text_as_json_dumps(value: object) -> None:
    assert dumps(value) == reference(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"x": math.nan}, {"x": math.inf}])
def test_refuses_what_json_refuses(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        dumps(bad)


def test_an_object_that_is_not_json_is_a_type_error_every_time() -> None:
    for _ in range(2):  # the encoder is made once: a failed call leaves it usable
        with pytest.raises(TypeError, match="not JSON serializable"):
            dumps({"x": [object()]})
    assert dumps({"x": [1]}) == '{"x":[1]}'
