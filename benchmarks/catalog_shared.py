"""The MCP test catalog on its two storages: the local SQLite file and the catalog shared through
PostgreSQL (``qbench_db``), side by side.

Measured in one process per storage (run the script once with ``--storage sqlite``, once with
``--storage postgres``, which starts a throwaway server from tests/postgres_server.py unless
``--db URL`` names one):

- ``ingest_tests``' storage part for ``--ingest`` items (half pytest tests, half imported
  cases, ``catalog_latency.records``), as the tool runs it after pytest's collection
  (``ingest._replace``: the writes, the catalog's size, the embedding): the first ingest (all
  new) and the same items again (unchanged), without embeddings and with them;
- ``search_tests`` and ``find_similar_tests`` at ``--size`` cases, hybrid and BM25 only: the
  median (max) of ``--calls`` calls after a warm-up, wall and CPU time, as catalog_latency.py;
  and the first call after the catalog changed (another machine's ingest): the process reads
  the catalog again (on PostgreSQL: every row into the in-memory mirror) and builds its
  snapshot, and the resident memory a new server process grows by on its first search (what it
  keeps of the catalog).

CPU time is this process's (PostgreSQL's own is not in it). Usage::

    python benchmarks/catalog_shared.py --storage sqlite|postgres [--size 20000] [--ingest 2000]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catalog_latency import QUERIES
from catalog_latency import median_ms
from catalog_latency import records

from pytest_qbench.mcp import search
from pytest_qbench.mcp import snapshot
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.ingest import _embed
from pytest_qbench.mcp.ingest import _replace
from pytest_qbench.mcp.service import RunService
from pytest_qbench.mcp.shared_catalog import _MIRRORS
from pytest_qbench.mcp.shared_catalog import open_project_catalog


def timed(work: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def project(folder: Path, url: str | None) -> RunService:
    folder.mkdir(parents=True)
    if url is not None:
        (folder / "pytest.ini").write_text(f"[pytest]\nqbench_db = {url}\n")
    return RunService(ServerConfig(root=folder, qbench_dir=folder / ".qbench"))


def bm25_only(on: bool) -> None:
    """Make the ``[search]`` extra unimportable (BM25 only), or importable again."""
    if on:
        sys.modules["wordllama"] = None  # type: ignore[assignment]
    else:
        sys.modules.pop("wordllama", None)


def ingest(tools: RunService, size: int) -> tuple[float, float]:
    tests, imported = records(size)

    def both() -> None:
        _replace(tools, "pytest", tests, [])
        _replace(tools, "json:cases.json", imported, [])

    return timed(both)


def ingest_rows(folder: Path, url: Any, size: int) -> None:
    for embeddings in (False, True):
        bm25_only(not embeddings)
        tools = project(folder / f"ingest-{embeddings}", url() if url else None)
        first, again = ingest(tools, size), ingest(tools, size)
        label = "with embeddings" if embeddings else "without embeddings"
        print(
            f"| ingest {size} {label} | {first[0]:.2f} s (CPU {first[1]:.2f} s) | "
            f"{again[0]:.2f} s (CPU {again[1]:.2f} s) |",
            flush=True,
        )
    bm25_only(False)


def clear() -> None:
    """Forget what the process keeps: as after another machine's ingest."""
    _MIRRORS.clear()
    snapshot._KEPT.clear()
    gc.collect()


FRESH = """
import os, sys
from pathlib import Path
if sys.argv[2] == "bm25":
    sys.modules["wordllama"] = None
from pytest_qbench.mcp import search
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.service import RunService
def rss():
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
root = Path(sys.argv[1])
tools = RunService(ServerConfig(root=root, qbench_dir=root / ".qbench"))
import numpy, pytest_qbench.mcp.ranking, pytest_qbench.mcp.shared_catalog  # noqa
from pytest_qbench.mcp.embed import embedder
model = embedder()
if model is not None:
    model.embed(["load the model"])  # not the catalog's memory
before = rss()
search.search_tests(tools, query="boolean flag option")
print((rss() - before) / 2**20)
"""


def fresh_memory(root: Path, ranking: str) -> float:
    """MiB a new server process grows by on its first search of the catalog (what it keeps)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", FRESH, str(root), ranking],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    return float(done.stdout.split()[-1])


def search_rows(folder: Path, url: str | None, size: int, count: int) -> None:
    tools = project(folder / "search", url)
    tests, imported = records(size)
    with open_project_catalog(tools.config, create=True) as catalog:
        catalog.replace_source("pytest", tests)
        catalog.replace_source("json:cases.json", imported)
        _embed(catalog)
    references = [tests[i * 97 % len(tests)].uid for i in range(len(QUERIES) // 2)]
    references += [imported[i * 89 % len(imported)].uid for i in range(len(QUERIES) // 2 + 1)]
    queries = [QUERIES[i % len(QUERIES)] for i in range(count + 1)]
    refs = [references[i % len(references)] for i in range(count + 1)]
    for ranking in ("hybrid", "BM25 only"):
        bm25_only(ranking != "hybrid")
        clear()
        cold = timed(lambda: search.search_tests(tools, query=QUERIES[0]))
        grown = fresh_memory(tools.config.root, "hybrid" if ranking == "hybrid" else "bm25")
        found = {
            "search_tests": median_ms(
                [lambda q=q: search.search_tests(tools, query=q) for q in queries]  # type: ignore[misc]
            ),
            "find_similar_tests": median_ms(
                [lambda r=r: search.find_similar_tests(tools, test=r) for r in refs]  # type: ignore[misc]
            ),
        }
        cells = [
            f"{found[t][0]:.0f} ms ({found[t][1]:.0f}), {found[t][2]:.0f} ms"
            for t in ("search_tests", "find_similar_tests")
        ]
        print(
            f"| {size} | {ranking} | {cells[0]} | {cells[1]} | {cold[0] * 1000:.0f} ms "
            f"(CPU {cold[1] * 1000:.0f} ms), +{grown:.0f} MiB |",
            flush=True,
        )
    bm25_only(False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", choices=("sqlite", "postgres"), required=True)
    parser.add_argument("--db", help="a PostgreSQL server's URL (its database is used as is)")
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--ingest", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=9)
    parser.add_argument("--skip-ingest", action="store_true", help="measure the search only")
    args = parser.parse_args(argv)
    server = None
    new_database: Callable[[], str] | None = None
    if args.storage == "postgres" and args.db:
        new_database = lambda: args.db  # noqa: E731
    elif args.storage == "postgres":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from postgres_server import start_server

        server = start_server()
        new_database = server.new_database
    try:
        with tempfile.TemporaryDirectory() as folder:
            print(f"storage: {args.storage}; load: {os.getloadavg()[0]:.1f}")
            if not args.skip_ingest:
                print("| what | first (all new) | again (unchanged) |\n|---|---|---|")
                ingest_rows(Path(folder), new_database, args.ingest)
            print(
                "\n| cases | ranking | `search_tests` median (max), CPU | "
                "`find_similar_tests` median (max), CPU | first call after a change, memory |"
            )
            print("|---|---|---|---|---|")
            url = new_database() if new_database else None
            search_rows(Path(folder), url, args.size, args.calls)
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
