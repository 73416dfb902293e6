"""A plugin that fails pytest's session without a failing test (pytest-timeout's
``--session-timeout`` sets ``session.shouldfail``; pytest prints ``!!! session-timeout: 3.0 sec
exceeded !!!``, stops and exits 1 under a line of passes): the report is red, and says pytest's
reason rather than guessing at "a plugin, or a gate qbench does not know". Found on a real
plugin (docs/performance.md, "Verdicts found on real projects, tenth round")."""

from __future__ import annotations

import json

import pytest


CONFTEST = """
    import pytest

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        result = yield
        if item.name == "test_two":  # as pytest-timeout's session timeout does
            item.session.shouldfail = "session-timeout: 3.0 sec exceeded"
        return result
"""

TESTS = """
    def test_one():
        pass

    def test_two():
        pass

    def test_three():
        pass
"""


def test_a_session_failed_by_a_plugin_names_pytests_reason(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_s=TESTS)
    result = pytester.runpytest("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=s")
    result.stdout.fnmatch_lines(["*session-timeout: 3.0 sec exceeded*", "*2 passed*"])
    assert result.ret == 1
    run = pytester.path / ".qbench/runs/s"
    report = json.loads((run / "report.json").read_text())
    assert report["summary"]["passed"] == 2 and report["run"]["exit_code"] == 1
    assert [w["code"] for w in report["warnings"]] == ["session-failed"]
    markdown = (run / "report.md").read_text()
    assert markdown.startswith("# ❌ Test report: 2 passed")
    assert (
        "**❌ Not green:** pytest exited 1 (pytest failed the session: session-timeout: 3.0 "
        "sec exceeded)"
    ) in markdown


def test_a_session_failed_after_a_failure_adds_no_note(pytester: pytest.Pytester) -> None:
    """``-x`` sets the same ``shouldfail`` (``stopping after 1 failures``): the failure says
    why the run is red, and no note is added."""
    pytester.makepyfile(test_x="def test_a():\n    assert 0\n\ndef test_b():\n    pass\n")
    result = pytester.runpytest("-p", "qbench", "-p", "no:randomly", "-x", "--qbench-run-id=x")
    assert result.ret == 1
    report = json.loads((pytester.path / ".qbench/runs/x/report.json").read_text())
    assert report["warnings"] == []
