"""The shared test catalog's first call after another machine's ingest: the mirror follows the
change (reads the rows written since its revision) or reads the catalog whole.

A catalog of ``--size`` cases (``catalog_latency.records``, BM25 only: no vectors, so the
figures are the rows' reading and the snapshot's building) in a throwaway PostgreSQL server
(tests/postgres_server.py) unless ``--db URL`` names one. Another machine (a connection of its
own) changes ``--changed`` cases; then this process's ``search_tests``: wall and CPU seconds of
the first call, and the rows it fetched, median of ``--rounds`` rounds, with the mirror
following and with the mirror forgotten (a whole read, as before the mirror followed).

Usage::

    python benchmarks/catalog_follow.py [--size 20000] [--changed 1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from catalog_latency import records

from pytest_qbench.history import postgres
from pytest_qbench.history.postgres import PostgresIndex
from pytest_qbench.mcp import search
from pytest_qbench.mcp import shared_catalog
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.service import RunService


FETCHED = [0]


def counting(fetchall: Any) -> Any:
    def fetch(self: Any) -> list[Any]:
        rows: list[Any] = fetchall(self)
        FETCHED[0] += len(rows)
        return rows

    return fetch


def change_elsewhere(url: str, cases: list[Any], round_: int, changed: int) -> None:
    """Another machine's ingest: ``changed`` cases of the imported source get a new title."""
    from dataclasses import replace

    edited = [
        replace(case, title=f"{case.title} (round {round_})") if n < changed else case
        for n, case in enumerate(cases)
    ]
    index = PostgresIndex(url, create=True)
    try:
        index.write(
            lambda c: shared_catalog._replace(
                shared_catalog._ensured(c), "json:cases.json", edited, ()
            )
        )
    finally:
        index.close()


def first_call(tools: RunService) -> tuple[float, float, int]:
    FETCHED[0] = 0
    wall, cpu = time.perf_counter(), time.process_time()
    search.search_tests(tools, query="boolean flag option")
    return time.perf_counter() - wall, time.process_time() - cpu, FETCHED[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a PostgreSQL server's URL (its database is used as is)")
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--changed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    sys.modules["wordllama"] = None  # type: ignore[assignment]  # BM25 only
    postgres._PgCursor.fetchall = counting(postgres._PgCursor.fetchall)  # type: ignore[method-assign]
    server = None
    if args.db:
        url = args.db
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from postgres_server import start_server

        server = start_server()
        url = server.new_database()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "pytest.ini").write_text(f"[pytest]\nqbench_db = {url}\n")
            tools = RunService(ServerConfig(root=root, qbench_dir=root / ".qbench"))
            tests, imported = records(args.size)
            with shared_catalog.open_project_catalog(tools.config, create=True) as catalog:
                catalog.replace_source("pytest", tests)
                catalog.replace_source("json:cases.json", imported)
            search.search_tests(tools, query="warm up")
            found: dict[str, list[tuple[float, float, int]]] = {"follows": [], "whole": []}
            for round_ in range(args.rounds * 2):
                way = "follows" if round_ % 2 == 0 else "whole"
                change_elsewhere(url, imported, round_, args.changed)
                if way == "whole":
                    shared_catalog._MIRRORS.clear()
                found[way].append(first_call(tools))
            print(f"load {os.getloadavg()[0]:.1f}; {args.size} cases, {args.changed} changed")
            print(
                "| mirror | first call after the change | CPU | rows fetched |\n|---|---|---|---|"
            )
            for way, calls in found.items():
                wall, cpu, rows = (statistics.median(column) for column in zip(*calls, strict=True))
                print(f"| {way} | {wall:.2f} s | {cpu:.2f} s | {rows:.0f} |")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
