"""The shared test catalog (PostgreSQL) after another machine's ingest: a server's in-memory
mirror reads only the rows that changed, not the whole catalog again, and then holds exactly
what a fresh read of the database holds. Rows read are counted at the database cursor."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_server import PostgresServer


pytest.importorskip("psycopg")

from pytest_qbench.history import postgres
from pytest_qbench.mcp import shared_catalog
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.tools import QBenchTools


pytestmark = pytest.mark.engine

CASES = 300


def cases(changed: int = -1, removed: int = -1, added: int = 0) -> list[dict[str, Any]]:
    """``CASES`` test cases; one of them ``changed`` (new title), one ``removed``, and
    ``added`` more."""
    found = [
        {
            "key": f"CAT-{n}",
            "title": f"Checkout step {n} keeps the basket" + (" (new wording)" * (n == changed)),
            "tags": ["checkout"],
        }
        for n in range(CASES + added)
        if n != removed
    ]
    return found


def project(root: Path, url: str) -> Path:
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text(f"[pytest]\nqbench_db = {url}\n")
    return root.resolve()


ANOTHER_MACHINE = """
    import json, sys
    from pathlib import Path
    from pytest_qbench.mcp.config import ServerConfig
    from pytest_qbench.mcp.tools import QBenchTools

    root = Path(sys.argv[1])
    (root / "cases.json").write_text(sys.argv[2])
    report = QBenchTools(ServerConfig(root=root, qbench_dir=root / ".qbench")).ingest_file(
        "cases.json"
    )
    print(json.dumps([report.added, report.updated, report.removed]))
"""


def ingest_elsewhere(root: Path, records: list[dict[str, Any]]) -> list[int]:
    """``ingest_tests`` of ``records`` on another machine (a process of its own)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ANOTHER_MACHINE), str(root), json.dumps(records)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    counts: list[int] = json.loads(done.stdout.splitlines()[-1])
    return counts


@pytest.fixture
def rows_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every row the process fetches from PostgreSQL, counted (one number per fetch)."""
    counted: list[int] = []
    fetchall, fetchone = postgres._PgCursor.fetchall, postgres._PgCursor.fetchone

    def counting_fetchall(self: Any) -> list[Any]:
        rows = fetchall(self)
        counted.append(len(rows))
        return rows

    def counting_fetchone(self: Any) -> Any:
        row = fetchone(self)
        counted.append(row is not None)
        return row

    monkeypatch.setattr(postgres._PgCursor, "fetchall", counting_fetchall)
    monkeypatch.setattr(postgres._PgCursor, "fetchone", counting_fetchone)
    yield counted


def mirrored(url: str) -> tuple[set[tuple[int, str, str]], set[tuple[int, str]]]:
    """The cases (id, uid, digest) and vectors (case id, model) of the process's mirror."""
    conn = shared_catalog._MIRRORS[url].conn
    return (
        set(conn.execute("SELECT id, uid, digest FROM cases")),
        set(conn.execute("SELECT case_id, model FROM vectors")),
    )


def test_a_mirror_reads_only_what_another_machine_changed(
    tmp_path: Path, postgres_server: PostgresServer, rows_read: list[int]
) -> None:
    url = postgres_server.new_database()
    here = project(tmp_path / "here", url)
    there = project(tmp_path / "there", url)
    assert ingest_elsewhere(there, cases()) == [CASES, 0, 0]
    tools = QBenchTools(ServerConfig(root=here, qbench_dir=here / ".qbench"))
    first = tools.search_tests("checkout step 7", tags=["checkout"])
    assert first.catalog_size == CASES
    assert sum(rows_read) > CASES  # the first read is whole

    assert ingest_elsewhere(there, cases(changed=7, removed=8, added=1)) == [1, 1, 1]
    rows_read.clear()
    found = tools.search_tests("new wording")
    assert found.catalog_size == CASES
    assert [hit.uid for hit in found.results][:1] == ["CAT-7"]
    assert sum(rows_read) < 20, rows_read  # the changed, the added and the removed case
    assert tools.get_test_by_key("CAT-300").title == "Checkout step 300 keeps the basket"

    followed = mirrored(url)
    del shared_catalog._MIRRORS[url]  # a fresh process's whole read
    tools.search_tests("checkout")
    assert mirrored(url) == followed


def write_elsewhere(url: str, records: list[dict[str, Any]]) -> None:
    """Another machine's ingest of ``records`` as ``cases.json``, run here on a connection of
    its own (the process's mirror does not see it)."""
    from pytest_qbench.history.postgres import PostgresIndex

    index = PostgresIndex(url, create=True)
    try:
        found = exported(records)
        index.write(
            lambda c: shared_catalog._replace(shared_catalog._ensured(c), SOURCE, found, ())
        )
    finally:
        index.close()


SOURCE = "json:cases.json"
"""The catalog's source of the cases ``ingest_tests`` imports from ``cases.json``."""


def exported(records: list[dict[str, Any]]) -> list[Any]:
    """The catalog's records of ``records``, as ``ingest_tests`` makes them."""
    from pytest_qbench.mcp.ingest import export_case

    return [export_case(item, SOURCE) for item in records]


def test_a_mirror_older_than_the_removed_ids_kept_reads_the_catalog_whole(
    tmp_path: Path,
    postgres_server: PostgresServer,
    rows_read: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = postgres_server.new_database()
    here = project(tmp_path / "here", url)
    write_elsewhere(url, cases())
    tools = QBenchTools(ServerConfig(root=here, qbench_dir=here / ".qbench"))
    tools.search_tests("checkout")
    monkeypatch.setattr(shared_catalog, "KEPT_REVISIONS", 1)
    write_elsewhere(url, cases(removed=3))
    write_elsewhere(url, cases(removed=4))  # the id removed at the first revision is dropped
    rows_read.clear()
    assert tools.search_tests("checkout").catalog_size == CASES - 1
    assert sum(rows_read) > CASES
    followed = mirrored(url)
    del shared_catalog._MIRRORS[url]
    tools.search_tests("checkout")
    assert mirrored(url) == followed


def test_a_catalog_of_version_1_is_read_whole_then_migrated_by_its_first_writer(
    tmp_path: Path, postgres_server: PostgresServer, rows_read: list[int]
) -> None:
    """A catalog the previous qbench made (no revisions): a reader reads it as before; the
    first ingest migrates it in place, and from then on mirrors follow its changes."""
    import psycopg

    url = postgres_server.new_database()
    here = project(tmp_path / "here", url)
    there = project(tmp_path / "there", url)
    from pytest_qbench.history.postgres import PostgresIndex

    PostgresIndex(url, create=True).close()  # the history's tables, in the schema qbench
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO qbench")
        for statement in shared_catalog.V1_SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO catalog_meta VALUES ('schema_version', '1'), ('generation', 'g1')"
        )
        for record in exported(cases()[:5]):
            conn.execute(
                "INSERT INTO catalog_cases (uid, source, record, digest) VALUES (%s, %s, %s, %s)",
                (record.uid, SOURCE, shared_catalog.record_text(record), record.digest()),
            )
    tools = QBenchTools(ServerConfig(root=here, qbench_dir=here / ".qbench"))
    assert tools.search_tests("checkout").catalog_size == 5
    assert ingest_elsewhere(there, cases())[:1] == [CASES - 5]  # the 5 there are unchanged
    with psycopg.connect(url) as conn:
        version = conn.execute(
            "SELECT value FROM qbench.catalog_meta WHERE name = 'schema_version'"
        ).fetchone()
    assert version == (str(shared_catalog.SCHEMA_VERSION),)
    assert tools.search_tests("checkout").catalog_size == CASES
    ingest_elsewhere(there, cases(changed=2))
    rows_read.clear()
    assert tools.search_tests("new wording").results[0].uid == "CAT-2"
    assert sum(rows_read) < 20, rows_read
