"""The set-up of the MCP generation tests (test_mcp_generate.py, test_mcp_generate_llm.py): the
real ``qbench-mcp`` over stdio, the client's scripted model, and reading the tools' results."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from generation_setup import quick_env
from mcp_helpers import error_text as error_text
from mcp_helpers import quiet_children
from mcp_helpers import structured as structured


pytest.importorskip("mcp")

from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.types import CallToolResult
from mcp.types import CreateMessageRequestParams
from mcp.types import CreateMessageResult
from mcp.types import TextContent

from pytest_qbench.mcp.config import STOP_GRACE
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import QBenchServer
from pytest_qbench.mcp.server import build_server


USAGE = {"inputTokens": 100, "outputTokens": 20}


def server(root: Path, *extra: str) -> StdioServerParameters:
    """``qbench-mcp --root ROOT`` over stdio, its children's plugin autoload off
    (``generation_setup.quick_env``)."""
    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    return StdioServerParameters(
        command=script, args=["--root", str(root), *extra], env=quick_env(), cwd=str(root)
    )


NEVER = 1800.0
"""A generation's timeout that never comes by itself in a test: the server's largest, past the
tests' safety nets (900 s); the test moves the deadline instead (``mcp_helpers.overdue_now``)."""


def in_process(
    root: Path, monkeypatch: pytest.MonkeyPatch, stop_grace: float = STOP_GRACE, **env: str
) -> QBenchServer:
    """The server ``server`` starts, built in this process (``Client`` connects to it in
    memory), so that a test can move a generation's deadline (``mcp_helpers.overdue_now``): its children's
    environment is ``quick_env(**env)``, set here for the test."""
    quiet_children(monkeypatch)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return build_server(ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=stop_grace))


def stop_held(built: QBenchServer) -> None:
    """Stop the generations ``built`` still holds for their client, as ``serve`` does once its
    client has gone."""
    if built.held is not None:
        built.held.stop_all()


class Model:
    """The client's model: answers from the table by the function named in the first prompt,
    the follow-up getting the second answer; every prompt kept."""

    def __init__(self, usage: dict[str, int] | None, table: dict[str, list[str]]) -> None:
        self.usage = usage
        self.table = table
        self.prompts: list[list[str]] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        texts = [m.content.text for m in params.messages if isinstance(m.content, TextContent)]
        self.prompts.append(texts)
        name = next(n for n in self.table if f"`{n}`" in texts[0])
        answers = self.table[name]
        answer = answers[min(len(texts) // 2, len(answers) - 1)]
        meta = {"usage": self.usage} if self.usage else None
        return CreateMessageResult.model_validate(
            {
                "role": "assistant",
                "content": {"type": "text", "text": answer},
                "model": "scripted",
                "stopReason": "endTurn",
                **({"_meta": meta} if meta else {}),
            }
        )


def dump_calls(calls: dict[str, CallToolResult]) -> dict[str, Any]:
    """The calls' results as JSON, to share them between pytest-xdist workers."""
    return {name: call.model_dump(mode="json", by_alias=True) for name, call in calls.items()}


def load_calls(kept: dict[str, Any]) -> dict[str, CallToolResult]:
    """The calls' results ``dump_calls`` kept."""
    return {name: CallToolResult.model_validate(call) for name, call in kept.items()}
