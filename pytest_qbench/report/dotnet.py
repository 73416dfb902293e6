"""``qbench ingest-trx``: .NET test results read into a ``TestReport``: VSTest's TRX (``dotnet
test --logger trx``) and NUnit 3's result XML (``TestResult.xml``), told apart by their root
element (``<TestRun>``, ``<test-run>``).

Each test result becomes one ``TestResult`` named ``<class>::<test>`` (the TRX test definition's
``className``; NUnit's ``classname``), with its duration, its output, and for a failure its
message, stack trace and the first ``in /path/File.cs:line 42`` of the trace. TRX outcomes map as
``dotnet test`` counts them: Passed, PassedButRunAborted, Warning are passed; Failed and Timeout
failed; Error, Aborted, Disconnected errors; NotExecuted, NotRunnable, Inconclusive skipped (the
reason says which). NUnit: Passed and Warning passed, Failed failed, Failed with the label
Error, Invalid or Cancelled an error, Skipped and Inconclusive skipped.

Fail closed: a file that cannot be read, is not one of these formats, records a run that did not
finish (TRX ``ResultSummary`` outcome Aborted, Timeout, Error, or none; NUnit ``label``
Cancelled or Error on the run), or whose results disagree with its own counters, is refused with
a ``ReportFormatError`` naming the file and why; it never becomes a passed run.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path

from pytest_qbench.core.errors import JUnitFormatError
from pytest_qbench.core.errors import ReportFormatError
from pytest_qbench.core.limits import MAX_MESSAGE
from pytest_qbench.core.limits import Limits
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.types import Outcome
from pytest_qbench.report.junit import FileRead
from pytest_qbench.report.junit import assemble_report
from pytest_qbench.report.junit import error_type_of
from pytest_qbench.report.junit import find_location
from pytest_qbench.report.junit import parse_timestamp
from pytest_qbench.report.junit import parse_xml
from pytest_qbench.report.models import Captured
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import PhaseDurations
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult


TRX_OUTCOMES: dict[str, Outcome] = {
    "passed": "passed",
    "passedbutrunaborted": "passed",
    "warning": "passed",
    "failed": "failed",
    "timeout": "failed",
    "error": "error",
    "aborted": "error",
    "disconnected": "error",
    "notexecuted": "skipped",
    "notrunnable": "skipped",
    "inconclusive": "skipped",
}
"""A TRX ``UnitTestResult`` outcome (lower case) as a qbench outcome."""
TRX_COUNTERS: dict[str, tuple[str, ...]] = {
    "passed": ("passed", "passedButRunAborted", "warning"),
    "failed": ("failed", "timeout"),
    "error": ("error", "aborted", "disconnected"),
    "skipped": ("notExecuted", "notRunnable", "inconclusive"),
}
"""The ``Counters`` attributes that add up to each outcome's count."""
TRX_UNFINISHED = ("aborted", "timeout", "error")
"""``ResultSummary`` outcomes of a run that did not finish."""
NUNIT_ERROR_LABELS = ("error", "invalid", "cancelled")
NUNIT_UNFINISHED = ("cancelled", "error")
"""``label``s of an NUnit ``<test-run>`` that did not finish."""
NUNIT_EXCEPTION = re.compile(r"^(?P<type>[\w.]+(?:Exception|Error)) : (?P<message>.*)$", re.S)
DURATION = re.compile(r"^(?:(?P<d>\d+)\.)?(?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d(?:\.\d+)?)$")


def read_dotnet(
    paths: Sequence[Path], *, limits: Limits | None = None, command: list[str] | None = None
) -> TestReport:
    """Read TRX and NUnit 3 XML files (one run) into one report.

    Raises:
        ReportFormatError: a file cannot be read, is neither format, records a run that did not
            finish, or its results disagree with its counters.
    """
    files = [path for p in paths for path in _files(Path(p))]
    if not files:
        given = ", ".join(map(str, paths)) or "nothing"
        raise ReportFormatError(f"no .trx or .xml file in {given}", slug="dotnet-read")
    redact = Redactor(os.environ)
    reads = [read_file(path, limits or Limits(), redact) for path in files]
    return assemble_report(reads, command or ["qbench", "ingest-trx", *map(str, paths)])


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted([*path.glob("*.trx"), *path.glob("*.xml")])
    return [path]


def read_file(path: Path, limits: Limits, redact: Redactor) -> FileRead:
    """One TRX or NUnit 3 file.

    Raises:
        ReportFormatError: see ``read_dotnet``.
    """
    try:
        root = parse_xml(path)
    except JUnitFormatError as exc:
        slug = "dotnet-read" if exc.slug == "junit-read" else "dotnet-invalid"
        raise ReportFormatError(str(exc).replace("JUnit XML", "test results"), slug=slug) from None
    tag = _local(root.tag)
    if tag == "TestRun":
        return _Trx(path, root, _Bounds(limits, redact)).read()
    if tag == "test-run":
        return _NUnit(path, root, _Bounds(limits, redact)).read()
    raise ReportFormatError(
        f"{path} is neither a TRX file nor NUnit 3 XML: its root element is <{tag}>, not "
        "<TestRun> or <test-run>",
        slug="dotnet-invalid",
    )


@dataclass(frozen=True)
class _Bounds:
    limits: Limits
    redact: Redactor

    def failure(self, error_type: str, message: str, trace: str, prefer: list[str]) -> Failure:
        file, line = find_location(trace, prefer)
        return Failure(
            error_type=self.redact(error_type)[:200],
            error_message=bound_text(self.redact(message), MAX_MESSAGE, keep="head"),
            phase="call",
            file=file,
            line=line,
            stack_trace=bound_text(
                self.redact(trace or message),
                self.limits.max_trace,
                keep="tail",
                option="--max-trace",
            ),
        )

    def captured(self, out: str, err: str) -> Captured | None:
        if not out and not err:
            return None
        cap = self.limits.max_output
        return Captured(
            stdout=bound_text(self.redact(out), cap, option="--max-output"),
            stderr=bound_text(self.redact(err), cap, option="--max-output"),
        )


def _result(
    classname: str,
    name: str,
    outcome: Outcome,
    duration: float,
    failure: Failure | None,
    reason: str | None,
    captured: Captured | None,
) -> TestResult:
    short = name.removeprefix(f"{classname}.") if classname else name
    file = failure.file if failure is not None and failure.file else classname or name
    return TestResult(
        nodeid=f"{classname}::{short}" if classname else short,
        test_name=short,
        file=file,
        line=failure.line if failure is not None and failure.file else None,
        outcome=outcome,
        duration=duration,
        durations=PhaseDurations(call=duration),
        failure=failure,
        reason=reason,
        captured=captured,
        counted_as=[outcome],
    )


class _Trx:
    """A VSTest TRX file (namespace ``http://microsoft.com/schemas/VisualStudio/TeamTest/2010``)."""

    def __init__(self, path: Path, root: ET.Element, bounds: _Bounds) -> None:
        self.path, self.root, self.bounds = path, root, bounds
        self.ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""

    def find(self, element: ET.Element, path: str) -> ET.Element | None:
        return element.find("/".join(f"{self.ns}{part}" for part in path.split("/")))

    def text(self, element: ET.Element, path: str) -> str:
        found = self.find(element, path)
        return _clean(found.text or "") if found is not None else ""

    def read(self) -> FileRead:
        summary = self.find(self.root, "ResultSummary")
        outcome = (summary.get("outcome") or "").lower() if summary is not None else ""
        if summary is None or outcome in TRX_UNFINISHED:
            said = (
                f"its outcome is {summary.get('outcome')}"
                if summary is not None
                else ("it has no ResultSummary")
            )
            info = self.text(summary, "RunInfos/RunInfo/Text") if summary is not None else ""
            raise ReportFormatError(
                f"{self.path}: the test run did not finish ({said})"
                + (f": {info.splitlines()[0][:300]}" if info else "")
                + "; its results are not a verdict, so nothing was ingested",
                slug="dotnet-unfinished",
            )
        classes = self._classes()
        results = [self._one(r, classes) for r in self._unit_results()]
        self._check_counts(summary, results)
        times = self.find(self.root, "Times")
        started = parse_timestamp(times.get("start") if times is not None else None)
        finished = parse_timestamp(times.get("finish") if times is not None else None)
        duration = round(sum(r.duration for r in results), 6)
        if started is not None and finished is not None:
            duration = round(max((finished - started).total_seconds(), 0.0), 6)
        return _file_read("dotnet", self.path, results, started, finished, duration)

    def _unit_results(self) -> list[ET.Element]:
        results = self.find(self.root, "Results")
        return [] if results is None else list(results.iter(f"{self.ns}UnitTestResult"))

    def _classes(self) -> dict[str, str]:
        """Each test id's class name, from the test definitions."""
        classes: dict[str, str] = {}
        definitions = self.find(self.root, "TestDefinitions")
        for test in definitions.iter(f"{self.ns}UnitTest") if definitions is not None else ():
            method = self.find(test, "TestMethod")
            if method is not None:
                classes[test.get("id") or ""] = method.get("className") or ""
        return classes

    def _one(self, element: ET.Element, classes: dict[str, str]) -> TestResult:
        name = element.get("testName") or "(unnamed)"
        classname = classes.get(element.get("testId") or "", "").split(",")[0].strip()
        given = element.get("outcome") or ""
        outcome = TRX_OUTCOMES.get(given.lower(), "error")
        message = self.text(element, "Output/ErrorInfo/Message")
        trace = self.text(element, "Output/ErrorInfo/StackTrace")
        failure = reason = None
        if given.lower() not in TRX_OUTCOMES:
            failure = self.bounds.failure(
                "Error", f"outcome {given or '(none)'} not understood: counted as an error", "", []
            )
        elif outcome in ("failed", "error"):
            kind = "Timeout" if given.lower() == "timeout" else "Failed"
            error_type = error_type_of(None, message, trace, outcome == "error")
            failure = self.bounds.failure(
                kind if error_type in ("Failed", "Error") else error_type,
                message or given,
                trace,
                [classname],
            )
        elif outcome == "skipped":
            reason = self.bounds.redact(message or given)
        out = self.text(element, "Output/StdOut")
        err = self.text(element, "Output/StdErr")
        return _result(
            classname,
            name,
            outcome,
            _duration(element.get("duration")),
            failure,
            reason,
            self.bounds.captured(out, err),
        )

    def _check_counts(self, summary: ET.Element, results: list[TestResult]) -> None:
        counters = self.find(summary, "Counters")
        if counters is None:
            raise ReportFormatError(
                f"{self.path}: its ResultSummary has no Counters; nothing was ingested",
                slug="dotnet-invalid",
            )
        expected = {
            o: sum(_int(counters.get(n)) for n in names) for o, names in TRX_COUNTERS.items()
        }
        _agree(self.path, "Counters", expected, _int(counters.get("total")), _tally(results))


class _NUnit:
    """An NUnit 3 result file (``<test-run>``)."""

    def __init__(self, path: Path, root: ET.Element, bounds: _Bounds) -> None:
        self.path, self.root, self.bounds = path, root, bounds

    def read(self) -> FileRead:
        label = (self.root.get("label") or "").lower()
        if label in NUNIT_UNFINISHED or not self.root.get("result"):
            said = f"its label is {self.root.get('label')}" if label else "it has no result"
            raise ReportFormatError(
                f"{self.path}: the test run did not finish ({said}); its results are not a "
                "verdict, so nothing was ingested",
                slug="dotnet-unfinished",
            )
        results = [self._one(case) for case in self.root.iter("test-case")]
        expected = {  # NUnit counts an error as failed
            "passed": _int(self.root.get("passed")) + _int(self.root.get("warnings")),
            "failed": _int(self.root.get("failed")),
            "skipped": _int(self.root.get("skipped")) + _int(self.root.get("inconclusive")),
        }
        found = _tally(results, {"error": "failed"})
        _agree(self.path, "<test-run>", expected, _int(self.root.get("total")), found)
        started = parse_timestamp(self.root.get("start-time"))
        finished = parse_timestamp(self.root.get("end-time"))
        duration = _seconds(self.root.get("duration")) or round(sum(r.duration for r in results), 6)
        return _file_read("nunit", self.path, results, started, finished, duration)

    def _one(self, case: ET.Element) -> TestResult:
        classname = case.get("classname") or ""
        name = case.get("fullname") or case.get("name") or "(unnamed)"
        result = (case.get("result") or "").lower()
        label = (case.get("label") or "").lower()
        message = _clean(
            _child_text(case, "failure/message") or _child_text(case, "reason/message")
        )
        trace = _clean(_child_text(case, "failure/stack-trace"))
        failure = reason = None
        outcome: Outcome
        if result in ("passed", "warning"):
            outcome = "passed"
        elif result in ("skipped", "inconclusive"):
            outcome = "skipped"
            reason = self.bounds.redact(message or case.get("label") or result)
        else:
            outcome = "error" if label in NUNIT_ERROR_LABELS or result != "failed" else "failed"
            error_type = error_type_of(None, message, trace, outcome == "error")
            if thrown := NUNIT_EXCEPTION.match(message):  # "System.X : message"
                error_type, message = thrown["type"], thrown["message"]
            if result != "failed":
                message = f"result {case.get('result') or '(none)'} not understood: an error"
            failure = self.bounds.failure(error_type, message or result, trace, [classname])
        output = _clean(_child_text(case, "output"))
        return _result(
            classname,
            name,
            outcome,
            _seconds(case.get("duration")),
            failure,
            reason,
            self.bounds.captured(output, ""),
        )


def _agree(
    path: Path, where: str, expected: dict[str, int], total: int, found: dict[str, int]
) -> None:
    """Refuse a file whose results disagree with its own counters."""
    if total == sum(found.values()) and all(found.get(k, 0) == n for k, n in expected.items()):
        return
    said = ", ".join(f"{o} {n}" for o, n in expected.items())
    held = ", ".join(f"{o} {n}" for o, n in found.items())
    raise ReportFormatError(
        f"{path}: its results disagree with its {where} counters (total {total}, {said}; the "
        f"results hold {sum(found.values())}: {held}); nothing was ingested",
        slug="dotnet-counts",
    )


def _tally(results: list[TestResult], merge: dict[str, str] | None = None) -> dict[str, int]:
    """The results' count per outcome (``merge`` folds one outcome into another)."""
    found: dict[str, int] = {}
    for result in results:
        key = (merge or {}).get(result.outcome, result.outcome)
        found[key] = found.get(key, 0) + 1
    return found


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child_text(element: ET.Element, path: str) -> str:
    found = element.find(path)
    return (found.text or "") if found is not None else ""


def _clean(text: str) -> str:
    return text.replace("\r\n", "\n").strip("\n").rstrip()


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _seconds(value: str | None) -> float:
    try:
        seconds = float(value or 0)
    except ValueError:
        return 0.0
    return round(seconds, 6) if seconds > 0 else 0.0


def _duration(value: str | None) -> float:
    """A TRX duration, ``[d.]hh:mm:ss[.fffffff]``, in seconds (0 when unreadable)."""
    match = DURATION.match(value or "")
    if match is None:
        return 0.0
    days = int(match["d"] or 0)
    seconds = ((days * 24 + int(match["h"])) * 60 + int(match["m"])) * 60 + float(match["s"])
    return round(seconds, 6)


def _file_read(
    tool: str,
    path: Path,
    results: list[TestResult],
    started: datetime | None,
    finished: datetime | None,
    duration: float,
) -> FileRead:
    """What a file holds; without an end time, the file's modification time is the end."""
    end = finished or datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return FileRead(
        tool=tool,
        results=results,
        started=started or end - timedelta(seconds=duration),
        completed=end,
        duration=duration,
        extra={},
        notes=[],
    )
