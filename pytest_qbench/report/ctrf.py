"""A report as a CTRF document (Common Test Report Format, https://ctrf.io): a pure function.

One CTRF test per qbench result, plus one failed test per collection error (pytest counts it
among ``error``; a CTRF document without it says "all tests passed" of a run pytest failed), and
one failed test when qbench could not record the run whole (``RunMeta.recording_errors``).
pytest 9 subtests become the test's ``steps``; reruns its ``retryAttempts``. The closing line's
own counts go into ``results.summary.extra.pytest``, so a reader can check one against the
other (docs/reference/ctrf.md has the mapping).

``insights`` and ``baseline`` come from the history index (``history/ctrf_insights.py``); this
module only places them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

from pytest_qbench.core.summary_words import SUMMARY_KEYS
from pytest_qbench.report.verdict import verdict_of


SPEC_VERSION = "0.0.0"
"""The CTRF specification version written (``spec/ctrf.md`` of ctrf-io/ctrf: the working draft
whose schema the tests vendor in ``tests/data/ctrf/``)."""
NAMESPACE = uuid.UUID("5b0f6f4e-2f1c-5a53-9a3e-7162656e6368")
"""UUID v5 namespace of qbench's CTRF identifiers (report, test and execution ids)."""

STATUS = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "failed",
    "skipped": "skipped",
    "xfailed": "skipped",
}
"""qbench's (pytest's) outcome -> CTRF status."""
COLLECTION_ERROR = "collection error"
"""The ``rawStatus`` of a collection error."""
INCOMPLETE = "qbench could not record the run"
"""The name and ``rawStatus`` of the failed test a report qbench could not record whole gets."""
NOT_GREEN = "qbench: the run is not green"
"""The name and ``rawStatus`` of the failed test a run red besides its tests gets (interrupted,
a failed gate, the runner's exit status): `report.verdict.red_reasons`."""


@dataclass(frozen=True)
class CtrfHistory:
    """What the history index adds to a CTRF document (all optional)."""

    insights: Mapping[str, Any] | None = None
    """The run-level ``insights`` object."""
    tests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each test's ``insights`` object, by node id."""
    baseline: Mapping[str, Any] | None = None
    """The ``baseline`` object: the run the changes are against."""


def report_id(run_id: str) -> str:
    """The deterministic ``reportId`` (a UUID) of a qbench run's CTRF document: a run's
    baseline names the same id that run's own document has."""
    return str(uuid.uuid5(NAMESPACE, f"run:{run_id}"))


def ctrf_test_id(nodeid: str) -> str:
    """The ``testId``: a UUID v5 of pytest's node id (file path, classes, name, parameters),
    stable across runs."""
    return str(uuid.uuid5(NAMESPACE, f"test:{nodeid}"))


def epoch_ms(value: str | datetime | None) -> int | None:
    """Milliseconds since the Unix epoch of an ISO 8601 time (``None`` stays ``None``)."""
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return round(moment.timestamp() * 1000)


def ms(seconds: float) -> int:
    """Seconds as whole milliseconds."""
    return round(seconds * 1000)


def raw_status(result: Mapping[str, Any]) -> str:
    """pytest's words for a result: ``passed``, ``xfailed``, ``error in setup``, ``failed,
    error in teardown``, ``xpassed (strict)``..."""
    outcome = str(result["outcome"])
    failure = result.get("failure") or {}
    if outcome == "error":
        return f"error in {failure.get('phase') or 'setup'}"
    if outcome == "failed" and failure.get("error_type") == "XPASS(strict)":
        return "xpassed (strict)"
    if outcome == "failed" and failure.get("phase") not in (None, "call"):
        return f"failed in {failure['phase']}"
    if outcome == "failed" and result.get("teardown_failure"):
        return "failed, error in teardown"
    return outcome


def build_ctrf(
    report: Mapping[str, Any],
    results: Iterable[Mapping[str, Any]],
    history: CtrfHistory | None = None,
) -> dict[str, Any]:
    """The CTRF document of ``report`` (a ``TestReport`` record) whose results are
    ``results`` (the report's, or its stream's)."""
    history = history or CtrfHistory()
    run = report["run"]
    tests = [_test(result, run["run_id"], history.tests) for result in results]
    tests.extend(_collection_error(diag) for diag in report["collection_errors"])
    verdict = verdict_of(report)
    if verdict.recording_errors:  # a document that counts what qbench recorded: "all passed"
        tests.append(_incomplete(verdict.recording_errors, verdict.incomplete))
    reasons = verdict.reasons
    other = [reason.text for reason in reasons if reason.kind not in ("tests", "incomplete")]
    if other:  # red with every test passed (interrupted, a gate): not "all passed" either
        tests.append(_not_green(other))
    results_obj: dict[str, Any] = {
        "tool": {"name": str(run.get("tool") or "pytest")},
        "summary": _summary(report, tests, [reason.text for reason in reasons]),
        "tests": tests,
        "environment": _environment(report),
    }
    version = report["environment"].get("pytest_version")
    if version and results_obj["tool"]["name"] == "pytest":
        results_obj["tool"]["version"] = str(version)
    document: dict[str, Any] = {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "reportId": report_id(run["run_id"]),
        "runId": run["run_id"],
        "timestamp": _iso(run.get("completed_at") or report["meta"]["created_at"]),
        "generatedBy": f"pytest-qbench {report['meta']['qbench_version']}",
        "results": results_obj,
    }
    if history.insights:
        document["insights"] = dict(history.insights)
    if history.baseline:
        document["baseline"] = dict(history.baseline)
    return document


def render_ctrf(
    report: Mapping[str, Any],
    results: Iterable[Mapping[str, Any]],
    history: CtrfHistory | None = None,
) -> str:
    """The CTRF document as JSON text."""
    return json.dumps(build_ctrf(report, results, history), indent=2, ensure_ascii=False) + "\n"


def _iso(value: Any) -> str:
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return text.replace("+00:00", "Z")


def _summary(
    report: Mapping[str, Any], tests: list[dict[str, Any]], reasons: list[str]
) -> dict[str, Any]:
    run, counts = report["run"], report["summary"]
    start = epoch_ms(run["started_at"]) or 0
    stop = epoch_ms(run.get("completed_at")) or start + ms(float(counts.get("duration") or 0))
    by_status = dict.fromkeys(("passed", "failed", "skipped", "pending", "other"), 0)
    for test in tests:
        by_status[test["status"]] += 1
    pytest_line = {key: int(counts.get(name) or 0) for name, key in SUMMARY_KEYS}
    pytest_line.update({k: int(v) for k, v in (counts.get("other") or {}).items()})
    return {
        "tests": len(tests),
        **by_status,
        "flaky": sum(1 for test in tests if test.get("flaky")),
        "suites": len({path for test in tests if (path := test.get("filePath"))}),
        "start": start,
        "stop": stop,
        "duration": max(stop - start, 0),
        "extra": {
            "pytest": {key: n for key, n in pytest_line.items() if n},
            "exitCode": run.get("exit_code"),
            "interrupted": bool(run.get("interrupted")),
            "success": not reasons,
            "reasons": reasons,
        },
    }


def _environment(report: Mapping[str, Any]) -> dict[str, Any]:
    env = report["environment"]
    found: dict[str, Any] = {"osPlatform": str(env.get("platform") or "")}
    ci = env.get("ci") or {}
    for key, name in (("commit", "commit"), ("branch", "branchName"), ("build_url", "buildUrl")):
        if ci.get(key):
            found[name] = str(ci[key])
    shard = (env.get("extra") or {}).get("shard")
    if shard:
        found["shardId"] = str(shard)
    found["extra"] = {"python": env.get("python"), "ciProvider": ci.get("provider")}
    return {key: value for key, value in found.items() if value not in ("", None)}


def _test(
    result: Mapping[str, Any], run_id: str, insights: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    nodeid = str(result["nodeid"])
    test: dict[str, Any] = {
        "testId": ctrf_test_id(nodeid),
        "executionId": str(uuid.uuid5(NAMESPACE, f"{run_id}:{nodeid}:{result.get('repeat')}")),
        "name": nodeid,
        "status": STATUS.get(str(result["outcome"]), "other"),
        "rawStatus": raw_status(result),
        "duration": ms(float(result.get("duration") or 0)),
        "suite": _suite(result),
        "filePath": str(result["file"]),
    }
    start = epoch_ms(result.get("started_at"))
    if start is not None:
        test["start"], test["stop"] = start, start + test["duration"]
    if result.get("line") is not None:
        test["line"] = int(result["line"])
    test.update(_failure_fields(result.get("failure")))
    if result.get("markers"):
        test["tags"] = [str(m) for m in result["markers"]]
    if result.get("worker"):
        test["threadId"] = str(result["worker"])
    captured = result.get("captured") or {}
    for stream in ("stdout", "stderr"):
        if captured.get(stream):
            test[stream] = str(captured[stream]).splitlines()
    test.update(_retries(result))
    tries = result.get("new_test_tries")
    if tries and result.get("flaky"):  # --qbench-new-tests-repeat: its extra runs disagreed
        test["flaky"] = True
    if result.get("subtests"):
        test["steps"] = [_step(sub) for sub in result["subtests"]]
    attachments = [_attachment(a) for a in result.get("attachments") or [] if a.get("path")]
    if attachments:
        test["attachments"] = attachments
    if nodeid in insights:
        test["insights"] = dict(insights[nodeid])
    extra = {
        "counted_as": list(result.get("counted_as") or []),
        "reason": result.get("reason"),
        "new_test_tries": [*tries, str(result["outcome"])] if tries else None,
    }
    test["extra"] = {key: value for key, value in extra.items() if value}
    return test


def _suite(result: Mapping[str, Any]) -> list[str]:
    """``[file, Class, ...]``: the node id's parts above the test."""
    parts = str(result["nodeid"]).split("::")
    return parts[:-1] or [str(result["file"])]


def _failure_fields(failure: Mapping[str, Any] | None) -> dict[str, Any]:
    if not failure:
        return {}
    message = f"{failure['error_type']}: {failure['error_message']}".rstrip(": ")
    fields: dict[str, Any] = {"message": message}
    if failure.get("stack_trace"):
        fields["trace"] = str(failure["stack_trace"])
    return fields


def _retries(result: Mapping[str, Any]) -> dict[str, Any]:
    attempts = list(result.get("attempts") or [])
    if not attempts:
        return {}
    tries: list[dict[str, Any]] = []
    for number, attempt in enumerate(attempts, start=1):
        entry: dict[str, Any] = {
            "attempt": number,
            "status": STATUS.get(str(attempt["outcome"]), "other"),
            "duration": ms(float(attempt.get("duration") or 0)),
        }
        failure = _failure_fields(attempt.get("failure"))
        if "message" in failure:
            entry["message"] = failure["message"]
        tries.append(entry)
    final = {
        "attempt": len(attempts) + 1,
        "status": STATUS.get(str(result["outcome"]), "other"),
        "duration": ms(float(result.get("duration") or 0)),
    }
    flaky = final["status"] == "passed" and any(t["status"] == "failed" for t in tries)
    return {"retries": len(attempts), "retryAttempts": [*tries, final], "flaky": flaky}


def _step(subtest: Mapping[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = {
        "name": str(subtest.get("description") or subtest.get("msg") or "subtest"),
        "status": STATUS.get(str(subtest["outcome"]), "other"),
    }
    extra = {
        "rawStatus": str(subtest["outcome"]),
        "duration": ms(float(subtest.get("duration") or 0)),
    }
    failure = _failure_fields(subtest.get("failure"))
    if failure:
        extra["message"] = failure["message"]
    step["extra"] = extra
    return step


def _attachment(attachment: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": str(attachment["name"]),
        "contentType": str(attachment.get("mime") or "application/octet-stream"),
        "path": str(attachment["path"]),
    }


def _incomplete(errors: list[str], text: str) -> dict[str, Any]:
    """The failed test that stands for what qbench could not record of the run."""
    return {
        "testId": ctrf_test_id(INCOMPLETE),
        "name": INCOMPLETE,
        "status": "failed",
        "rawStatus": INCOMPLETE,
        "duration": 0,
        "suite": ["qbench"],
        "message": text,
        "trace": "\n".join(errors),
        "extra": {"counted_as": [], "recordingErrors": errors},
    }


def _not_green(reasons: list[str]) -> dict[str, Any]:
    """The failed test that stands for why the run is red besides its tests (interrupted, a
    failed gate, the runner's exit status), so that no CTRF reader says "all passed"."""
    return {
        "testId": ctrf_test_id(NOT_GREEN),
        "name": NOT_GREEN,
        "status": "failed",
        "rawStatus": NOT_GREEN,
        "duration": 0,
        "suite": ["qbench"],
        "message": "; ".join(reasons),
        "extra": {"counted_as": [], "reasons": reasons},
    }


def _collection_error(diagnostic: Mapping[str, Any]) -> dict[str, Any]:
    where = str(diagnostic.get("nodeid") or diagnostic.get("file") or "collection")
    message = str(diagnostic.get("message") or "")
    last = [line for line in message.splitlines() if line.strip()]
    test: dict[str, Any] = {
        "testId": ctrf_test_id(where),
        "name": where,
        "status": "failed",
        "rawStatus": COLLECTION_ERROR,
        "duration": 0,
        "suite": [where.split("::")[0]],
        "filePath": str(diagnostic.get("file") or where.split("::")[0]),
        "message": last[-1] if last else "collection error",
        "trace": message,
        "extra": {"counted_as": ["error"], "collectionError": True},
    }
    if diagnostic.get("line") is not None:
        test["line"] = int(diagnostic["line"])
    return test
