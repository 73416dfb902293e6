"""The failure digest: failures only, bounded, with concrete next steps."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone
from typing import Any

import pytest

from pytest_qbench.core.types import Outcome
from pytest_qbench.report import models
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.digest import DIGEST_MAX_MESSAGE
from pytest_qbench.report.digest import MAX_NEXT_STEPS
from pytest_qbench.report.digest import build_digest
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import FailureDigest
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def result(name: str, outcome: Outcome = "passed", **fields: Any) -> models.TestResult:
    """A result named ``tests/test_x.py::<name>`` defined on line 10."""
    return models.TestResult(
        nodeid=f"tests/test_x.py::{name}",
        test_name=name,
        file="tests/test_x.py",
        line=10,
        outcome=outcome,
        **fields,
    )


def failed(name: str, error_type: str, message: str = "msg", **failure: Any) -> models.TestResult:
    """A failed (or, with phase setup/teardown, errored) result."""
    outcome: Outcome = "error" if failure.get("phase") in ("setup", "teardown") else "failed"
    failure.setdefault("file", "tests/test_x.py")
    failure.setdefault("line", 12)
    return result(
        name, outcome, failure=Failure(error_type=error_type, error_message=message, **failure)
    )


def digest_of(
    results: list[models.TestResult],
    *,
    collection_errors: list[Diagnostic] = (),  # type: ignore[assignment]
    interrupted: bool = False,
    exit_code: int | None = None,
) -> FailureDigest:
    """The digest of a report holding ``results``, built from the report's record and checked to
    be a valid ``FailureDigest`` record."""
    agg = aggregate(results, collection_errors)
    if exit_code is None:
        failing = any(r.outcome in ("failed", "error") for r in results) or collection_errors
        exit_code = 2 if interrupted else (1 if failing else 0)
    report = models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RunMeta(
            run_id="run-1",
            started_at=T0,
            cwd="/src",
            command=["pytest"],
            exit_code=exit_code,
            interrupted=interrupted,
        ),
        environment=Environment(
            python="3.12.4",
            implementation="CPython",
            platform="Linux",
            pytest_version="9.0.0",
            qbench_version="0.1.0",
        ),
        summary=ReportSummary.model_validate(agg.summary(1.0)),
        results=results,
        collection_errors=list(collection_errors),
    )
    view = agg.view()
    record = build_digest(report.model_dump(mode="json"), view)
    assert build_digest(report, view) == record  # a model is accepted too
    digest = FailureDigest.model_validate(record)
    # The record is exactly what the model would dump: nothing missing, extra or out of shape.
    assert digest.model_dump(mode="json") == record
    assert list(record) == list(digest.model_dump(mode="json"))
    return digest


def test_all_passed() -> None:
    """A green run is a success with a single 'nothing to fix' step that says what ran and what
    was skipped, in pytest's words (issue 19.13: not "All 2 tests that ran passed")."""
    digest = digest_of([result("test_a"), result("test_b"), result("test_c", "skipped")])
    assert digest.success is True
    assert digest.failures == []
    assert digest.next_steps == ["No test failed (2 passed, 1 skipped); nothing to fix"]


@pytest.mark.parametrize(
    ("outcomes", "exit_code", "step"),
    [
        ([], 5, "No tests ran: check the test paths and the -k/-m selection"),
        (
            ["skipped", "xfailed"],
            0,
            "No test passed or failed (1 skipped, 1 xfailed)",
        ),
        (
            ["passed"],
            3,
            "pytest exited with status 3 without a failing test: read its output",
        ),
    ],
    ids=["no-tests", "none-ran", "internal-error"],
)
def test_nothing_failed_says_what_happened(
    outcomes: list[Outcome], exit_code: int, step: str
) -> None:
    """Without failures, the one step tells an empty run, an all-skipped run and a crash apart."""
    results = [result(f"test_{i}", outcome) for i, outcome in enumerate(outcomes)]
    assert digest_of(results, exit_code=exit_code).next_steps == [step]


def test_assertion_failure() -> None:
    """An assertion points at the failing line and names the test."""
    digest = digest_of([failed("test_total", "AssertionError", "assert 5 == 6")])
    assert digest.success is False
    assert digest.next_steps == [
        "Fix the assertion at tests/test_x.py:12 (tests/test_x.py::test_total)"
    ]
    [failure] = digest.failures
    assert failure.model_dump() == {
        "test_name": "tests/test_x.py::test_total",
        "outcome": "failed",
        "file": "tests/test_x.py",
        "line": 12,
        "error_type": "AssertionError",
        "error_message": "assert 5 == 6",
        "stack_trace": "",
        "history": None,
        "runner": "pytest",
    }


@pytest.mark.parametrize("error_type", ["ModuleNotFoundError", "ImportError"])
def test_import_error(error_type: str) -> None:
    """An import error quotes the first line of the message."""
    message = "No module named 'numpy'\nsecond line"
    digest = digest_of([failed("test_np", error_type, message, file="src/app.py", line=3)])
    assert digest.next_steps == ["Fix the import at src/app.py:3: No module named 'numpy'"]


@pytest.mark.parametrize("phase", ["setup", "teardown"])
def test_setup_and_teardown_errors(phase: str) -> None:
    """A fixture error names the phase, the exception and the test that used it."""
    digest = digest_of([failed("test_db", "RuntimeError", phase=phase, file="conftest.py", line=5)])
    assert digest.failures[0].outcome == "error"
    assert digest.next_steps == [
        f"Fix the {phase} error (RuntimeError) at conftest.py:5 used by tests/test_x.py::test_db"
    ]


def test_strict_xpass() -> None:
    """A strict xfail that passed asks to drop the marker."""
    digest = digest_of([failed("test_fixed", "XPASS(strict)", "[XPASS(strict)] bug #12")])
    assert digest.next_steps == [
        "tests/test_x.py::test_fixed passes now: remove its xfail marker or make it non-strict"
    ]


def test_other_exception_and_missing_failure() -> None:
    """Other exceptions are named; a failure without details still gets a step."""
    digest = digest_of(
        [
            failed("test_v", "ValueError", file=None, line=None),
            result("test_crash", "failed"),
        ]
    )
    assert digest.next_steps == [
        "Fix the ValueError raised at tests/test_x.py:10 (tests/test_x.py::test_v)",
        "Look at tests/test_x.py::test_crash: it failed without a traceback",
    ]
    assert digest.failures[1].error_type == "Failed"


def test_collection_errors_come_first() -> None:
    """Collection errors are the first steps, with file, line and the cause (the traceback's
    last ``E`` line), else the message's first line (issue 11.2)."""
    errors = [
        Diagnostic(
            severity="error",
            message="\nImportError while importing test module\nE   No module named 'x'",
            file="tests/test_bad.py",
            line=3,
        ),
        Diagnostic(severity="error", message="conftest broke", nodeid="tests/sub"),
    ]
    digest = digest_of([failed("test_a", "AssertionError")], collection_errors=errors)
    assert digest.success is False
    assert digest.collection_errors == errors
    assert digest.next_steps == [
        "Fix the collection error in tests/test_bad.py:3: No module named 'x'",
        "Fix the collection error in tests/sub: conftest broke",
        "Fix the assertion at tests/test_x.py:12 (tests/test_x.py::test_a)",
    ]


def test_interrupted_run() -> None:
    """An interrupted run is not a success, even with nothing failed, and says to rerun."""
    digest = digest_of([result("test_a")], interrupted=True)
    assert digest.success is False
    assert digest.next_steps == [
        "The run was interrupted (Ctrl-C, pytest.exit or a signal) before its end; this report "
        "holds the tests that finished: run the tests again for complete results"
    ]


def test_interrupted_run_with_many_failures_still_says_so() -> None:
    """The interrupted step survives the cap on next steps, as the last one."""
    many = [failed(f"test_{i}", "AssertionError") for i in range(MAX_NEXT_STEPS + 2)]
    digest = digest_of(many, interrupted=True)
    assert len(digest.next_steps) == MAX_NEXT_STEPS
    assert digest.next_steps[-1].startswith("The run was interrupted")
    assert digest.next_steps[0].startswith("Fix the assertion")


def test_flaky_tests_are_mentioned() -> None:
    """Flaky tests get an 'investigate' step, after the failures."""
    digest = digest_of([result("test_f", flaky=True, reruns=2)])
    assert digest.success is True
    assert digest.next_steps == [
        "Investigate flaky test tests/test_x.py::test_f: passed after 2 rerun(s)"
    ]


def test_bounds() -> None:
    """Failures, messages and next steps are bounded; failures first, then errors."""
    many = [failed(f"test_{i}", "AssertionError", "x" * 5000) for i in range(25)]
    many.append(failed("test_setup", "OSError", phase="setup"))
    digest = digest_of(many)
    assert len(digest.failures) == 20
    assert digest.truncated == 6
    assert len(digest.next_steps) == MAX_NEXT_STEPS
    assert all(f.outcome == "failed" for f in digest.failures)
    message = digest.failures[0].error_message
    assert message.startswith("x" * 200) and message.endswith("x" * 200)
    assert "qbench cut" in message
    assert len(message) < DIGEST_MAX_MESSAGE + 200


def test_exit_code_decides_success_without_failures() -> None:
    """Exit code 0 without a failure is a success; 5 (no tests ran: pytest's closing line
    says so and a CI job fails on it) and an internal error (3) are not."""
    assert digest_of([], exit_code=0).success is True
    assert digest_of([], exit_code=5).success is False
    assert digest_of([], exit_code=3).success is False


def test_a_collection_error_of_no_file_is_named_by_its_cause() -> None:
    """A runner's own error (`run_test_workflow`'s `test_type` vitest where no package.json
    lists it) has no file and no node id: the step names its cause, not a ``?``."""
    error = Diagnostic(severity="error", message="vitest: no package.json under /p lists vitest")
    digest = digest_of([], collection_errors=[error])
    assert digest.next_steps[0] == (
        "Fix the collection error: vitest: no package.json under /p lists vitest"
    )
