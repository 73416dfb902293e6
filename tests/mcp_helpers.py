"""Helpers shared by the MCP tests: the children's environment, test files, whole runs, process
groups, cancelling."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest
from child_pytest import child_env

from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.process import PytestProcess
from pytest_qbench.mcp.testrun import RunResult
from pytest_qbench.mcp.tools import QBenchTools


if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from pytest_qbench.mcp.server import QBenchServer


STUBBORN = """
    import os, signal, subprocess, sys, time

    def test_stubborn():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(600)"
        child = subprocess.Popen([sys.executable, "-c", code])
        with open("pids.txt", "w") as f:
            f.write(f"{os.getpid()} {child.pid}")
        time.sleep(600)
"""
"""A test that ignores the interrupt, with a grandchild that ignores it too; both pids go to
``pids.txt`` in the working directory (the project root)."""


def structured(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict), result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    """The one text of a refused call."""
    assert result.is_error, result.structured_content
    [content] = result.content
    assert content.type == "text"
    return content.text


def quiet_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest children load only the plugins they are told to (faster), with no outer options."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def bm25_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog ranks by BM25 alone, as without the ``[search]`` extra (wordllama cannot
    be imported)."""
    monkeypatch.setitem(sys.modules, "wordllama", None)


def group_alive(pgid: int) -> list[int]:
    """Processes of the group that are not zombies (Linux /proc; empty elsewhere)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def stubborn_pids(root: Path) -> tuple[int, int]:
    """The pids ``STUBBORN`` wrote: pytest's (its process group's) and the grandchild's."""
    pytest_pid, grandchild = map(int, (root / "pids.txt").read_text().split())
    return pytest_pid, grandchild


def write(root: Path, name: str, source: str) -> None:
    """Write the dedented ``source`` to ``root / name``, making its directories."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


def run(tools: QBenchTools, **request: Any) -> RunResult:
    """A run to its end, as the server runs it."""
    process = tools.start_run(RunRequest(**request))
    tools.supervise(process)
    return tools.finish_run(process)


SAFETY_NET = 600.0
"""Seconds a test waits for its run to write a file, against a hang only."""


def settle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settle a run found overdue with results missing gets (``STREAM_SETTLE``, 1.1 s)
    made 0 s: the next look judges it. For a test whose run is made overdue while one of its
    tests still runs (``overdue_once_written``): a result that cannot exist yet is no batch's to
    wait for, so the settle could only delay the same answer; the settle's own test
    (test_mcp_contract) keeps it long."""
    from pytest_qbench.mcp import process as running

    monkeypatch.setattr(running, "STREAM_SETTLE", 0.0)


def overdue_once_written(process: PytestProcess, path: Path) -> None:
    """Once the run wrote something to ``path`` (a test or hook of it got there), its deadline
    moved to now: the server stops it at its next look as at its timeout, however long a loaded
    machine took to get there. The run must not end before."""
    deadline = time.monotonic() + SAFETY_NET
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.deadline = time.monotonic()


def overdue_now(built: QBenchServer) -> PytestProcess:
    """The run going on in ``built`` (a test run, a generation, one held for its client), its
    deadline moved to now: as ``overdue_once_written``, for a server a client is connected to."""
    assert built.held is not None
    process = built.held.service.active
    assert process is not None
    process.deadline = time.monotonic()
    return process


async def overdue_when_written(built: QBenchServer, path: Path) -> PytestProcess:
    """``overdue_now`` once the run wrote something to ``path``."""
    import anyio

    while not path.exists() or not path.read_text():
        await anyio.sleep(0.05)
    return overdue_now(built)


def mcp_call(root: Path, tool: str, arguments: dict[str, Any]) -> Any:
    """Call ``tool`` of the server ``qbench-mcp --root ROOT`` serves, through the SDK's client;
    a successful answer. The server is built in this process as the console script builds it
    (its options parsed, ``config_from_args``, ``build_server``) and the client talks to it in
    memory: what the tool answers is the subject here, not the stdio process (whose tests
    start it: test_mcp_server.py, test_mcp_startup.py...). While the call lasts this process's
    environment is the children's (tests/child_pytest.py: the pytest runs it starts load the
    plugins they name, not every installed one), and its directory ``root``."""
    pytest.importorskip("mcp")
    import anyio
    from cli_here import environment
    from cli_here import working_directory
    from mcp import Client

    from pytest_qbench.mcp.config import config_from_args
    from pytest_qbench.mcp.launch import parse_server_args
    from pytest_qbench.mcp.server import build_server

    async def call() -> Any:
        with anyio.fail_after(300):
            async with Client(built) as client:
                answer = await client.call_tool(tool, arguments)
                assert not answer.is_error, answer.content
                return answer

    with working_directory(root), environment(child_env()):
        built = build_server(
            config_from_args(parse_server_args(["--root", str(root)], "qbench-mcp"))
        )
        try:
            return anyio.run(call)
        finally:
            if built.held is not None:  # as ``serve`` does once its client has gone
                built.held.stop_all()
