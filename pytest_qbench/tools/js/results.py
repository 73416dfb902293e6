"""The JSON report vitest (``--reporter=json``) and jest (``--json``) write, into qbench's
``TestResult``s. Both write jest's format: ``testResults`` (one per test file) holding
``assertionResults`` (one per test). Never the console: the console is for people.

A test's id is ``<file> > <describe> > ... > <name>`` (the file relative to the qbench root);
a test file that failed to run (a syntax error, a missing import) is one ``error`` result named
by its file, so a file whose tests never ran still fails the run.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.text import DEFAULT_MAX_TRACE
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import strip_ansi
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import TestResult


SEPARATOR = " > "
"""Between the file, the describe blocks and the test's name in a test's id."""
OUTCOMES: dict[str, tuple[str, list[str]]] = {
    "passed": ("passed", []),
    "failed": ("failed", []),
    "skipped": ("skipped", []),
    "pending": ("skipped", ["skipped"]),
    "disabled": ("skipped", ["skipped"]),
    "todo": ("skipped", ["todo"]),
}
"""A runner's status as qbench's outcome, and how the runner's own summary line counts it
(``todo`` has its own word there, as in ``1 skipped | 1 todo``)."""
FRAME = re.compile(
    r"^\s*at (?:.*? \()?(?:file://)?(?P<file>[^()\s]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$"
)
"""A V8 stack frame: ``at fn (/path/x.test.ts:4:37)`` or ``at /path/x.test.ts:4:37``."""
NO_PLACE_FRAME = re.compile(r"^\s+at (?:.+ \()?(?:<anonymous>|native|index \d+)\)?\s*$")
"""A V8 frame without a file: ``at new Promise (<anonymous>)``, ``at Array.forEach (native)``."""
ERROR_TYPE = re.compile(r"^(?P<type>[A-Z][A-Za-z0-9_$.]*(?:Error|Exception)?): (?P<rest>.*)$")
"""``AssertionError: expected 2 to be 3`` (the first line of a failure message)."""
NO_MESSAGE = (
    "{} marked this file failed with no failed test and no message (a failing beforeAll or "
    "afterAll hook, an error outside the tests): its console output in the run directory says "
    "what failed"
)
"""The message of a file the runner marked failed without saying why."""
MAX_MESSAGE = 4000
"""Characters of a failure's message kept."""


def parse_report(raw: bytes, root: Path, runner: str, cwd: Path) -> list[TestResult]:
    """Every test of a vitest or jest JSON report (files in ``cwd``, ids relative to ``root``).

    Raises:
        CheckOutputError: the file is not such a report.
    """
    try:
        data = json.loads(raw)
        files = data["testResults"]
        if not isinstance(files, list):
            raise TypeError("testResults is not a list")
        return [r for item in files for r in file_results(item, root, runner, cwd)]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckOutputError(f"{runner} JSON report unreadable: {exc}") from None


def passed_without_tests(raw: bytes, root: Path, cwd: Path) -> list[str]:
    """The files of a vitest or jest JSON report that passed holding no test (relative to
    ``root``): vitest's type-test files whose assertions stand outside any test. An unreadable
    report gives none (`parse_report` says why)."""
    try:
        files = json.loads(raw)["testResults"]
        return [
            relative(str(item["name"]), root, cwd)
            for item in files
            if item.get("status") == "passed" and not item.get("assertionResults")
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def file_results(item: dict[str, Any], root: Path, runner: str, cwd: Path) -> list[TestResult]:
    """One test file's tests; a file that failed outside its tests as one ``error`` result."""
    file = relative(str(item["name"]), root, cwd)
    results = [
        test_result(test, file, root, runner, cwd) for test in item.get("assertionResults") or []
    ]
    message = strip_ansi(str(item.get("message") or "")).strip()
    if item.get("status") == "failed" and not any(r.outcome == "failed" for r in results):
        # vitest gives no message for a failed beforeAll (its tests "skipped"): the file still
        # failed, and is named as the one that did
        results.append(file_error(file, message or NO_MESSAGE.format(runner), root, runner, cwd))
    return results


def test_result(test: dict[str, Any], file: str, root: Path, runner: str, cwd: Path) -> TestResult:
    """One test."""
    titles = [str(t) for t in test.get("ancestorTitles") or []]
    meta = test.get("meta")
    if isinstance(meta, dict) and meta.get("typecheck") and titles[:1] == [file]:
        titles = titles[1:]  # vitest --typecheck names a type test's file as its first suite
    title = str(test["title"])
    status = str(test["status"])
    outcome, counted = OUTCOMES.get(status, ("error", ["error"]))
    location = test.get("location")
    line = location.get("line") if isinstance(location, dict) else None
    failure = None
    messages = [strip_ansi(str(m)) for m in test.get("failureMessages") or []]
    if outcome == "failed":
        failure = make_failure("\n\n".join(messages), file, root, cwd)
    elif status not in OUTCOMES:  # a status qbench does not know: never a pass
        failure = Failure(error_type="UnknownStatus", error_message=f"{runner} status {status!r}")
    duration = test.get("duration")
    seconds = round(float(duration) / 1000, 6) if isinstance(duration, (int, float)) else 0.0
    return TestResult(
        nodeid=SEPARATOR.join([file, *titles, title]),
        test_name=SEPARATOR.join([*titles, title]),
        file=file,
        line=line
        if isinstance(line, int)
        else (failure.line if failure and failure.file == file else None),
        outcome=outcome,  # type: ignore[arg-type]
        duration=seconds,
        failure=failure,
        reason="todo" if status == "todo" else None,
        counted_as=counted,
        runner=runner,
    )


def file_error(file: str, message: str, root: Path, runner: str, cwd: Path) -> TestResult:
    """A test file that failed to run."""
    failure = make_failure(message, file, root, cwd)
    if failure.file is None:
        failure = failure.model_copy(update={"file": file})
    return TestResult(
        nodeid=file,
        test_name=file,
        file=file,
        outcome="error",
        failure=failure.model_copy(update={"phase": "collect"}),
        counted_as=["error"],
        runner=runner,
    )


def make_failure(text: str, file: str, root: Path, cwd: Path) -> Failure:
    """A failure from a runner's message and stack: the error type and message of its first
    line(s), the file and line of the first frame in the project (the test's file first)."""
    text = text.strip() or "(no message)"
    lines = text.splitlines()
    body = [line for line in lines if not FRAME.match(line) and not NO_PLACE_FRAME.match(line)]
    head = next((line.strip() for line in body if line.strip()), "")
    if head.startswith("● "):  # jest's file-level heading: "● Test suite failed to run"
        rest = body[next(i for i, line in enumerate(body) if line.strip()) + 1 :]
        if any(line.strip() for line in rest):  # the message is what follows it, not it
            body = rest
            head = next(line.strip() for line in body if line.strip())
    match = ERROR_TYPE.match(head)
    error_type = match["type"] if match else "Error"
    message = textwrap.dedent("\n".join(body)).strip()
    if match and message.startswith(f"{error_type}: "):
        message = message[len(error_type) + 2 :]
    where, at = locate(lines, file, root, cwd)
    return Failure(
        error_type=error_type,
        error_message=bound_text(message, MAX_MESSAGE),
        file=where,
        line=at,
        stack_trace=bound_text(text, DEFAULT_MAX_TRACE, keep="tail"),
    )


def locate(lines: Iterable[str], file: str, root: Path, cwd: Path) -> tuple[str | None, int | None]:
    """The first stack frame in ``file``, else the first in the project outside
    ``node_modules``; ``(None, None)`` without one."""
    fallback: tuple[str | None, int | None] = (None, None)
    for line in lines:
        match = FRAME.match(line)
        if match is None or "node_modules" in match["file"] or match["file"].startswith("node:"):
            continue
        where = relative(match["file"], root, cwd)
        if where == file:
            return where, int(match["line"])
        if fallback == (None, None) and not where.startswith(("/", "..")):
            fallback = (where, int(match["line"]))
    return fallback


def relative(path: str, root: Path, cwd: Path) -> str:
    """``path`` (absolute, or relative to ``cwd``) relative to ``root``, POSIX; as given when
    outside it."""
    full = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        return full.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path
