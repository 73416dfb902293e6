"""Files: atomic writes, the results.jsonl stream, report.json splicing, reading reports back."""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from test_models import results as result_strategy

from pytest_qbench import models
from pytest_qbench import store
from pytest_qbench._types import Outcome
from pytest_qbench.errors import ReportFormatError
from pytest_qbench.models import SCHEMA_VERSION
from pytest_qbench.models import Diagnostic
from pytest_qbench.models import Environment
from pytest_qbench.models import ReportMeta
from pytest_qbench.models import ReportSummary
from pytest_qbench.models import RunMeta
from pytest_qbench.models import StreamEnd
from pytest_qbench.models import StreamStart


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
ENVIRONMENT = Environment(
    python="3.12.4",
    implementation="CPython",
    platform="Linux",
    pytest_version="9.0.0",
    qbench_version="0.1.0",
)
RUN = RunMeta(run_id="20260102T030405Z-abcdef", started_at=T0, cwd="/src", command=["pytest"])


def result(name: str, outcome: Outcome = "passed", **fields: Any) -> models.TestResult:
    """A result named ``t.py::<name>``."""
    return models.TestResult(
        nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome=outcome, **fields
    )


def report_of(results: list[models.TestResult] | None = None, **changes: Any) -> models.TestReport:
    """A finished report holding ``results``."""
    report = models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RUN.model_copy(update={"exit_code": 0, "completed_at": T0 + timedelta(seconds=3)}),
        environment=ENVIRONMENT,
        summary=ReportSummary(total=len(results or [])),
        results=results or [],
    )
    return report.model_copy(update=changes)


def write_stream(
    path: Path,
    results: list[models.TestResult],
    *,
    end: bool = True,
    diagnostics: bool = True,
) -> None:
    """Write a stream as the plugin does: start, results, diagnostics, deselected, end."""
    writer = store.StreamWriter(path)
    writer.write_start(
        StreamStart(
            meta=ReportMeta(qbench_version="0.1.0", created_at=T0), run=RUN, environment=ENVIRONMENT
        )
    )
    for item in results:
        writer.write_result(item)
    if diagnostics:
        writer.write_diagnostic(
            "collection_error",
            Diagnostic(severity="error", message="boom", file="t_bad.py", code="collection-error"),
        )
        writer.write_diagnostic("warning", Diagnostic(severity="warning", message="careful"))
        writer.write_diagnostic(
            "warning", Diagnostic(tool="qbench", severity="warning", message="note")
        )
        writer.write_deselected(2)
    if end:
        writer.write_end(
            StreamEnd(
                run=RUN.model_copy(update={"exit_code": 1, "completed_at": T0 + timedelta(9)})
            )
        )
    writer.close()


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
    store.write_text_atomic(target, "é\nline\n")
    assert target.read_bytes() == "é\nline\n".encode()
    assert leftovers(target.parent) == []


def test_write_text_atomic_dash_is_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-`` writes to stdout and creates no file."""
    monkeypatch.chdir(tmp_path)
    store.write_text_atomic("-", "hello\n")
    assert capsys.readouterr().out == "hello\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existed", [True, False])
def test_atomic_writer_exception_mid_write_keeps_target(tmp_path: Path, existed: bool) -> None:
    """An exception mid-write leaves the old file (or no file) and no temporary file."""
    target = tmp_path / "report.json"
    if existed:
        target.write_text("old complete content")
    with pytest.raises(RuntimeError, match="crash"), store.atomic_writer(target) as handle:
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
        store.write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_writer_onto_directory(tmp_path: Path) -> None:
    """A target that cannot be replaced (a directory) raises and leaves no temporary file."""
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError):
        store.write_text_atomic(tmp_path / "out", "text")
    assert leftovers(tmp_path) == []
    assert list((tmp_path / "out").iterdir()) == []


# --- report.json splicing ---------------------------------------------------------------------


def test_write_report_json_splices_stream_byte_for_byte(tmp_path: Path) -> None:
    """Stream results + report results spliced in == model_dump_json of the whole report."""
    streamed = [result("test_a"), result("test_b", "failed", reason='quote " and \n newline')]
    extra = [result("test_c", "skipped", reason="later")]
    stream = tmp_path / "results.jsonl"
    write_stream(stream, streamed)
    report = report_of(extra)
    target = tmp_path / "report.json"
    store.write_report_json(target, report, stream)
    whole = report.model_copy(update={"results": streamed + extra})
    assert target.read_bytes() == whole.model_dump_json().encode()
    assert store.read_report(target) == whole


@pytest.mark.parametrize("with_stream", [True, False])
def test_write_report_json_empty(tmp_path: Path, with_stream: bool) -> None:
    """No results at all gives ``"results":[]``, exactly as model_dump_json does."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [])
    report = report_of([])
    store.write_report_json(tmp_path / "r.json", report, stream if with_stream else None)
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == report.model_dump_json()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(result_strategy, max_size=4), st.lists(result_strategy, max_size=2))
def test_write_report_json_splicing_any_results(
    streamed: list[models.TestResult], extra: list[models.TestResult]
) -> None:
    """Splicing is exact for results holding any text (newlines, quotes, ``\\u2028``...)."""
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp, "results.jsonl")
        write_stream(stream, streamed, diagnostics=False)
        report = report_of(extra)
        store.write_report_json(Path(tmp, "report.json"), report, stream)
        whole = report.model_copy(update={"results": streamed + extra})
        assert Path(tmp, "report.json").read_bytes() == whole.model_dump_json().encode()


# --- reading streams --------------------------------------------------------------------------


def test_read_stream_round_trip(tmp_path: Path) -> None:
    """Every record written is read back into StreamContents."""
    stream = tmp_path / "results.jsonl"
    streamed = [result("test_a"), result("test_b", "failed")]
    write_stream(stream, streamed)
    contents = store.read_stream(stream)
    assert contents.start is not None and contents.start.run == RUN
    assert contents.results == streamed
    assert [d.message for d in contents.collection_errors] == ["boom"]
    assert [d.message for d in contents.warnings] == ["careful", "note"]
    assert contents.deselected == 2
    assert contents.end is not None and contents.end.run.exit_code == 1
    assert contents.bad_lines == 0


@pytest.mark.parametrize(
    "torn",
    [
        '{"kind":"result","result":{"nodeid":"t.py::test_c","test',
        '{"kind":"result","result":{"nodeid":"t.py::test_\u00e9\u20ac'.encode()[:-1],
        "\n\n",
    ],
    ids=["cut-json", "cut-inside-utf8-character", "blank-lines"],
)
def test_read_stream_tolerates_torn_last_line(tmp_path: Path, torn: str | bytes) -> None:
    """A last line cut short by a dying process (even mid-character) is skipped, not fatal."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a"), result("test_b")], end=False, diagnostics=False)
    with stream.open("ab") as handle:
        handle.write(torn if isinstance(torn, bytes) else torn.encode())
    contents = store.read_stream(stream)
    assert [r.test_name for r in contents.results] == ["test_a", "test_b"]
    assert contents.bad_lines == (0 if torn == "\n\n" else 1)
    assert [json.loads(raw)["test_name"] for raw in store.iter_result_json(stream)] == [
        "test_a",
        "test_b",
    ]


def test_read_stream_missing(tmp_path: Path) -> None:
    """No stream file is a ReportFormatError."""
    with pytest.raises(ReportFormatError, match="no result stream") as excinfo:
        store.read_stream(tmp_path / "results.jsonl")
    assert excinfo.value.slug == "stream-missing"


def test_read_stream_without_start(tmp_path: Path) -> None:
    """A file without a start record is not a stream."""
    stream = tmp_path / "results.jsonl"
    stream.write_text('{"kind":"deselected","count":1}\nnot json\n')
    with pytest.raises(ReportFormatError, match="no start record") as excinfo:
        store.read_stream(stream)
    assert excinfo.value.slug == "stream-invalid"


# --- rebuilding a report from a stream --------------------------------------------------------


def test_report_from_stream_without_end_is_interrupted(tmp_path: Path) -> None:
    """A stream with no end record is a run that died: interrupted, finished at its last test."""
    stream = tmp_path / "results.jsonl"
    streamed = [
        result("test_a", started_at=T0 + timedelta(seconds=1), duration=2.0),
        result("test_b", "failed", started_at=T0 + timedelta(seconds=4), duration=1.5),
    ]
    write_stream(stream, streamed, end=False)
    report = store.report_from_stream(store.read_stream(stream))
    assert report.run.interrupted is True
    assert report.run.exit_code is None
    assert report.run.completed_at == T0 + timedelta(seconds=5.5)
    assert report.summary.duration == 5.5
    assert report.results == streamed
    summary = report.summary
    assert (summary.total, summary.passed, summary.failed, summary.errors) == (2, 1, 1, 1)
    assert (summary.warnings, summary.deselected) == (1, 2)  # qbench's own note is not counted
    assert report.meta.schema_version == SCHEMA_VERSION


def test_report_from_stream_with_end_uses_the_end_record(tmp_path: Path) -> None:
    """A complete stream gives the run as its end record describes it."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a")])
    report = store.report_from_stream(store.read_stream(stream))
    assert report.run.interrupted is False
    assert report.run.exit_code == 1
    assert report.summary.duration == timedelta(9).total_seconds()


def test_report_from_stream_without_end_or_timings(tmp_path: Path) -> None:
    """An interrupted stream whose results have no start times has no completion time."""
    stream = tmp_path / "results.jsonl"
    write_stream(stream, [result("test_a")], end=False, diagnostics=False)
    report = store.report_from_stream(store.read_stream(stream))
    assert report.run.interrupted is True
    assert report.run.completed_at is None
    assert report.summary.duration == 0.0


# --- reading reports --------------------------------------------------------------------------


def test_read_report_round_trip(tmp_path: Path) -> None:
    """A written report reads back equal."""
    report = report_of([result("test_a")])
    store.write_report_json(tmp_path / "report.json", report, None)
    assert store.read_report(tmp_path / "report.json") == report


@pytest.mark.parametrize("with_new_field", [False, True], ids=["same-shape", "new-field"])
def test_read_report_refuses_other_schema_version(tmp_path: Path, with_new_field: bool) -> None:
    """Another schema_version is a ReportFormatError naming both versions."""
    data = report_of().model_dump(mode="json")
    data["meta"]["schema_version"] = SCHEMA_VERSION + 1
    if with_new_field:
        data["run"]["shard"] = 3
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportFormatError) as excinfo:
        store.read_report(path)
    message = str(excinfo.value)
    assert f"schema_version {SCHEMA_VERSION + 1}" in message
    assert f"this qbench reads {SCHEMA_VERSION}" in message
    assert excinfo.value.slug == "schema-version"


@pytest.mark.parametrize(
    ("content", "slug", "match"),
    [
        (None, "report-read", "cannot read report"),
        (b"{not json", "report-invalid", "is not a qbench report"),
        (b'{"meta": {}}', "report-invalid", r"is not a qbench report: meta\.qbench_version"),
        (b"\xff\xfe{}", "report-invalid", "not UTF-8 text"),
    ],
    ids=["missing", "not-json", "not-a-report", "not-utf8"],
)
def test_read_report_errors(tmp_path: Path, content: bytes | None, slug: str, match: str) -> None:
    """Unreadable input is a one-line ReportFormatError with a slug, never a traceback."""
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ReportFormatError, match=match) as excinfo:
        store.read_report(path)
    assert excinfo.value.slug == slug
    assert "\n" not in str(excinfo.value)
