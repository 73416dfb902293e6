"""unittest's ``subTest`` under pytest 9: a failed subtest fails the test in every view.

pytest 9 counts a ``TestCase`` method whose subtests failed among ``passed`` (each failed
subtest is its own ``failed``), unlike its ``subtests`` fixture, whose test fails too. Found
running more-itertools' suite: the report said ``5 failed`` and listed no failure, the digest
had ``failures: []`` and the CTRF summary ``failed: 0``.
"""

from __future__ import annotations

import json

import pytest

from conftest import RunQBench
from conftest import assert_summary_matches_pytest


pytestmark = pytest.mark.skipif(
    not hasattr(pytest, "SubtestReport"), reason="pytest 9 reports unittest subtests"
)

UNITTEST_SUBTESTS = """
    import unittest

    class TestWindow(unittest.TestCase):
        def test_step(self):
            for n in (1, 2, 3, 4):
                with self.subTest(n=n):
                    self.assertLess(n, 3, "too wide")

        def test_ok(self):
            pass
"""


def test_failed_unittest_subtest_is_listed(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The test with failed subtests is a failure with its first failed subtest's error and
    line, in report.json, report.md, the digest and the CTRF summary; the counts stay pytest's."""
    pytester.makepyfile(test_window=UNITTEST_SUBTESTS)
    run = run_qbench("--qbench-digest=digest.json", "--qbench-ctrf=ctrf.json")
    assert run.result.parseoutcomes()["failed"] == 2
    assert_summary_matches_pytest(run)
    step = run.by_name("test_step")
    assert step.outcome == "failed"
    assert step.failure is not None
    assert (step.failure.error_type, step.failure.file, step.failure.line) == (
        "AssertionError",
        "test_window.py",
        7,
    )
    assert "too wide" in step.failure.error_message
    assert step.failure.stack_trace.startswith("2 failed subtests; the first, subtest (n=3):")
    assert run.by_name("test_ok").outcome == "passed"
    assert "## Failures (1)" in run.markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert [f["test_name"] for f in digest["failures"]] == ["test_window.py::TestWindow::test_step"]
    assert digest["failures"][0]["line"] == 7
    ctrf = json.loads((pytester.path / "ctrf.json").read_text(encoding="utf-8"))
    assert (ctrf["results"]["summary"]["passed"], ctrf["results"]["summary"]["failed"]) == (1, 1)


def test_new_unittest_test_with_a_failed_subtest_is_not_flaky(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``--qbench-new-tests-repeat``: each extra run of a new test whose subtest fails every
    time is failed too, so the test is not called flaky (passed, passed, failed)."""
    pytester.makepyfile(test_old="def test_old():\n    pass\n")
    run_qbench("--qbench-run-id=h1", run_dir="h1")
    pytester.makepyfile(test_window=UNITTEST_SUBTESTS)
    run = run_qbench("--qbench-new-tests-repeat=3", "--qbench-run-id=h2", run_dir="h2")
    assert_summary_matches_pytest(run)
    step = run.by_name("test_step")
    assert (step.outcome, step.new_test_tries, step.flaky) == (
        "failed",
        ["failed", "failed"],
        False,
    )
    assert run.report.summary.flaky == 0
