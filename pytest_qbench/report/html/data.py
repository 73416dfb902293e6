"""The page's data: every result folded, in one pass, into compact columns.

Each test is a row of parallel arrays: its file (an index into ``files``), the rest of its node
id, its outcome as a small code and its duration in milliseconds. Only the tests with something
to show (a failure, a skip reason, output, metadata, agent results, attachments...) carry a
detail object, so that 50 000 passing tests cost little more than their node ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.text import message_line
from pytest_qbench.core.text import readable
from pytest_qbench.report.html.attachments import AttachmentBudget
from pytest_qbench.report.html.attachments import attachment_entry


if TYPE_CHECKING:
    from pytest_qbench.report.records import FailureRecord
    from pytest_qbench.report.records import TestResultRecord


OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
"""Outcome codes: a row's outcome is its index here."""
CODE = {name: code for code, name in enumerate(OUTCOMES)}
FAILING = frozenset({CODE["failed"], CODE["error"]})


@dataclass
class PageData:
    """The columns, the details and what the charts need (durations, metric scores)."""

    files: list[str] = field(default_factory=list)
    file_index: dict[str, int] = field(default_factory=dict)
    file_of: list[int] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)
    outcome: list[int] = field(default_factory=list)
    millis: list[int] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    flaky: list[int] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    """Test-case keys (``qbench_case(key=...)``), shown on the row and searched."""
    also: dict[str, list[int]] = field(default_factory=dict)
    """Outcomes a row also counts as in pytest's summary line (a passed test whose teardown
    errored counts as passed and as an error); not passed for a test that failed through its
    subtests (pytest counts the method passed, its verdict is failed)."""
    durations: list[float] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    scales: dict[str, float] = field(default_factory=dict)
    linked: bool = False
    """Whether an attachment is linked (its link is relative to the page's directory)."""

    def outcome_counts(self) -> dict[str, int]:
        """Rows by outcome name (every outcome, zero or not), as pytest counts them."""
        counts = [0] * len(OUTCOMES)
        for code in self.outcome:
            counts[code] += 1
        for codes in self.also.values():
            for code in codes:
                counts[code] += 1
        return dict(zip(OUTCOMES, counts, strict=True))

    def to_json(self) -> dict[str, Any]:
        """The object embedded in the page (keys short: the page decodes them)."""
        return {
            "v": 1,
            "oc": list(OUTCOMES),
            "files": self.files,
            "f": self.file_of,
            "r": self.rest,
            "o": self.outcome,
            "d": self.millis,
            "m": self.messages,
            "x": self.details,
            "fl": self.flaky,
            "a": self.also,
            "k": self.keys,
        }


def collect(
    results: Iterable[TestResultRecord],
    run_dir: Path | None = None,
    link_base: Path | None = None,
) -> PageData:
    """Fold ``results`` (read once, lazily) into ``PageData``.

    ``run_dir``: where attachment paths are relative to (small images and texts are embedded);
    ``link_base``: the directory of the page, for links to the attachments not embedded.
    """
    data = PageData()
    budget = AttachmentBudget()
    for row, result in enumerate(results):
        add_row(data, row, result)
        detail = result_detail(result, run_dir, link_base, budget)
        if detail:
            data.details[str(row)] = detail
            data.linked |= any("href" in a for a in detail.get("att", ()))
    return data


def add_row(data: PageData, row: int, result: TestResultRecord) -> None:
    """The columns of one result, its message and its scores."""
    nodeid = result["nodeid"]
    cut = nodeid.find("::")
    prefix, rest = (nodeid, "") if cut < 0 else (nodeid[:cut], nodeid[cut:])
    index = data.file_index.get(prefix)
    if index is None:
        index = data.file_index[prefix] = len(data.files)
        data.files.append(prefix)
    data.file_of.append(index)
    data.rest.append(rest)
    code = CODE.get(result["outcome"], CODE["error"])
    data.outcome.append(code)
    duration = float(result["duration"] or 0.0)
    data.durations.append(duration)
    data.millis.append(round(duration * 1000))
    message = row_message(result)
    if message:
        data.messages[str(row)] = message
    also = [CODE[c] for c in result["counted_as"] if c in CODE and CODE[c] != code]
    if len(also) > 1:
        # each once: pytest counts a rerun test whose teardown errs passed once per attempt
        also = list(dict.fromkeys(also))
    if code in FAILING and result["subtests"]:
        # pytest counts the method passed beside its failed subtest; the verdict is failed
        also = [c for c in also if c != CODE["passed"]]
    if also:
        data.also[str(row)] = also
    if result["flaky"]:
        data.flaky.append(row)
    meta = result["metadata"]
    if meta and meta["key"]:
        data.keys[str(row)] = meta["key"]
    for metric in result["metric_results"]:
        if metric["score"] is not None and not metric["skipped"]:
            data.scores.setdefault(metric["metric_name"], []).append(float(metric["score"]))
            if metric["scale"]:
                data.scales[metric["metric_name"]] = float(metric["scale"])


def row_message(result: TestResultRecord) -> str:
    """The line shown under a row (and searched): the failure's first line, or the reason."""
    failure = result["failure"] or result["teardown_failure"]
    if failure is not None:
        return readable(_failure_line(failure))[:300]
    return readable(result["reason"] or "")[:300]


def result_detail(
    result: TestResultRecord,
    run_dir: Path | None,
    link_base: Path | None,
    budget: AttachmentBudget,
) -> dict[str, Any]:
    """What a row shows when opened; empty for a test with nothing more to say."""
    detail: dict[str, Any] = {}
    if result["failure"] is not None:
        detail["fail"] = failure_detail(result["failure"], result["file"])
    if result["teardown_failure"] is not None:
        detail["teardown"] = failure_detail(result["teardown_failure"], result["file"])
    if result["reason"]:
        detail["reason"] = readable(result["reason"])
    captured = result["captured"]
    if captured and (captured["stdout"] or captured["stderr"] or captured["log"]):
        streams = {
            "stdout": captured["stdout"],
            "stderr": captured["stderr"],
            "log": captured["log"],
        }
        detail["out"] = {k: readable(v) for k, v in streams.items() if v}
    history = result.get("history")
    if history:
        detail["hist"] = {"status": history["status"], "summary": history["summary"]}
    _add_metadata(detail, result)
    _add_reruns(detail, result)
    _add_agent(detail, result)
    attachments = result.get("attachments")
    if isinstance(attachments, list) and attachments:
        detail["att"] = [attachment_entry(a, run_dir, link_base, budget) for a in attachments]
    return detail


def failure_detail(failure: FailureRecord, test_file: str) -> dict[str, Any]:
    """Type, where, message, traceback (and Hypothesis' example) of one failure."""
    where = failure["file"] or test_file
    if failure["line"]:
        where = f"{where}:{failure['line']}"
    out: dict[str, Any] = {
        "type": failure["error_type"],
        "where": where,
        "phase": failure["phase"],
        "msg": readable(failure["error_message"]),
    }
    trace = failure["stack_trace"]
    if trace and trace.strip() != failure["error_message"].strip():
        out["tb"] = readable(trace)
    if failure["falsifying_example"]:
        out["ex"] = failure["falsifying_example"]
    return out


def _add_metadata(detail: dict[str, Any], result: TestResultRecord) -> None:
    meta = result["metadata"]
    if meta:
        shown = {k: v for k, v in meta.items() if v and k != "steps"}
        if meta["steps"]:
            shown["steps"] = [[s["index"], s["action"], s["expected"]] for s in meta["steps"]]
        if shown:
            detail["meta"] = shown
    if result["user_properties"]:
        detail["props"] = [[str(k), v] for k, v in result["user_properties"]]
    if result["markers"]:
        detail["marks"] = result["markers"]


def _add_reruns(detail: dict[str, Any], result: TestResultRecord) -> None:
    if result["reruns"]:
        detail["reruns"] = result["reruns"]
        detail["attempts"] = [
            [a["outcome"], a["duration"], _failure_line(a["failure"])] for a in result["attempts"]
        ]
    if result["subtests"]:
        detail["sub"] = [
            [s["description"], s["outcome"], _failure_line(s["failure"]) or s["reason"] or ""]
            for s in result["subtests"]
        ]


def _failure_line(failure: FailureRecord | None) -> str:
    if failure is None:
        return ""
    return f"{failure['error_type']}: {message_line(failure['error_message'], 300)}"


def _add_agent(detail: dict[str, Any], result: TestResultRecord) -> None:
    metrics = result["metric_results"]
    if not (metrics or result["agent_response"] is not None or result["tool_calls"]):
        return
    detail["agent"] = {
        "response": result["agent_response"],
        "input": result["test_input"],
        "tools": result["tool_calls"],
        "expected": result["expected_tools"],
        "matched": result["tools_matched"],
        "metrics": [
            [
                m["metric_name"],
                m["score"],
                m["threshold"],
                m["passed"],
                m["skipped"],
                m["error"] or m["reason"] or "",
            ]
            for m in metrics
        ],
    }
