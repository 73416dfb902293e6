"""``check_health`` names where the test catalog lives; a tool's internal error comes back as a
tool error naming the exception, and the server goes on answering. An in-process client of the
real server, as the other MCP tests use."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_helpers import quiet_children


pytest.importorskip("mcp")

from mcp import Client
from mcp.types import CallToolResult
from test_mcp_contract import call
from test_mcp_contract import text_of
from test_mcp_contract import with_client

from pytest_qbench.mcp import health
from pytest_qbench.mcp.config import ServerConfig


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServerConfig:
    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    root = (tmp_path / "project").resolve()
    root.mkdir()
    return ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)


def health_of(config: ServerConfig) -> CallToolResult:
    return call(config, "check_health", {})


def test_health_names_the_sqlite_catalog(config: ServerConfig) -> None:
    """Without a database setting the catalog is the run store's SQLite file: its path is in
    the structured answer and in the text."""
    result = health_of(config)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    where = str(config.qbench_dir / "catalog.sqlite")
    assert result.structured_content["catalog_location"] == where
    assert f"Catalog: 0 test cases in {where}" in text_of(result)


def test_health_names_the_postgres_catalog_without_its_password(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``QBENCH_DB`` a PostgreSQL URL, the catalog is there: the URL is named with its
    password as ``***`` (the server need not answer for that)."""
    pytest.importorskip("psycopg")
    monkeypatch.setenv("QBENCH_DB", "postgresql://ci:s3cret@127.0.0.1:1/qbench")
    result = health_of(config)
    assert isinstance(result.structured_content, dict)
    shown = result.structured_content["catalog_location"]
    assert shown == "postgresql://ci:***@127.0.0.1:1/qbench"
    assert "s3cret" not in text_of(result)
    assert shown in text_of(result)


def test_a_tools_internal_error_names_the_exception(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug inside a tool is a tool error that names the exception and says it is a bug in
    qbench; the next call is answered."""

    def broken() -> bool:
        raise KeyError("fts")

    monkeypatch.setattr(health, "_has_fts5", broken)

    async def work(client: Client) -> tuple[CallToolResult, CallToolResult]:
        failed = await client.call_tool("check_health", {})
        listed = await client.call_tool("list_runs", {})
        return failed, listed

    failed, listed = with_client(config, work)
    assert failed.is_error
    said = text_of(failed)
    assert "check_health" in said and "KeyError: 'fts'" in said, said
    assert "bug in qbench" in said, said
    assert not listed.is_error, listed.content


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="as the other MCP tests")
