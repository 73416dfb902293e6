"""qbench-mcp answers ``initialize`` and ``tools/list`` without importing any tool's machinery:
each tool imports what it needs when it is first called (the history index, the test catalog,
the report aggregation, the static checkers, test generation)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


pytest.importorskip("mcp")

STARTUP = """
import json, sys
from pathlib import Path

import anyio

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.launch import load_server

load_server()  # what qbench-mcp imports before it serves
from pytest_qbench.mcp.server import build_server

root = Path(sys.argv[1])
server = build_server(ServerConfig(root=root, qbench_dir=root / ".qbench"))
loaded = {}


async def main():
    await server.list_tools()
    loaded["listed"] = sorted(sys.modules)
    for name, arguments in [("search_tests", {"query": "login"}), ("list_runs", {})]:
        await server.call_tool(name, arguments)
        loaded[name] = sorted(sys.modules)


anyio.run(main)
print(json.dumps(loaded))
"""

NEEDED_BY = {
    "sqlite3": "search_tests",
    "pytest_qbench.mcp.catalog": "search_tests",
    "pytest_qbench.history.backend": "search_tests",
    "pytest_qbench.history.toollog": "search_tests",
    "pytest_qbench.history.queries": "list_runs",
    "pytest_qbench.history.indexer": None,
    "pytest_qbench.report.aggregate": None,
    "pytest_qbench.report.digest": None,
    "pytest_qbench.report.gates": None,
    "pytest_qbench.report.casemeta": None,
    "pytest_qbench.tools.runner": None,
    "wordllama": None,
    "numpy": None,
}
"""Heavy modules and the first of the calls above that needs them: search_tests opens the
catalog (SQLite FTS5), and every call is logged in the history index afterwards; list_runs
queries the index. ``None``: none of them does (run_test_workflow, ingest_tests,
run_build_workflow or generate_tests_workflow do; the embedding model and numpy load only
when ingest_tests embeds or a catalog with vectors is searched)."""


pytestmark = pytest.mark.xdist_group("test_mcp_startup")  # one worker makes `loaded`


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The modules loaded once the tools are listed, then after each call, in a fresh
    interpreter."""
    root = tmp_path_factory.mktemp("startup")
    done = subprocess.run(
        [sys.executable, "-c", STARTUP, str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def test_the_server_starts_without_any_tools_machinery(loaded: dict[str, list[str]]) -> None:
    """Listing the tools (which publishes every output schema) loads none of the heavy modules."""
    assert sorted(set(NEEDED_BY) & set(loaded["listed"])) == []


@pytest.mark.parametrize("call", ["search_tests", "list_runs"])
def test_a_tool_imports_its_machinery_when_first_called(
    loaded: dict[str, list[str]], call: str
) -> None:
    """After a call, exactly the heavy modules of the tools called so far are loaded."""
    calls = list(loaded)[1 : list(loaded).index(call) + 1]
    expected = sorted(module for module, needed in NEEDED_BY.items() if needed in calls)
    assert sorted(set(NEEDED_BY) & set(loaded[call])) == expected


def test_each_tool_is_one_module() -> None:
    """A tool's result model (its function's return annotation, the output schema) and its
    text live in one module of their own, not in the SDK module nor the run lifecycle."""
    from pytest_qbench.mcp.server import OUTPUTS
    from pytest_qbench.mcp.server import REGISTERED

    assert [spec.name for spec in REGISTERED] == list(OUTPUTS)
    homes = {spec.name: (spec.model.__module__, spec.text.__module__) for spec in REGISTERED}
    shared = {f"pytest_qbench.mcp.{name}" for name in ("server", "service", "tools", "text")}
    for name, (model_home, text_home) in homes.items():
        assert model_home == text_home, name
        assert model_home not in shared, name


def served_imports(root: Path, log: Path) -> list[str]:
    """The real ``qbench-mcp`` over stdio to a real client, which initializes the session,
    lists the tools and closes: the tools listed, and every module the server imported
    (``PYTHONPROFILEIMPORTTIME`` writes one line per module to its stderr, kept in ``log``)."""
    import anyio
    from mcp import Client
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    params = StdioServerParameters(command=script, args=["--root", str(root)], env=env)

    async def listed() -> list[str]:
        with log.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(listed)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], set[str]]:
    """The tools a real client listed, and the modules the server imported till it closed."""
    root = tmp_path_factory.mktemp("served")
    log = root / "imports.log"
    tools = served_imports(root, log)
    lines = log.read_text(encoding="utf-8").splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "pytest_qbench.mcp.server" in imported  # the log is complete: the server was imported
    return tools, imported


def test_a_real_client_starts_the_server_without_any_tools_machinery(
    served: tuple[list[str], set[str]],
) -> None:
    """``initialize`` and ``tools/list`` from a real client over stdio, answered by the installed
    ``qbench-mcp``: the server process imported none of the tools' heavy modules."""
    tools, imported = served
    assert "run_test_workflow" in tools and "search_tests" in tools
    assert sorted(set(NEEDED_BY) & imported) == []


HTTP_SERVER_ONLY = (
    "uvicorn.config",
    "uvicorn.server",
    "click",
    "multiprocessing",
    "logging.config",
)
"""What only the SDK's HTTP server uses and its stdio start does without: uvicorn, with click,
logging.config and multiprocessing, which it imports (sse-starlette's attempt at ``uvicorn.main``
fails at once, but the log lists it). starlette, sse-starlette and httpx2 stay: the modules of
the SDK's server classes import them at their top."""


def test_a_real_client_starts_the_server_without_the_http_servers_parts(
    served: tuple[list[str], set[str]],
) -> None:
    """The stdio server never imported uvicorn (``server_import``)."""
    _tools, imported = served
    assert sorted(set(HTTP_SERVER_ONLY) & imported) == []
