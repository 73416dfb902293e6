"""An exception group's failure shows its sub-exceptions: where each was raised and what it says.

Found running python-dateutil's Hypothesis tests: a ``FlakyFailure`` (an exception group) said
only "Failed on the first call but did not on a subsequent one (1 sub-exception)", where pytest
shows the sub-exception's traceback and message; the same for any ``ExceptionGroup`` (anyio and
trio task groups, ``except*``).
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import RunQBench


pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is 3.11+")

GROUP = """
    def check(value):
        assert value == 2, "value must be two"


    def test_group():
        errors = []
        for v in (1, 3, 4, 5, 6, 7, 8):
            try:
                check(v)
            except AssertionError as exc:
                errors.append(exc)
        raise ExceptionGroup("checks failed", [ExceptionGroup("inner", errors[:1]), *errors[1:]])
"""


def test_sub_exceptions_in_the_trace(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Each sub-exception (nested ones too, the first 5) has its frames and its message, after
    the group's own lines; the digest keeps them."""
    pytester.makepyfile(test_eg=GROUP)
    run = run_qbench("--qbench-digest=digest.json")
    failure = run.by_name("test_group").failure
    assert failure is not None
    assert (failure.error_type, failure.file, failure.line) == ("ExceptionGroup", "test_eg.py", 12)
    trace = failure.stack_trace
    head, _, subs = trace.partition("\n\n+ sub-exception 1 of 7:\n")
    assert head.endswith("E   ExceptionGroup: checks failed (7 sub-exceptions)")
    assert subs.startswith(
        "E   ExceptionGroup: inner (1 sub-exception)\n\n+ sub-exception 1.1 of 1:\n"
    )
    assert "test_eg.py:9: in test_group\n    check(v)\ntest_eg.py:2: in check\n" in subs
    assert "E   AssertionError: value must be two\nE   assert 1 == 2" in subs
    assert "+ sub-exception 2 of 7:" in subs and "E   assert 3 == 2" in subs
    assert "+ sub-exception 5 of 7:" in subs and "assert 6 == 2" in subs
    assert "assert 7 == 2" not in subs
    assert subs.endswith("\n\n+ 2 more sub-exceptions")
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert "E   assert 1 == 2" in digest["failures"][0]["stack_trace"]


TASK_GROUP = """
    def child():
        raise ValueError("child failed")


    def test_task_group():
        try:
            child()
        except ValueError as exc:
            raise ExceptionGroup("unhandled errors in a TaskGroup", [exc]) from None
"""


def test_single_exception_named(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A group of one exception (anyio's and asyncio's task groups) is named by its leaf, as
    pytest's short summary names it; the group stays in the trace.

    Found running anyio's suite: the message said only "unhandled errors in a TaskGroup (1
    sub-exception)" where pytest says ``ValueError('child failed') [single exception in
    ExceptionGroup]``."""
    pytester.makepyfile(test_tg=TASK_GROUP)
    run = run_qbench("-rf")
    run.result.stdout.fnmatch_lines(["FAILED *ValueError('child failed') ?single excep*"])
    failure = run.by_name("test_task_group").failure
    assert failure is not None
    assert (failure.error_type, failure.error_message) == (
        "ValueError",
        "child failed [single exception in ExceptionGroup]",
    )
    head, _, sub = failure.stack_trace.partition("\n\n+ sub-exception 1 of 1:\n")
    assert head.endswith("E   ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)")
    assert sub.endswith("E   ValueError: child failed")
    assert (failure.file, failure.line) == ("test_tg.py", 9)
