"""What report.md, the digest and get_test_failure show of a run's details: a long message
once, no slowest list of 0.00s rows, known values or "none given" in every cell (issue 11.13)."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.mcp.failure import failure_detail

from conftest import RunQBench


LONG_MESSAGE = """
    import pytest

    def test_long():
        assert [1, 2, 3, 4] == [1, 2, 3, 5], "lists differ"

    @pytest.mark.xfail
    def test_known():
        assert False

    def test_quick():
        pass
"""


def test_long_message_shown_once(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A long assertion message is shown once in report.md, the digest and get_test_failure,
    not again at the end of the traceback (issue 11.13)."""
    pytester.makepyfile(test_details=LONG_MESSAGE)
    run = run_qbench("--qbench-digest", "digest.json")
    explanation = "At index 3 diff: 4 != 5"
    failure = run.by_name("test_long").failure
    assert failure is not None and explanation in failure.error_message
    assert explanation in failure.stack_trace  # the stored trace stays whole
    assert run.markdown.count(explanation) == 1
    assert "E   AssertionError: (message shown above)" in run.markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    [shown] = digest["failures"]
    assert explanation in shown["error_message"] and explanation not in shown["stack_trace"]
    assert "assert [1, 2, 3, 4] == [1, 2, 3, 5]" in shown["stack_trace"]  # the source line
    detail = failure_detail(run.report, "test_long", 100_000)
    assert explanation in detail.error_message and explanation not in detail.stack_trace


def test_no_empty_cells_and_no_zero_slowest(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An xfail without a reason says "none given"; tests too quick to time leave no 0.00s
    "Slowest tests" rows (issue 11.13)."""
    pytester.makepyfile(test_details=LONG_MESSAGE)
    run = run_qbench()
    assert "| `test_details.py::test_known` | xfailed | none given |" in run.markdown
    assert "0.00s" not in run.markdown
    slowest = run.markdown.split("## Slowest tests")[-1] if "## Slowest" in run.markdown else ""
    assert "test_quick" not in slowest
