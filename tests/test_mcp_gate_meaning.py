"""run_test_workflow's exit meaning when pytest exits 1 because a gate failed and no test did:
it names the gate, never "tests failed" (found trying qbench on click). A real run through an
in-process client."""

from __future__ import annotations

import textwrap
from pathlib import Path

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
