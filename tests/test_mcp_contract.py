"""What every MCP tool keeps to, through the SDK's own client: unknown arguments refused, clean
descriptions that state the default timeout, a run whose tests all finished never called
partial, no path read that is not a regular file, and every string of a response bounded."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
import textwrap
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import overdue_when_written
from mcp_helpers import quiet_children
from mcp_helpers import settle_at_once


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.types import CallToolResult

from pytest_qbench.mcp.config import HARD_CAP
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.process import PytestProcess
from pytest_qbench.mcp.server import build_server


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX FIFOs, process groups")

TIMED = {"run_test_workflow", "ingest_tests", "run_build_workflow", "generate_tests_workflow"}


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n")
    return project.resolve()


def server_config(root: Path, **limits: Any) -> ServerConfig:
    return ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=2.0, **limits)


def with_client(config: ServerConfig, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await work(client)

    return anyio.run(main)


def call(config: ServerConfig, name: str, arguments: dict[str, Any]) -> CallToolResult:
    async def work(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    result: CallToolResult = with_client(config, work)
    return result


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert content.type == "text"
    return content.text


def response_bytes(result: CallToolResult) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


# --- arguments ---------------------------------------------------------------------------


def test_every_input_schema_forbids_unknown_keys(root: Path) -> None:
    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools

    for tool in with_client(server_config(root), work):
        assert tool.input_schema.get("additionalProperties") is False, tool.name


@pytest.mark.parametrize(
    ("tool", "arguments", "accepted", "said"),
    [
        ("run_test_workflow", {"test_type": "mocha"}, "'vitest'", "pytest, vitest and jest"),
        ("run_build_workflow", {"strict_mode": True}, "target", "registered checkers"),
        ("check_health", {"bogus_option": 1}, "no arguments", "bogus_option"),
        ("list_runs", {"limit": 2, "bogus_option": 1}, "limit", "bogus_option"),
        ("run_build_workflow", {"check_type": "tsc"}, "'lint', 'typecheck'", "registered"),
    ],
)
def test_an_unknown_argument_is_a_tool_error_naming_the_accepted_ones(
    root: Path, tool: str, arguments: dict[str, Any], accepted: str, said: str
) -> None:
    result = call(server_config(root), tool, arguments)
    assert result.is_error, result
    message = text_of(result)
    assert accepted in message and said in message, message
    assert not (root / ".qbench" / "runs").exists()  # nothing ran


def test_descriptions_are_dedented_and_state_the_default_timeout(root: Path) -> None:
    config = server_config(root, default_timeout=42.0)

    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools

    for tool in with_client(config, work):
        assert tool.description == inspect.cleandoc(tool.description), tool.name
        assert "\n " not in tool.description, tool.name
        if tool.name in TIMED:
            assert "default timeout: 42s" in tool.description.lower(), tool.description


# --- a slow session end --------------------------------------------------------------------

STAY = """
    import time
    from pathlib import Path

    def stay(said):
        # say where the run is (a file named ``said``), and stay until the test says go on
        Path(said).write_text("1")
        deadline = time.monotonic() + 600  # a safety net
        while not Path("go-on").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
"""
"""A child conftest's ``stay(said)``."""

SLOW_END = (
    STAY
    + """
    def pytest_sessionfinish(session):
        # every test has its result, in the stream's file too (its writes are batched: not
        # left to the timer, which a loaded machine may delay past the server's settle): stay
        # until the test says the server gave the session end its grace (the run's deadline
        # moved to now meanwhile)
        __import__("pytest_qbench.report.store").report.store.wait_written()
        stay("ending")
"""
)


def run_overdue_when_written(
    config: ServerConfig, written: Path, then: Callable[[PytestProcess], Awaitable[None]]
) -> CallToolResult:
    """``run_test_workflow`` with a timeout that never comes by itself (1800 s): its deadline
    is moved to now once the run wrote ``written`` (``overdue_when_written``), then
    ``then(run)`` is awaited."""
    built = build_server(config)

    async def main() -> CallToolResult:
        async def overdue() -> None:
            await then(await overdue_when_written(built, written))

        with anyio.fail_after(900):  # a safety net: the run ends once made overdue
            async with (
                Client(built, raise_exceptions=True) as client,
                anyio.create_task_group() as group,
            ):
                group.start_soon(overdue)
                result = await client.call_tool("run_test_workflow", {"timeout_seconds": 1800})
                group.cancel_scope.cancel()  # a run that ended before writing: its answer
        return result

    return anyio.run(main)


def test_a_run_whose_tests_all_finished_is_complete_though_its_session_end_is_slow(
    root: Path,
) -> None:
    """The timeout falls while pytest is in its session end, after every test had its result:
    the server gives the session end its grace, and the answer is complete, not partial. The
    session end says it began, the test moves the deadline to now, and the session end goes on
    once the server has given its grace (or stopped the run: the wrong answer), however slow
    the machine."""
    (root / "conftest.py").write_text(textwrap.dedent(SLOW_END))
    config = server_config(root, finish_grace=600.0)

    async def go_on_once_decided(process: PytestProcess) -> None:
        while not process.extended and process.stopped_by is None:
            await anyio.sleep(0.05)
        (root / "go-on").write_text("1")

    result = run_overdue_when_written(config, root / "ending", go_on_once_decided)
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert (data["partial"], data["timed_out"], data["exit_code"]) == (False, False, 0), data
    assert data["success"] is True and data["summary"]["passed"] == 1


HELD_BATCH = (
    STAY
    + """
    from pytest_qbench.report import store

    store.BATCH_SECONDS = 600.0  # the timer never writes: the results wait in memory

    def pytest_runtest_logfinish(nodeid):
        # the test has its result, still waiting in the stream's batch: stay until the test
        # says the server has looked at the run overdue
        stay("held")
"""
)


def test_a_run_overdue_while_its_last_results_wait_in_its_batch_is_given_the_settle_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeout falls after the last test ended while its result still waits in the run's
    memory (the stream's writes are batched: ``store.BATCH_SECONDS``): the server gives the run
    ``STREAM_SETTLE`` once before judging it, and the answer is complete, not partial. The
    interleaving is forced: the run's timer is held (its batch waits until the session end),
    the deadline is moved to now once the test ended, and the run goes on only once the server
    has decided; the settle is made long (600 s), so a loaded machine cannot use it up. Before
    (47301ef's parent), the server stopped the run at that look: partial, timed out."""
    from pytest_qbench.mcp import process as running

    monkeypatch.setattr(running, "STREAM_SETTLE", 600.0)
    (root / "conftest.py").write_text(textwrap.dedent(HELD_BATCH))
    config = server_config(root, finish_grace=600.0)
    decided: list[str] = []

    async def go_on_once_decided(process: PytestProcess) -> None:
        while not getattr(process, "settled", False) and process.stopped_by is None:
            await anyio.sleep(0.05)
        decided.append("stopped" if process.stopped_by else "settled")
        (root / "go-on").write_text("1")

    result = run_overdue_when_written(config, root / "held", go_on_once_decided)
    assert decided == ["settled"]
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert (data["partial"], data["timed_out"], data["exit_code"]) == (False, False, 0), data
    assert data["success"] is True and data["summary"]["passed"] == 1


def test_a_run_cut_while_a_test_runs_stays_partial_though_a_module_was_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module skipped at collection has a result but is no collected test: it must not make
    a run whose last test still runs look complete (and so get the grace, then pass as whole).
    The deadline is moved to now once the last test started (it sleeps 600 s)."""
    settle_at_once(monkeypatch)
    (root / "tests" / "test_skipped.py").write_text(
        "import pytest\n\npytest.skip('not here', allow_module_level=True)\n"
    )
    (root / "tests" / "test_slow.py").write_text(
        "import time\nfrom pathlib import Path\n\ndef test_slow():\n"
        "    Path('started').write_text('1')\n    time.sleep(600)\n"
    )
    config = server_config(root, finish_grace=1.0)

    async def nothing(process: PytestProcess) -> None:
        pass

    result = run_overdue_when_written(config, root / "started", nothing)
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert (data["partial"], data["timed_out"], data["success"]) == (True, True, False), data


# --- paths that are not regular files ------------------------------------------------------


@contextmanager
def freed(path: Path) -> Iterator[Path]:
    """``path`` made a FIFO; whoever blocks opening it for reading is freed after 20 s (a
    writer gives it ``[]``), again and again, so that a wrong answer comes back instead of a
    hang."""
    os.mkfifo(path)
    done = threading.Event()

    def free_readers() -> None:
        done.wait(20)
        while not done.wait(0.5):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: nobody reads
            except OSError:
                continue
            with contextlib.suppress(OSError):
                os.write(fd, b"[]")
            os.close(fd)

    helper = threading.Thread(target=free_readers, daemon=True)
    helper.start()
    try:
        yield path
    finally:
        done.set()
        helper.join()


@pytest.fixture
def fifo(root: Path) -> Iterator[Path]:
    with freed(root / "fifo.json") as path:
        yield path


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("ingest_tests", {"source": "fifo.json"}),
        ("run_test_workflow", {"test_path": "fifo.json"}),
        ("run_build_workflow", {"paths": ["fifo.json"], "check_type": "lint"}),
        ("generate_tests_workflow", {"target_path": "fifo.json"}),
    ],
)
def test_a_fifo_given_as_a_path_is_refused(
    root: Path, fifo: Path, tool: str, arguments: dict[str, Any]
) -> None:
    result = call(server_config(root), tool, arguments)
    assert result.is_error, result
    assert "fifo.json" in text_of(result) and "not a regular file" in text_of(result)


def test_a_fifo_among_the_files_of_an_ingested_directory_is_refused(root: Path) -> None:
    exports = root / "exports"
    exports.mkdir()
    (exports / "a.json").write_text("[]")
    with freed(exports / "b.json"):
        result = call(server_config(root), "ingest_tests", {"source": "exports"})
    assert result.is_error, result
    assert "b.json" in text_of(result) and "not a regular file" in text_of(result)


# --- bounded strings -------------------------------------------------------------------------

HUGE_ID = """
    import pytest

    @pytest.mark.parametrize("value", [1], ids=["x" * 1_000_000])
    def test_huge(value):
        assert value == 2
"""


def test_a_failing_test_with_a_million_character_id_stays_under_the_cap(root: Path) -> None:
    (root / "tests" / "test_ok.py").write_text(textwrap.dedent(HUGE_ID))
    config = server_config(root)

    async def work(client: Client) -> tuple[CallToolResult, CallToolResult]:
        run = await client.call_tool("run_test_workflow", {"timeout_seconds": 300})
        assert run.structured_content is not None, text_of(run)
        run_id = run.structured_content["run_id"]
        [listed] = run.structured_content["failures"]
        # the name as the run listed it, cut: get_test_failure finds the test from it
        asked = {"run_id": run_id, "test": listed["test_name"]}
        failure = await client.call_tool("get_test_failure", asked)
        return run, failure

    run, failure = with_client(config, work)
    for result in (run, failure):
        assert not result.is_error, text_of(result)
        assert response_bytes(result) < HARD_CAP
        content = json.dumps(result.structured_content)
        assert len(content.encode()) <= config.budget
    assert run.structured_content is not None and failure.structured_content is not None
    assert run.structured_content["summary"]["failed"] == 1
    [listed] = run.structured_content["failures"]
    assert listed["test_name"].startswith("tests/test_ok.py::test_huge[xxx")
    assert failure.structured_content["error_type"] == "AssertionError"
    assert failure.structured_content["nodeid"] == listed["test_name"]
