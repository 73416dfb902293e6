"""run_test_workflow's exit meaning when pytest exits 1 because a gate failed and no test did:
it names the gate, never "tests failed" (found trying qbench on click). A real run through an
in-process client."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import quiet_children


pytest.importorskip("mcp")

from test_mcp_contract import call

from pytest_qbench.mcp.config import ServerConfig


def test_a_failed_coverage_gate_is_named_not_called_failed_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    root = (tmp_path / "project").resolve()
    root.mkdir()
    (root / "shop.py").write_text("def used():\n    return 1\n\n\ndef unused():\n    return 2\n")
    (root / "test_shop.py").write_text(
        textwrap.dedent("""
            import shop

            def test_used():
                assert shop.used() == 1
        """)
    )
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
    arguments = {"coverage": True, "coverage_source": ["shop"], "coverage_threshold": 100}
    result = call(config, "run_test_workflow", arguments)
    content = result.structured_content
    assert isinstance(content, dict)
    assert content["exit_code"] == 1 and content["success"] is False
    assert content["summary"]["passed"] == 1 and content["summary"]["failed"] == 0
    meaning = content["exit_meaning"]
    assert "tests failed" not in meaning, meaning
    assert meaning.startswith("no test failed, but the coverage gate did: coverage "), meaning
    assert "below the required 100%" in meaning


def test_a_process_that_ended_itself_with_status_0_is_not_called_all_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `conftest.py` that ends the process with `os._exit(0)` in a test's teardown: pytest
    never finished its session, and the process's status 0 is not pytest's verdict. The answer
    said `exit 0: all tests passed` beside `FAILED` and the test the run died in (found on a
    conftest with `os._exit`, twelfth round); it now says the session never ended."""
    conftest = (
        "import os\n\n\ndef pytest_runtest_teardown(item):\n"
        "    if item.name == 'test_b':\n        os._exit(0)\n"
    )
    tests = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    content = run_exiting_0(tmp_path, monkeypatch, {"conftest.py": conftest, "test_x.py": tests})
    meaning = content["exit_meaning"]
    assert "all tests passed" not in meaning, meaning
    assert meaning.startswith("the process ended with status 0 before pytest's session"), meaning


def test_a_run_pytest_exit_stopped_with_status_0_is_not_called_all_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test that calls `pytest.exit("...", returncode=0)`: pytest ends its session early with
    status 0 and the tests after it never run. The answer said `FAILED: 1 passed ... (exit 0:
    all tests passed)`; it now says pytest.exit stopped the session before every test ran."""
    tests = (
        "import pytest\n\n\ndef test_a():\n    pass\n\n\n"
        "def test_b():\n    pytest.exit('enough', returncode=0)\n\n\n"
        "def test_c():\n    assert 0\n"
    )
    content = run_exiting_0(tmp_path, monkeypatch, {"test_x.py": tests})
    assert content["summary"]["passed"] == 1
    meaning = content["exit_meaning"]
    assert "all tests passed" not in meaning, meaning
    assert meaning == "pytest.exit stopped the session before every test ran", meaning


def run_exiting_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> dict[str, Any]:
    """``run_test_workflow``'s structured answer on a project of ``files``, whose process
    exits 0 without a verdict of pytest's: not a success."""
    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    root = (tmp_path / "project").resolve()
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
    content = call(config, "run_test_workflow", {}).structured_content
    assert isinstance(content, dict)
    assert content["exit_code"] == 0 and content["success"] is False
    return content
