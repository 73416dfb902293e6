"""Files: the run directory, the crash-safe result stream, atomic writes, reading reports back.

Layout of one run::

    <qbench-dir>/runs/<run_id>/
        results.jsonl   one JSON record per line, appended and flushed as the run goes
        report.json     TestReport, written when the session ends (or by ``qbench render``)
        report.md       the Markdown report
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import IO

from pydantic import TypeAdapter
from pydantic import ValidationError

from pytest_qbench.errors import ReportFormatError
from pytest_qbench.models import SCHEMA_VERSION
from pytest_qbench.models import Diagnostic
from pytest_qbench.models import StreamDeselected
from pytest_qbench.models import StreamDiagnostic
from pytest_qbench.models import StreamEnd
from pytest_qbench.models import StreamRecord
from pytest_qbench.models import StreamResult
from pytest_qbench.models import StreamStart
from pytest_qbench.models import TestReport
from pytest_qbench.models import TestResult


STREAM_NAME = "results.jsonl"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
RUNS_DIR = "runs"
RESULT_PREFIX = '{"kind":"result","result":'
_RESULT_PREFIX_BYTES = RESULT_PREFIX.encode()


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id: ``20261121T221500Z-3f9a1c``."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def run_dir(qbench_dir: Path, run_id: str) -> Path:
    """Where a run's files live."""
    return qbench_dir / RUNS_DIR / run_id


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a half-written file never exists; ``-`` is stdout.

    Parent directories are created. The text goes to a temporary file in the same directory,
    which then replaces ``path``.
    """
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_writer(Path(path)) as handle:
        handle.write(text)


class atomic_writer:
    """Context manager: a text file handle whose content replaces ``path`` only on success."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> IO[str]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        self._tmp = Path(tmp)
        # mkstemp makes the file owner-only; a report is as readable as any new file would be.
        os.chmod(tmp, 0o666 & ~_current_umask())
        self._handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        return self._handle

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self._handle.close()  # flushes: a full disk fails here
            if exc_type is None:
                self._tmp.replace(self.path)
                return
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise
        self._tmp.unlink(missing_ok=True)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class StreamWriter:
    """Appends records to ``results.jsonl``, one line each, written straight to the file.

    Each line is one ``os.write`` on an unbuffered descriptor opened for appending, so a process
    that dies mid-run leaves every finished test on disk, and nothing half-buffered.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write_start(self, record: StreamStart) -> None:
        """The run as it starts."""
        self._write(record.__pydantic_serializer__.to_json(record))

    def write_result(self, result: TestResult) -> None:
        """One finished test."""
        self._write(_RESULT_PREFIX_BYTES + result.__pydantic_serializer__.to_json(result) + b"}")

    def write_diagnostic(self, kind: str, diagnostic: Diagnostic) -> None:
        """A collection error or a warning."""
        record = StreamDiagnostic(kind=kind, diagnostic=diagnostic)  # type: ignore[arg-type]
        self._write(record.__pydantic_serializer__.to_json(record))

    def write_deselected(self, count: int) -> None:
        """Deselected tests."""
        record = StreamDeselected(count=count)
        self._write(record.__pydantic_serializer__.to_json(record))

    def write_end(self, record: StreamEnd) -> None:
        """The run as it ended."""
        self._write(record.__pydantic_serializer__.to_json(record))

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            raise ValueError(f"result stream {self.path} is closed")
        data = line + b"\n"
        while data:  # os.write may write less than asked
            data = data[os.write(self._fd, data) :]

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def iter_result_json(stream: Path) -> Iterator[str]:
    """The raw JSON of every result in a stream, in order (no parsing: this is the fast path)."""
    # A torn last line may end inside a multi-byte character: it must not stop the reading.
    with stream.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith(RESULT_PREFIX) and line.endswith("}\n"):
                yield line[len(RESULT_PREFIX) : -2]


def write_report_json(path: Path, report: TestReport, stream: Path | None) -> None:
    """Write ``report`` as JSON; when ``stream`` is given, its results are spliced in unparsed.

    The output is byte for byte ``report.model_dump_json()`` with the stream's results as
    ``results``: pydantic's compact JSON of a list is its items' JSON joined by commas.
    """
    head = report.model_copy(update={"results": []}).model_dump_json()
    marker = '"results":[]'
    cut = head.index(marker) + len(marker) - 1
    with atomic_writer(path) as handle:
        handle.write(head[:cut])
        first = True
        if stream is not None:
            for item in iter_result_json(stream):
                handle.write(item if first else "," + item)
                first = False
        for result in report.results:
            handle.write(("" if first else ",") + result.model_dump_json())
            first = False
        handle.write(head[cut:])


def read_report(path: Path) -> TestReport:
    """Load a ``report.json``.

    Raises:
        ReportFormatError: the file is missing, not JSON, of another schema version, or invalid.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportFormatError(
            f"cannot read report {path}: {exc.strerror}", slug="report-read"
        ) from None
    except UnicodeDecodeError:
        raise ReportFormatError(
            f"{path} is not a qbench report: not UTF-8 text", slug="report-invalid"
        ) from None
    try:
        report = TestReport.model_validate_json(text)
    except ValidationError as exc:
        version = _schema_version_of(text)
        if version is not None and version != SCHEMA_VERSION:
            raise ReportFormatError(
                f"{path} has schema_version {version}; this qbench reads {SCHEMA_VERSION}. "
                "Re-render it with the qbench version that wrote it, or upgrade qbench.",
                slug="schema-version",
            ) from None
        raise ReportFormatError(
            f"{path} is not a qbench report: {_first_error(exc)}", slug="report-invalid"
        ) from None
    if report.meta.schema_version != SCHEMA_VERSION:
        raise ReportFormatError(
            f"{path} has schema_version {report.meta.schema_version}; this qbench reads "
            f"{SCHEMA_VERSION}. Upgrade qbench.",
            slug="schema-version",
        )
    return report


def _schema_version_of(text: str) -> int | None:
    import json

    try:
        data = json.loads(text)
        version = data["meta"]["schema_version"]
    except (ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, int) else None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {err['msg']}"


@dataclass
class StreamContents:
    """What a ``results.jsonl`` holds, parsed."""

    start: StreamStart | None = None
    results: list[TestResult] = field(default_factory=list)
    collection_errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    deselected: int = 0
    end: StreamEnd | None = None
    bad_lines: int = 0


def read_stream(path: Path) -> StreamContents:
    """Parse a stream file. A torn last line (the process died while writing) is skipped.

    Raises:
        ReportFormatError: the file is missing, or has no start record.
    """
    if not path.is_file():
        raise ReportFormatError(f"no result stream at {path}", slug="stream-missing")
    contents = StreamContents()
    adapter: TypeAdapter[StreamRecord] = TypeAdapter(StreamRecord)
    # A torn last line may end inside a multi-byte character; it then fails validation below.
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = adapter.validate_json(line)
            except ValidationError:
                contents.bad_lines += 1
                continue
            _add_record(contents, record)
    if contents.start is None:
        raise ReportFormatError(
            f"{path} has no start record: it is not a qbench result stream", slug="stream-invalid"
        )
    return contents


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
    from pytest_qbench.aggregate import aggregate
    from pytest_qbench.models import ReportMeta

    start = contents.start
    if start is None:  # read_stream refuses such streams; this keeps mypy informed
        raise ReportFormatError("stream has no start record", slug="stream-invalid")
    environment, sections = start.environment, []
    if contents.end is not None:
        run = contents.end.run
        environment = contents.end.environment or environment
        sections = contents.end.sections
    else:
        run = start.run.model_copy(
            update={"interrupted": True, "completed_at": _last_finish(contents)}
        )
    finished = run.completed_at or run.started_at
    agg = aggregate(
        contents.results, contents.collection_errors, contents.warnings, contents.deselected
    )
    return TestReport(
        meta=ReportMeta(
            qbench_version=start.meta.qbench_version, created_at=datetime.now(timezone.utc)
        ),
        run=run,
        environment=environment,
        summary=agg.summary((finished - run.started_at).total_seconds()),
        results=contents.results,
        collection_errors=contents.collection_errors,
        warnings=contents.warnings,
        sections=sections,
    )


def _last_finish(contents: StreamContents) -> datetime | None:
    ends = [
        r.started_at.timestamp() + r.duration for r in contents.results if r.started_at is not None
    ]
    return datetime.fromtimestamp(max(ends), tz=timezone.utc) if ends else None
