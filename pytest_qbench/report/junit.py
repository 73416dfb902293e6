"""``qbench ingest-junit``: JUnit XML of other test runners, read into a ``TestReport``.

The runner is detected from the XML (``--tool`` overrides): ``vitest``, ``jest`` (jest-junit),
``go`` (go-junit-report), ``maven-surefire``, ``dotnet`` (JunitXml.TestLogger), ``pytest``
(``--junitxml``); any other JUnit XML is read as ``junit``.

Each ``<testcase>`` becomes one result, so the summary has the XML's counts: ``<failure>`` is
failed, ``<error>`` an error, ``<skipped>`` skipped (pytest's ``pytest.xfail`` skips are
xfailed), anything else passed. Surefire's ``<flakyFailure>``/``<flakyError>`` become attempts
of a test that passed (flaky), ``<rerunFailure>``/``<rerunError>`` attempts of one that failed.
pytest's junitxml writes a failed test's teardown error as a second ``<testcase>``; it is folded
back into the test, as pytest counts it.

Parsing is safe without extra dependencies: expat, with every DTD, entity declaration and
external entity refused before anything is expanded (no billion laughs, no XXE).
"""

from __future__ import annotations

import math
import os
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Literal
from xml.parsers import expat

from pydantic import JsonValue

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import JUnitFormatError
from pytest_qbench.core.limits import MAX_MESSAGE
from pytest_qbench.core.limits import Limits
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.redact import is_secret_name
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import first_line
from pytest_qbench.core.types import Outcome
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import Attempt
from pytest_qbench.report.models import Captured
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import Phase
from pytest_qbench.report.models import PhaseDurations
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.store import new_run_id


MAX_PROPERTY = 1_000
LOCATION_LINES = 300
# Suite properties worth keeping in environment.extra (Surefire lists every system property).
ENVIRONMENT_PROPERTY = re.compile(r"(version|^os\.name|^os\.arch)$")
EXCEPTION_NAME = re.compile(
    r"^((?:[A-Za-z_$][\w.$]*)?(?:Error|Exception|Failure|Fault|Panic))(?::|$)"
)
PYTEST_CRASH_LINE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+): (?P<type>[A-Za-z_][\w.]*)$")
PYTEST_PHASE_ERROR = re.compile(r'^failed on (?P<phase>setup|teardown) with "(?P<inner>.*)"$', re.S)
SOURCE_LOCATION = re.compile(r"(?P<file>[\w./\\@~+-]*[\w@~+-]\.[A-Za-z]{1,6}):(?P<line>\d+)")
DOTNET_LOCATION = re.compile(r" in (?P<file>\S.*?):line (?P<line>\d+)")
LIBRARY_PATH = ("node_modules", "site-packages", "<anonymous>", "node:internal", "java.base/")


# --- safe parsing -------------------------------------------------------------------------------


class _Refused(Exception):
    """A DTD or entity declaration met while parsing."""


def _refuse_doctype(*_: object) -> None:
    raise _Refused("declares a DTD (<!DOCTYPE ...>)")


def _refuse_entity(*_: object) -> None:
    raise _Refused("declares an entity (<!ENTITY ...>)")


def _refuse_external(*_: object) -> int:
    raise _Refused("refers to an external entity")


def parse_xml(path: Path) -> ET.Element:
    """Parse ``path`` with expat, refusing DTDs, entity declarations and external entities.

    Raises:
        JUnitFormatError: the file cannot be read, is not well-formed, or declares a DTD or an
            entity.
    """
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        data = path.read_bytes()
        # One call: expat fed in chunks rescans a huge attribute at each one (quadratic).
        parser.Parse(data, True)
    except OSError as exc:
        raise JUnitFormatError(f"cannot read {path}: {exc.strerror}", slug="junit-read") from None
    except _Refused as exc:
        raise JUnitFormatError(
            f"{path} {exc} at line {parser.CurrentLineNumber}: qbench refuses DTDs and entities "
            "in JUnit XML (entity expansion and external entities are attacks); remove them",
            slug="junit-dtd",
        ) from None
    except expat.ExpatError as exc:
        reason = expat.errors.messages[exc.code]
        raise JUnitFormatError(
            f"{path} is not well-formed XML: {reason} at line {exc.lineno}, "
            f"column {exc.offset + 1}",
            slug="junit-invalid",
        ) from None
    return builder.close()


# --- files into a report ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    tool: str
    limits: Limits
    redact: Redactor


@dataclass
class FileRead:
    """What one file of test results holds."""

    tool: str
    results: list[TestResult]
    started: datetime
    completed: datetime
    duration: float
    extra: dict[str, str]
    notes: list[Diagnostic]


def read_junit(
    paths: Sequence[Path],
    *,
    tool: str | None = None,
    limits: Limits | None = None,
    command: list[str] | None = None,
) -> TestReport:
    """Read JUnit XML files (one run, e.g. Surefire's file per class) into one report.

    Args:
        paths: The XML files; a directory stands for its ``*.xml`` files.
        tool: The runner's name for ``run.tool``; detected from each file when ``None`` (the
            detected runner decides how the XML is read either way).
        limits: Caps on captured output and stack traces.
        command: Recorded as the run's command. Default: the ``qbench ingest-junit`` command.

    Raises:
        JUnitFormatError: a file cannot be read, is not JUnit XML, or declares a DTD or entity.
    """
    xml_files = list(iter_junit_files([Path(p) for p in paths]))
    if not xml_files:
        given = ", ".join(map(str, paths)) or "nothing"
        raise JUnitFormatError(f"no JUnit XML file in {given}", slug="junit-read")
    redact = Redactor(os.environ)
    files = [_read_file(path, tool, limits or Limits(), redact) for path in xml_files]
    return assemble_report(files, command or ["qbench", "ingest-junit", *map(str, paths)])


def assemble_report(files: Sequence[FileRead], command: list[str]) -> TestReport:
    """One report of the files read (one run): their results, summed duration, the earliest
    start and the latest end, one runner name per runner (``a+b``); exit status 1 when a test
    failed or errored. Shared by the readers of other runners' files (JUnit, TRX, NUnit)."""
    results = [r for f in files for r in f.results]
    duration = round(sum(f.duration for f in files), 6)
    summary = ReportSummary.model_validate(aggregate(results, slowest=0).summary(duration))
    extra: dict[str, str] = {}
    for f in files:
        extra = {**f.extra, **extra}
    run = RunMeta(
        run_id=new_run_id(),
        tool="+".join(dict.fromkeys(f.tool for f in files)),
        started_at=min(f.started for f in files),
        completed_at=max(f.completed for f in files),
        exit_code=1 if summary.failed + summary.errors else 0,
        cwd=os.getcwd(),
        command=command,
    )
    return TestReport(
        meta=ReportMeta(qbench_version=__version__, created_at=datetime.now(timezone.utc)),
        run=run,
        environment=Environment(
            python="",
            implementation="",
            platform="",
            pytest_version="",
            qbench_version=__version__,
            extra=extra,
        ),
        summary=summary,
        results=results,
        warnings=[n for f in files for n in f.notes],
    )


def _read_file(path: Path, tool: str | None, limits: Limits, redact: Redactor) -> FileRead:
    root = parse_xml(path)
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitFormatError(
            f"{path} is not JUnit XML: its root element is <{root.tag}>, not <testsuites> or "
            "<testsuite>",
            slug="junit-invalid",
        )
    suites = list(root.iter("testsuite"))  # nested suites too, each with its own test cases
    # The detected runner decides how to read the XML; ``tool`` only names it.
    ctx = _Context(detect_tool(root, suites), limits, redact)
    results: list[TestResult] = []
    cases = 0
    for suite in suites:
        name = suite.get("name") or ""
        found = [_case_result(case, name, ctx) for case in suite.findall("testcase")]
        cases += len(found)
        results.extend(fold_pytest_teardowns(found) if ctx.tool == "pytest" else found)
    duration = _file_duration(root) or round(sum(r.duration for r in results), 6)
    started, completed = _file_times(path, suites, duration)
    return FileRead(
        tool=tool or ctx.tool,
        results=results,
        started=started,
        completed=completed,
        duration=duration,
        extra=_suite_extra(suites, redact),
        notes=_count_notes(path, root, cases),
    )


def detect_tool(root: ET.Element, suites: Sequence[ET.Element]) -> str:
    """The runner that wrote the XML, from the names and properties it leaves; ``junit`` when
    unknown."""
    names = {root.get("name") or ""} | {s.get("name") or "" for s in suites}
    properties = {p.get("name") or "" for s in suites for p in _suite_properties(s)}
    schema = root.get("xsi:noNamespaceSchemaLocation") or ""
    if "pytest tests" in names or (root.tag == "testsuites" and "pytest" in names):
        return "pytest"
    if "vitest tests" in names:
        return "vitest"
    if "jest tests" in names:
        return "jest"
    if "go.version" in properties:
        return "go"
    if "surefire" in schema or any(p.startswith("surefire.") for p in properties):
        return "maven-surefire"
    if any(n.endswith(".dll") for n in names):
        return "dotnet"
    return "junit"


def _suite_properties(suite: ET.Element) -> list[ET.Element]:
    properties = suite.find("properties")
    return [] if properties is None else properties.findall("property")


def _suite_extra(suites: Sequence[ET.Element], redact: Redactor) -> dict[str, str]:
    """Host name and version properties (``go.version``, ``java.version``...), no secrets."""
    extra: dict[str, str] = {}
    for suite in suites:
        if suite.get("hostname"):
            extra.setdefault("hostname", redact(suite.get("hostname") or "")[:200])
        for prop in _suite_properties(suite):
            name = prop.get("name") or ""
            if ENVIRONMENT_PROPERTY.search(name) and not is_secret_name(name):
                extra.setdefault(name, redact(_property_value(prop))[:200])
    return extra


def _file_duration(root: ET.Element) -> float:
    if root.get("time") is not None:
        return _seconds(root.get("time"))
    return round(sum(_seconds(s.get("time")) for s in root if s.tag == "testsuite"), 6)


def _file_times(
    path: Path, suites: Sequence[ET.Element], duration: float
) -> tuple[datetime, datetime]:
    """When the file's suites started and ended; without timestamps, the file's modification
    time is taken as the end."""
    spans = [
        (moment, moment + timedelta(seconds=_seconds(suite.get("time"))))
        for suite in suites
        if (moment := parse_timestamp(suite.get("timestamp"))) is not None
    ]
    if spans:
        return min(s for s, _ in spans), max(e for _, e in spans)
    end = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return end - timedelta(seconds=duration), end


def _count_notes(path: Path, root: ET.Element, cases: int) -> list[Diagnostic]:
    declared = _declared_tests(root)
    if declared is None or declared == cases:
        return []
    return [
        Diagnostic(
            tool="qbench",
            severity="warning",
            code="junit-count",
            message=f"{path.name} declares {declared} tests but holds {cases} <testcase> "
            "elements; the report counts the test cases",
            file=str(path),
        )
    ]


def _declared_tests(root: ET.Element) -> int | None:
    if root.get("tests") is not None:
        return _int(root.get("tests"))
    counts = [_int(s.get("tests")) for s in root if s.tag == "testsuite"]
    if not counts or any(c is None for c in counts):
        return None
    return sum(c for c in counts if c is not None)


# --- one test case ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Identity:
    nodeid: str
    file: str
    test_name: str
    line: int | None
    classname: str


@dataclass
class _Verdict:
    outcome: Outcome
    counted: list[str]
    failure: Failure | None = None
    teardown: Failure | None = None
    reason: str | None = None
    attempts: list[Attempt] = field(default_factory=list)


def _case_result(case: ET.Element, suite_name: str, ctx: _Context) -> TestResult:
    ident = identify(case, suite_name, ctx.tool)
    verdict = _verdict(case, ident, ctx)
    duration = _seconds(case.get("time"))
    return TestResult(
        nodeid=ident.nodeid,
        test_name=ident.test_name,
        file=ident.file,
        line=ident.line,
        outcome=verdict.outcome,
        duration=duration,
        durations=PhaseDurations(call=duration),
        failure=verdict.failure,
        teardown_failure=verdict.teardown,
        reason=verdict.reason,
        captured=_captured(case, ctx),
        user_properties=_properties(case, ctx),
        reruns=len(verdict.attempts),
        attempts=verdict.attempts,
        flaky=bool(verdict.attempts) and verdict.outcome == "passed",
        counted_as=["rerun"] * len(verdict.attempts) + verdict.counted,
    )


def identify(case: ET.Element, suite_name: str, tool: str) -> _Identity:
    """Node id, file, name and line of a ``<testcase>``: ``<file or classname>::<name>``.

    pytest's own XML gets pytest's node ids back (``tests/test_x.py::TestK::test_p[1]``).
    """
    name = case.get("name") or "(unnamed)"
    classname = case.get("classname") or ""
    file_attr = (case.get("file") or "").replace("\\", "/")
    line = _int(case.get("line"))
    if tool == "pytest":
        return _pytest_identity(name, classname, file_attr, line)
    prefix = classname if classname and classname != name else (file_attr or suite_name)
    # JunitXml.TestLogger's file attribute is the test assembly (.dll), not a source file.
    file = (file_attr if tool != "dotnet" else "") or prefix or name
    nodeid = f"{prefix}::{name}" if prefix else name
    return _Identity(nodeid, file, name, line, classname)


def _pytest_identity(name: str, classname: str, file_attr: str, line: int | None) -> _Identity:
    parts = classname.split(".") if classname else []
    if file_attr:
        module = file_attr
        classes = parts[len(module.removesuffix(".py").split("/")) :]
    else:  # xunit2 has no file: the trailing capitalised parts are classes
        cut = len(parts)
        while cut > 1 and parts[cut - 1][:1].isupper():
            cut -= 1
        module, classes = "/".join(parts[:cut]) + ".py", parts[cut:]
    if not parts and not file_attr:
        return _Identity(name, name, name, None, classname)
    nodeid = "::".join([module, *classes, name])
    # junitxml writes pytest's 0-based line number.
    return _Identity(nodeid, module, ".".join([*classes, name]), _plus_one(line), classname)


def _plus_one(line: int | None) -> int | None:
    return None if line is None else line + 1


def _verdict(case: ET.Element, ident: _Identity, ctx: _Context) -> _Verdict:
    failures = case.findall("failure")
    errors = case.findall("error")
    if failures or errors:
        return _failed(case, failures, errors, ident, ctx)
    skipped = case.find("skipped")
    if skipped is not None:
        outcome: Outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        reason = skipped.get("message") or first_line(skipped.text or "")
        return _Verdict(outcome, [outcome], reason=ctx.redact(reason) if reason else None)
    flaky = [c for c in case if c.tag in ("flakyFailure", "flakyError")]
    return _Verdict("passed", ["passed"], attempts=[_attempt(c, ident, ctx) for c in flaky])


def _failed(
    case: ET.Element,
    failures: list[ET.Element],
    errors: list[ET.Element],
    ident: _Identity,
    ctx: _Context,
) -> _Verdict:
    outcome: Outcome = "failed" if failures else "error"
    verdict = _Verdict(outcome, [outcome])
    verdict.failure = _failure((failures or errors)[0], ident, ctx)
    if failures and errors:  # a failed test whose teardown errored: pytest counts both
        verdict.teardown = _failure(errors[0], ident, ctx)
        verdict.counted.append("error")
    reruns = [c for c in case if c.tag in ("rerunFailure", "rerunError")]
    if reruns:  # Surefire: <failure> is the first run, each <rerunFailure> a later one
        first = Attempt(outcome=_attempt_outcome(outcome), duration=0.0, failure=verdict.failure)
        verdict.attempts = [first] + [_attempt(c, ident, ctx) for c in reruns[:-1]]
        verdict.failure = _failure(reruns[-1], ident, ctx)
    return verdict


def _attempt_outcome(outcome: Outcome) -> Literal["failed", "error"]:
    return "error" if outcome == "error" else "failed"


def _attempt(element: ET.Element, ident: _Identity, ctx: _Context) -> Attempt:
    outcome: Literal["failed", "error"] = "error" if element.tag.endswith("Error") else "failed"
    return Attempt(
        outcome=outcome,
        duration=_seconds(element.get("time")),
        failure=_failure(element, ident, ctx),
    )


def fold_pytest_teardowns(results: list[TestResult]) -> list[TestResult]:
    """pytest's junitxml writes a teardown error after a failure as a second ``<testcase>``;
    fold it back into the failed test, counted ``failed`` and ``error`` as pytest counts it."""
    folded: list[TestResult] = []
    for result in results:
        previous = folded[-1] if folded else None
        if (
            previous is not None
            and previous.nodeid == result.nodeid
            and previous.outcome == "failed"
            and previous.teardown_failure is None
            and result.outcome == "error"
            and result.failure is not None
            and result.failure.phase == "teardown"
        ):
            folded[-1] = previous.model_copy(
                update={
                    "teardown_failure": result.failure,
                    "counted_as": [*previous.counted_as, "error"],
                }
            )
            continue
        folded.append(result)
    return folded


# --- failures -----------------------------------------------------------------------------------


def _failure(element: ET.Element, ident: _Identity, ctx: _Context) -> Failure:
    """A ``<failure>``/``<error>`` (or Surefire's rerun and flaky ones) as a ``Failure``."""
    is_error = element.tag.lower().endswith("error")
    message = textwrap.dedent(_clean(element.get("message") or ""))
    trace = element.find("stackTrace")
    text = _clean((trace.text if trace is not None else element.text) or "")
    if ctx.tool == "pytest":
        return _pytest_failure(message, text, is_error, ctx)
    error_type = error_type_of(element.get("type"), message, text, is_error)
    if not message or message == error_type:
        message = _message_from(text, error_type) or message
    file, line = find_location(text, [ident.classname, ident.file])
    return _make_failure(error_type, message, "call", file, line, text or message, ctx)


def _pytest_failure(message: str, text: str, is_error: bool, ctx: _Context) -> Failure:
    phase: Phase = "call"
    error_type: str | None = None
    if match := PYTEST_PHASE_ERROR.match(message):
        phase = "setup" if match["phase"] == "setup" else "teardown"
        message = match["inner"]
    elif message == "collection failure":
        phase = "collect"
    if message.startswith("[XPASS(strict)]"):
        error_type, message = "XPASS(strict)", message.removeprefix("[XPASS(strict)]").strip()
    last = text.splitlines()[-1] if text else ""
    file: str | None = None
    line: int | None = None
    if crash := PYTEST_CRASH_LINE.match(last):
        file, line = crash["file"], int(crash["line"])
        error_type = error_type or crash["type"]
    error_type = error_type or ("Error" if is_error else "Failed")
    message = message.removeprefix(f"{error_type}: ")
    return _make_failure(error_type, message, phase, file, line, text or message, ctx)


def _make_failure(
    error_type: str,
    message: str,
    phase: Phase,
    file: str | None,
    line: int | None,
    trace: str,
    ctx: _Context,
) -> Failure:
    return Failure(
        error_type=ctx.redact(error_type)[:200],
        error_message=bound_text(ctx.redact(message), MAX_MESSAGE, keep="head"),
        phase=phase,
        file=file,
        line=line,
        stack_trace=bound_text(
            ctx.redact(trace), ctx.limits.max_trace, keep="tail", option="--max-trace"
        ),
    )


def error_type_of(type_attr: str | None, message: str, text: str, is_error: bool) -> str:
    """The exception type: the ``type`` attribute when it names one, else the ``Name:`` the
    message or trace starts with, else ``Failed`` (a failure) or ``Error`` (an error)."""
    if type_attr and type_attr not in ("failure", "error", "skipped"):
        return type_attr
    for candidate in (first_line(text), first_line(message)):
        if match := EXCEPTION_NAME.match(candidate):
            return match.group(1)
    return "Error" if is_error else "Failed"


def _message_from(text: str, error_type: str) -> str:
    return first_line(text, limit=MAX_MESSAGE).removeprefix(f"{error_type}: ")


def find_location(text: str, prefer: Sequence[str]) -> tuple[str | None, int | None]:
    """The first ``file:line`` of a trace outside libraries, preferring a line that mentions one
    of ``prefer`` (the test's class or file: Java and .NET traces start inside the framework)."""
    fallback: tuple[str | None, int | None] = (None, None)
    wanted = [p for p in prefer if p]
    for text_line in text.splitlines()[:LOCATION_LINES]:
        for pattern in (DOTNET_LOCATION, SOURCE_LOCATION):
            match = pattern.search(text_line)
            if match is None:
                continue
            file = match["file"]
            if file.startswith("//") or any(lib in file for lib in LIBRARY_PATH):
                continue
            found = (file, int(match["line"]))
            if any(p in text_line for p in wanted):
                return found
            if fallback == (None, None):
                fallback = found
            break
    return fallback


# --- output and properties ----------------------------------------------------------------------


def _captured(case: ET.Element, ctx: _Context) -> Captured | None:
    out = _clean(_child_text(case, "system-out"))
    err = _clean(_child_text(case, "system-err"))
    if not out and not err:
        return None
    cap = ctx.limits.max_output
    return Captured(
        stdout=bound_text(ctx.redact(out), cap, option="--max-output"),
        stderr=bound_text(ctx.redact(err), cap, option="--max-output"),
    )


def _properties(case: ET.Element, ctx: _Context) -> list[tuple[str, JsonValue]]:
    properties = case.find("properties")
    if properties is None:
        return []
    return [
        (
            ctx.redact(prop.get("name") or ""),
            bound_text(ctx.redact(_property_value(prop)), MAX_PROPERTY, keep="head"),
        )
        for prop in properties.findall("property")
    ]


def _property_value(prop: ET.Element) -> str:
    value = prop.get("value")
    return value if value is not None else (prop.text or "")


def _child_text(element: ET.Element, tag: str) -> str:
    return "".join(child.text or "" for child in element.findall(tag))


# --- small parsers ------------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Text without Windows line ends, leading blank lines or trailing blanks."""
    return text.replace("\r\n", "\n").lstrip("\n").rstrip()


def _seconds(value: str | None) -> float:
    """A duration attribute in seconds (``1,234.5`` too); 0 when missing or bad."""
    try:
        seconds = float((value or "0").replace(",", ""))
    except ValueError:
        return 0.0
    return round(seconds, 6) if math.isfinite(seconds) and seconds > 0 else 0.0


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def parse_timestamp(value: str | None) -> datetime | None:
    """An ISO 8601 timestamp as the runners write it (``Z``, offsets, any fraction, no zone =
    UTC, JunitXml.TestLogger's ``2019-09-01T 23:56:54Z``), in UTC; ``None`` when unreadable."""
    if not value:
        return None
    text = re.sub(r"^(\d{4}-\d\d-\d\d)[T ]\s*", r"\1T", value.strip())
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = re.sub(r"\.(\d+)", lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def iter_junit_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The XML files among ``paths``; a directory gives its ``*.xml`` files, sorted."""
    for path in paths:
        if path.is_dir():
            yield from sorted(path.glob("*.xml"))
        else:
            yield path
