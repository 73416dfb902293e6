"""Files: the run directory, the crash-safe result stream, reading reports back (atomic writes
are `pytest_qbench.core.atomic`'s).

Layout of one run::

    <qbench-dir>/runs/<run_id>/
        results.jsonl   one JSON record per line, appended and flushed as the run goes
        report.json     TestReport, written when the session ends (or by ``qbench render``)
        report.md       the Markdown report
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from collections.abc import Mapping
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core import atomic
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import dumps


if TYPE_CHECKING:
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import StreamEndRecord
    from pytest_qbench.report.records import StreamStartRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


STREAM_NAME = "results.jsonl"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
RUNS_DIR = "runs"
RESULT_PREFIX = '{"kind":"result","result":'


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id: ``20261121T221500Z-3f9a1c``."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


GITIGNORE = "# Created by pytest-qbench: runs are artifacts, not sources.\n*\n"


def prepare_store(qbench_dir: Path) -> None:
    """Create the qbench directory, with a ``.gitignore`` that keeps it out of git (as pytest
    does for ``.pytest_cache``)."""
    qbench_dir.mkdir(parents=True, exist_ok=True)
    ignore = qbench_dir / ".gitignore"
    if not ignore.exists():
        atomic.write_text_atomic(ignore, GITIGNORE)


def run_dir(qbench_dir: Path, run_id: str) -> Path:
    """Where a run's files live."""
    return qbench_dir / RUNS_DIR / run_id


class StreamWriter:
    """Appends records to ``results.jsonl``, one line each, written straight to the file.

    Each line is one ``os.write`` on an unbuffered descriptor opened for appending, so a process
    that dies mid-run leaves every finished test on disk, and nothing half-buffered.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write_start(self, record: StreamStartRecord) -> None:
        """The run as it starts (a ``StreamStart`` record)."""
        self._write(dumps(record).encode())

    def write_result(self, result: TestResultRecord) -> None:
        """One finished test (a ``TestResult`` record)."""
        self._write(f"{RESULT_PREFIX}{dumps(result)}}}".encode())

    def write_diagnostic(self, kind: str, diagnostic: DiagnosticRecord) -> None:
        """A collection error or a warning (a ``Diagnostic`` record)."""
        self._write(dumps({"kind": kind, "diagnostic": diagnostic}).encode())

    def write_deselected(self, count: int) -> None:
        """Deselected tests."""
        self._write(dumps({"kind": "deselected", "count": count}).encode())

    def write_end(self, record: StreamEndRecord) -> None:
        """The run as it ended (a ``StreamEnd`` record)."""
        self._write(dumps(record).encode())

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


def write_report_json(
    path: Path,
    report: TestReportRecord,
    stream: Path | None,
    patches: Mapping[str, Record] | None = None,
) -> None:
    """Write a ``TestReport`` record as JSON; a ``stream``'s results are spliced in unparsed.

    Compact JSON of a list is its items' JSON joined by commas, so the file is exactly the
    report's JSON with the stream's results as ``results``, without holding them in memory.
    ``patches`` (node id to fields) amends failed and errored results of the stream, which are
    parsed for it: their ``history`` is known only when the run has ended.
    """
    head = dumps({**report, "results": []})
    marker = '"results":[]'
    cut = head.index(marker) + len(marker) - 1
    with atomic.atomic_writer(path) as handle:
        handle.write(head[:cut])
        first = True
        if stream is not None:
            for item in iter_result_json(stream):
                if patches:
                    item = patch_result_json(item, patches)
                handle.write(item if first else "," + item)
                first = False
        for result in report["results"]:
            handle.write(("" if first else ",") + dumps(result))
            first = False
        handle.write(head[cut:])


_FAILING_MARKS = ('"outcome":"failed"', '"outcome":"error"')


def patch_result_json(item: str, patches: Mapping[str, Record]) -> str:
    """A failed or errored result's JSON with its patch applied (field order kept); any other
    result's JSON as is, unparsed.

    A string value cannot hold ``"outcome":"failed"`` unescaped, so only results that failed
    (or that hold a failed subtest or attempt) are parsed.
    """
    if not any(mark in item for mark in _FAILING_MARKS):
        return item
    result = json.loads(item)
    patch = patches.get(result["nodeid"])
    return item if patch is None else dumps({**result, **patch})
