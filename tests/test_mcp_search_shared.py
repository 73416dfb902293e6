"""The test catalog shared through PostgreSQL (``qbench_db``): machines that share nothing but
the database ingest into one catalog, a running assistant's server sees their ingests, and a
database that cannot be reached or read is a tool error, never an empty catalog."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import error_text
from mcp_helpers import quiet_children
from mcp_helpers import structured
from postgres_server import PostgresServer
from postgres_server import free_port


pytest.importorskip("mcp")
pytest.importorskip("psycopg")

import anyio
from mcp import Client
from mcp import StdioServerParameters

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import build_server


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

TESTS = '''
    def test_boolean_flag_from_envvar():
        """A boolean flag takes its value from an environment variable."""

    def test_integer_option_from_envvar():
        """An integer option reads its environment variable."""
'''
CASES = [
    {"key": "CLI-7", "title": "Boolean flag reads 'on' from the environment", "tags": ["envvar"]},
    {"key": "CLI-8", "title": "Help page lists every command", "tags": ["help"]},
]
NEW_CASE = {"key": "CLI-9", "title": "Version option prints the version", "tags": ["help"]}


def project(root: Path, url: str, files: dict[str, str]) -> Path:
    """A checkout of the project on one machine: its files, and the shared database."""
    for name, text in {"pytest.ini": f"[pytest]\nqbench_db = {url}\n", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root.resolve()


def stdio_server(root: Path) -> StdioServerParameters:
    """``qbench-mcp`` of a project, in a process of its own."""
    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    return StdioServerParameters(
        command=script,
        args=["--root", str(root), "--qbench-dir", str(root / ".qbench")],
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=str(root),
    )


def in_process(config: ServerConfig, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await work(client)

    return anyio.run(main)


def test_two_machines_ingest_into_one_catalog_that_a_running_assistant_reads(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """Two machines (two server processes, two checkouts) ingest at the same moment, one its
    pytest tests, one a test-case export; a third server, running since before, finds both,
    then the case another machine adds later (the catalog's new generation)."""
    url = postgres_server.new_database()
    machine_a = project(tmp_path / "a", url, {"tests/test_flags.py": textwrap.dedent(TESTS)})
    machine_b = project(tmp_path / "b", url, {"cases.json": json.dumps(CASES)})
    assistant = project(tmp_path / "c", url, {})

    async def ingest(root: Path, arguments: dict[str, Any], found: dict[str, Any]) -> None:
        async with Client(stdio_server(root)) as client:
            found[root.name] = structured(await client.call_tool("ingest_tests", arguments))

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(240):
            async with Client(stdio_server(assistant)) as client:
                before = structured(await client.call_tool("search_tests", {"query": "flag"}))
                seen["before"] = (before["catalog_size"], before["note"])
                async with anyio.create_task_group() as machines:
                    machines.start_soon(ingest, machine_a, {}, seen)
                    machines.start_soon(ingest, machine_b, {"source": "cases.json"}, seen)
                found = structured(await client.call_tool("search_tests", {"query": "flag"}))
                seen["found"] = [hit["uid"] for hit in found["results"]]
                seen["size"] = found["catalog_size"]
                (machine_b / "cases.json").write_text(json.dumps([*CASES, NEW_CASE]))
                await ingest(machine_b, {"source": "cases.json"}, seen)
                later = structured(await client.call_tool("search_tests", {"query": "version"}))
                seen["later"] = [hit["uid"] for hit in later["results"]]
                seen["health"] = structured(await client.call_tool("check_health", {}))
        return seen

    seen = anyio.run(main)
    assert seen["before"][0] == 0 and "ingest_tests" in seen["before"][1]
    assert seen["size"] == 4
    assert "tests/test_flags.py::test_boolean_flag_from_envvar" in seen["found"]
    assert "CLI-7" in seen["found"]
    assert seen["later"][0] == "CLI-9"
    assert seen["health"]["catalog_size"] == 5 and seen["health"]["status"] == "ok"
    assert not (machine_a / ".qbench" / "catalog.sqlite").exists()
    assert not (machine_b / ".qbench" / "catalog.sqlite").exists()


def test_an_unreachable_database_is_a_tool_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server at the URL: each catalog tool fails, naming the URL without its password and
    the fix; check_health says the catalog cannot be read."""
    quiet_children(monkeypatch)
    url = f"postgresql://ci:s3cret@127.0.0.1:{free_port()}/qbench"
    root = project(tmp_path, url, {"cases.json": json.dumps(CASES)})
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)

    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("search_tests", {"query": "flag"}),
            await client.call_tool("find_similar_tests", {"text": "boolean flag"}),
            await client.call_tool("ingest_tests", {"source": "cases.json"}),
            await client.call_tool("check_health", {}),
        ]

    *failed, health = in_process(config, work)
    for result in failed:
        text = error_text(result)
        assert "ci:***@127.0.0.1" in text and "s3cret" not in text
        assert "cannot connect" in text and "QBENCH_DB=sqlite" in text
    found = structured(health)
    assert found["status"] == "degraded"
    assert any("shared test catalog" in problem for problem in found["problems"])
    assert not (root / ".qbench" / "catalog.sqlite").exists()


def test_a_catalog_the_user_may_not_read_is_a_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_server: PostgresServer
) -> None:
    """A user who may read the history but not the catalog's cases gets an error saying so,
    not "no tests"."""
    import psycopg

    quiet_children(monkeypatch)
    url = postgres_server.new_database()
    owner = project(tmp_path / "owner", url, {"cases.json": json.dumps(CASES)})
    config = ServerConfig(root=owner, qbench_dir=owner / ".qbench", stop_grace=1.0)
    ingested = in_process(
        config, lambda client: client.call_tool("ingest_tests", {"source": "cases.json"})
    )
    assert structured(ingested)["added"] == 2
    reader = f"reader{free_port()}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {reader} LOGIN PASSWORD 'readpw'")
        admin.execute(f"GRANT USAGE ON SCHEMA qbench TO {reader}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA qbench TO {reader}")
        admin.execute(f"REVOKE SELECT ON qbench.catalog_cases FROM {reader}")
    reader_url = url.replace(f"qbench:{postgres_server.password}@", f"{reader}:readpw@")
    root = project(tmp_path / "reader", reader_url, {})
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
    result = in_process(config, lambda client: client.call_tool("search_tests", {"query": "x"}))
    text = error_text(result)
    assert "permission denied for table catalog_cases" in text
    assert f"{reader}:***@" in text and "readpw" not in text


def test_a_lost_connection_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_server: PostgresServer
) -> None:
    """The server keeps its connection between calls; one the database ended is made again."""
    import psycopg

    quiet_children(monkeypatch)
    url = postgres_server.new_database()
    root = project(tmp_path, url, {"cases.json": json.dumps(CASES)})
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)

    async def work(client: Client) -> list[Any]:
        structured(await client.call_tool("ingest_tests", {"source": "cases.json"}))
        first = structured(await client.call_tool("search_tests", {"query": "help page"}))
        with psycopg.connect(url, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        again = structured(await client.call_tool("search_tests", {"query": "help page"}))
        return [first, ended, again]

    first, ended, again = in_process(config, work)
    assert ended is not None and ended[0] >= 1  # the server's kept connection
    assert [h["uid"] for h in again["results"]] == [h["uid"] for h in first["results"]]
    assert again["results"][0]["uid"] == "CLI-8"


# --- the catalog tools' behaviour tests (tests/test_mcp_tools.py), on the shared catalog ------

from test_mcp_tools import config  # noqa: E402
from test_mcp_tools import test_cursor_pages_through_and_belongs_to_its_search  # noqa: E402
from test_mcp_tools import test_empty_catalog_says_how_to_build_it  # noqa: E402
from test_mcp_tools import test_filters_and_facets  # noqa: E402
from test_mcp_tools import test_filters_without_values_match_everything  # noqa: E402
from test_mcp_tools import test_get_test_by_key_and_similar  # noqa: E402
from test_mcp_tools import test_ranking_of_a_phrase  # noqa: E402
from test_mcp_tools import test_ranking_puts_title_matches_before_step_mentions  # noqa: E402
from test_mcp_tools import test_search_results_fit_the_budget  # noqa: E402
from test_mcp_tools import test_search_with_hostile_text_works  # noqa: E402
from test_mcp_tools import tools  # noqa: E402


SHARED_TOOLS_TESTS = (
    config,
    tools,
    test_cursor_pages_through_and_belongs_to_its_search,
    test_empty_catalog_says_how_to_build_it,
    test_filters_and_facets,
    test_filters_without_values_match_everything,
    test_get_test_by_key_and_similar,
    test_ranking_of_a_phrase,
    test_ranking_puts_title_matches_before_step_mentions,
    test_search_results_fit_the_budget,
    test_search_with_hostile_text_works,
)
"""Collected here again, with ``root`` below (and their module's ``config`` and ``tools``
fixtures): the same assertions on PostgreSQL."""


@pytest.fixture
def root(tmp_path: Path, postgres_server: PostgresServer) -> Path:
    """test_mcp_tools' project, its catalog shared through a new database."""
    url = postgres_server.new_database()
    return project(tmp_path / "project", url, {"tests/test_a.py": "def test_a(): pass\n"})


@pytest.fixture(autouse=True)
def no_local_catalog(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on ``root`` used the shared catalog: no local catalog file was written."""
    if "root" not in request.fixturenames:
        yield
        return
    local = request.getfixturevalue("root") / ".qbench" / "catalog.sqlite"
    yield
    assert not local.exists(), "the catalog was written to the local file"


def test_a_shared_catalog_of_another_schema_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables of another catalog schema version: a tool error that says what to do."""
    import psycopg

    from pytest_qbench.core.errors import ToolFailure
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.mcp.tools import QBenchTools

    config = ServerConfig(root=root, qbench_dir=root / ".qbench")
    (root / "cases.json").write_text(json.dumps(CASES))
    QBenchTools(config).ingest_file("cases.json")
    with psycopg.connect(str(configured_db(None, root)), autocommit=True) as conn:
        conn.execute("UPDATE qbench.catalog_meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(ToolFailure, match=r"schema version 99.*upgrade pytest-qbench"):
        QBenchTools(config).search_tests("flag")
