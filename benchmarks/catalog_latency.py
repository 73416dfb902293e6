"""How fast the MCP test catalog answers: ``search_tests`` and ``find_similar_tests`` at 2 000
and 20 000 cases, BM25 only and hybrid (the ``[search]`` extra).

Target (issue 24): under 100 ms per call at 20 000 cases. The catalog is synthetic and built in
process (no pytest run): half pytest tests (parametrized functions of 10 cases, docstrings), half
imported cases (title, description, two tags, two steps), their words drawn (seeded) from one
vocabulary of test-suite words, so a query's words match many cases as in a real suite. The
BM25 catalog has no vectors; the hybrid one is embedded by the real model. The tools are called
as ``qbench-mcp`` calls them (one ``RunService``, one process): the first call of each kind is
a warm-up (loading the model, building the vector matrix kept between calls), then the median of
``--calls`` calls with different queries / reference tests is reported, with the slowest.

Usage::

    python benchmarks/catalog_latency.py [--sizes 2000 20000] [--calls 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_qbench.mcp import embed
from pytest_qbench.mcp import search
from pytest_qbench.mcp.catalog import CaseRecord
from pytest_qbench.mcp.catalog import open_catalog
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.ingest import _embed
from pytest_qbench.mcp.service import RunService


VOCABULARY = [
    "boolean",
    "flag",
    "option",
    "envvar",
    "environment",
    "variable",
    "default",
    "value",
    "parse",
    "parser",
    "argument",
    "command",
    "group",
    "help",
    "page",
    "usage",
    "error",
    "message",
    "exit",
    "code",
    "prompt",
    "confirm",
    "password",
    "input",
    "output",
    "file",
    "path",
    "directory",
    "encoding",
    "unicode",
    "bytes",
    "stream",
    "terminal",
    "color",
    "style",
    "width",
    "context",
    "object",
    "callback",
    "decorator",
    "type",
    "choice",
    "range",
    "integer",
    "float",
    "string",
    "list",
    "tuple",
    "multiple",
    "count",
    "required",
    "missing",
    "invalid",
    "convert",
    "validate",
    "shell",
    "completion",
    "alias",
    "version",
    "plugin",
    "load",
    "config",
    "setting",
    "cache",
    "timeout",
    "retry",
    "connection",
    "request",
    "response",
    "header",
    "cookie",
    "session",
    "login",
    "logout",
    "user",
    "account",
    "permission",
    "role",
    "token",
    "expire",
    "refresh",
]
QUERIES = (
    "boolean flag from environment variable",
    "help page lists every command",
    "invalid integer option gives an error message",
    "prompt asks for a password twice",
    "file path argument must exist",
    "session token expires and is refreshed",
    "shell completion of choices",
    "user without permission is refused",
    "config file setting overrides the default",
    "unicode output on a narrow terminal",
    "retry the request after a timeout",
    "count option given multiple times",
    "callback converts the value",
    "cookie header of the response",
    "version option prints the version",
)


def sentence(rng: random.Random, words: int) -> str:
    """``words`` vocabulary words, seeded."""
    return " ".join(rng.choice(VOCABULARY) for _ in range(words))


def records(size: int, seed: int = 24) -> tuple[list[CaseRecord], list[CaseRecord]]:
    """``size`` cases: half pytest tests (functions of 10 parametrized cases), half imported."""
    rng = random.Random(seed)
    tests: list[CaseRecord] = []
    for function in range(size // 2 // 10):
        name = "_".join(rng.choice(VOCABULARY) for _ in range(3))
        doc = sentence(rng, 12)
        path = f"tests/test_{rng.choice(VOCABULARY)}_{function // 40}.py"
        for case in range(10):
            nodeid = f"{path}::test_{name}_{function}[{rng.choice(VOCABULARY)}-{case}]"
            tests.append(
                CaseRecord(
                    uid=nodeid,
                    source="pytest",
                    nodeid=nodeid,
                    path=path,
                    description=doc,
                    markers=["parametrize"],
                )
            )
    imported = [
        CaseRecord(
            uid=f"QA-{n}",
            source="json:cases.json",
            key=f"QA-{n}",
            title=sentence(rng, 6),
            description=sentence(rng, 20),
            tags=[rng.choice(VOCABULARY), rng.choice(VOCABULARY)],
            priority=rng.choice(("High", "Medium", "Low")),
            folder=f"Suite {n % 50}",
            steps=[(sentence(rng, 8), sentence(rng, 6)), (sentence(rng, 8), sentence(rng, 6))],
        )
        for n in range(size - len(tests))
    ]
    return tests, imported


def build(root: Path, size: int, hybrid: bool) -> tuple[RunService, list[str]]:
    """A project whose catalog holds ``size`` cases (embedded when ``hybrid``); reference uids."""
    config = ServerConfig(root=root, qbench_dir=root / ".qbench")
    tests, imported = records(size)
    with open_catalog(config.catalog_path, create=True) as catalog:
        catalog.replace_source("pytest", tests)
        catalog.replace_source("json:cases.json", imported)
        if hybrid:
            _embed(catalog)
    references = [tests[i * 97 % len(tests)].uid for i in range(len(QUERIES) // 2)]
    references += [imported[i * 89 % len(imported)].uid for i in range(len(QUERIES) // 2 + 1)]
    return RunService(config), references


def median_ms(calls: list[Callable[[], object]]) -> tuple[float, float, float]:
    """The first call as a warm-up, then the median and the slowest wall time of the others,
    and their median CPU time, in ms (CPU time tells the code's cost on a busy machine)."""
    calls[0]()
    took, cpu = [], []
    for call in calls[1:]:
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        took.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    return statistics.median(took), max(took), statistics.median(cpu)


def measure(size: int, hybrid: bool, count: int) -> dict[str, tuple[float, float, float]]:
    """Median and slowest milliseconds of both tools at ``size`` cases."""
    with tempfile.TemporaryDirectory() as folder:
        tools, references = build(Path(folder), size, hybrid)
        queries = [QUERIES[i % len(QUERIES)] for i in range(count + 1)]
        refs = [references[i % len(references)] for i in range(count + 1)]
        return {
            "search_tests": median_ms(
                [lambda q=q: search.search_tests(tools, query=q) for q in queries]  # type: ignore[misc]
            ),
            "find_similar_tests": median_ms(
                [lambda r=r: search.find_similar_tests(tools, test=r) for r in refs]  # type: ignore[misc]
            ),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args(argv)
    rankings = [False, True] if embed.available() else [False]
    print(
        "| cases | ranking | `search_tests` median (max), CPU | `find_similar_tests` median (max), CPU |"
    )
    print("|---|---|---|---|")
    for size in args.sizes:
        for hybrid in rankings:
            found = measure(size, hybrid, args.calls)
            cells = [
                f"{found[t][0]:.0f} ms ({found[t][1]:.0f}), {found[t][2]:.0f} ms"
                for t in ("search_tests", "find_similar_tests")
            ]
            label = "hybrid" if hybrid else "BM25 only"
            print(f"| {size} | {label} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
