"""A test that fails in its call and whose fixture's teardown then raises counts twice on
pytest's line (``1 failed, 1 error``) and pytest's short summary names both: report.md, the
digest (its failure and its next steps) and the MCP run's listing, which is the digest's, name
the teardown error too. Before, only `get_test_failure` and the HTML report did: a reader of
report.md found no error behind the headline's ``1 error``. Found on a real suite's shape
(docs/performance.md, "Verdicts found on real projects, tenth round")."""

from __future__ import annotations

import json

import pytest


CONFTEST = """
    import pytest

    @pytest.fixture(scope="session")
    def server():
        yield "srv"
        raise RuntimeError("server did not shut down")
"""

TESTS = """
    def test_uses(server):
        assert server == "srv"

    def test_last(server):
        assert server == "other"
"""


def test_a_teardown_error_after_a_failure_is_in_every_report(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_srv=TESTS)
    result = pytester.runpytest(
        "-p", "qbench", "-p", "no:randomly", "--qbench-run-id=t", "--qbench-digest=digest.json"
    )
    result.assert_outcomes(passed=1, failed=1, errors=1)
    markdown = (pytester.path / ".qbench/runs/t/report.md").read_text()
    assert markdown.startswith("# ❌ Test report: 1 failed, 1 passed, 1 error")
    assert "server did not shut down" in markdown
    assert "Then in teardown: `conftest.py:6` · **RuntimeError**" in markdown
    digest = json.loads((pytester.path / "digest.json").read_text())
    [failure] = digest["failures"]
    assert failure["error_type"] == "AssertionError"
    assert (
        "Then in teardown: RuntimeError at conftest.py:6: server did not shut down"
        in (failure["error_message"])
    )
    assert digest["next_steps"] == [
        "Fix the assertion at test_srv.py:5 (test_srv.py::test_last)",
        "Fix the teardown error (RuntimeError) at conftest.py:6 used by test_srv.py::test_last",
    ]


def test_the_mcp_run_names_the_teardown_error(pytester: pytest.Pytester) -> None:
    """`run_test_workflow`'s listing names the teardown error under the failure, and the
    traceback's copy of the assertion's message is still folded (``message shown above``)."""
    from mcp_helpers import mcp_call

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_srv=TESTS.replace('"other"', '"other\\\\nand more"'))
    text = mcp_call(pytester.path, "run_test_workflow", {}).content[0].text
    assert text.startswith("FAILED: 1 failed, 1 passed, 1 error"), text
    assert "   Then in teardown: RuntimeError at conftest.py:6: server did not shut down" in text
    assert "| E   AssertionError: (message shown above)" in text
    assert "Next: Fix the teardown error (RuntimeError) at conftest.py:6 used by" in text
