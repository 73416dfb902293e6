"""pytest reports -> records (plain JSON data in the shape of the models, see ``shapes``).

Two halves. Where the test runs (the only process without xdist, a worker with it),
``item_facts`` and ``failure_facts`` turn the item and the exception into plain JSON-safe dicts
that travel on the pytest report (in one attribute, ``report.qbench_facts``), so the
controller sees exactly what a serial run sees. Where reports arrive, ``TestAccumulator`` folds
one test's reports (setup, call, teardown, reruns, subtests) into a ``TestResult`` record.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import math
import os
import re
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from types import CodeType
from types import MappingProxyType
from types import TracebackType
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import cast

import pluggy
import pytest
from pytest import TestReport

from pytest_qbench.core.limits import MAX_MESSAGE
from pytest_qbench.core.limits import Limits
from pytest_qbench.core.numbers import round_micro
from pytest_qbench.core.numbers import round_micros
from pytest_qbench.core.redact import Redactor
from pytest_qbench.core.repeat import REPEAT_FIXTURE
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import first_line
from pytest_qbench.core.types import Outcome
from pytest_qbench.report.casemeta import CaseMarkerError
from pytest_qbench.report.casemeta import build_metadata
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import compact
from pytest_qbench.report.shapes import expand
from pytest_qbench.report.shapes import iso_epoch
from pytest_qbench.report.shapes import new
from pytest_qbench.report.store import RESULT


if TYPE_CHECKING:
    from pytest_qbench.plugin.doctest_failure import DoctestFailure
    from pytest_qbench.report.records import AttachmentRecord
    from pytest_qbench.report.records import AttemptRecord
    from pytest_qbench.report.records import CapturedRecord
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import FailureRecord
    from pytest_qbench.report.records import SubtestResultRecord
    from pytest_qbench.report.records import TestResultRecord


FACTS_ATTR = "qbench_facts"
"""The one attribute qbench puts on a pytest report: a dict of its facts by kind (`ITEM_ATTR`,
`FAILURE_ATTR`...), JSON-safe, taken off once the report is read.

One name for every kind: CPython keeps the attributes of a class's instances in a table of
names they share while the names are few and come early in the process (the first setup
report sets this one); a name first set late (a failure's, at the first failing test) gives
that report a table of its own, 664 bytes more on CPython 3.11, which pytest's terminal
reporter keeps to the end of the run: 33 bytes a test at 5 % failing (issue 28)."""
ITEM_ATTR = "item"
FAILURE_ATTR = "failure"
AGENT_ATTR = "agent"
ATTACH_ATTR = "attachments"
TRIES_ATTR = "new_test_tries"
"""On a new test's teardown report: the outcomes of its extra runs (``plugin/new_tests.py``)."""
AGENT_FIELDS = (
    "agent_response",
    "test_input",
    "ground_truth",
    "tool_calls",
    "expected_tools",
    "tools_matched",
)
CASE_MARKER = "qbench_case"
MAX_FRAMES = 50
MAX_SUB_EXCEPTIONS = 5
"""Sub-exceptions of an exception group shown in its trace (per group; the others counted)."""


@functools.cache
def _internal_dirs() -> tuple[str, ...]:
    """pytest's and pluggy's directories, whose frames a trace leaves out (resolved at the
    first failure: a green run never resolves them)."""
    pytest_dir = Path(pytest.__file__).resolve().parent
    return (
        str(pytest_dir),
        str(pytest_dir.parent / "_pytest"),
        str(Path(pluggy.__file__).resolve().parent),
    )


# Hypothesis' note on the exception: "Falsifying example:" before 6.1xx, "Failing test case:" since.
_HYPOTHESIS_NOTES = ("Falsifying", "Failing test case", "Failing explicit example")


def in_installed_package(path: str) -> bool:
    """Whether ``path`` (a test's or a frame's file, either separator) is in an installed
    package's directory (``site-packages``, ``dist-packages``): a test whose file is there was
    made by a plugin (pytest-bdd's ``scenarios()``), and a frame there is not the user's. The
    one check, made once a test (``TestAccumulator``): two substring searches, no generator."""
    return "site-packages" in path or "dist-packages" in path


# --- where the test runs --------------------------------------------------------------------


FORKED: list[bool] = []
"""Not empty in a child forked from the process the run started in (pytest-forked's test
processes): its reports' facts must travel on them (`FACTS_ATTR`). Read as it is where each
report is made (``bool(FORKED)``), without a function's call a phase."""
if hasattr(os, "register_at_fork"):  # not on Windows: no fork there
    # a bound method of the list, not a function of this module: the interpreter keeps what
    # it calls to its very end, and a function would keep this module's globals (and all they
    # reach) alive through the collections at the interpreter's shutdown
    os.register_at_fork(after_in_child=functools.partial(FORKED.append, True))


def put_fact(report: pytest.TestReport, kind: str, value: Any) -> None:
    """Put one kind of fact on ``report`` (`FACTS_ATTR`), for where reports arrive."""
    facts = report.__dict__.get(FACTS_ATTR)
    if facts is None:
        setattr(report, FACTS_ATTR, {kind: value})
    else:
        facts[kind] = value


NO_FACTS: Mapping[str, Any] = MappingProxyType({})
"""The facts of a report without any: one empty mapping nobody can change."""


def report_facts(report: pytest.TestReport) -> Mapping[str, Any]:
    """The facts on ``report`` by kind (none on a subtest's report, or another plugin's)."""
    facts = getattr(report, FACTS_ATTR, None)
    return facts if isinstance(facts, dict) else NO_FACTS


def joined_facts(beside: Any, on_report: Any) -> Mapping[str, Any]:
    """A report's facts by kind: those handed beside it (this process made it) and those it
    carries (an xdist worker's, a forked child's, a plugin's put on it), either a dict."""
    if not isinstance(on_report, dict):
        return beside if isinstance(beside, dict) else NO_FACTS
    if isinstance(beside, dict):
        return {**beside, **on_report}
    return on_report


def to_json_safe(value: Any) -> Any:
    """Return ``value`` if it is plain JSON data (and so crosses xdist's transport), else its repr."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [to_json_safe(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: to_json_safe(v) for k, v in value.items()}
    return safe_repr(value)


def safe_repr(value: object) -> str:
    """``repr(value)``, or a placeholder when ``__repr__`` itself raises."""
    try:
        return repr(value)
    except Exception as exc:  # a user's broken __repr__ must not break the report
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


STR_FAILED = "<exception str() failed>"
"""What the traceback module, and so pytest, prints for an exception whose ``__str__`` raises."""


def safe_str(value: object) -> str:
    """``str(value)``; when ``__str__`` raises, an exception's is `STR_FAILED` (as pytest
    prints it), another value's `safe_repr`."""
    try:
        return str(value)
    except Exception:
        return STR_FAILED if isinstance(value, BaseException) else safe_repr(value)


def sanitize_user_properties(properties: Iterable[Any]) -> list[tuple[str, Any]]:
    """Make ``user_properties`` plain data: names become strings, other values their repr."""
    clean: list[tuple[str, Any]] = []
    for entry in properties:
        try:
            name, value = entry
        except (TypeError, ValueError):
            name, value = "<malformed>", entry
        clean.append((safe_str(name), to_json_safe(value)))
    return clean


def outcome_of_phases(
    phases: dict[str, str], wasxfail: bool, subtest_failed: bool = False
) -> Outcome:
    """A test's outcome from its phases' outcomes (``setup``, ``call``, ``teardown``), as
    pytest decides it; ``wasxfail``: a phase's report was an expected failure. Failed when a
    subtest failed (``subtest_failed``): pytest 9 passes a unittest ``TestCase`` method whose
    ``subTest`` failed, yet counts each failed subtest; the reports list the test."""
    setup = phases.get("setup")
    call = phases.get("call")
    outcome: Outcome
    if setup == "failed":
        return "error"
    if setup == "skipped":
        outcome = "xfailed" if wasxfail else "skipped"
    elif call == "failed":
        outcome = "failed"
    elif call == "skipped":
        outcome = "xfailed" if wasxfail else "skipped"
    elif call == "passed":
        outcome = "xpassed" if wasxfail else "passed"
    else:
        outcome = "passed"
    if phases.get("teardown") == "failed" and outcome != "failed":
        return "error"
    return "failed" if outcome == "passed" and subtest_failed else outcome


def item_facts(item: pytest.Item, worker: str | None) -> dict[str, Any]:
    """What the report needs to know about the test item, as plain data."""
    markers: list[str] = []
    case = None  # the closest one: the walk starts at the item (one walk up, not two)
    # What item.iter_markers() yields, from the item up to the session, without its three
    # nested generators (a resumption per node and per marker, for every test).
    node: pytest.Item | pytest.Collector | pytest.Session | None = item
    while node is not None:
        for mark in node.own_markers:
            name = mark.name
            if name not in markers:
                markers.append(name)
                if name == CASE_MARKER:
                    case = mark
        node = node.parent
    facts: dict[str, Any] = {"markers": markers}
    if case is not None:
        facts["case"] = to_json_safe(dict(case.kwargs))
        if case.args:
            facts["case_args"] = to_json_safe(list(case.args))
    obj = getattr(item, "obj", None)  # the test function's docstring, made plain
    doc = getattr(obj, "__doc__", None) if obj is not None else None
    if isinstance(doc, str) and doc.strip():
        facts["doc"] = inspect.cleandoc(doc)
    if worker:
        facts["worker"] = worker
    # `repeat_index` without its call: a case-file item's repeat, else its parameter
    repeat = getattr(item, "repeat", None)
    if repeat is None:
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            repeat = callspec.params.get(REPEAT_FIXTURE)
    if isinstance(repeat, int):
        facts["repeat"] = repeat
    return facts


def failure_facts(
    excinfo: pytest.ExceptionInfo[BaseException],
    rootpath: Path,
    test_file: str,
    limits: Limits,
    shown: object = None,
) -> dict[str, Any]:
    """Describe an exception as plain data: type, message, frames, user frame, Hypothesis example.

    ``shown`` is the report's ``longrepr``: text when the item's ``repr_failure`` returned its
    own (a YAML or other non-Python test, as in pytest's docs), which is then the message, as
    pytest shows it; the exception's ``str`` may say nothing (``(<YamlItem x>, 'a', 'b')``)."""
    from pytest_qbench.plugin.doctest_failure import doctest_failure  # a failure's, not a run's

    exc = excinfo.value
    doctest = doctest_failure(exc, rootpath)
    if doctest is not None:
        return _doctest_facts(doctest, rootpath, limits)
    frames, sources = _from_test(*_frames(excinfo, rootpath), test_file)
    if isinstance(shown, str) and shown.strip():
        said, notes = shown.strip(), []
    else:
        said, notes = safe_str(exc), _notes(exc)
    text = "\n".join([said, *notes] if said else notes)
    message = bound_text(text, limits.max_message, keep="head")
    leaf = _single_leaf(exc)
    facts: dict[str, Any] = {
        "error_type": type(exc).__qualname__,
        "error_message": message,
        "frames": frames[-MAX_FRAMES:],
        "stack_trace": format_trace(frames, sources, exc, message, bare=not said)
        + "".join(_sub_exception_lines(exc, rootpath, "")),
    }
    if leaf is not None:  # named as pytest's short summary names it; the group is in the trace
        named = f"{safe_str(leaf)} [single exception in {type(exc).__name__}]".lstrip()
        facts["error_type"] = type(leaf).__qualname__
        facts["error_message"] = bound_text(named, limits.max_message, keep="head")
    user = _user_frame(frames, test_file)
    if user is not None:
        facts["file"], facts["line"] = user["path"], user["line"]
    example = _falsifying_example(exc)
    if example:
        facts["falsifying_example"] = example
    return facts


def _from_test(
    frames: list[dict[str, Any]], sources: list[str], test_file: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The frames from the first one in the test's file on, as pytest cuts its report there:
    a plugin's runner (pytest-asyncio, anyio's) calls the test function from frames of its own.
    All of them when none is in the test's file (a fixture in a conftest failed)."""
    test_file = test_file.replace("\\", "/")
    for index, frame in enumerate(frames):
        if frame["path"] == test_file:
            return frames[index:], sources[index:]
    return frames, sources


def _single_leaf(exc: BaseException) -> BaseException | None:
    """The one exception at the bottom of a group holding one (nested groups of one too), which
    pytest names instead of the group; ``None`` for another exception."""
    subs = getattr(exc, "exceptions", None)
    if not isinstance(subs, tuple) or len(subs) != 1 or not isinstance(subs[0], BaseException):
        return None
    return (
        _single_leaf(subs[0])
        if isinstance(getattr(subs[0], "exceptions", None), tuple)
        else subs[0]
    )


def _doctest_facts(found: DoctestFailure, rootpath: Path, limits: Limits) -> dict[str, Any]:
    """A failed doctest's facts at its failing example: what the example raised, with its
    frames below the example (not doctest.py's), or doctest's ``Expected: ... Got: ...``."""
    frames: list[dict[str, Any]] = [
        {"path": found.file, "line": found.line or 0, "function": found.name}
    ]
    sources = [f">>> {found.source}"]
    exc = found.exception
    message = found.difference
    if not message and exc.__traceback__ is not None:  # the example raised
        below, below_sources = _frames(pytest.ExceptionInfo.from_exception(exc), rootpath)
        doctest_file = getattr(sys.modules.get("doctest"), "__file__", None)
        for frame, source in zip(below, below_sources, strict=True):
            if frame["path"] != doctest_file and not frame["path"].startswith("<doctest "):
                frames.append(frame)
                sources.append(source)
    message = message or safe_str(exc)
    message = bound_text(message, limits.max_message, keep="head")
    facts: dict[str, Any] = {
        "error_type": type(exc).__qualname__,
        "error_message": message,
        "frames": frames[-MAX_FRAMES:],
        "stack_trace": format_trace(frames, sources, exc, message) + _later_examples(found),
    }
    if found.line is not None:
        facts["file"], facts["line"] = found.file, found.line
    return facts


def _later_examples(found: DoctestFailure) -> str:
    """The doctest's other failing examples (``--doctest-continue-on-failure``), after the
    first one's trace; "" when there are none."""
    if not found.others:
        return ""
    listed = "".join(f"\n  {where}" for where in found.others)
    return f"\n\n+ {plural(len(found.others), 'more failing example')}:{listed}"


def _sub_exception_lines(exc: BaseException, rootpath: Path, number: str) -> list[str]:
    """An exception group's sub-exceptions (the first ``MAX_SUB_EXCEPTIONS`` of each group,
    nested groups' too), each numbered, with its frames and its ``E   `` lines, as pytest shows
    them below the group; none for another exception."""
    subs = getattr(exc, "exceptions", None)
    if not isinstance(subs, tuple) or not all(isinstance(e, BaseException) for e in subs):
        return []
    lines = []
    for index, sub in enumerate(subs[:MAX_SUB_EXCEPTIONS], 1):
        label = f"{number}{index}"
        frames, sources = _frames_of(sub.__traceback__, rootpath)
        lines.append(f"\n\n+ sub-exception {label} of {len(subs)}:")
        for frame, source in zip(frames[-MAX_FRAMES:], sources[-MAX_FRAMES:], strict=True):
            lines.append(f"\n{frame['path']}:{frame['line']}: in {frame['function']}")
            if source:
                lines.append(f"\n    {source}")
        lines.append("\n" + _exception_lines(sub, bound_text(safe_str(sub), MAX_MESSAGE)))
        lines.extend(_sub_exception_lines(sub, rootpath, f"{label}."))
    if len(subs) > MAX_SUB_EXCEPTIONS:
        lines.append(f"\n\n+ {plural(len(subs) - MAX_SUB_EXCEPTIONS, 'more sub-exception')}")
    return lines


def _frames(
    excinfo: pytest.ExceptionInfo[BaseException], rootpath: Path
) -> tuple[list[dict[str, Any]], list[str]]:
    """The traceback's frames without pytest's, pluggy's or ``__tracebackhide__`` ones, and the
    source line of each.

    Walks the raw traceback: pytest's ``TracebackEntry`` stats every file, which costs more than
    everything else qbench does for a failing test.
    """
    return _frames_of(excinfo.tb, rootpath)


def _frames_of(tb: TracebackType | None, rootpath: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """``_frames`` of a raw traceback."""
    frames: list[dict[str, Any]] = []
    sources: list[str] = []
    root = str(rootpath)
    internal = _internal_dirs()
    # CPython 3.11 works tb_lineno out of the code's line table at each read (about 4 k
    # instructions): read once a frame, and once for the frames of one code at one
    # instruction (a recursion's frames, each called from the same line; issue 28), whose
    # source line and shown path are then the same too
    seen: dict[tuple[CodeType, int], tuple[str, int, str]] = {}
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        path = code.co_filename
        if not path.startswith(internal) and not _is_hidden(frame.f_locals, frame.f_globals):
            at = (code, tb.tb_lasti)
            known = seen.get(at)
            if known is None:
                lineno = tb.tb_lineno
                source = linecache.getline(path, lineno, frame.f_globals).strip()
                if path.startswith(root) and path[len(root) : len(root) + 1] in ("/", "\\"):
                    path = path[len(root) + 1 :].replace("\\", "/")
                known = seen[at] = (path, lineno, source)
            path, lineno, source = known
            sources.append(source)
            frames.append({"path": path, "line": lineno, "function": code.co_name})
        tb = tb.tb_next
    return frames, sources


def format_trace(
    frames: list[dict[str, Any]],
    sources: list[str],
    exc: BaseException,
    message: str,
    *,
    bare: bool = False,
) -> str:
    """A compact traceback in the shape of pytest's ``--tb=short``: each frame's location and
    source line, then the exception (and what caused it), every line of it prefixed ``E   ``;
    ``bare``: the exception says nothing, and ``message`` holds only its notes.

    Cheaper than rendering pytest's own report again, and shorter to read for people and models.
    """
    lines = []
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None:  # one level, as a reminder: its own frames are rarely the point
        lines.append(_exception_lines(cause, bound_text(safe_str(cause), MAX_MESSAGE)))
        lines.append(
            "\nThe above exception was the direct cause of the following exception:\n"
            if exc.__cause__ is not None
            else "\nDuring handling of the above exception, another exception occurred:\n"
        )
    for frame, source in zip(frames[-MAX_FRAMES:], sources[-MAX_FRAMES:], strict=True):
        lines.append(f"{frame['path']}:{frame['line']}: in {frame['function']}")
        if source:
            lines.append(f"    {source}")
    lines.append(_exception_lines(exc, message, bare=bare))
    return "\n".join(lines)


def _exception_lines(exc: BaseException, message: str, *, bare: bool = False) -> str:
    name = exception_name(type(exc))
    text = f"{name}\n{message}" if bare and message else f"{name}: {message}" if message else name
    return "\n".join(f"E   {line}" for line in text.splitlines())


def exception_name(kind: type[BaseException]) -> str:
    """The exception's name as Python's traceback and pytest print it: its module first, but
    for a builtin (``locale.Error``, ``json.decoder.JSONDecodeError``; ``KeyError``; pytest's
    ``Failed``, whose module says ``builtins``)."""
    module = getattr(kind, "__module__", None)
    if module in ("builtins", "__main__"):
        return kind.__qualname__
    return f"{module if isinstance(module, str) else '<unknown>'}.{kind.__qualname__}"


def _is_hidden(f_locals: Any, f_globals: Any) -> bool:
    if f_globals.get("__unittest"):  # unittest's own modules, which pytest leaves out too
        return True
    hide = f_locals.get("__tracebackhide__", f_globals.get("__tracebackhide__", False))
    return bool(hide) and not callable(hide)


def _user_frame(frames: list[dict[str, Any]], test_file: str) -> dict[str, Any] | None:
    """The innermost frame in the user's project (relative path, not a third-party package)."""
    frame: dict[str, Any]
    for frame in reversed(frames):
        path = str(frame["path"])
        if not Path(path).is_absolute() and not in_installed_package(path):
            return frame
    for frame in reversed(frames):
        if frame["path"] == test_file:
            return frame
    return None


def _notes(exc: BaseException) -> list[str]:
    """The exception's notes (``add_note``) that pytest prints under its message, but
    Hypothesis' falsifying example, which the failure keeps apart (`_falsifying_example`)."""
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        return []
    return [n for n in notes if isinstance(n, str) and not n.startswith(_HYPOTHESIS_NOTES)]


def _falsifying_example(exc: BaseException) -> str | None:
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        return None
    found = [n for n in notes if isinstance(n, str) and n.startswith(_HYPOTHESIS_NOTES)]
    return "\n".join(found) or None


# --- where reports arrive -------------------------------------------------------------------


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """The reason of a skip, from pytest's ``(path, line, "Skipped: reason")`` longrepr."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
        return message.removeprefix("Skipped: ")
    return None


def xfail_reason(report: pytest.TestReport) -> str | None:
    """The reason of an xfail or xpass."""
    reason = getattr(report, "wasxfail", None)
    if reason is None:
        return None
    return str(reason).removeprefix("reason: ") or None


def longrepr_text(report: pytest.TestReport | pytest.CollectReport) -> str:
    """pytest's formatted failure, without the ``[gw0] linux -- Python ...`` line xdist adds."""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):
        return str(longrepr[2])
    return safe_str(longrepr)


def build_failure(
    report: pytest.TestReport,
    when: str,
    file: str,
    line: int | None,
    limits: Limits,
    redact: Callable[[str], str],
    facts: Mapping[str, Any] | None = None,
    rootpath: Path | None = None,
) -> FailureRecord:
    """A ``Failure`` record from a failed report: the facts shipped from the test's process when there are
    any (an exception was raised), else what the report itself says (strict xpass, failed subtests,
    a report another plugin's makereport returned before qbench's was called: located by
    pytest's text of its exception, `crash_location`, when ``rootpath`` is given).
    ``file`` and ``line``: the test's, as ``TestAccumulator`` has them (a plugin-made test's
    module, without a line); ``facts``: the report's (`joined_facts`), else those on it.
    """
    found = (report_facts(report) if facts is None else facts).get(FAILURE_ATTR)
    phase: Literal["setup", "call", "teardown"] = "call"
    if when in ("setup", "teardown"):
        phase = cast('Literal["setup", "teardown"]', when)
    if isinstance(found, dict):
        data: dict[str, Any] = dict(found)
        trace = redact(str(data.pop("stack_trace", "")))
        stack = bound_text(trace, limits.max_trace, keep="tail", option="--qbench-max-trace")
        data["error_message"] = redact(str(data.get("error_message", "")))
        if data.get("falsifying_example"):
            data["falsifying_example"] = redact(str(data["falsifying_example"]))
        data.setdefault("file", file)
        data.setdefault("line", line)
        data["frames"] = [new("Frame", **frame) for frame in data.get("frames", [])]
        return new("Failure", **data, phase=phase, stack_trace=stack)
    trace = redact(longrepr_text(report))  # no exception: the report's own text is short
    stack = bound_text(trace, limits.max_trace, keep="tail", option="--qbench-max-trace")
    error_type = "XPASS(strict)" if trace.startswith("[XPASS(strict)]") else "Failed"
    message = trace.removeprefix("[XPASS(strict)]").strip() if error_type != "Failed" else trace
    crash = getattr(report.longrepr, "reprcrash", None) if rootpath is not None else None
    if crash is not None and rootpath is not None:  # pytest's repr of an exception qbench missed
        located = crash_location(report.longrepr, rootpath)
        if located is not None:
            file, line = located
        shown = getattr(crash, "message", None)
        if isinstance(shown, str) and shown.strip():  # pytest's "KeyError: 'deep'"
            named = re.match(r"([A-Za-z_][\w.]*): ", shown)
            if named is not None:
                error_type, shown = named[1], shown[named.end() :]
            message = redact(shown.strip())
    return new(
        "Failure",
        error_type=error_type,
        error_message=bound_text(message, limits.max_message, keep="head"),
        phase=phase,
        file=file,
        line=line,
        stack_trace=stack,
    )


def crash_location(longrepr: object, rootpath: Path) -> tuple[str, int] | None:
    """Where an exception was raised, from pytest's repr of it (``report.longrepr``), for a
    failed report that came without qbench's facts: another plugin's makereport returned it
    before qbench's was called. The innermost entry of its traceback in the user's project,
    as `_user_frame` picks a frame (paths relative to ``rootpath``); ``None`` for a text (a
    strict xpass, a forked child's report)."""
    traceback = getattr(longrepr, "reprtraceback", None)
    entries = getattr(traceback, "reprentries", None) or []
    places = [getattr(entry, "reprfileloc", None) for entry in entries]
    places.append(getattr(longrepr, "reprcrash", None))
    root = str(rootpath)
    for place in reversed(places):
        path = getattr(place, "path", None)
        lineno = getattr(place, "lineno", None)
        if not isinstance(path, str) or not isinstance(lineno, int):
            continue
        full = os.path.normpath(os.path.join(os.getcwd(), path))  # pytest's are from the cwd
        if full.startswith(root) and full[len(root) : len(root) + 1] in ("/", "\\"):
            path = full[len(root) + 1 :].replace("\\", "/")
        if _in_project(path):
            return path, lineno
    return None


def subtest_failure(
    failure: FailureRecord, subtests: Sequence[SubtestResultRecord]
) -> FailureRecord:
    """A test's call failure that is only pytest's "contains 1 failed subtest" (no exception of
    its own, so no frames, at the ``def`` line) as its first failed subtest's failure, pytest's
    words and the subtest on top of the trace: where to look is where the subtest failed."""
    if failure["frames"] or failure["error_type"] != "Failed":
        return failure
    return first_subtest_failure(failure["error_message"], subtests) or failure


def first_subtest_failure(
    words: str, subtests: Sequence[SubtestResultRecord]
) -> FailureRecord | None:
    """The first failed subtest's failure, ``words`` and the subtest on top of its trace
    (``None`` when no subtest failed with a failure)."""
    first = next((s for s in subtests if s["failure"] is not None), None)
    if first is None or first["failure"] is None:
        return None
    shown = first["failure"].copy()
    head = f"{words}; the first, subtest {first['description']}:"
    shown["stack_trace"] = f"{head}\n{shown['stack_trace']}"
    return shown


SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")
"""The class names of a subtest's report (pytest 9's ``subtests``, pytest-subtests)."""
RERUN_UNCOUNTED = ("failed", "subtests passed")
"""The words of an earlier attempt's subtests that pytest-rerunfailures (16.5 and later) takes
out of pytest's line when the test runs again; its skipped and xfailed subtests stay counted
there."""


@functools.cache
def rerun_uncounted() -> tuple[str, ...]:
    """`RERUN_UNCOUNTED` under pytest-rerunfailures 16.5 or later; nothing before it, which
    leaves every attempt's subtests in pytest's line."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    try:
        found = re.match(r"(\d+)\.(\d+)", version("pytest-rerunfailures"))
    except PackageNotFoundError:
        return RERUN_UNCOUNTED
    if found is None or (int(found[1]), int(found[2])) >= (16, 5):
        return RERUN_UNCOUNTED
    return ()


def is_subtest_report(report: pytest.TestReport) -> bool:
    """Whether a report is one subtest's (pytest 9 ``subtests`` fixture, or pytest-subtests)."""
    return hasattr(report, "context") and type(report).__name__ in SUBTEST_REPORTS


class TestAccumulator:
    """Folds one test's reports into a ``TestResult``.

    Holds only the few facts it needs from each report, never the report objects themselves.
    """

    __test__ = False  # not a test class, whatever pytest thinks of the name

    # What most tests never set is read from the class until a report sets it on the test's
    # accumulator: a passing test's then holds 12 attributes of its own, not 23, and three
    # lists and dicts made for it, not nine (issue 28).
    item: Mapping[str, Any] = NO_FACTS
    """The item facts of the setup report (`item_facts`)."""
    attempts: Sequence[AttemptRecord] = ()
    subtests: Sequence[SubtestResultRecord] = ()
    case_error: str | None = None
    _subtest_counts: Sequence[int] = ()
    """Where this attempt's subtests are in ``counted_as``."""
    attachments: Sequence[dict[str, Any]] = ()
    """Attachment records of every attempt, in the order attached."""
    tries: list[Any] | None = None
    """A new test's extra runs' outcomes (``--qbench-new-tests-repeat``)."""
    # this attempt's (`_reset_attempt`)
    failures: Mapping[str, FailureRecord] = NO_FACTS
    reason: str | None = None
    wasxfail = False
    started: float | None = None
    rerun_in_attempt = False
    agent: dict[str, Any] | None = None

    def __init__(
        self,
        report: pytest.TestReport,
        limits: Limits,
        redact: Redactor,
        rootpath: Path | None = None,
    ) -> None:
        self.nodeid = report.nodeid
        self.rootpath = rootpath
        """The run's root directory: a failure without facts of qbench's is located by the
        paths in pytest's text of it (`crash_location`)."""
        path, lineno, domain = report.location
        self.file = file = path.replace("\\", "/")
        # `in_installed_package`, without its call
        if "site-packages" in file or "dist-packages" in file:  # a plugin made the test
            self.file, lineno = report.nodeid.split("::", 1)[0], None  # (pytest-bdd's scenarios())
        self.line = lineno + 1 if lineno is not None else None
        self.test_name = domain
        self.limits = limits
        self.redact = redact
        self.counted_as: list[str] = []
        self.outcome: dict[str, str] = {}
        self.durations: dict[str, float] = {}

    def _reset_attempt(self) -> None:
        self.outcome = {}
        self.durations = {}
        self.failures = NO_FACTS
        self.reason = None
        self.wasxfail = False
        self.started = None
        self.rerun_in_attempt = False
        self.agent = None

    def add(
        self, report: pytest.TestReport, category: str, facts: Mapping[str, Any] | None = None
    ) -> bool:
        """Take one report (``facts``: its facts by kind, `joined_facts`; else those on it);
        return True when the test is finished (its last teardown arrived)."""
        if facts is None:
            facts = report_facts(report)
        kind = type(report)
        if (
            kind is not TestReport
            and kind.__name__ in SUBTEST_REPORTS
            and is_subtest_report(report)
        ):
            if category:
                counts = self._subtest_counts
                if isinstance(counts, list):
                    counts.append(len(self.counted_as))
                else:
                    self._subtest_counts = [len(self.counted_as)]
                self.counted_as.append(category)
            self._add_subtest(report, facts)
            return False
        if category:
            self.counted_as.append(category)
        # xdist reports a crashed worker's test with when="???": the call died, or the teardown
        # after a setup that failed (no call ran; the setup's error stays the test's failure)
        when = report.when
        if when != "setup" and when != "teardown" and when != "call":
            when = "teardown" if "setup" in self.failures else "call"
        if when == "setup":  # a new attempt after a rerun, or the first
            if self.rerun_in_attempt:  # older pytest-rerunfailures logs no teardown for it
                self._close_rerun_attempt()
            elif self.outcome:
                self._reset_attempt()
            item = facts.get(ITEM_ATTR)
            if isinstance(item, dict):
                self.item = item
            self.started = getattr(report, "start", None)
        outcome = str(report.outcome)  # "rerun" too: pytest-rerunfailures' own outcome
        self.outcome[when] = outcome
        self.durations[when] = report.duration
        if facts:  # none, on a passing test's call and teardown
            attached = facts.get(ATTACH_ATTR)
            if isinstance(attached, list):
                self.attachments = [
                    *self.attachments,
                    *(a for a in attached if isinstance(a, dict)),
                ]
            if when == "call":
                agent = facts.get(AGENT_ATTR)
                self.agent = agent if isinstance(agent, dict) else None
        elif when == "call" and self.agent is not None:
            self.agent = None
        # outcome compared, not report.failed and the like (a property each)
        wasxfail = hasattr(report, "wasxfail")
        if outcome == "passed":
            if wasxfail:  # an xpass
                self.reason = xfail_reason(report)
        elif outcome == "failed" or outcome == "rerun":
            if outcome == "rerun":
                self.rerun_in_attempt = True
            self.failures = {
                **self.failures,
                when: build_failure(
                    report,
                    when,
                    self.file,
                    self.line,
                    self.limits,
                    self.redact,
                    facts,
                    self.rootpath,
                ),
            }
        elif outcome == "skipped":
            self.reason = xfail_reason(report) or skip_reason(report)
        if wasxfail:
            self.wasxfail = True
        if when != "teardown":
            return False
        if facts:
            tries = facts.get(TRIES_ATTR)
            if isinstance(tries, list):
                self.tries = [str(t) for t in tries]
        if self.rerun_in_attempt:
            self._close_rerun_attempt()
            return False
        return True

    def _close_rerun_attempt(self) -> None:
        failure = next(iter(self.failures.values()), None)
        outcome: Literal["failed", "error"] = "failed"
        if failure is not None and failure["phase"] != "call":
            outcome = "error"
        duration = round_micro(sum(self.durations.values()))
        attempt = new("Attempt", outcome=outcome, duration=duration, failure=failure)
        attempts = self.attempts
        if isinstance(attempts, list):
            attempts.append(attempt)
        else:
            self.attempts = [attempt]
        self._drop_attempt_subtests()
        self._reset_attempt()

    def _drop_attempt_subtests(self) -> None:
        """Forget the subtests of an attempt that is run again: only the last attempt's
        subtests are the test's, and pytest's counts keep only what pytest-rerunfailures left."""
        counted_as = self.counted_as
        uncounted = rerun_uncounted()
        for index in reversed(self._subtest_counts):
            if counted_as[index] in uncounted:
                del counted_as[index]
        self._subtest_counts = ()
        self.subtests = ()

    def _add_subtest(self, report: pytest.TestReport, facts: Mapping[str, Any]) -> None:
        context = report.context
        msg = getattr(context, "msg", None)
        params = to_json_safe(dict(getattr(context, "kwargs", {}) or {}))
        describe = getattr(report, "_sub_test_description", None)
        description = describe() if callable(describe) else (f"[{msg}]" if msg else "(<subtest>)")
        outcome: Literal["passed", "failed", "skipped", "xfailed"]
        if hasattr(report, "wasxfail"):
            outcome = "xfailed"
            reason = xfail_reason(report)
        else:
            outcome = report.outcome
            reason = skip_reason(report) if report.skipped else None
        failure = None
        if report.failed:
            failure = build_failure(
                report, "call", self.file, self.line, self.limits, self.redact, facts, self.rootpath
            )
        redact = self.redact
        subtests = self.subtests
        if not isinstance(subtests, list):
            self.subtests = subtests = []
        subtests.append(
            new(
                "SubtestResult",
                description=redact(description),
                msg=None if msg is None else redact(str(msg)),
                params=redact.data(params) if isinstance(params, dict) else {},
                outcome=outcome,
                duration=round_micro(report.duration),
                reason=redact(reason) if reason else None,
                failure=failure,
            )
        )

    def final_outcome(self) -> Outcome:
        """The test's outcome from its phases and subtests (``counted_as`` keeps pytest's
        words)."""
        subtests = self.subtests  # none, for nearly every test: no generator made
        failed = bool(subtests) and any(s["outcome"] == "failed" for s in subtests)
        return outcome_of_phases(self.outcome, self.wasxfail, failed)

    def minimal_result(self, outcome: Outcome | None = None, **more: Any) -> TestResultRecord:
        """The result with what cannot fail (and ``more``): used alone when building the full
        one failed. ``outcome``: the final outcome when the caller knows it already."""
        return new(
            "TestResult",
            nodeid=self.nodeid,
            test_name=self.test_name,
            file=self.file,
            line=self.line,
            outcome=self.final_outcome() if outcome is None else outcome,
            counted_as=self.counted_as,
            **more,
        )

    def result(
        self,
        captured: CapturedRecord | None,
        outcome: Outcome | None = None,
        user_properties: list[Any] | None = None,
    ) -> Record:
        """The finished ``TestResult`` record (``outcome``: ``final_outcome()``, when known)
        without its fields at their default, as the files store it (``expand(RESULT, ...)``
        gives the whole record). Made field by field: on the per-test path, building the record
        through ``new`` and compacting it again cost more than the rest of it."""
        if outcome is None:
            outcome = self.final_outcome()
        failures = self.failures
        failure = teardown = None
        if failures:  # none, for most tests
            failure = failures.get("setup") or failures.get("call")
            teardown = failures.get("teardown")
        if failure is None:
            failure, teardown = teardown, None
        elif failure["phase"] == "call":
            failure = subtest_failure(failure, self.subtests)
        if failure is None and outcome == "failed":  # failed through unittest subtests only
            failed = sum(1 for s in self.subtests if s["outcome"] == "failed")
            failure = first_subtest_failure(plural(failed, "failed subtest"), self.subtests)
        phases = self.durations
        if len(phases) == 3:  # a test that ran: its three phases (no other key is made)
            duration, setup, call, teardown_time = round_micros(
                sum(phases.values()), phases["setup"], phases["call"], phases["teardown"]
            )
        else:
            duration, setup, call, teardown_time = round_micros(
                sum(phases.values()),
                phases.get("setup", 0.0),
                phases.get("call", 0.0),
                phases.get("teardown", 0.0),
            )
        item = self.item
        rare = len(item) > 1  # most tests' item facts are their markers alone
        metadata = None
        if rare and ("case" in item or "doc" in item):  # most tests have neither
            try:
                metadata = build_metadata(item.get("case"), item.get("doc"), "case_args" in item)
            except CaseMarkerError as exc:
                self.case_error = str(exc)
                doc = item.get("doc")
                metadata = new("TestCaseMetadata", description=doc) if doc else None
        reason = self.reason if outcome in ("skipped", "xfailed", "xpassed") else None
        attempts = self.attempts
        tries = self.tries
        flaky = (bool(attempts) and outcome == "passed") or (
            tries is not None and any(t != outcome for t in tries)
        )
        # In the model's field order; a field is written only when it is not at its default.
        stored: Record = {"nodeid": self.nodeid, "test_name": self.test_name, "file": self.file}
        if self.line is not None:
            stored["line"] = self.line
        stored["outcome"] = outcome
        if duration:
            stored["duration"] = duration
        if setup or call or teardown_time:
            stored["durations"] = {"setup": setup, "call": call, "teardown": teardown_time}
        if self.started:
            stored["started_at"] = iso_epoch(self.started)
        if failure is not None:
            stored["failure"] = failure
        if teardown is not None:
            stored["teardown_failure"] = teardown
        if reason:
            stored["reason"] = self.redact(reason)
        if captured is not None:
            stored["captured"] = captured
        markers = item.get("markers")
        if markers:
            stored["markers"] = markers
        if metadata is not None:
            stored["metadata"] = metadata
        if user_properties:
            stored["user_properties"] = user_properties
        if attempts:
            stored["reruns"] = len(attempts)
            stored["attempts"] = attempts
        if flaky:
            stored["flaky"] = flaky
        if tries is not None:
            stored["new_test_tries"] = tries
        if self.subtests:
            stored["subtests"] = self.subtests
        worker = item.get("worker") if rare else None
        if worker is not None:
            stored["worker"] = worker
        if self.counted_as:
            stored["counted_as"] = self.counted_as
        repeat = item.get("repeat") if rare else None
        if repeat is not None:
            stored["repeat"] = repeat
        if self.attachments:
            stored["attachments"] = self._attachment_records()
        if self.agent:  # agent tests: their fields through the general path
            return compact(RESULT, expand(RESULT, {**stored, **self._agent_fields()}))
        return stored

    def _attachment_records(self) -> list[AttachmentRecord]:
        """The attachments the test's process sent, their names and notes redacted."""
        records = [new("Attachment", **attachment) for attachment in self.attachments]
        for record in records:
            record["name"] = self.redact(record["name"])
            if record["note"]:
                record["note"] = self.redact(record["note"])
        return records

    def _agent_fields(self) -> dict[str, Any]:
        """The agent fields from the facts the test's process sent, redacted."""
        agent = self.agent
        if not agent:
            return {}
        fields: dict[str, Any] = self.redact.data(
            {name: agent[name] for name in AGENT_FIELDS if name in agent}
        )
        metrics = self.redact.data(agent.get("metric_results", []))
        fields["metric_results"] = [new("MetricResult", **m) for m in metrics]
        return fields


def plain_pass_result(
    setup: pytest.TestReport,
    call: pytest.TestReport,
    teardown: pytest.TestReport,
    item: Mapping[str, Any],
) -> Record | None:
    """``TestAccumulator.result`` of a plain passing test's three reports, made in one call
    where the accumulator took each report in turn (issue 28: a passing test's path): each
    pytest's own ``TestReport`` that passed, without an xfail, a rerun, facts of their own
    (the setup's: its item facts, ``item``, alone) or a counted word but ``passed`` for the
    call; the same record, field for field. ``None`` when it is not so plain (item facts but
    markers, a test of an installed plugin's): the caller folds the reports into a
    ``TestAccumulator`` then."""
    if len(item) > 1:  # its markers and more (a docstring, a case marker, a repeat)
        return None
    path, lineno, domain = setup.location
    file = path.replace("\\", "/")
    if "site-packages" in file or "dist-packages" in file:  # `TestAccumulator`'s own place
        return None
    first, middle, last = setup.duration, call.duration, teardown.duration
    duration, first, middle, last = round_micros(sum((first, middle, last)), first, middle, last)
    # In the model's field order, each at its default left out, as `TestAccumulator.result`
    stored: Record = {"nodeid": setup.nodeid, "test_name": domain, "file": file}
    if lineno is not None:
        stored["line"] = lineno + 1
    stored["outcome"] = "passed"
    if duration:
        stored["duration"] = duration
    if first or middle or last:
        stored["durations"] = {"setup": first, "call": middle, "teardown": last}
    started = getattr(setup, "start", None)
    if started:
        stored["started_at"] = iso_epoch(started)
    markers = item.get("markers")
    if markers:
        stored["markers"] = markers
    stored["counted_as"] = ["passed"]
    return stored


def captured_output(
    sections: Iterable[tuple[str, str]], limits: Limits, redact: Callable[[str], str]
) -> CapturedRecord | None:
    """Captured stdout/stderr/log of all phases, from a test's last report, bounded and redacted."""
    parts: dict[str, list[tuple[str, str]]] = {"stdout": [], "stderr": [], "log": []}
    for title, content in sections:
        words = title.split()
        if len(words) == 3 and words[0] == "Captured" and words[1] in parts and content:
            parts[words[1]].append((words[2], content))
    if not any(parts.values()):
        return None
    texts = {name: _join_phases(chunks) for name, chunks in parts.items()}
    return new(
        "Captured",
        **{
            name: bound_text(redact(text), limits.max_output, option="--qbench-max-output")
            for name, text in texts.items()
        },
    )


def _join_phases(chunks: list[tuple[str, str]]) -> str:
    if len(chunks) == 1:
        return chunks[0][1]
    return "".join(f"----- {phase} -----\n{text}" for phase, text in chunks)


def collection_error(
    report: pytest.CollectReport, limits: Limits, redact: Callable[[str], str]
) -> DiagnosticRecord:
    """A ``Diagnostic`` for a collector that failed."""
    text = redact(longrepr_text(report))
    file = report.nodeid.split("::")[0] or None
    line = None
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and file is not None and str(crash.path).endswith(file):
        line = crash.lineno
    found = failing_location(text, file)
    if found is not None:
        file, line = found
    return new(
        "Diagnostic",
        tool="pytest",
        severity="error",
        code="collection-error",
        message=bound_text(text, limits.max_trace, keep="tail", option="--qbench-max-trace"),
        file=file,
        line=line,
        nodeid=report.nodeid or None,
    )


# Compiled at first use (by ``re``'s cache): most runs never read a failure's location this way.
_TRACE_FRAME = r"^(?P<path>[^\s<][^:]*):(?P<line>\d+): in "
_SYNTAX_ERROR_AT = r'^E\s+File "(?P<path>[^"]+)", line (?P<line>\d+)'


def failing_location(text: str, file: str | None) -> tuple[str, int] | None:
    """Where a collection error happened, from pytest's traceback text: the line a syntax
    error points at in ``file``, else the innermost frame in the user's project (the failing
    ``import`` of ``test_x.py:1: in <module>``)."""
    frame: tuple[str, int] | None = None
    for text_line in text.splitlines():
        syntax = re.match(_SYNTAX_ERROR_AT, text_line)
        if syntax is not None and file and _same_file(syntax["path"], file):
            return file, int(syntax["line"])
        match = re.match(_TRACE_FRAME, text_line)
        if match is not None and _in_project(match["path"]):
            frame = (match["path"].replace("\\", "/"), int(match["line"]))
    return frame


def _same_file(path: str, file: str) -> bool:
    path = path.replace("\\", "/")
    return path == file or path.endswith(f"/{file}")


def _in_project(path: str) -> bool:
    return not Path(path).is_absolute() and not in_installed_package(path)


def skipped_collector(
    report: pytest.CollectReport, redact: Callable[[str], str]
) -> TestResultRecord:
    """A module skipped at collection, which pytest counts among ``skipped``."""
    file = report.nodeid.split("::")[0]
    longrepr = report.longrepr
    line = None
    if isinstance(longrepr, tuple) and isinstance(longrepr[1], int):
        line = longrepr[1]  # pytest's reprcrash line, counted from 1 (`-rs` shows it as is)
    return new(
        "TestResult",
        nodeid=report.nodeid,
        test_name=report.nodeid.rsplit("/", 1)[-1],
        file=file,
        line=line,
        outcome="skipped",
        reason=redact(skip_reason(report) or "") or None,
        counted_as=["skipped"],
    )


def warning_diagnostic(
    message: str, category: str, filename: str, lineno: int, nodeid: str, rootpath: Path
) -> DiagnosticRecord:
    """A ``Diagnostic`` for a warning pytest recorded."""
    path = Path(filename)
    try:
        shown = path.resolve().relative_to(rootpath).as_posix()
    except ValueError:
        shown = filename
    return new(
        "Diagnostic",
        tool="pytest",
        severity="warning",
        code=category,
        message=first_line(message, 2000) if "\n" not in message else message[:2000],
        file=shown,
        line=lineno,
        nodeid=nodeid or None,
    )
