"""Reading reports and streams back, validated by the models (used by the CLI, not by pytest)."""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal
from typing import TypeVar
from typing import cast

from pydantic import TypeAdapter
from pydantic import ValidationError
from pydantic_core import SchemaValidator

from pytest_qbench.core.errors import ReportFormatError
from pytest_qbench.report.aggregate import DEFAULT_MAX_ITEMS
from pytest_qbench.report.aggregate import Aggregator
from pytest_qbench.report.aggregate import ReportView
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import SCHEMA_VERSION
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import RepeatStats
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import StreamDeselected
from pytest_qbench.report.models import StreamDiagnostic
from pytest_qbench.report.models import StreamEnd
from pytest_qbench.report.models import StreamRecord
from pytest_qbench.report.models import StreamResult
from pytest_qbench.report.models import StreamStart
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.record_schema import record_validator
from pytest_qbench.report.shapes import compact
from pytest_qbench.report.shapes import dumps
from pytest_qbench.report.store import BATCH_SECONDS
from pytest_qbench.report.store import KILLED_AT_END
from pytest_qbench.report.store import ORDER_NAME
from pytest_qbench.report.store import PHASE_NAME
from pytest_qbench.report.store import RESULT
from pytest_qbench.report.store import RESULT_PREFIX
from pytest_qbench.report.store import STREAM_NAME
from pytest_qbench.report.store import UNRECORDED
from pytest_qbench.report.store import died_at_end
from pytest_qbench.report.store import died_setup_failure
from pytest_qbench.report.store import died_unrecorded
from pytest_qbench.report.store import read_made
from pytest_qbench.report.store import read_order
from pytest_qbench.report.store import read_phase
from pytest_qbench.report.store import run_in_progress
from pytest_qbench.report.store import unwritten_reason


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


ReportT = TypeVar("ReportT", "TestReport", "TestReportRecord")
REPORT_FIX = "Re-render it with the qbench version that wrote it, or upgrade qbench."
STREAM_FIX = "Rebuild the run with the qbench version that wrote it, or upgrade qbench."
SCHEMA_VERSION_FIELD = re.compile(r'"schema_version"\s*:\s*(-?[0-9]{1,9})\b')
"""A report's ``meta.schema_version``, near the start of ``report.json``."""


def read_report(path: str | os.PathLike[str]) -> TestReport:
    """Load a ``report.json`` (``path`` a `Path` or a string, as ``open`` takes).

    Raises:
        ReportFormatError: the file is missing, not JSON, of another schema version, or invalid.
    """
    path = Path(path)
    return _report_model(path, _report_text(path))


def read_report_record(path: Path) -> TestReportRecord:
    """``read_report(path)`` as a record (``model_dump(mode="json")``), validated by the same
    rules but without building the models (``record_schema``): what the renderers take.

    Raises:
        ReportFormatError: as ``read_report``, with the same words.
    """
    text = _report_text(path)
    try:
        record = record_validator(TestReport).validate_json(text)
    except ValidationError:  # the model says why, as it always did
        return cast("TestReportRecord", _report_model(path, text).model_dump(mode="json"))
    _refuse_other_version(path, record["meta"]["schema_version"], "Upgrade qbench.")
    return cast("TestReportRecord", record)


def _report_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportFormatError(
            f"cannot read report {path}: {exc.strerror}", slug="report-read"
        ) from None
    except UnicodeDecodeError:
        raise ReportFormatError(
            f"{path} is not a qbench report: not UTF-8 text", slug="report-invalid"
        ) from None


def _report_model(path: Path, text: str) -> TestReport:
    try:
        report = TestReport.model_validate_json(text)
    except ValidationError as exc:
        invalid = first_error(exc)
    else:
        _refuse_other_version(path, report.meta.schema_version, "Upgrade qbench.")
        return report
    _refuse_other_version(path, _schema_version_of(text), REPORT_FIX)
    raise ReportFormatError(f"{path} is not a qbench report: {invalid}", slug="report-invalid")


def _schema_version_of(text: str) -> int | None:
    try:
        data = json.loads(text)
        version = data["meta"]["schema_version"]
    except (ValueError, KeyError, TypeError, RecursionError):  # nested too deep: not ours
        return None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _refuse_other_version(path: Path, version: int | None, fix: str) -> None:
    if version is not None and version != SCHEMA_VERSION:
        raise ReportFormatError(
            f"{path} has schema_version {version}; this qbench reads {SCHEMA_VERSION}. {fix}",
            slug="schema-version",
        )


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``<field path>: <message>``."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {err['msg']}"


@dataclass
class StreamContents:
    """What a ``results.jsonl`` holds, parsed."""

    start: StreamStart | None = None
    results: list[TestResult] = field(default_factory=list)
    result_records: list[TestResultRecord] = field(default_factory=list)
    """The results as records instead, when read with ``read_stream(path, records=True)``."""
    result_json: list[str] = field(default_factory=list)
    """With ``records``, each record's compact JSON as ``report.json`` holds it: the stream's
    own text of the result where the line was validated as written, so that rebuilding
    ``report.json`` copies it instead of dumping the record again."""
    collection_errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    deselected: int = 0
    end: StreamEnd | None = None
    bad_lines: int = 0
    first_bad_line: int | None = None
    """Line number of the first line that is not a valid record."""
    torn_last_line: bool = False
    """Whether the last line is one of the bad ones (a process killed mid-write)."""
    died_in: str | None = None
    """The node id of the test a run that died (no end record) was running: the first it was
    to run without a result (its failed result is among the results)."""
    killed_at_end: bool = False
    """Whether the run was killed during its session's end, after its end record and before
    its report.json (``store.killed_at_end``): the report rebuilt is incomplete."""
    unwritten: str | None = None
    """The error its session end kept when it could not write its report.json
    (``store.note_unwritten``): for one ``killed_at_end``, it was not killed, its exit status
    is its end's; for a stream without its end record, it did not die either: the disk
    refused the stream's last records (``STREAM_CUT``), and its exit status is unknown."""
    unrecorded: bool = False
    """Whether the stream has no start record, of a run that made its mark and died unrecorded
    (``store.unrecorded``): its start is made up (``_unrecorded_start``), its report incomplete."""
    lost: int = 0
    """Results a run that died had made that its stream never got (its writes are batched:
    ``store.BATCH_SECONDS``; ``store.read_made``)."""

    def damage(self) -> str | None:
        """Why a report rebuilt from the stream is incomplete: its run was killed during its
        session's end (``killed_at_end``); lines that are not records, other than a torn last
        line alone (a run that died, marked ``interrupted`` already)."""
        if self.unrecorded:
            return UNRECORDED
        if self.killed_at_end:
            return self.unwritten or KILLED_AT_END
        if self.unwritten:
            return f"{self.unwritten}; {STREAM_CUT}"
        if self.lost:
            return (
                f"{self.lost} test(s) finished without a result in the stream: the process was "
                "killed before it wrote them (it writes results in batches, each at most "
                f"{BATCH_SECONDS:g} s after its first; the test it died in is the next one)"
            )
        if not self.bad_lines or (self.bad_lines == 1 and self.torn_last_line):
            return None
        return (
            f"{self.bad_lines} line(s) of the result stream are not valid records (the first at "
            f"line {self.first_bad_line}): the file is damaged, so results may be missing"
        )

    def damage_note(self, path: Path) -> str | None:
        """One line about the lines skipped, naming what they are; ``None`` without any."""
        if not self.bad_lines:
            return None
        if self.bad_lines == 1 and self.torn_last_line:
            return f"skipped a torn last line of {path} (the process was killed mid-write)"
        return (
            f"skipped {self.bad_lines} line(s) of {path} that are not valid records (the first "
            f"at line {self.first_bad_line}): the file is damaged"
        )


STREAM_CUT = (
    f"its {STREAM_NAME} has no end record: the disk refused its last writes, so results after "
    "the last one it holds are missing and its exit status is unknown"
)
"""Why a report rebuilt from the stream of a run whose session ended (``unwritten``), but
without its end record, is incomplete."""


def read_stream(path: Path, *, records: bool = False) -> StreamContents:
    """Parse a stream file. A torn last line (the process died while writing) is skipped.

    With ``records``, results are validated by the models' rules straight into records
    (``result_records``, see ``record_schema``) instead of ``TestResult`` models: what the
    renderers take, at a third of the cost. The few other lines are models either way.

    Raises:
        ReportFormatError: the file is missing or has no start record (but of a run that died
            ``unrecorded``: read as one without results), or its start record says
            another schema version.
    """
    contents = StreamContents()
    if not path.is_file():
        marked = died_unrecorded(path.parent)
        if marked is None:
            raise ReportFormatError(f"no result stream at {path}", slug="stream-missing")
        contents.start = _unrecorded_start(path.parent, marked)  # its writer could not make it
        contents.unrecorded = True
        return contents
    adapter: TypeAdapter[StreamRecord] = TypeAdapter(StreamRecord)
    result_validator = record_validator(TestResult) if records else None
    # A torn last line may end inside a multi-byte character; it then fails validation below.
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if result_validator is not None and _add_result_json(contents, line, result_validator):
                continue
            try:
                record = adapter.validate_json(line)
            except ValidationError:
                _refuse_other_version(path, _start_version_of(line), STREAM_FIX)
                contents.bad_lines += 1
                contents.first_bad_line = contents.first_bad_line or number
                contents.torn_last_line = True
                continue
            contents.torn_last_line = False
            if isinstance(record, StreamStart):
                _refuse_other_version(path, record.meta.schema_version, STREAM_FIX)
            if result_validator is not None and isinstance(record, StreamResult):
                dumped = record.result.model_dump(mode="json")  # written another way
                contents.result_records.append(cast("TestResultRecord", dumped))
                contents.result_json.append(dumps(compact(RESULT, dumped)))
                continue
            _add_record(contents, record)
    if contents.start is None:
        marked = died_unrecorded(path.parent)
        if marked is None:
            raise ReportFormatError(
                f"{path} has no start record: it is not a qbench result stream",
                slug="stream-invalid",
            )
        contents.start = _unrecorded_start(path.parent, marked)
        contents.unrecorded = True
        return contents  # which tests it ran, and the one it died in if it died, are unknown
    if contents.end is None and not run_in_progress(path.parent):
        # its session end kept why it could not write report.json: it did not die, its
        # stream lost its last records (a full disk)
        contents.unwritten = unwritten_reason(path.parent)
        if contents.unwritten is None:
            _add_died_in(contents, path.parent / ORDER_NAME, records=records)
    elif contents.end is not None and died_at_end(path.parent):
        contents.killed_at_end = True
        contents.unwritten = unwritten_reason(path.parent)
    return contents


def _unrecorded_start(run_dir: Path, started_ns: int) -> StreamStart:
    """The start of a run that died unrecorded (``store.died_unrecorded``): its id, and its
    start from its mark in ``.qbench/unfinished/`` (made as it started: ``started_ns``, 0 when
    unknown), else its directory's time; its exit status and environment unknown."""
    if not started_ns:
        with suppress(OSError):
            started_ns = run_dir.stat().st_mtime_ns
    started = datetime.fromtimestamp(started_ns / 1e9, timezone.utc)
    unknown = "unknown"
    return StreamStart(
        meta=ReportMeta(qbench_version=unknown, created_at=started),
        run=RunMeta(run_id=run_dir.name, started_at=started, cwd="", command=[]),
        environment=Environment(
            python=unknown,
            implementation=unknown,
            platform=unknown,
            pytest_version=unknown,
            qbench_version=unknown,
        ),
    )


DIED_TYPE = "ProcessDied"
"""The error type of the test a run died in (``died_in_result``)."""
DIED_MESSAGE = (
    "the test process ended while this test ran, and pytest reported nothing more: it was "
    "killed (a signal, the out-of-memory killer, pytest-timeout's thread method, os._exit); "
    "the run's own output (stderr) may say why"
)


def died_in_result(
    nodeid: str, phase: str | None = None, setup_failure: Mapping[str, object] | None = None
) -> TestResult:
    """The result of the test a run died in, in ``phase`` (``store.read_phase``; ``None``: not
    known, taken for the call): failed when it died in its call, an error in its setup or
    teardown (as pytest counts a failure there); it never passed, its line is unknown. With
    ``setup_failure`` (its setup errored, and it died in its teardown:
    ``store.died_setup_failure``), that is its failure, where and why the setup failed, and the
    death its teardown's failure."""
    file, _, rest = nodeid.partition("::")
    outcome: Literal["failed", "error"] = "error" if phase in ("setup", "teardown") else "failed"
    died = Failure(
        error_type=DIED_TYPE,
        error_message=DIED_MESSAGE,
        phase="setup" if phase == "setup" else "teardown" if phase == "teardown" else "call",
    )
    first = None
    if setup_failure is not None and phase == "teardown":
        try:
            first = Failure.model_validate(setup_failure)
        except ValidationError:  # not as this qbench writes it: the death alone is certain
            first = None
    return TestResult(
        nodeid=nodeid,
        test_name=rest.replace("::", ".") or nodeid,
        file=file,
        outcome=outcome,
        failure=died if first is None else first,
        teardown_failure=None if first is None else died,
        counted_as=[outcome],
    )


def _add_died_in(contents: StreamContents, order: Path, *, records: bool) -> None:
    """Add the result of the test a run that died without an end record died in: the first of
    the tests it was to run (``store.ORDER_NAME``) without a result. Nothing when the run died
    before its tests or after the last one."""
    if not order.is_file():
        return
    done = {result.nodeid for result in contents.results}
    done.update(record["nodeid"] for record in contents.result_records)
    phase_path = order.with_name(PHASE_NAME)
    made = read_made(phase_path)
    if made is not None:  # results made that the stream never got: tests before the one it died in
        contents.lost = max(0, made - len(contents.results) - len(contents.result_records))
    left = (nodeid for nodeid in read_order(order) if nodeid not in done)
    nodeid = next(itertools.islice(left, contents.lost, None), None)
    if nodeid is None:
        return
    contents.died_in = nodeid
    result = died_in_result(nodeid, read_phase(phase_path), died_setup_failure(phase_path, nodeid))
    if not records:
        contents.results.append(result)
        return
    record = cast("TestResultRecord", result.model_dump(mode="json"))
    contents.result_records.append(record)
    contents.result_json.append(dumps(compact(RESULT, record)))


def _add_result_json(contents: StreamContents, line: str, validator: SchemaValidator) -> bool:
    """Add a result line as the stream writer writes it: its result's JSON, validated alone (so
    that it is one whole ``TestResult``, nothing after it), kept as text too. ``False``: the
    line is of another form, or not valid (the model's validation then decides)."""
    text = line.rstrip()
    if not (text.startswith(RESULT_PREFIX) and text.endswith("}")):
        return False
    item = text[len(RESULT_PREFIX) : -1]
    try:
        contents.result_records.append(validator.validate_json(item))
    except ValidationError:
        return False
    contents.result_json.append(item)
    contents.torn_last_line = False
    return True


def _start_version_of(line: str) -> int | None:
    """The schema version of a start record this qbench cannot read."""
    version = _schema_version_of(line)
    return version if '"start"' in line else None


def _add_record(contents: StreamContents, record: StreamRecord) -> None:
    if isinstance(record, StreamStart):
        contents.start = record
    elif isinstance(record, StreamResult):
        contents.results.append(record.result)
    elif isinstance(record, StreamDiagnostic):
        target = (
            contents.collection_errors if record.kind == "collection_error" else contents.warnings
        )
        target.append(record.diagnostic)
    elif isinstance(record, StreamDeselected):
        contents.deselected += record.count
    else:
        contents.end = record


def report_from_stream(contents: StreamContents) -> TestReport:
    """Rebuild a ``TestReport`` from a parsed stream; a stream without an end record is a run
    that died, and is marked ``interrupted``."""
    return _stream_report(contents, contents.results)[0].model_copy(
        update={"results": contents.results}
    )


def report_record_from_stream(contents: StreamContents) -> TestReportRecord:
    """``report_from_stream(contents)`` as a record, each result dumped once (the summary is
    counted from the dumps)."""
    return stream_record_and_view(contents)[0]


def stream_record_and_view(
    contents: StreamContents, max_items: int = DEFAULT_MAX_ITEMS
) -> tuple[TestReportRecord, ReportView]:
    """``report_record_from_stream(contents)``, and the bounded view of its results
    (``aggregate(results, max_items=max_items).view()``) from the same pass that counted them."""
    results = contents.result_records or [
        cast("TestResultRecord", r.model_dump(mode="json")) for r in contents.results
    ]
    report, counted = _stream_report(contents, results, max_items)
    record = cast("TestReportRecord", report.model_dump(mode="json"))
    record["results"] = results
    return record, counted.view()


def _stream_report(
    contents: StreamContents,
    results: Sequence[TestResult] | Sequence[TestResultRecord],
    max_items: int = DEFAULT_MAX_ITEMS,
) -> tuple[TestReport, Aggregator]:
    """The report of a parsed stream without its results, counted from ``results`` (by the
    aggregator returned, whose selections keep ``max_items`` each)."""
    start = contents.start
    if start is None:  # read_stream refuses such streams; this keeps mypy informed
        raise ReportFormatError("stream has no start record", slug="stream-invalid")
    environment, sections, coverage = start.environment, [], None
    gates = []
    if contents.end is not None:
        gates = contents.end.gates
        run = contents.end.run
        environment = contents.end.environment or environment
        sections = contents.end.sections
        coverage = contents.end.coverage
    else:  # it died, unless its session end said why it has no end record (``unwritten``)
        run = start.run.model_copy(
            update={"interrupted": not contents.unwritten, "completed_at": _last_finish(contents)}
        )
    if contents.killed_at_end and not contents.unwritten:  # its status never reached the caller
        run = run.model_copy(update={"exit_code": None})
    damage = contents.damage()
    if damage:  # a result may be lost: the report is incomplete, never green
        run = run.model_copy(update={"recording_errors": [*run.recording_errors, damage]})
    finished = run.completed_at or run.started_at
    agg = aggregate(
        results,
        contents.collection_errors,
        contents.warnings,
        contents.deselected,
        max_items=max_items,
    )
    report = TestReport(
        meta=ReportMeta(
            qbench_version=start.meta.qbench_version, created_at=datetime.now(timezone.utc)
        ),
        run=run,
        environment=environment,
        summary=ReportSummary.model_validate(
            agg.summary((finished - run.started_at).total_seconds())
        ),
        collection_errors=contents.collection_errors,
        warnings=contents.warnings,
        sections=sections,
        coverage=coverage,
        gates=gates,
        repeats=[RepeatStats.model_validate(stats) for stats in agg.repeat_stats()],
    )
    return report, agg


def _last_finish(contents: StreamContents) -> datetime | None:
    ends = [
        r.started_at.timestamp() + r.duration for r in contents.results if r.started_at is not None
    ]
    ends += [
        _timestamp(started) + r["duration"]
        for r in contents.result_records
        if (started := r["started_at"]) is not None
    ]
    return datetime.fromtimestamp(max(ends), tz=timezone.utc) if ends else None


def _timestamp(iso_text: str) -> float:
    return datetime.fromisoformat(iso_text.replace("Z", "+00:00")).timestamp()


def refuse_newer_report(path: Path) -> None:
    """Refuse to rebuild over a ``report.json`` of another schema version (a newer qbench's).

    Raises:
        ReportFormatError: ``path`` says another ``schema_version``.
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return
    found = SCHEMA_VERSION_FIELD.search(head)
    if found is not None:
        _refuse_other_version(
            path, int(found[1]), "Rebuilding the run would overwrite it: upgrade qbench."
        )


def load_source(source: Path) -> TestReport:
    """A report from ``report.json``, or from a run directory (its stream first)."""
    return _load(source, read_report, report_from_stream)


def load_source_record(source: Path) -> TestReportRecord:
    """``load_source(source)`` as a record; from ``report.json``, no model is built."""
    return load_source_results_json(source)[0]


def load_source_results_json(
    source: Path, max_items: int = DEFAULT_MAX_ITEMS
) -> tuple[TestReportRecord, list[str] | None, ReportView | None]:
    """``load_source_record(source)``, and when it was rebuilt from a stream, its results'
    compact JSON as the stream holds them (``StreamContents.result_json``) and their view
    (``max_items`` per list), counted in the pass that made the summary."""
    found: list[tuple[list[str], ReportView]] = []

    def rebuild(contents: StreamContents) -> TestReportRecord:
        record, view = stream_record_and_view(contents, max_items)
        found.append((contents.result_json, view))
        return record

    report = _load(source, read_report_record, rebuild, records=True)
    if not found:
        return report, None, None
    return report, found[0][0], found[0][1]


def _load(
    source: Path,
    read: Callable[[Path], ReportT],
    rebuild: Callable[[StreamContents], ReportT],
    *,
    records: bool = False,
) -> ReportT:
    from pytest_qbench.report import store

    if source.is_dir():
        stream = source / store.STREAM_NAME
        if store.holds_stream(source):
            refuse_newer_report(source / store.REPORT_JSON)
            contents = read_stream(stream, records=records)
            note = contents.damage_note(stream)
            if note:
                print(f"qbench: {note}", file=sys.stderr)
            return rebuild(contents)
        if (source / store.REPORT_JSON).is_file():
            return read(source / store.REPORT_JSON)
        raise ReportFormatError(
            f"{source} holds neither {store.STREAM_NAME} nor {store.REPORT_JSON}: not a run directory",
            slug="not-a-run",
        )
    return read(source)
