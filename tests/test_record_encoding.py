"""``shapes.dumps`` (the stream's and the reports' JSON) writes exactly what ``json.dumps`` with
the same options writes, and refuses what it refuses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from pytest_qbench.report import store
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


# --- a plain passing test's stream line, from its template --------------------------------------

_times = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=100).map(lambda x: round(x, 6)),
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
)
_texts = st.one_of(
    st.text(), st.text(alphabet=st.characters(exclude_categories=())), st.integers(), st.none()
)


@st.composite
def stored_results(draw: st.DrawFn) -> dict[str, object]:
    """Stored results near a plain pass: its fields with odd values, one missing, one more, in
    another order, another outcome or word."""
    phases: object = {
        "setup": draw(_times),
        "call": draw(_times),
        "teardown": draw(_times),
    }
    if draw(st.booleans()):
        phases = dict(reversed(list(phases.items()))) if draw(st.booleans()) else [1.0]  # type: ignore[attr-defined]
    stored: dict[str, object] = {
        "nodeid": draw(_texts),
        "test_name": draw(_texts),
        "file": draw(_texts),
        "line": draw(st.one_of(st.integers(), st.booleans(), st.none(), st.floats(0, 9))),
        "outcome": draw(st.sampled_from(["passed", "passed", "failed", "xpassed"])),
        "duration": draw(_times),
        "durations": phases,
        "started_at": draw(st.one_of(st.just("2026-11-26T20:26:21.811249Z"), _texts)),
        "counted_as": draw(st.sampled_from([["passed"], ["passed"], ["failed"], [], ("passed",)])),
    }
    change = draw(st.sampled_from(["none", "none", "drop", "add", "order"]))
    if change == "drop":
        del stored[draw(st.sampled_from(sorted(stored)))]
    elif change == "add":
        stored["markers"] = ["slow"]
    elif change == "order":
        stored = dict(sorted(stored.items()))
    return stored


def encoded_line(stored: dict[str, object]) -> str | None:
    """What write_stored wrote before the template: the record through the encoder (``None``
    when the encoder refuses it)."""
    try:
        return f"{store.RESULT_PREFIX}{dumps(stored)}}}"
    except (TypeError, ValueError):
        return None


@settings(max_examples=500, deadline=None)
@given(stored_results())
def test_passing_line_is_the_encoders_text_or_none(stored: dict[str, object]) -> None:
    """The template writes exactly what the encoder writes, or declines (then the encoder
    writes the line); it never writes what the encoder would refuse."""
    line = store.passing_line(stored)
    if line is not None:
        assert line == encoded_line(stored)
        assert json.loads(line[len(store.RESULT_PREFIX) : -1]) == json.loads(dumps(stored))


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(exclude_categories=()), min_size=1),
    st.integers(1, 10**6),
    st.lists(
        st.floats(min_value=0, max_value=1e4).map(lambda x: round(x, 6)), min_size=3, max_size=3
    ),
)
def test_a_plain_pass_is_written_by_the_template(name: str, line: int, times: list[float]) -> None:
    """A plain passing test's stored result (any id, even one holding quotes, control characters
    or a lone surrogate) is written by the template, as the encoder writes it."""
    setup, call, teardown = times
    stored = {
        "nodeid": f"tests/test_x.py::{name}",
        "test_name": name,
        "file": "tests/test_x.py",
        "line": line,
        "outcome": "passed",
        "duration": round(setup + call + teardown, 6),
        "durations": {"setup": setup, "call": call, "teardown": teardown},
        "started_at": "2026-11-26T20:26:21.811249Z",
        "counted_as": ["passed"],
    }
    assert store.passing_line(stored) == encoded_line(stored) is not None


def marked_pass(
    name: str, markers: list[str] | None, started: str = "2026-11-26T20:26:21.811249Z"
) -> dict[str, object]:
    """A passing test's stored result with ``markers`` (``None``: none) and nothing else, in the
    model's order."""
    stored: dict[str, object] = {
        "nodeid": f"tests/test_x.py::{name}",
        "test_name": name,
        "file": "tests/test_x.py",
        "line": 3,
        "outcome": "passed",
        "duration": 0.000118,
        "durations": {"setup": 4.1e-05, "call": 4.3e-05, "teardown": 3.4e-05},
        "started_at": started,
    }
    if markers is not None:
        stored["markers"] = markers
    stored["counted_as"] = ["passed"]
    return stored


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.just("parametrize"), st.text(alphabet=st.characters(exclude_categories=()))),
        min_size=1,
        max_size=3,
    )
)
def test_a_marked_pass_is_written_by_the_template(markers: list[str]) -> None:
    """A passing test with markers and nothing else (a parametrized test's ``["parametrize"]``:
    nearly every test of packaging's suite) is written by the template too, as the encoder
    writes it, the markers' text made again only when they change."""
    stored = marked_pass("test_t[1.0-2.0]", markers)
    last = store.LastTexts()  # a stream writer's (`StreamWriter.last`)
    for _ in range(2):  # the second from the markers' text kept
        assert store.passing_line(stored, None, last) == encoded_line(stored) is not None
        stored["markers"] = list(markers)
    stored["markers"] = [*markers, 3]  # not a name: left to the encoder
    assert store.passing_line(stored, None, last) is None


def test_the_stream_writes_a_parametrized_pass_without_the_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """StreamWriter.write_stored calls the records' encoder for none of the passing tests of a
    parametrized function (on packaging's suite, before: once a test), and keeps each one's
    row as it keeps a plain pass's."""
    calls: list[object] = []

    def counting(record: object) -> str:
        calls.append(record)
        return dumps(record)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "dumps", counting)
    writer = store.StreamWriter(tmp_path / store.STREAM_NAME)
    records = [marked_pass(f"test_v[{index}]", ["parametrize"]) for index in range(3)]
    for record in records:
        writer.write_stored(record)
    kept = writer._kept
    assert kept is not None
    writer.close()
    assert calls == []
    text = (tmp_path / store.STREAM_NAME).read_text(encoding="utf-8")
    assert text == "".join(f"{store.RESULT_PREFIX}{dumps(r)}}}\n" for r in records)
    plain = store.Written(tmp_path / "other")
    for record in records:
        plain.keep(record, 0, 0)
    assert kept.nodeids == plain.nodeids
    assert kept.rows == plain.rows


def test_the_stream_writes_a_plain_pass_from_the_template(tmp_path: Path) -> None:
    """StreamWriter.write_stored writes a plain pass with the template, anything else with the
    encoder; the file holds the same lines either way."""
    plain = {
        "nodeid": 't.py::test["q"]',
        "test_name": 'test["q"]',
        "file": "t.py",
        "line": 3,
        "outcome": "passed",
        "duration": 0.000118,
        "durations": {"setup": 4.1e-05, "call": 4.3e-05, "teardown": 3.4e-05},
        "started_at": "2026-11-26T20:26:21.811249Z",
        "counted_as": ["passed"],
    }
    marked = {**plain, "markers": ["slow"]}
    marked["counted_as"] = marked.pop("counted_as")
    writer = store.StreamWriter(tmp_path / store.STREAM_NAME)
    writer.write_stored(plain)
    writer.write_stored(marked)
    writer.close()
    text = (tmp_path / store.STREAM_NAME).read_text(encoding="utf-8")
    assert text == "".join(f"{store.RESULT_PREFIX}{dumps(r)}}}\n" for r in (plain, marked))


def test_a_files_path_is_encoded_once_for_its_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain passes of one file (pytest makes one ``str`` for its path) encode the path
    once, not once a test; another file, or an equal path in another object, is encoded anew,
    and every line is the encoder's."""
    encoded: list[object] = []

    def counting(text: str) -> str:
        encoded.append(text)
        return json.encoder.encode_basestring(text)

    monkeypatch.setattr(store, "_encode_text", counting)
    path = "".join(["tests/", "test_a.py"])  # not interned: one object, as pytest's
    other = "".join(["tests/", "test_b.py"])
    same_text = "".join(["tests/", "test_b.py"])
    lines = []
    last = store.LastTexts()  # a stream writer's (`StreamWriter.last`)
    for index, file in enumerate([path, path, path, other, same_text, path]):
        stored = {
            "nodeid": f"{file}::test_{index}",
            "test_name": f"test_{index}",
            "file": file,
            "line": index + 1,
            "outcome": "passed",
            "duration": 0.000118,
            "durations": {"setup": 4.1e-05, "call": 4.3e-05, "teardown": 3.4e-05},
            "started_at": "2026-11-26T20:26:21.811249Z",
            "counted_as": ["passed"],
        }
        line = store.passing_line(stored, None, last)
        assert line == encoded_line(stored)
        lines.append(line)
    files = [text for text in encoded if isinstance(text, str) and text.startswith("tests/")]
    assert [f for f in files if "::" not in f] == [path, other, same_text, path]


def test_each_stream_writer_keeps_its_own_last_texts(tmp_path: Path) -> None:
    """The texts ``passing_line`` keeps for the next line (the last file's, the last markers')
    are a field of each writer, not of the module (issue 28): two streams written in turn each
    write their own markers, and a writer closed keeps nothing another one reads."""
    first = store.StreamWriter(tmp_path / "a.jsonl")
    second = store.StreamWriter(tmp_path / "b.jsonl")
    one, two = marked_pass("test_v[1]", ["parametrize"]), marked_pass("test_v[2]", ["slow"])
    first.write_stored(one)
    second.write_stored(two)
    first.write_stored(one)
    first.close()
    second.close()
    assert first.last is not second.last
    assert first.last.markers[0] == ["parametrize"]
    assert second.last.markers[0] == ["slow"]
    assert (tmp_path / "a.jsonl").read_text() == 2 * f"{store.RESULT_PREFIX}{dumps(one)}}}\n"
    assert (tmp_path / "b.jsonl").read_text() == f"{store.RESULT_PREFIX}{dumps(two)}}}\n"
    assert not hasattr(store, "_last_markers")


# --- a plain pass's times and start, without repr and without the encoder ----------------------

_whole_micros = st.integers(1, 999_999).map(lambda k: k / 1e6)
_odd_times = st.sampled_from(
    [
        0.0,
        -0.0,
        1e-7,
        5e-324,
        0.9999995,
        1.0,
        86_400.0,
        86_400.000001,
        math.nextafter(0.0019, 1),
        math.nextafter(0.0019, 0),
        -0.0019,
        math.nan,
        math.inf,
        1e-06,
        1e-05,
        9.9e-05,
        0.0001,
        0.999999,
    ]
)


def _line_and_reprs(stored: dict[str, object]) -> tuple[str | None, int]:
    """``passing_line(stored)``, and how many times it wrote a float with ``repr``."""
    calls = []

    def counting(value: float) -> str:
        calls.append(value)
        return float.__repr__(value)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_float_text", counting)
        line = store.passing_line(stored)
    return line, len(calls)


def plain_pass(
    duration: object, setup: object, call: object, teardown: object
) -> dict[str, object]:
    """A plain pass's stored result with these four times, started when ``iso_epoch`` says."""
    from pytest_qbench.report.shapes import iso_epoch

    return {
        "nodeid": "tests/test_x.py::test_t",
        "test_name": "test_t",
        "file": "tests/test_x.py",
        "line": 3,
        "outcome": "passed",
        "duration": duration,
        "durations": {"setup": setup, "call": call, "teardown": teardown},
        "started_at": iso_epoch(1764156584.811249),
        "counted_as": ["passed"],
    }


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_whole_micros, _whole_micros, _odd_times), min_size=4, max_size=4))
def test_times_in_whole_microseconds_below_a_second_are_written_without_repr(
    times: list[float],
) -> None:
    """A plain pass whose four times are each a whole number of microseconds above 0 and below
    a second (what ``round_micro`` makes of a quick test's) has them written by one ``%.6g``
    format, not by ``repr`` (issue 28); any other time (0, -0.0, 1e-7, 86 400 s, a neighbour
    of a whole microsecond, a negative one) has all four written by ``repr``; NaN or infinity
    never gives a line. Every line is the encoder's text."""

    stored = plain_pass(*times)
    line, reprs = _line_and_reprs(stored)
    if not all(math.isfinite(t) for t in times):
        assert line is None
        return
    assert line == encoded_line(stored)
    whole = all(0 < t < 1 and round(t * 1e6) / 1e6 == t for t in times)
    assert reprs == (0 if whole else 4)


@pytest.mark.parametrize(
    ("name", "started"),
    [
        ("test_plain", 1764156584.811249),
        ('test_q["\\"]', 1764156584.0),
        ("test_s[\udcff]", 1764156584.9999996),
        ("test_é[\u2603-\U0001f600]", 86_400.000001),
        ("test_ctl[\x00\t\n]", 1.5),
    ],
)
def test_a_start_made_by_iso_epoch_is_written_unescaped(
    tmp_path: Path, name: str, started: float
) -> None:
    """The start ``iso_epoch`` made for the result (its digits need no escape) is written
    between quotes without the encoder (issue 28); an equal text made elsewhere is encoded.
    The file's bytes are the encoder's line, a lone surrogate as ``?``, for odd node ids."""
    from pytest_qbench.report.shapes import iso_epoch

    encoded: list[str] = []

    def counting(text: str) -> str:
        encoded.append(text)
        return json.encoder.encode_basestring(text)

    made = iso_epoch(started)
    copy = "".join(list(made))
    records = [marked_pass(name, None, start) for start in (made, copy)]
    writer = store.StreamWriter(tmp_path / store.STREAM_NAME)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_encode_text", counting)
        for record in records:
            writer.write_stored(record)
    writer.close()
    assert [text for text in encoded if text == made] == [copy]
    want = "".join(f"{encoded_line(r)}\n" for r in records).encode(errors="replace")
    assert (tmp_path / store.STREAM_NAME).read_bytes() == want


# --- a result's four times rounded in one call ----------------------------------------------------

_raw_times = st.one_of(
    _whole_micros,
    _odd_times,
    st.floats(min_value=0, max_value=2),
    st.floats(min_value=0, max_value=2e-3),
    st.integers(1, 999_999).map(lambda k: (k + 0.5) / 1e6),  # a tie, near enough
    st.sampled_from([0, 1, True, math.nan, math.inf, 1e13]),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_raw_times, min_size=4, max_size=4))
def test_four_times_rounded_in_one_call_are_each_round_micros(times: list[float]) -> None:
    """``round_micros`` gives ``round_micro``'s value, type and text for each of a result's four
    times (issue 28: one call a test, not four), and keeps the four it made in ``WHOLE_MICROS``
    only when each is a whole number of microseconds above 0 and below a second (always for
    times that near one: a quick test's); a stream line holding those very floats is the
    encoder's text, or none when a time is not a float."""
    from pytest_qbench.core.numbers import WHOLE_MICROS
    from pytest_qbench.core.numbers import round_micro
    from pytest_qbench.core.numbers import round_micros

    WHOLE_MICROS[0] = (-1.0, -1.0, -1.0, -1.0)
    rounded = round_micros(*times)
    want = tuple(round_micro(t) for t in times)
    assert [(type(r), repr(r)) for r in rounded] == [(type(w), repr(w)) for w in want]
    whole = all(type(r) is float and 0 < r < 1 and round(r * 1e6) / 1e6 == r for r in rounded)
    near = all(
        type(t) is float and 0.5e-6 < t < 0.9999995 and abs(t * 1e6 - round(t * 1e6)) < 0.49
        for t in times
    )
    assert WHOLE_MICROS[0] is not rounded or whole
    assert WHOLE_MICROS[0] is rounded or not near
    stored = plain_pass(*rounded)
    line = store.passing_line(stored)
    assert line == encoded_line(stored) or (line is None and not whole)


def test_a_time_changed_after_it_was_rounded_is_written_as_it_is() -> None:
    """A line's times are written from ``WHOLE_MICROS`` only when they are the very floats kept
    there: a time replaced after them (by an equal float or another) is checked and written as
    the encoder writes it."""
    from pytest_qbench.core.numbers import round_micros

    duration, setup, _, teardown = round_micros(0.000118, 4.1e-05, 4.3e-05, 3.4e-05)
    for changed in (float("0.000043"), 0.25, 1.5, 4.3e-05 + 1e-19, 0.0):
        stored = plain_pass(duration, setup, changed, teardown)
        assert store.passing_line(stored) == encoded_line(stored), changed
        assert f'"call":{changed!r}' in (store.passing_line(stored) or "")
