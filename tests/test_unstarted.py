"""A run that pytest stopped before its session started (a plugin's ``pytest_configure``
raised) leaves no earlier run's verdict at a configured output (plugin/unstarted.py)."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.report.models import TestReport
from pytest_qbench.report.verdict import run_green


OUTPUTS = ("--qbench-json=r.json", "--qbench-md=r.md", "--qbench-html=r.html")
EARLIER = {
    "r.json": '{"run": {"run_id": "earlier"}}',
    "r.md": "# ✅ Test report: 1 passed\n",
    "r.html": "<h1>✅ earlier</h1>",
}
RAISES_AT_CONFIGURE = """
def pytest_configure(config):
    raise RuntimeError("a plugin's configure failed")
"""


def test_a_plugin_failing_at_configure_leaves_a_red_report(pytester: pytest.Pytester) -> None:
    """pytest-asyncio's deprecation warning under ``filterwarnings = error`` (or any plugin's
    ``pytest_configure`` raising) stops pytest before its session starts: INTERNALERROR, exit 3.
    Before, the earlier green run's reports stood at every configured output; now each says
    that pytest stopped before its session started, red, with no test."""
    for name, text in EARLIER.items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    pytester.makeconftest(RAISES_AT_CONFIGURE)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert not run_green(data)
    report = TestReport.model_validate(data)
    assert report.summary.total == 0
    assert report.run.recording_errors == [
        "pytest stopped before its session started (an error in a plugin's pytest_configure, or "
        "a usage error): no test ran; pytest's output names the error"
    ]
    for name in ("r.md", "r.html"):
        text = (pytester.path / name).read_text(encoding="utf-8")
        assert "✅" not in text and "pytest stopped before its session started" in text


def test_help_and_a_started_run_keep_their_reports(pytester: pytest.Pytester) -> None:
    """``--help`` and ``--markers`` configure and end with no session by design: the outputs are left alone; a
    run that started writes its own report as before."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    (pytester.path / "r.md").write_text(EARLIER["r.md"], encoding="utf-8")
    for shown in ("--help", "--markers"):
        assert pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS, shown).ret == 0
        assert (pytester.path / "r.md").read_text(encoding="utf-8") == EARLIER["r.md"]
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.OK
    assert run_green(json.loads((pytester.path / "r.json").read_text(encoding="utf-8")))
