"""The catalog tools through a real MCP client: one hit per test function, a reference test's
own parametrized siblings left out of its look-alikes; each with the catalog in the local SQLite
file and in a PostgreSQL database shared through ``qbench_db``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import bm25_only
from mcp_helpers import quiet_children
from mcp_helpers import structured


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.types import CallToolResult

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.embed import available as embed_available
from pytest_qbench.mcp.server import build_server


pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.xdist_group("test_mcp_search"),  # one worker makes each `config`
]

FLAGS = """
    import pytest

    VALUES = [f"{word}-{n}" for word in ("on", "yes", "true", "1", "y", "enabled") for n in range(5)]

    @pytest.mark.parametrize("value", VALUES)
    def test_boolean_flag_from_envvar(value):
        '''A boolean flag takes its value from an environment variable.'''

    def test_boolean_flag_default_is_false():
        '''An unset boolean flag is false.'''

    def test_integer_option_from_envvar():
        '''An integer option reads its environment variable.'''
"""
EXPORT = {
    "testCases": [
        {
            "key": "CLI-7",
            "title": "Boolean flag reads 'on' from the environment",
            "tags": ["envvar", "flags"],
            "steps": [
                {
                    "action": "Set the flag's environment variable to on",
                    "expected": "The flag is true",
                }
            ],
        },
        {"key": "CLI-8", "title": "Help page lists every command", "tags": ["help"]},
    ]
}
FUNCTION = "tests/test_flags.py::test_boolean_flag_from_envvar"


STORAGES = ["sqlite", "postgres"]


def storage_url(request: pytest.FixtureRequest) -> str | None:
    """``None`` for the local catalog file; a new PostgreSQL database's URL for the shared
    catalog (skipped without PostgreSQL binaries)."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_server").new_database())


def make_project(root: Path, url: str | None) -> None:
    """A project directory whose catalog is shared through ``url`` when given."""
    root.mkdir(parents=True, exist_ok=True)
    if url is not None:
        (root / "pytest.ini").write_text(f"[pytest]\nqbench_db = {url}\n")


@pytest.fixture(params=STORAGES)
def storage(request: pytest.FixtureRequest) -> str | None:
    """The catalog's storage for one test: ``None`` (SQLite) or a new database's URL."""
    return storage_url(request)


@pytest.fixture(scope="module", params=STORAGES)
def config(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> ServerConfig:
    """A project whose catalog holds 30 cases of one function, two other tests and an export."""
    url = storage_url(request)
    with pytest.MonkeyPatch.context() as monkeypatch:
        quiet_children(monkeypatch)
        root = tmp_path_factory.mktemp("search") / "project"
        make_project(root, url)
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "test_flags.py").write_text(textwrap.dedent(FLAGS))
        (root / "cases.json").write_text(json.dumps(EXPORT))
        config = ServerConfig(root=root.resolve(), qbench_dir=root / ".qbench", stop_grace=1.0)

        async def ingest(client: Client) -> list[CallToolResult]:
            return [
                await client.call_tool("ingest_tests", {}),
                await client.call_tool("ingest_tests", {"source": "cases.json"}),
            ]

        pytest_ingest, export_ingest = call(config, ingest)
        assert structured(pytest_ingest)["added"] == 32
        assert structured(export_ingest)["added"] == 2
    return config


def call(config: ServerConfig, work: Any) -> Any:
    async def main() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await work(client)

    return anyio.run(main)


def tool(config: ServerConfig, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def work(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    return structured(call(config, work))


def tool_text(
    config: ServerConfig, name: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    async def work(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    result = call(config, work)
    [content] = result.content
    assert content.type == "text"
    return structured(result), content.text


def test_search_gives_one_hit_per_test_function(config: ServerConfig) -> None:
    """30 parametrized cases are one hit that counts them; the imported case that says the
    same in other words is on the first page too."""
    found, text = tool_text(config, "search_tests", {"query": "boolean flag envvar"})
    uids = [hit["uid"] for hit in found["results"]]
    functions = [uid.split("[")[0] for uid in uids]
    assert len(functions) == len(set(functions)) == found["total"] == 4
    assert set(uids[:2]) == {"CLI-7", uids[functions.index(FUNCTION)]}
    counts = {hit["uid"].split("[")[0]: hit["cases"] for hit in found["results"]}
    assert counts.pop(FUNCTION) == 30 and set(counts.values()) == {1}
    assert "30 parametrized cases" in text


def test_expand_lists_every_case(config: ServerConfig) -> None:
    """expand: true lists the parametrized cases one by one, with cursors."""
    found = tool(config, "search_tests", {"query": "boolean flag envvar", "expand": True})
    assert found["total"] >= 33
    uids = [hit["uid"] for hit in found["results"]]
    assert len(uids) == len(set(uids)) == 10 and found["next_cursor"]
    assert sum(uid.startswith(f"{FUNCTION}[") for uid in uids) >= 8
    assert all(hit["cases"] == 1 for hit in found["results"])


def test_similar_leaves_out_the_references_siblings(config: ServerConfig) -> None:
    """A parametrized case's look-alikes are other tests, not its own siblings, unless asked."""
    found = tool(config, "find_similar_tests", {"test": f"{FUNCTION}[on-0]"})
    uids = [hit["uid"] for hit in found["results"]]
    assert uids and not any(uid.startswith(FUNCTION) for uid in uids)
    assert "CLI-7" in uids
    assert len(uids) == len({uid.split("[")[0] for uid in uids})
    asked = tool(
        config, "find_similar_tests", {"test": f"{FUNCTION}[on-0]", "include_siblings": True}
    )
    siblings = [hit for hit in asked["results"] if hit["uid"].startswith(FUNCTION)]
    assert len(siblings) == 1 and siblings[0]["cases"] == 29


def test_health_names_the_embedder(config: ServerConfig) -> None:
    """check_health names the model, its dimensions and how many cases have a vector."""
    pytest.importorskip("wordllama")
    embedder = tool(config, "check_health", {})["embedder"]
    assert (embedder["provider"], embedder["model"], embedder["dimensions"]) == (
        "wordllama",
        "l2_supercat",
        256,
    )
    assert embedder["items_embedded"] == 34
    assert embedder["ranking"].startswith("hybrid")


def test_hybrid_ranking_finds_other_words(config: ServerConfig) -> None:
    """Words the catalog does not hold still find the case that means the same; scores are
    0..1 and each hit has its cosine similarity."""
    pytest.importorskip("wordllama")
    found = tool(config, "search_tests", {"query": "switch enabled by an environment setting"})
    first = found["results"][0]
    assert first["uid"] == "CLI-7" and first["score"] == 1.0 and first["similarity"] > 0.25
    assert all(0 < hit["score"] <= 1 for hit in found["results"])
    assert "CLI-8" not in [hit["uid"] for hit in found["results"]]
    similar = tool(config, "find_similar_tests", {"test": "CLI-7", "scope": "docs"})
    assert similar["results"][0]["uid"].startswith(f"{FUNCTION}[")


def test_unchanged_cases_are_not_embedded_again(config: ServerConfig) -> None:
    """A second ingest of the same tests embeds nothing."""
    pytest.importorskip("wordllama")
    again = tool(config, "ingest_tests", {"source": "cases.json"})
    assert (again["unchanged"], again["embedded"]) == (2, 0)


def test_without_the_extra_search_is_bm25_only(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A qbench-mcp whose Python cannot import wordllama says "BM25 only" and still searches.
    The server is built in this process, wordllama made unimportable (``bm25_only``): the
    extra's absence is the subject, not a Python starting (test_mcp_server's stdio tests
    start the console script)."""
    bm25_only(monkeypatch)

    async def work(client: Client) -> tuple[CallToolResult, CallToolResult]:
        health = await client.call_tool("check_health", {})
        return health, await client.call_tool("search_tests", {"query": "boolean flag"})

    health, found = (structured(answer) for answer in call(config, work))
    assert health["embedder"]["provider"] is None
    assert health["embedder"]["ranking"].startswith("BM25 only")
    assert found["results"] and all(hit["similarity"] is None for hit in found["results"])


def test_catalog_is_kept_between_calls_and_read_again_after_an_ingest(
    tmp_path: Path, storage: str | None
) -> None:
    """The server reads the catalog's cases (and vectors) once, keeps them across calls, and
    reads them again only after an ingest changed the catalog."""
    from pytest_qbench.history.dburl import redact
    from pytest_qbench.mcp import snapshot

    root = tmp_path / "project"
    make_project(root, storage)
    cases = root / "cases.json"
    cases.write_text(json.dumps(EXPORT))
    config = ServerConfig(root=root.resolve(), qbench_dir=root / ".qbench", stop_grace=1.0)
    key = str(config.catalog_path) if storage is None else redact(storage)
    new_case = {"key": "CLI-9", "title": "Version option prints the version", "tags": ["help"]}

    async def work(client: Client) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        structured(await client.call_tool("ingest_tests", {"source": "cases.json"}))
        structured(await client.call_tool("search_tests", {"query": "boolean flag"}))
        first = snapshot._KEPT[key]
        structured(await client.call_tool("find_similar_tests", {"test": "CLI-7"}))
        structured(await client.call_tool("search_tests", {"query": "help page"}))
        seen["kept"] = (snapshot.LOADS[key], snapshot._KEPT[key] is first)
        seen["matrix"] = first.matrices.get("l2_supercat")
        cases.write_text(json.dumps({"testCases": [*EXPORT["testCases"], new_case]}))
        structured(await client.call_tool("ingest_tests", {"source": "cases.json"}))
        found = structured(await client.call_tool("search_tests", {"query": "version option"}))
        seen["after_ingest"] = (snapshot.LOADS[key], found["results"][0]["key"])
        structured(await client.call_tool("ingest_tests", {"source": "cases.json"}))
        structured(await client.call_tool("search_tests", {"query": "version option"}))
        seen["unchanged_ingest"] = snapshot.LOADS[key]
        return seen

    seen = call(config, work)
    assert seen["kept"] == (1, True)
    assert seen["after_ingest"] == (2, "CLI-9")
    assert seen["unchanged_ingest"] == 2
    if embed_available():
        # the vectors were read into one matrix, used by every call until the ingest
        assert seen["matrix"] is not None and seen["matrix"].scopes["all"].shape == (2, 256)


def test_a_reference_tests_words_include_its_class() -> None:
    """find_similar_tests' BM25 looks for the reference's whole name, class included, as its
    vector embeds it: tests of one class test one thing (measured by catalog_quality.py)."""
    from pytest_qbench.mcp.catalog import CaseRecord
    from pytest_qbench.mcp.search import reference_text

    nodeid = "tests/test_more.py::ChunkedTests::test_even"
    record = CaseRecord(uid=nodeid, source="pytest", nodeid=nodeid, description="Even length.")
    assert reference_text(record, "all").split() == [
        "Even",
        "length.",
        "Chunked",
        "Tests",
        "test",
        "even",
    ]


def test_an_assistants_own_words_find_the_test_function_and_the_manual_case(
    config: ServerConfig,
) -> None:
    """What an assistant sees: asked in words none of the tests uses, search_tests puts the
    manual case first and the test function on the first page, once each (its 30
    parametrized cases as one hit); find_similar_tests on one of the function's cases finds
    that manual case first; check_health names the model."""
    pytest.importorskip("wordllama")
    query = {"query": "switch turned on through an environment setting"}
    found = tool(config, "search_tests", query)
    uids = [hit["uid"].split("[")[0] for hit in found["results"]]
    assert uids[0] == "CLI-7" and FUNCTION in uids[:3]
    assert len(uids) == len(set(uids)) == found["total"]
    assert found["results"][uids.index(FUNCTION)]["cases"] == 30
    similar = tool(config, "find_similar_tests", {"test": f"{FUNCTION}[on-0]"})
    assert similar["results"][0]["uid"] == "CLI-7"
    assert tool(config, "check_health", {})["embedder"]["model"] == "l2_supercat"
