"""The MCP server through the SDK's own clients: in-process for every tool, and once over stdio
through the installed ``qbench-mcp`` (issue 6)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import sys
import textwrap
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import STUBBORN
from mcp_helpers import bm25_only
from mcp_helpers import group_alive
from mcp_helpers import quiet_children
from mcp_helpers import structured
from mcp_helpers import stubborn_pids
from mcp_helpers import write


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp import StdioServerParameters
from mcp.types import CallToolResult

from pytest_qbench.mcp.config import HARD_CAP
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import OUTPUTS
from pytest_qbench.mcp.server import build_server


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

CATALOG = Path(__file__).parent / "data" / "mcp" / "catalog.json"
TOOLS = {
    "run_test_workflow",
    "get_test_failure",
    "get_run_output",
    "list_runs",
    "flaky_tests",
    "search_tests",
    "get_test_by_key",
    "find_similar_tests",
    "ingest_tests",
    "check_health",
    "run_build_workflow",
    "generate_tests_workflow",
}
SUITE = """
    import pytest

    def test_pass():
        pass

    @pytest.mark.qbench_case(key="SHOP-3", title="Totals add up", tags=["cart"])
    def test_fail():
        '''The cart total is the sum of the items.'''
        print("captured line")
        assert sum([1, 2]) == 4
"""


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_suite.py").write_text(textwrap.dedent(SUITE))
    shutil.copy(CATALOG, root / "catalog.json")
    return root.resolve()


@pytest.fixture
def config(project: Path, monkeypatch: pytest.MonkeyPatch) -> ServerConfig:
    bm25_only(monkeypatch)  # its counts are BM25's; test_mcp_search checks the hybrid ranking
    return ServerConfig(root=project, qbench_dir=project / ".qbench", stop_grace=1.0)


def with_client(config: ServerConfig, work: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run ``work`` with an in-process client of a new server."""

    async def main() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await work(client)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert content.type == "text"
    return content.text


async def cancel_when_started(client: Client, root: Path) -> None:
    """Start a run and cancel the call once ``STUBBORN`` has written its pids."""
    pids = root / "pids.txt"
    with anyio.move_on_after(600):
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()

            async def call() -> None:
                with scope:  # a timeout that never comes: the cancel ends the run
                    await client.call_tool("run_test_workflow", {"timeout_seconds": 1800})

            group.start_soon(call)
            while not pids.exists() or not pids.read_text():
                await anyio.sleep(0.05)
            scope.cancel()


def test_every_tool_is_listed_with_its_schemas(config: ServerConfig) -> None:
    """Twelve tools (issue 13.7: run_build_workflow; issue 14.3: generate_tests_workflow), each with an input schema, an output schema and a description (issue 6)."""

    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in with_client(config, work)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    run = tools["run_test_workflow"]
    assert set(run.input_schema["properties"]) == {
        "test_path",
        "keyword",
        "markers",
        "coverage",
        "coverage_threshold",
        "coverage_source",
        "fail_fast",
        "verbose",
        "max_failures",
        "timeout_seconds",
        "test_type",
    }
    assert "ctx" not in run.input_schema["properties"]
    assert {"run_id", "failures", "truncated", "next_steps"} <= set(run.output_schema["properties"])
    assert tools["search_tests"].annotations.read_only_hint is True
    assert tools["run_test_workflow"].annotations.read_only_hint is False


def keywords(schema: Any) -> set[str]:
    """The JSON Schema keywords used anywhere in ``schema`` (not the names of properties)."""
    found: set[str] = set()
    if isinstance(schema, list):
        for item in schema:
            found |= keywords(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            named = key in ("properties", "$defs") and isinstance(value, dict)
            for sub in value.values() if named else [value]:
                found |= keywords(sub)
    return found


def test_the_tool_list_is_short(config: ServerConfig) -> None:
    """list_tools costs an assistant little: no titles or defaults in output schemas, optional
    values as type lists, each nested model described once (issue 11.14)."""

    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = with_client(config, work)
    listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    # 42.8 KB before; under 32 KB for ten tools, then run_build_workflow (issue 13.7) and
    # generate_tests_workflow (issue 14.3, 4.4 KB); then additionalProperties: false on each
    # input schema and the default timeouts in four descriptions (issue 19.6, 19.5: 0.45 KB)
    # ; then expand, include_siblings, each hit's cases and similarity, ingest's embedded and
    # check_health's embedder (issue 24: 38 477 -> 39 699 bytes, +1.2 KB); then the run's CI
    # shard, in list_runs and in get_run_output's RunMeta (issue 25: -> 40 976 bytes, +1.3 KB)
    # ; then run_test_workflow's test_type (pytest, vitest, jest, all) and each failure's runner
    # (issue 22: -> 41 256 bytes, +0.3 KB; descriptions already cut to a few words); then the
    # run's subtests counts, its tool and check_health's catalog_location (-> 41 560 bytes)
    # ; then list_runs' subtest counts, said in a few words (-> 41 594 bytes); then the run's
    # max_failures and last_failed (qbench diff after -x or --lf in addopts: 42 219), with
    # shorter descriptions of those and of collected, collect_only and a diagnostic's history
    # ; then the run's recording_errors (an incomplete report is never green), with RunMeta's
    # other descriptions cut to fit (-> 41 571 bytes); then a queue's tests (ShardInfo.tests:
    # a lost machine's report is missing), with ShardInfo's descriptions cut to fit; then the
    # run's other words (vitest's todo: a total its counts did not add up to), with timed_out's
    # and test_path's descriptions cut to fit (-> 41 595 bytes); then list_runs' recording_errors
    # (a run killed at its session's end reads incomplete), with RunEntry's descriptions cut
    # (-> 41 551 bytes); then coverage and max_llm_budget null by default (audit3: told from
    # false and 10000, so a contradiction is refused), with the run id's, test_path's and
    # source's descriptions cut (-> 41 545 bytes); then list_runs' other (a plugin's own words:
    # 1 known), with RunEntry's descriptions cut again (-> 41 550 bytes); then the digest
    # coverage's branches (the total counts them) and the run's died (its end unknown), with
    # the catalog's, the run reference's and the texts' descriptions cut (-> 41 594 bytes)
    assert len(json.dumps(listed, separators=(",", ":"))) < 41_600
    published = sum(len(json.dumps(tool.output_schema, separators=(",", ":"))) for tool in tools)
    full = sum(
        len(json.dumps(m.model_json_schema(), separators=(",", ":"))) for m in OUTPUTS.values()
    )
    assert published < 0.7 * full  # 34 KB of 42.8 before
    for tool in tools:
        assert not {"title", "default"} & keywords(tool.output_schema)
        assert "title" not in keywords(tool.input_schema)
        for definition in (tool.output_schema or {}).get("$defs", {}).values():
            assert "description" not in definition
    run = next(tool for tool in tools if tool.name == "run_test_workflow")
    assert run.output_schema["properties"]["exit_code"]["type"] == ["integer", "null"]
    assert (
        "get_test_failure"
        in run.output_schema["$defs"]["Truncation"]["properties"]["failures"]["description"]
    )
    assert run.input_schema["properties"]["max_failures"]["default"] == 10


WAIT_FOR_NOTICE = """
import time
from pathlib import Path

def pytest_runtest_setup(item):
    go = Path(__file__).with_name("go")
    deadline = time.monotonic() + 600  # a safety net against a hang only
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""
"""A conftest whose tests start once the client has had a progress notice (``go`` written):
that the first notice comes before any test ended does not depend on the machine's load."""


def test_every_tool_through_the_client(config: ServerConfig) -> None:
    """Each tool answers with text and structured content that the client validated against
    the tool's output schema; run_test_workflow reports progress (issue 6), the first notice
    while no test has ended (the tests wait for it: ``WAIT_FOR_NOTICE``)."""
    notified: list[tuple[float, float | None, str | None]] = []
    (config.root / "conftest.py").write_text(WAIT_FOR_NOTICE, encoding="utf-8")

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notified.append((progress, total, message))
        (config.root / "go").touch()

    async def work(client: Client) -> dict[str, CallToolResult]:
        out = {
            "run": await client.call_tool("run_test_workflow", {}, progress_callback=on_progress)
        }
        run_id = structured(out["run"])["run_id"]
        out["failure"] = await client.call_tool(
            "get_test_failure", {"run_id": run_id, "test": "test_fail"}
        )
        out["output"] = await client.call_tool("get_run_output", {"run_id": run_id, "limit": 5})
        out["runs"] = await client.call_tool("list_runs", {"limit": 5})
        out["flaky"] = await client.call_tool("flaky_tests", {})
        out["ingest"] = await client.call_tool("ingest_tests", {})
        out["export"] = await client.call_tool("ingest_tests", {"source": "catalog.json"})
        out["search"] = await client.call_tool(
            "search_tests", {"query": "login", "tags": ["auth"], "limit": 2}
        )
        out["key"] = await client.call_tool("get_test_by_key", {"key": "shop-3"})
        out["similar"] = await client.call_tool(
            "find_similar_tests", {"text": "sign in with a password", "limit": 3}
        )
        out["health"] = await client.call_tool("check_health", {})
        return out

    out = with_client(config, work)
    for name, result in out.items():
        assert len(text_of(result)) <= config.budget, name
        assert len(json.dumps(structured(result))) <= config.budget, name

    run = structured(out["run"])
    assert (run["summary"]["passed"], run["summary"]["failed"]) == (1, 1)
    assert [f["test_name"] for f in run["failures"]] == ["tests/test_suite.py::test_fail"]
    assert text_of(out["run"]).startswith("FAILED: 1 failed, 1 passed")
    assert notified[0][0] == 0 and notified[-1][:2] == (2, 2)
    assert [p[0] for p in notified] == sorted({p[0] for p in notified})

    failure = structured(out["failure"])
    assert failure["stdout"].strip() == "captured line" and failure["key"] == "SHOP-3"
    assert "assert 3 == 4" in text_of(out["failure"])
    assert structured(out["output"])["run"]["run_id"] == run["run_id"]
    assert structured(out["runs"])["runs"][0]["run_id"] == run["run_id"]
    assert structured(out["flaky"])["tests"] == []
    assert structured(out["ingest"])["added"] == 2
    assert structured(out["export"])["added"] == 11
    search = structured(out["search"])
    assert search["total"] == 3 and len(search["results"]) == 2 and search["next_cursor"]
    assert structured(out["key"])["nodeid"] == "tests/test_suite.py::test_fail"
    assert structured(out["similar"])["results"]
    health = structured(out["health"])
    assert health["status"] == "ok" and health["catalog_size"] == 13
    assert health["runs_indexed"] == 1


def test_refused_arguments_are_tool_errors(config: ServerConfig) -> None:
    """Escapes, option injection and out-of-range values come back as tool errors that say
    why, and nothing runs (issue 6)."""
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("run_test_workflow", {"test_path": "../../etc"}, "holds '..'"),
        ("run_test_workflow", {"test_path": ["/etc/passwd"]}, "outside the project root"),
        ("run_test_workflow", {"test_path": "--collect-only"}, "options are not accepted"),
        ("run_test_workflow", {"keyword": "-p evil"}, "options are not accepted"),
        ("run_test_workflow", {"markers": "x\n--co"}, "control character"),
        ("run_test_workflow", {"coverage_source": ["--cov=/"]}, "options are not accepted"),
        ("run_test_workflow", {"max_failures": 0}, "greater than or equal to 1"),
        ("run_test_workflow", {"coverage_threshold": 120}, "less than or equal to 100"),
        ("get_run_output", {"run_id": "../x"}, "is not a run id"),
        ("get_run_output", {"run_id": "last", "stream": "secrets"}, "stdout"),
        ("ingest_tests", {"source": "/etc/passwd"}, "outside the project root"),
        ("search_tests", {"limit": 500}, "less than or equal to 50"),
    ]

    async def work(client: Client) -> list[CallToolResult]:
        return [await client.call_tool(name, args) for name, args, _reason in calls]

    for (name, _args, reason), result in zip(calls, with_client(config, work), strict=True):
        assert result.is_error, name
        assert reason in text_of(result), (name, text_of(result))
    assert not (config.qbench_dir / "runs").exists()


def test_500_failures_stay_within_the_budget(config: ServerConfig) -> None:
    """A real run with 500 failures, long messages and deep traces: the response keeps the
    summary and the first failures, counts the rest, and stays within the budget (issue 6)."""
    (config.root / "tests" / "test_suite.py").write_text(
        textwrap.dedent(
            """
            import pytest

            def deep(n, i):
                if n:
                    return deep(n - 1, i)
                raise ValueError(f"failure {i}: " + "detail " * 400)

            @pytest.mark.parametrize("i", range(500))
            def test_many(i):
                deep(3, i)
            """
        )
    )

    async def work(client: Client) -> CallToolResult:
        return await client.call_tool("run_test_workflow", {"max_failures": 100})

    result = with_client(config, work)
    data = structured(result)
    size = len(json.dumps(data, separators=(",", ":")).encode())
    assert size <= config.budget
    assert size + len(text_of(result).encode()) <= HARD_CAP
    assert data["summary"]["failed"] == 500
    listed = data["failures"]
    assert listed and listed[0]["test_name"] == "tests/test_suite.py::test_many[0]"
    assert data["truncated"]["failures"] == 500 - len(listed)
    first = listed[0]
    assert first["stack_trace"].startswith("tests/test_suite.py:11: in test_many")
    assert first["stack_trace"].rstrip().endswith("detail")
    assert "qbench cut" in first["stack_trace"]
    assert first["error_message"].startswith("failure 0: detail")


def test_cancelling_a_run_kills_its_process_group(config: ServerConfig) -> None:
    """The client gives up: the server kills pytest and the grandchild it started (both
    ignore the interrupt), keeps the run's files, and serves the next call (issue 6). Nothing
    of the run can end in the stop's grace (everything ignores the interrupt): 0.1 s of it."""
    (config.root / "tests" / "test_suite.py").write_text(textwrap.dedent(STUBBORN))
    config = dataclasses.replace(config, stop_grace=0.1)

    async def work(client: Client) -> CallToolResult:
        await cancel_when_started(client, config.root)
        return await client.call_tool("check_health", {})

    health = structured(with_client(config, work))
    assert health["run_in_progress"] is None
    pytest_pid, _grandchild = stubborn_pids(config.root)
    assert group_alive(pytest_pid) == []
    [run_dir] = (config.qbench_dir / "runs").iterdir()
    meta = json.loads((run_dir / "mcp-run.json").read_text())
    assert meta["interrupted"] is True and meta["exit_code"] < 0
    database = sqlite3.connect(config.qbench_dir / "index.sqlite")
    logged = database.execute("SELECT tool, success, error_type FROM tool_calls ORDER BY id")
    assert logged.fetchall() == [  # (issue 13.8) the cancelled call is logged too
        ("run_test_workflow", 0, "CancelledError"),
        ("check_health", 1, None),
    ]
    database.close()


def test_stdio_end_to_end_through_the_console_script(project: Path) -> None:
    """``qbench-mcp`` over stdio: the protocol is all its stdout carries, a run comes back,
    a cancelled run's process group dies, and the server still answers (issue 6)."""
    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    (project / "tests" / "test_z_stubborn.py").write_text(textwrap.dedent(STUBBORN))
    params = StdioServerParameters(
        command=script,
        args=["--root", str(project), "--stop-grace", "0.1"],  # the stubborn run ignores it
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=str(project),
    )

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        with anyio.fail_after(900):
            return await session()

    async def session() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(params) as client:
            run = await client.call_tool(
                "run_test_workflow", {"test_path": "tests/test_suite.py", "timeout_seconds": 600}
            )
            await cancel_when_started(client, project)
            health = structured(await client.call_tool("check_health", {}))
            while health["run_in_progress"] is not None:  # the cancel is a notification
                await anyio.sleep(0.1)
                health = structured(await client.call_tool("check_health", {}))
            return structured(run), health

    run, health = anyio.run(main)
    assert run["summary"]["failed"] == 1 and run["exit_code"] == 1
    assert health["project_root"] == str(project)
    pytest_pid, _grandchild = stubborn_pids(project)
    assert group_alive(pytest_pid) == []


NOMINAL_RUN = 10_000.0
"""Seconds the server's clock jumps while the logged run goes."""


def test_every_tool_call_is_logged_in_the_history_index(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 13.8) Each call, failed ones too, is a row of tool_calls: tool, arguments with
    secrets redacted, success, error type, duration, response bytes and the raw output the
    response replaced; qbench mcp-log lists them and check_health shows the totals."""
    import time
    import types

    from pytest_qbench.cli import main
    from pytest_qbench.mcp import server
    from pytest_qbench.mcp import testrun
    from pytest_qbench.mcp.tools import QBenchTools

    monkeypatch.setenv("SHOP_API_TOKEN", "tok-7f3a9c2e51")
    # The server's clock, 10 000 s ahead once the run has started: the run's row must hold
    # those seconds and a later call's row none, whatever the machine's speed.
    ahead = [0.0]
    clock = types.SimpleNamespace(monotonic=lambda: time.monotonic() + ahead[0])
    monkeypatch.setattr(server, "time", clock)

    def start_run(tools: QBenchTools, request: Any) -> Any:
        ahead[0] = NOMINAL_RUN
        return testrun.start_run(tools, request)

    monkeypatch.setattr(QBenchTools, "start_run", start_run)

    async def work(client: Client) -> dict[str, Any]:
        run = await client.call_tool("run_test_workflow", {"keyword": "tok-7f3a9c2e51 or fail"})
        run_id = structured(run)["run_id"]
        await client.call_tool("get_test_failure", {"run_id": run_id, "test": "test_fail"})
        await client.call_tool("get_run_output", {"run_id": run_id, "limit": 5})
        await client.call_tool("get_run_output", {"run_id": "../x"})
        await client.call_tool("search_tests", {"limit": 500})
        await client.call_tool("no_such_tool", {})
        return structured(await client.call_tool("check_health", {}))

    health = with_client(config, work)
    database = sqlite3.connect(config.qbench_dir / "index.sqlite")
    columns = "tool, arguments, success, error_type, duration, response_bytes, replaced_bytes"
    rows = database.execute(f"SELECT {columns} FROM tool_calls ORDER BY id").fetchall()
    database.close()
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("run_test_workflow", 1, None),
        ("get_test_failure", 1, None),
        ("get_run_output", 1, None),
        ("get_run_output", 0, "ToolFailure"),
        ("search_tests", 0, "ValidationError"),
        ("no_such_tool", 0, "ToolError"),
        ("check_health", 1, None),
    ]
    assert json.loads(rows[0][1]) == {"keyword": "[redacted] or fail"}
    assert "tok-7f3a9c2e51" not in json.dumps(rows)
    run_dir = next((config.qbench_dir / "runs").iterdir())
    raw = sum((run_dir / name).stat().st_size for name in ("stdout.txt", "stderr.txt"))
    assert raw > 0 and rows[0][6] == raw and rows[1][6] == raw
    assert [r[6] for r in rows[2:]] == [0] * 5
    assert all(r[4] >= 0 and r[5] > 0 for r in rows)
    assert rows[0][4] >= NOMINAL_RUN > rows[2][4]  # each call's own time, the run's nominal one
    # check_health reports the calls logged before it
    totals = {t["tool"]: t for t in health["tool_calls"]}
    assert set(totals) == {"run_test_workflow", "get_test_failure", "get_run_output"} | {
        "search_tests",
        "no_such_tool",
    }
    assert totals["get_run_output"]["calls"] == 2
    assert totals["get_run_output"]["success_rate"] == 0.5
    assert totals["run_test_workflow"]["bytes_saved"] == max(0, raw - rows[0][5])

    monkeypatch.chdir(config.root)
    capsys.readouterr()
    assert main(["mcp-log", "--limit", "3", "--json"]) == 0
    logged = json.loads(capsys.readouterr().out)
    assert [c["tool"] for c in logged["calls"]] == ["check_health", "no_such_tool", "search_tests"]
    assert logged["calls"][2]["error_type"] == "ValidationError"
    assert sum(t["calls"] for t in logged["totals"]) == 7
    assert main(["mcp-log"]) == 0
    text = capsys.readouterr().out
    assert "Recent calls (7 of 7):" in text and "Totals per tool:" in text
    assert "FAILED ToolFailure" in text
    assert "tok-7f3a9c2e51" not in text
    line = next(line for line in text.splitlines() if line.startswith("get_run_output "))
    assert line.split()[1:3] == ["2", "50%"]


def test_a_log_that_cannot_be_written_never_fails_a_call(
    config: ServerConfig, caplog: pytest.LogCaptureFixture
) -> None:
    """(issue 13.8) An index that cannot be opened costs the log, not the call: the tool answers
    as always and the server warns once."""
    config.qbench_dir.mkdir(parents=True)
    (config.qbench_dir / "index.sqlite").mkdir()  # a directory where the index should be

    async def work(client: Client) -> list[CallToolResult]:
        return [await client.call_tool("list_runs", {}) for _ in range(2)]

    for result in with_client(config, work):
        assert not result.is_error
    warnings = [r.getMessage() for r in caplog.records if "not logged" in r.getMessage()]
    assert len(warnings) == 1 and "list_runs" in warnings[0]


CHECKED = """\
import os


def greet(name: str) -> int:
    return "hello " + name
"""
"""A lint error (F401, line 1) and a type error (return-value, line 5) (issue 13.7)."""


def test_build_workflow_through_the_client_is_logged(config: ServerConfig) -> None:
    """issue 13.7: run_build_workflow through the SDK client returns the lint and the type
    error within the budget, get_run_output pages a checker's log, and the call log counts the
    checkers' raw logs as the bytes the response replaced."""
    (config.root / "pkg").mkdir()
    (config.root / "pkg" / "a.py").write_text(CHECKED)

    async def work(client: Client) -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        build = await client.call_tool(
            "run_build_workflow", {"check_type": "all", "paths": "pkg", "timeout_seconds": 120}
        )
        run_id = structured(build)["run_id"]
        page = await client.call_tool(
            "get_run_output", {"run_id": run_id, "stream": "mypy.typecheck"}
        )
        refused = await client.call_tool(
            "run_build_workflow", {"check_type": "lint", "paths": ["../.."]}
        )
        return build, page, refused

    build, page, refused = with_client(config, work)
    result = structured(build)
    assert len(json.dumps(result)) <= config.budget
    assert {(e["file"], e["line"], e["error_type"]) for e in result["errors"]} == {
        ("pkg/a.py", 1, "F401"),
        ("pkg/a.py", 5, "return-value"),
    }
    assert result["summary"]["type_errors"] == result["summary"]["lint_errors"] == 1
    assert "Fix type error in pkg/a.py:5 (return-value)" in result["next_steps"]
    assert text_of(build).startswith("FAILED")
    assert "return-value" in structured(page)["text"]
    assert refused.is_error and "holds '..'" in text_of(refused)
    database = sqlite3.connect(config.qbench_dir / "index.sqlite")
    rows = database.execute(
        "SELECT tool, success, replaced_bytes FROM tool_calls ORDER BY id"
    ).fetchall()
    database.close()
    run_dir = config.qbench_dir / "runs" / result["run_id"]
    raw = sum(log.stat().st_size for log in run_dir.glob("*.log"))
    assert rows == [
        ("run_build_workflow", 1, raw),
        ("get_run_output", 1, 0),
        ("run_build_workflow", 0, 0),
    ]


def test_build_workflow_over_stdio(project: Path) -> None:
    """issue 13.7: over stdio through ``qbench-mcp``, run_build_workflow gives the type and the
    lint error, and the raw log is one get_run_output of its run id away."""
    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    (project / "pkg").mkdir()
    (project / "pkg" / "a.py").write_text(CHECKED)
    params = StdioServerParameters(
        command=script, args=["--root", str(project)], env=dict(os.environ), cwd=str(project)
    )

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        with anyio.fail_after(900):
            async with Client(params) as client:
                build = structured(
                    await client.call_tool(
                        "run_build_workflow", {"check_type": "all", "paths": ["pkg"]}
                    )
                )
                page = structured(
                    await client.call_tool("get_run_output", {"run_id": build["run_id"]})
                )
                return build, page

    build, page = anyio.run(main)
    assert build["success"] is False
    assert {(e["tool"], e["error_type"]) for e in build["errors"]} == {
        ("ruff.lint", "F401"),
        ("mypy.typecheck", "return-value"),
    }
    assert page["stream"] == "ruff.lint" and '"F401"' in page["text"]


def test_cancelling_a_build_workflow_kills_the_checkers_group(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: a cancelled run_build_workflow kills the checker's process group (a process
    it started too) before the cancellation goes on; the server is free for the next call."""
    from tools_plugins import replace_planner

    from pytest_qbench.tools.python import ruff
    from pytest_qbench.tools.spec import Plan

    code = (
        "import subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print(child.pid, flush=True); time.sleep(60)"
    )
    plan = Plan(ruff.TOOL, [sys.executable, "-c", code], ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", lambda cwd, paths, scratch: plan)
    runs = config.qbench_dir / "runs"

    def grandchild() -> int | None:
        for log in runs.glob("*/ruff.lint.log"):
            text = log.read_text().split()
            if text:
                return int(text[0])
        return None

    async def work(client: Client) -> dict[str, Any]:
        with anyio.move_on_after(600):
            async with anyio.create_task_group() as group:
                scope = anyio.CancelScope()

                async def call() -> None:
                    with scope:
                        await client.call_tool("run_build_workflow", {"check_type": "lint"})

                group.start_soon(call)
                while grandchild() is None:
                    await anyio.sleep(0.05)
                scope.cancel()
        return structured(await client.call_tool("check_health", {}))

    health = with_client(config, work)
    pid = grandchild()
    assert pid is not None
    stat = Path(f"/proc/{pid}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    assert health["run_in_progress"] is None


def test_answers_carry_no_terminal_escapes(config: ServerConfig, project: Path) -> None:
    """A test that prints colours and a bell: run_test_workflow's and get_test_failure's text
    and structured content hold its words, no ESC byte, and the bell as ``\\x07`` (a model
    read the raw bytes before)."""
    write(
        project,
        "tests/test_suite.py",
        "def test_coloured():\n"
        "    print('\\x1b[32mgreen\\x1b[0m and a bell\\x07')\n"
        "    assert False, '\\x1b[31mred\\x1b[0m text'\n",
    )

    async def work(client: Client) -> list[CallToolResult]:
        run = await client.call_tool("run_test_workflow", {})
        run_id = structured(run)["run_id"]
        test = "tests/test_suite.py::test_coloured"
        failure = await client.call_tool("get_test_failure", {"run_id": run_id, "test": test})
        return [run, failure]

    run, failure = with_client(config, work)
    for result in (run, failure):
        payload = text_of(result) + json.dumps(structured(result))
        assert "\x1b" not in payload and "\\u001b" not in payload
        assert "red text" in payload
    assert "green and a bell\\x07" in text_of(failure)
