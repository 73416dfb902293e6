"""The session end reads the stream for indexing a block of lines at a time: passing lines
as ``Passed`` tuples (no record made of them), the others as records, in the stream's order,
each giving what a whole parse of its line gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_data import result
from json_calls import parsed_texts

from pytest_qbench.history import session_end
from pytest_qbench.report import store
from pytest_qbench.report.records import TestResultRecord


def _stream(path: Path, records: list[TestResultRecord]) -> Path:
    writer = store.StreamWriter(path)
    writer.write_start({"kind": "start"})  # type: ignore[typeddict-item]
    for record in records:
        writer.write_result(record)
    writer.write_deselected(2)
    writer.close()
    return path


def _facts(item: Any) -> tuple[Any, ...]:
    """Node id, outcome, duration and the setup and teardown seconds the indexer stores (as
    text: NaN equals NaN)."""
    if isinstance(item, tuple):
        nodeid, outcome, seconds, setup, teardown = item
    else:
        phases = item.get("durations") or {}
        nodeid, outcome = item["nodeid"], item["outcome"]
        seconds, setup, teardown = item["duration"], phases.get("setup"), phases.get("teardown")
    stored = (float(value or 0.0) for value in (seconds, setup, teardown))
    return (nodeid, outcome, *map(repr, stored))


def _mixed(count: int) -> list[TestResultRecord]:
    records = []
    for n in range(count):
        name = f"test_{n}_{'x' * (n % 300)}" if n % 7 else f'q"uote\\{n} ü\t\U0001f600'
        record = result(name, ("passed", "failed", "skipped", "xfailed")[n % 4 if n % 5 else 0])
        record["durations"] = {"setup": n * 1e-6, "call": 0.5, "teardown": 2.5e-07 * n}
        records.append(record)
    return records


def test_passing_lines_come_as_tuples_in_order_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More lines than one block holds (lines cut by the block's end), odd node ids, failing
    lines between: every result once, in order, passing ones as tuples, with the facts a whole
    parse gives; the stream's other lines (start, deselected) are not results."""
    monkeypatch.setattr(store, "_BLOCK", 4096)
    records = _mixed(400)
    stream = _stream(tmp_path / "results.jsonl", records)
    items = list(session_end.index_items(stream, []))
    assert [_facts(item) for item in items] == [
        _facts(store.read_result(raw)) for raw in store.iter_result_json(stream)
    ]
    plain = [r for r in records if r["outcome"] != "failed" and '"' not in r["nodeid"]]
    assert sum(isinstance(item, tuple) for item in items) == len(plain)
    assert all(
        isinstance(item, dict) and item.get("failure")
        for item in items
        if not isinstance(item, tuple) and item["outcome"] == "failed"
    )


@pytest.mark.parametrize(
    ("change", "tuples"),
    [
        # no number: the block is read a line at a time, as before
        (('"duration":0.01', '"duration":"0.01"'), 0),
        (('"duration":0.01', '"duration":NaN'), 5),
        (('"duration":0.01', '"duration":-Infinity'), 5),
        (('"duration":0.01', '"duration":-0.0'), 5),
        (('"duration":0.01', '"duration":3'), 5),
        (('"setup":0.25', '"setup":1e-07'), 5),
    ],
)
def test_a_line_of_another_shape_gives_what_a_whole_parse_gives(
    tmp_path: Path, change: tuple[str, str], tuples: int
) -> None:
    """A number the stream did not write as a float, or no number, among passing lines: the
    indexer gets the seconds a whole parse gives."""
    records = [result(f"t{n}") for n in range(5)]
    for record in records:
        record["durations"] = {"setup": 0.25, "call": 0.5}  # type: ignore[typeddict-item]
    stream = _stream(tmp_path / "results.jsonl", records)
    lines = stream.read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace(*change)
    stream.write_text("".join(lines))
    items = list(session_end.index_items(stream, []))
    whole = [store.read_result(raw) for raw in store.iter_result_json(stream)]
    assert [_facts(item) for item in items] == [_facts(record) for record in whole]
    assert sum(isinstance(item, tuple) for item in items) == tuples


def test_a_torn_last_line_and_a_rerun_are_read_as_before(tmp_path: Path) -> None:
    """A last line without its newline is no result (as ``store.iter_result_json`` reads);
    a passing line that holds reruns is parsed whole (its attempts' failure is indexed)."""
    rerun = result("rerun", flaky=True)
    failure = result("x", "failed", message="flaky one")["failure"]
    rerun["attempts"] = [{"outcome": "failed", "duration": 0.1, "failure": failure}]
    stream = _stream(tmp_path / "results.jsonl", [result("a"), rerun, result("b")])
    with stream.open("a", encoding="utf-8") as handle:
        handle.write(store.RESULT_PREFIX + json.dumps({"nodeid": "t.py::torn"})[:-1])
    items = list(session_end.index_items(stream, []))
    assert [_facts(item)[0] for item in items] == ["t.py::a", "t.py::rerun", "t.py::b"]
    whole = items[1]
    assert isinstance(whole, dict)
    assert whole["attempts"][0]["failure"]["error_message"] == "flaky one"


def _failing_facts(item: Any) -> tuple[Any, ...]:
    """What the indexer reads of a failing result: its facts, test file, reruns, flakiness,
    and its failure's type, message, file and line (its fingerprint and example)."""
    failure = item["failure"]
    wanted = [failure.get(key) for key in ("error_type", "error_message", "file", "line")]
    more = (item.get("file"), int(item.get("reruns") or 0), bool(item.get("flaky")))
    return (*_facts(item), *more, *wanted, item.get("metric_results") or [])


def _failing(n: int) -> TestResultRecord:
    odd = ['q"uote\\ ü\t\U0001f600', "plain", "x" * 300, "a\u2028b", '"', "\\"]
    name = f"test_{n}_{odd[n % len(odd)]}"
    message = f'{odd[(n + 1) % len(odd)]} {n} "quoted"\nassert {n} == -1'
    record = result(name, "error" if n % 3 == 0 else "failed", message=message, line=n)
    failure = record["failure"]
    assert failure is not None
    failure["stack_trace"] = f"t.py:{n}: in {name}\n" * 20
    failure["frames"] = [{"path": "t.py", "line": n, "function": name}] * 5
    record["durations"] = {"setup": n * 1e-6, "call": 0.5, "teardown": 2.5e-07 * n}
    if n % 4 == 1:
        failure["file"], failure["line"] = None, None
    if n % 5 == 2:
        record["durations"] = {"setup": 1e-06 * n}  # type: ignore[typeddict-item]
    if n % 5 == 3:
        record["started_at"] = "2026-01-02T03:04:05.000006Z"
    if n % 6 == 4:
        record["line"] = None
    if n % 7 == 5:
        record["reruns"] = 2  # parsed whole
    if n % 8 == 6:
        record["teardown_failure"] = failure
    return record


def test_a_failing_line_is_read_without_parsing_its_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing line's node id, durations and failure (type, message, file, line) are read
    where the stream writes them, as a whole parse gives them (odd node ids and messages, no
    failing file or line, no call, an error, a teardown failure), without ``json.loads`` of
    the line (about 180 k instructions a failing line); a rerun one is parsed whole."""
    records = [_failing(n) for n in range(60)]
    stream = _stream(tmp_path / "results.jsonl", records)
    whole = [store.read_result(raw) for raw in store.iter_result_json(stream)]
    parsed = parsed_texts(monkeypatch)
    items = list(session_end.index_items(stream, []))
    monkeypatch.undo()
    assert [_failing_facts(item) for item in items] == [_failing_facts(r) for r in whole]
    reruns = [r for r in records if r.get("reruns")]
    assert len(parsed) == len(reruns) > 0
