"""run_build_workflow's ``target`` and ``check_type`` (issue 22), through the SDK's own MCP
client: the real tsc (installed from the npm registry into a cache, ``node_tools``) finds
TS2345 at its line in the front end; ``both`` is the design notes' typecheck and build."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import quiet_children
from node_tools import frontend_project


pytest.importorskip("mcp")

import anyio
from mcp import Client

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import build_server


pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.xdist_group("test_mcp_build_frontend"),  # one worker makes `root`
]


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python package at the root (a type error in ``app.py``), a front end in ``web/``."""
    project = tmp_path_factory.mktemp("fullstack")
    (project / "app.py").write_text('def half(x: int) -> int:\n    return "x"\n')
    frontend_project(project / "web")
    return project.resolve()


def build(root: Path, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Call run_build_workflow through a client: whether it is an error, and its result."""

    async def main() -> tuple[bool, dict[str, Any]]:
        config = ServerConfig(root=root, qbench_dir=root / ".qbench", default_timeout=300.0)
        async with Client(build_server(config), raise_exceptions=True) as client:
            result = await client.call_tool("run_build_workflow", arguments)
        if result.is_error:
            return True, {"text": result.content[0].text}  # type: ignore[union-attr]
        return False, result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]

    return anyio.run(main)


def test_frontend_target_finds_ts2345_at_its_line(root: Path) -> None:
    failed, result = build(root, {"target": "frontend", "check_type": "typecheck"})
    assert not failed, result
    assert result["success"] is False
    assert [c["tool"] for c in result["checks"]] == ["tsc.typecheck"]
    [error] = result["errors"]
    assert (error["file"], error["line"], error["column"], error["error_type"]) == (
        "web/src/greet.ts",
        6,
        31,
        "TS2345",
    )
    assert result["summary"]["type_errors"] == 1


def test_both_targets_by_default_give_python_and_typescript_errors(root: Path) -> None:
    """Without a target, a project with a front end is checked whole; ``both`` runs the type
    checkers and the build check, not the linters."""
    failed, result = build(root, {"check_type": "both"})
    assert not failed, result
    tools = [c["tool"] for c in result["checks"]]
    assert "tsc.typecheck" in tools and "mypy.typecheck" in tools
    assert "eslint.lint" not in tools and "ruff.lint" not in tools
    places = {(e["tool"], e["file"], e["line"]) for e in result["errors"]}
    assert ("tsc.typecheck", "web/src/greet.ts", 6) in places
    assert ("mypy.typecheck", "app.py", 2) in places


def test_frontend_target_without_a_front_end_is_refused(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("X = 1\n")
    failed, result = build(tmp_path.resolve(), {"target": "frontend"})
    assert failed and "no front end" in result["text"]
