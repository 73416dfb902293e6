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


def test_report_md_and_the_digest_place_a_teardown_error_by_one_rule(
    pytester: pytest.Pytester,
) -> None:
    """Where a teardown error happened (its file, else the test's; ``:line`` when its own line is
    known) is decided once (``core.text.failure_where``): report.md's template prints it
    (``t | where(r)``) and the digest's lines use it, so a teardown error without a file of its
    own is placed alike by both. Before, the template repeated the rule in Jinja beside the
    digest's ``_teardown_where``."""
    from pathlib import Path

    from pytest_qbench.core.text import failure_where
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.digest import build_digest
    from pytest_qbench.report.readers import load_source_record
    from pytest_qbench.report.render import render

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_srv=TESTS)
    pytester.runpytest("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=t")
    report = load_source_record(pytester.path / ".qbench/runs/t/report.json")
    [result] = [r for r in report["results"] if r["teardown_failure"]]
    teardown = result["teardown_failure"]
    assert teardown is not None
    teardown["file"] = None  # not found: the test's file stands for it
    where = failure_where(teardown, result)
    assert where == "test_srv.py:6"
    assert f"Then in teardown: `{where}` · **RuntimeError**" in render(report)
    digest = build_digest(report, aggregate(report["results"]).view())
    assert f"RuntimeError at {where}:" in json.dumps(digest)
    template = Path(__file__).parent.parent / "templates" / "report.md.j2"
    assert '~ ":" ~' not in template.read_text(encoding="utf-8")  # no rule of its own
