"""What the MCP tools say about collection errors and long assertion messages, against real
pytest children (issues 11.2, 11.13)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_helpers import quiet_children
from mcp_helpers import run
from mcp_helpers import write

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.testrun import run_text
from pytest_qbench.mcp.tools import QBenchTools


pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.runs_pytest,  # what pytest children with qbench say of collection errors
]


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    return root.resolve()


@pytest.fixture
def tools(project: Path) -> QBenchTools:
    return QBenchTools(ServerConfig(root=project, qbench_dir=project / ".qbench", stop_grace=1.0))


def test_collection_error_names_its_cause_and_is_not_partial(
    tools: QBenchTools, project: Path
) -> None:
    """run_test_workflow's text and next step give the import's cause at file:line, and a run
    stopped by collection errors is not "interrupted" (issue 11.2)."""
    write(project, "tests/test_broken.py", "import nonexistent_mod\n\n\ndef test_x():\n    pass\n")
    result = run(tools)
    assert result.exit_code == 2 and not result.success
    assert result.partial is False
    [error] = result.collection_errors
    assert (error.file, error.line) == ("tests/test_broken.py", 1)
    cause = "ModuleNotFoundError: No module named 'nonexistent_mod'"
    assert result.next_steps == [f"Fix the collection error in tests/test_broken.py:1: {cause}"]
    assert result.summary.pass_rate is None
    text = run_text(result, 10_000)
    assert f"Collection error: tests/test_broken.py at tests/test_broken.py:1: {cause}" in text
    assert "Partial" not in text and "interrupted" not in text.lower()
    assert "exit 2: errors during collection; no tests ran" in text
    detail = tools.get_test_failure(result.run_id, "tests/test_broken.py")
    assert (detail.phase, detail.file, detail.line) == ("collect", "tests/test_broken.py", 1)
    assert detail.error_message == cause
