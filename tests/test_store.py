"""Files: atomic writes (core/atomic.py), the results.jsonl stream, report.json splicing (reading:
test_readers)."""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Mapping
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import overload

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from json_calls import parsed_texts
from pydantic import TypeAdapter
from test_models import results as result_strategy

from pytest_qbench.core import atomic
from pytest_qbench.core.types import Outcome
from pytest_qbench.report import models
from pytest_qbench.report import store
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import StreamEnd
from pytest_qbench.report.models import StreamStart
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.readers import read_report
from pytest_qbench.report.shapes import compact
from pytest_qbench.report.shapes import dumps

from conftest import compact_report


if TYPE_CHECKING:
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import StreamEndRecord
    from pytest_qbench.report.records import StreamStartRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
ENVIRONMENT = Environment(
    python="3.12.4",
    implementation="CPython",
    platform="Linux",
    pytest_version="9.0.0",
    qbench_version="0.1.0",
)
RUN = RunMeta(run_id="20260102T030405Z-abcdef", started_at=T0, cwd="/src", command=["pytest"])


@overload
def record(model: StreamStart) -> StreamStartRecord: ...
@overload
def record(model: TestResult) -> TestResultRecord: ...
@overload
def record(model: Diagnostic) -> DiagnosticRecord: ...
@overload
def record(model: StreamEnd) -> StreamEndRecord: ...
@overload
def record(model: TestReport) -> TestReportRecord: ...
def record(model: models.QBenchModel) -> Mapping[str, object]:
    """A model's record: what the plugin builds and the writers take (typed by the overloads,
    one per model a test dumps)."""
    return model.model_dump(mode="json")


def result(name: str, outcome: Outcome = "passed", **fields: Any) -> TestResultRecord:
    """The record of a result named ``t.py::<name>``."""
    return record(
        TestResult(nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome=outcome, **fields)
    )


def report_of(results: list[TestResultRecord] | None = None, **changes: Any) -> TestReportRecord:
    """The record of a finished report holding ``results``."""
    report = TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RUN.model_copy(update={"exit_code": 0, "completed_at": T0 + timedelta(seconds=3)}),
        environment=ENVIRONMENT,
        summary=ReportSummary(total=len(results or [])),
        results=[TestResult.model_validate(r) for r in results or []],
    )
    return record(report.model_copy(update=changes))


def write_stream(
    path: Path,
    results: list[TestResultRecord],
    *,
    end: bool = True,
    diagnostics: bool = True,
) -> None:
    """Write a stream as the plugin does: start, results, diagnostics, deselected, end."""
    writer = store.StreamWriter(path)
    meta = ReportMeta(qbench_version="0.1.0", created_at=T0)
    writer.write_start(record(StreamStart(meta=meta, run=RUN, environment=ENVIRONMENT)))
    for item in results:
        writer.write_result(item)
    if diagnostics:
        writer.write_diagnostic(
            "collection_error",
            record(
                Diagnostic(
                    severity="error", message="boom", file="t_bad.py", code="collection-error"
                )
            ),
        )
        writer.write_diagnostic(
            "warning", record(Diagnostic(severity="warning", message="careful"))
        )
        writer.write_diagnostic(
            "warning", record(Diagnostic(tool="qbench", severity="warning", message="note"))
        )
        writer.write_deselected(2)
    if end:
        run = RUN.model_copy(update={"exit_code": 1, "completed_at": T0 + timedelta(9)})
        writer.write_end(record(StreamEnd(run=run)))
    writer.close()


def assert_fixed_point(path: Path) -> None:
    """The JSON written at ``path`` is a TestReport exactly as the model would dump it, each
    result without its fields at their default."""
    text = path.read_text(encoding="utf-8")
    assert compact_report(TestReport.model_validate_json(text)) == json.loads(text)


def leftovers(directory: Path) -> list[str]:
    """Temporary files an atomic write may have left in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# --- atomic writes ----------------------------------------------------------------------------


def test_new_run_id_is_sortable_and_unique() -> None:
    """Run ids start with the UTC time (so they sort) and end with a random part."""
    ids = {store.new_run_id(T0) for _ in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"20260102T030405Z-[0-9a-f]{6}", run_id) for run_id in ids)
    assert store.run_dir(Path("q"), "x") == Path("q", "runs", "x")


def test_write_text_atomic_creates_parents(tmp_path: Path) -> None:
    """Parent directories are created, and the text is written as UTF-8 with \\n newlines."""
    target = tmp_path / "a" / "b" / "report.md"
    atomic.write_text_atomic(target, "é\nline\n")
    assert target.read_bytes() == "é\nline\n".encode()
    assert leftovers(target.parent) == []


def test_write_text_atomic_dash_is_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-`` writes to stdout and creates no file."""
    monkeypatch.chdir(tmp_path)
    atomic.write_text_atomic("-", "hello\n")
    assert capsys.readouterr().out == "hello\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existed", [True, False])
def test_atomic_writer_exception_mid_write_keeps_target(tmp_path: Path, existed: bool) -> None:
    """An exception mid-write leaves the old file (or no file) and no temporary file."""
    target = tmp_path / "report.json"
    if existed:
        target.write_text("old complete content")
    with pytest.raises(RuntimeError, match="crash"), atomic.atomic_writer(target) as handle:
        handle.write("new partial cont")
        handle.flush()
        assert leftovers(tmp_path) != []  # the partial text is in a temporary file...
        raise RuntimeError("crash")
    if existed:
        assert target.read_text() == "old complete content"  # ...never in the target
    else:
        assert not target.exists()
    assert leftovers(tmp_path) == []


def test_atomic_writer_full_disk_at_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the final flush fails (disk full), the target is unchanged and no temp file remains."""
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def write(self, text: str) -> int:
            return int(self.handle.write(text))

        def close(self) -> None:
            self.handle.close()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda *args, **kw: FullDisk(real_fdopen(*args, **kw)))
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(OSError, match="No space left"):
        atomic.write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_writer_onto_directory(tmp_path: Path) -> None:
    """A target that cannot be replaced (a directory) raises and leaves no temporary file."""
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError):
        atomic.write_text_atomic(tmp_path / "out", "text")
    assert leftovers(tmp_path) == []
    assert list((tmp_path / "out").iterdir()) == []


# --- the stream ------------------------------------------------------------------------------


def test_stream_lines_are_the_stream_models(tmp_path: Path) -> None:
    """Every line written is a stream record that validates, and is what the model would dump."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a"), result("test_b", "failed", reason="é\n\u2028")])
    adapter = TypeAdapter(models.StreamRecord)
    # Split on "\n" only, as readers do: str.splitlines() would also split at the U+2028 above.
    lines = stream.read_text(encoding="utf-8").split("\n")
    assert lines.pop() == ""
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds == [
        "start",
        "result",
        "result",
        "collection_error",
        "warning",
        "warning",
        "deselected",
        "end",
    ]
    for line in lines:
        dumped = adapter.dump_python(adapter.validate_json(line), mode="json")
        if dumped["kind"] == "result":  # stored without the fields at their default
            dumped["result"] = compact("TestResult", dumped["result"])
        assert dumped == json.loads(line)
        assert dumps(json.loads(line)) == line  # compact, one line each


def test_stream_writer_refuses_writes_once_closed(tmp_path: Path) -> None:
    """A closed writer raises instead of writing to a recycled file descriptor."""
    writer = store.StreamWriter(tmp_path / "results.jsonl")
    writer.close()
    writer.close()  # closing twice is harmless
    with pytest.raises(ValueError, match="is closed"):
        writer.write_deselected(1)


# --- report.json splicing ---------------------------------------------------------------------


def test_write_report_json_splices_stream_byte_for_byte(tmp_path: Path) -> None:
    """Stream results + report results spliced in == the compact JSON of the whole record (each
    result without its fields at their default), which is a fixed point of the model."""
    streamed = [result("test_a"), result("test_b", "failed", reason='quote " and \n newline')]
    extra = [result("test_c", "skipped", reason="later")]
    stream = tmp_path / "results.jsonl"
    write_stream(stream, streamed)
    report = report_of(extra)
    target = tmp_path / "report.json"
    store.write_report_json(target, report, stream)
    whole = {**report, "results": streamed + extra}
    stored = {**report, "results": [compact("TestResult", r) for r in streamed + extra]}
    assert target.read_bytes() == dumps(stored).encode()
    assert_fixed_point(target)
    assert read_report(target) == TestReport.model_validate(whole)


def history(**fields: Any) -> dict[str, Any]:
    """A ``TestHistory`` record: a new failure, changed by ``fields``."""
    new = {"status": "new failure", "summary": "new failure", "runs": 0, "failed": 0}
    return models.TestHistory(**{**new, "flips": 0, "flaky_indicator": 0.0, **fields}).model_dump(
        mode="json"
    )


HISTORIES = [None, history(), history(status="failing", summary='3 of 10 "é\n"', runs=10)]
HISTORIES.append(history(last_passed_run="r-1", last_passed_at=T0, fingerprint="0123abcd"))


def parsed_patch(item: str, patches: Mapping[str, Any]) -> str:
    """What patching a failing line wrote before its text was spliced: the line parsed, the
    patch's fields set, the whole dumped again."""
    if '"outcome":"failed"' not in item and '"outcome":"error"' not in item:
        return item
    parsed = json.loads(item)
    patch = patches.get(parsed["nodeid"])
    return item if patch is None else dumps(compact("TestResult", {**parsed, **patch}))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(result_strategy, max_size=4), st.data())
def test_write_report_json_patches_as_parsing_would(
    streamed: list[models.TestResult], data: st.DataObject
) -> None:
    """A failing line's patch (its history) spliced into its text writes report.json byte for
    byte as parsing the line, setting the fields and dumping it again did, for any result (a
    history there already, or set to none, included)."""
    records = [record(r) for r in streamed]
    for item in records:
        item["history"] = data.draw(st.sampled_from(HISTORIES))
    patches = {
        r["nodeid"]: {"history": data.draw(st.sampled_from(HISTORIES))}
        for r in records
        if data.draw(st.booleans())
    }
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp, "results.jsonl")
        write_stream(stream, records, diagnostics=False)
        report = report_of([])
        target = Path(tmp, "report.json")
        store.write_report_json(target, report, stream, patches)
        lines = [parsed_patch(item, patches) for item in store.iter_result_json(stream)]
        head = dumps(report)
        expected = head.replace('"results":[]', f'"results":[{",".join(lines)}]')
        assert target.read_text(encoding="utf-8") == expected
        assert_fixed_point(target)


def test_write_report_json_splices_a_history_without_parsing_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing line's history is added to its text: the line (its traceback and frames) is
    not parsed, which cost about 400 k instructions a failing test at the session end."""
    failure = models.Failure(error_type="AssertionError", error_message="assert 1 == 2")
    streamed = [result("test_a"), result("test_b", "failed", failure=failure)]
    stream = tmp_path / "results.jsonl"
    write_stream(stream, streamed)
    patches = {"t.py::test_b": {"history": HISTORIES[1]}}
    parsed = parsed_texts(monkeypatch)
    store.write_report_json(tmp_path / "report.json", report_of([]), stream, patches)
    monkeypatch.undo()
    assert parsed == []
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert written["results"][1]["history"] == HISTORIES[1]


@pytest.mark.parametrize("with_stream", [True, False])
def test_write_report_json_empty(tmp_path: Path, with_stream: bool) -> None:
    """No results at all gives ``"results":[]``, exactly as the record's (and the model's) JSON."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [])
    report = report_of([])
    store.write_report_json(tmp_path / "r.json", report, stream if with_stream else None)
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert text == dumps(report)
    assert '"results":[]' in text
    assert text == TestReport.model_validate(report).model_dump_json()
    assert_fixed_point(tmp_path / "r.json")


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(result_strategy, max_size=4), st.lists(result_strategy, max_size=2))
def test_write_report_json_splicing_any_results(
    streamed: list[models.TestResult], extra: list[models.TestResult]
) -> None:
    """Splicing is exact for results holding any text (newlines, quotes, ``\\u2028``...), and the
    file is a fixed point of the model."""
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp, "results.jsonl")
        write_stream(stream, [record(r) for r in streamed], diagnostics=False)
        report = report_of([record(r) for r in extra])
        target = Path(tmp, "report.json")
        store.write_report_json(target, report, stream)
        results = [compact("TestResult", record(r)) for r in streamed + extra]
        assert target.read_bytes() == dumps({**report, "results": results}).encode()
        assert_fixed_point(target)
        assert TestReport.model_validate_json(target.read_bytes()).results == streamed + extra


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        ('{"kind":"start"}\n{"kind":"end","run":{}}\n', True),
        ('{"kind":"start"}\n{"kind":"end","run":{}}', True),
        ('{"kind":"start"}\n{"kind":"result","result":{}}\n', False),
        ('{"kind":"start"}\n{"kind":"end","run":"' + "a" * 300 + '"}\n', True),
        ('{"kind":"start"}\n{"kind":"result","result":"' + "a" * 300 + '"}\n', False),
        ('{"kind":"start"}\n{"kind":"end","run":{}}\n{"kind":"resu', False),
        ('{"kind":"start"}\n{"kind":"end","run":{"exit_co', False),  # torn as it was written
        ("", False),
    ],
)
@pytest.mark.parametrize("block", [1, 7, 65536])
def test_stream_ended_reads_the_last_line_back(
    tmp_path: Path, text: str, ended: bool, block: int
) -> None:
    """Whether a stream ends with its end record, read from the file's end a block at a time
    (the history's commands index a run that died: a stream without it)."""
    stream = tmp_path / "results.jsonl"
    stream.write_text(text, encoding="utf-8")
    assert store.stream_ended(stream, block) is ended
    assert store.stream_ended(tmp_path / "missing.jsonl") is False


def test_the_tests_order_is_read_back_whole_or_not_written(tmp_path: Path) -> None:
    """``write_order`` writes the node ids one a line, read back as written (a ``\\r`` or a
    character UTF-8 cannot hold included); an id with a line break would be read back as two,
    so nothing is written, and no temporary file is left."""
    order = tmp_path / store.ORDER_NAME
    ids = [f"t.py::test_{i}" for i in range(store.ORDER_CHUNK + 3)] + ["t.py::test[a\rb]"]
    assert store.write_order(order, ids) is True
    assert list(store.read_order(order)) == ids
    assert store.write_order(order, ["t.py::test[\udcff]"]) is True
    assert list(store.read_order(order)) == ["t.py::test[?]"]
    order.unlink()
    assert store.write_order(order, ["t.py::test_a", "t.py::test[a\nb]"]) is False
    assert list(tmp_path.iterdir()) == []
    assert list(store.read_order(order)) == []


def _text_loop_report(report: dict[str, Any], stream: Path, patches: dict[str, Any]) -> bytes:
    """report.json as the line by line text loop writes it (what ``-`` still writes)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace", newline="\n") as handle:
        store._write_report(handle, report, stream, patches, False)  # type: ignore[arg-type]
        handle.flush()
        handle.seek(0)
        return bytes(handle.buffer.read())


def test_report_json_copies_the_stream_as_bytes_as_the_text_loop_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json's results are the stream's result lines copied as bytes, a stretch at a
    time (issue 28), never read line by line as text: byte for byte what the text loop writes,
    through failing lines patched with their history, warnings and other lines between results,
    lines longer than a block and across blocks' ends, non-ASCII text, a carriage return, bytes
    that are not UTF-8 and a torn last line."""
    lines = [json.dumps({"kind": "start", "run": {}}) + "\n"]
    for n in range(3000):
        outcome = "failed" if n % 23 == 0 else "error" if n % 97 == 0 else "passed"
        tail = "x" * (70_000 if n == 1500 else n % 300)
        item = {"nodeid": f"t.py::test_{n}", "outcome": outcome, "text": tail}
        if n % 211 == 0:
            item["text"] = "ü ☃ \U0001f600"
        lines.append(store.RESULT_PREFIX + json.dumps(item, ensure_ascii=False) + "}\n")
        if n % 401 == 0:
            lines.append(json.dumps({"kind": "warning", "diagnostic": {"message": "w"}}) + "\n")
    lines.append(json.dumps({"kind": "end"}) + "\n")
    data = "".join(lines).encode()
    report: Any = {"meta": {"v": 1}, "results": [], "summary": {"total": 3000}}
    patches = {f"t.py::test_{n}": {"history": {"runs": n}} for n in range(0, 3000, 46)}
    odd = {
        "plain": data,
        "carriage return": data.replace(b'test_7"', b'test_7\r"', 1),
        "not UTF-8": data.replace(b'test_9"', b'test_9\xff"', 1),
        "torn last line": data + store.RESULT_PREFIX.encode() + b'{"nodeid":"t',
    }

    def no_text_loop(*args: object, **kwargs: object) -> Any:
        raise AssertionError("the stream was read line by line")

    for name, content in odd.items():
        stream = tmp_path / f"{name}.jsonl"
        stream.write_bytes(content)
        for given_patches in (patches, {}):
            expected = _text_loop_report(report, stream, given_patches)
            with monkeypatch.context() as patched:
                patched.setattr(store, "iter_result_json", no_text_loop)
                store.write_report_json(tmp_path / "report.json", report, stream, given_patches)
            assert (tmp_path / "report.json").read_bytes() == expected, name
    parsed = json.loads((tmp_path / "report.json").read_bytes())
    assert len(parsed["results"]) == 3000


def test_a_failing_line_is_copied_as_bytes_its_patch_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing line the stream writes (compact, its node id first) goes to report.json as
    its bytes with its patch's fields appended, without decoding the line (issue 28): byte for
    byte what the text loop writes, node ids with quotes, backslashes, ``","`` and non-ASCII
    included; a line that holds a patched field already is parsed, as before."""
    names = ['t.py::a"b', "t.py::c\\", "t.py::ü ☃", 't.py::q","x', "t.py::plain", "t.py::h"]
    lines = [json.dumps({"kind": "start", "run": {}}) + "\n"]
    for n, name in enumerate(names * 3):
        item: dict[str, Any] = {"nodeid": f"{name}{n}", "outcome": ["failed", "error"][n % 2]}
        item["text"] = "t" * (n * 7)
        if name == "t.py::h":
            item["history"] = {"runs": 1}  # replaced in place: parsed
        lines.append(store.RESULT_PREFIX + dumps(item) + "}\n")
        item = {"nodeid": f"p{n}", "outcome": "passed"}
        lines.append(store.RESULT_PREFIX + dumps(item) + "}\n")
    lines.append(store.RESULT_PREFIX + '{"nodeid":"alone","outcome":"failed"}}\n')
    lines.append(json.dumps({"kind": "end"}) + "\n")
    stream = tmp_path / "results.jsonl"
    stream.write_bytes("".join(lines).encode())
    report: Any = {"meta": {"v": 1}, "results": [], "summary": {"total": 1}}
    patches = {f"{name}{n}": {"history": {"runs": n, "s": 'a"ü'}} for n, name in enumerate(names)}
    patches["alone"] = {"history": {"runs": 0}}
    decoded: list[str] = []
    write_line = store._write_line

    def counted(write: Any, line: str, *args: Any, **kwargs: Any) -> bool:
        if kwargs.get("failing"):
            decoded.append(line)
        return write_line(write, line, *args, **kwargs)

    for applied in (patches, {"t.py::plain4": {"history": None}}, {}):
        expected = _text_loop_report(report, stream, applied)
        decoded.clear()
        with monkeypatch.context() as patched:
            patched.setattr(store, "_write_line", counted)
            store.write_report_json(tmp_path / "report.json", report, stream, applied)
        assert (tmp_path / "report.json").read_bytes() == expected
        # main decoded every failing line
        assert decoded == ([lines[11]] if applied is patches else []), applied
