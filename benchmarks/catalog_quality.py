"""How well the MCP catalog finds related tests: recall@10 and MRR of ``find_similar_tests`` and
``search_tests``, BM25 alone, embeddings alone and hybrid, on real test suites.

Ground truth nobody writes by hand: the suite runs once under coverage.py with
``dynamic_context = test_function``; each test function's set of executed functions of the code
under test (lines mapped to their innermost ``def`` with ``ast``) is compared with every other's,
and two test functions are related when the Jaccard similarity of their sets is at least
``THRESHOLD`` (0.5, fixed before any ranking was looked at).

- ``find_similar_tests``: every test function with at least one related function is a
  reference (its first case); the ten functions ranked first (the reference's own function left
  out, as the tool does) are compared with its related ones.
- ``search_tests``: every test function with a docstring of 4 words or more gives a query: its
  first 30 words, lowercased, each word found in ``SYNONYMS`` replaced by its synonym, each other
  word dropped with probability 0.3, the rest shuffled (``random.Random(24)``: the same queries
  every run). The relevant answer is the function the docstring belongs to.

recall@10 = relevant functions among the first ten / min(10, relevant functions); MRR = mean of
1 / rank of the first relevant function (0 when none is in the first 50). The catalog is built
by the real ``ingest_tests`` (pytest's collection) with the ``[search]`` extra; the three
rankings are the ranking module's own pieces: BM25's (``bm25_only``), the vectors' alone
(``fused`` of no BM25 match, unweighted) and the tools' hybrid (``fused`` weighed by
``FUSION``).

Usage (a suite unpacked from its sdist, its tests runnable offline)::

    python benchmarks/catalog_quality.py SUITE_DIR PACKAGE [SUITE_DIR PACKAGE ...]
    # e.g. /tmp/q/attrs-26.1.0 attr /tmp/q/more_itertools-11.2.1 more_itertools
    python benchmarks/catalog_quality.py --tune SUITE_DIR PACKAGE
    # hybrid for each weighing, on ONE suite (the tools' FUSION was chosen on more-itertools)
"""

from __future__ import annotations

import argparse
import ast
import random
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qbench.mcp import vectors
from pytest_qbench.mcp.catalog import FTS_COLUMNS
from pytest_qbench.mcp.catalog import SCOPES
from pytest_qbench.mcp.catalog import STOP_WORDS
from pytest_qbench.mcp.catalog import WORD
from pytest_qbench.mcp.catalog import Catalog
from pytest_qbench.mcp.catalog import function_of
from pytest_qbench.mcp.catalog import open_catalog
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.embed import MODEL
from pytest_qbench.mcp.embed import embedder
from pytest_qbench.mcp.ranking import FUSION
from pytest_qbench.mcp.ranking import LIKE_MATCHES
from pytest_qbench.mcp.ranking import NO_MATCHES
from pytest_qbench.mcp.ranking import Fusion
from pytest_qbench.mcp.ranking import Matches
from pytest_qbench.mcp.ranking import Ranking
from pytest_qbench.mcp.ranking import bm25_only
from pytest_qbench.mcp.ranking import bm25_ranked
from pytest_qbench.mcp.ranking import distinctive
from pytest_qbench.mcp.ranking import fused
from pytest_qbench.mcp.search import reference_text
from pytest_qbench.mcp.snapshot import Snapshot
from pytest_qbench.mcp.snapshot import snapshot


THRESHOLD = 0.5
SEED = 24
DROP = 0.3
MODES = ("BM25", "embeddings", "hybrid")
SYNONYMS = {
    # generic English and programming words, written once before any measurement
    "return": "give back",
    "returns": "gives back",
    "raise": "throw",
    "raises": "throws",
    "error": "failure",
    "errors": "failures",
    "exception": "failure",
    "create": "make",
    "creates": "makes",
    "empty": "blank",
    "value": "item",
    "values": "items",
    "list": "sequence",
    "works": "functions",
    "work": "function",
    "correct": "right",
    "correctly": "properly",
    "invalid": "bad",
    "valid": "good",
    "attribute": "field",
    "attributes": "fields",
    "class": "type",
    "classes": "types",
    "instance": "object",
    "instances": "objects",
    "default": "fallback",
    "defaults": "fallbacks",
    "equal": "same",
    "different": "distinct",
    "call": "invoke",
    "called": "invoked",
    "calls": "invokes",
    "check": "verify",
    "checks": "verifies",
    "ensure": "make sure",
    "iterable": "sequence",
    "iterator": "generator",
    "items": "elements",
    "number": "count",
    "length": "size",
    "first": "initial",
    "last": "final",
    "wrong": "incorrect",
    "missing": "absent",
    "remove": "delete",
    "removes": "deletes",
    "add": "append",
    "adds": "appends",
    "new": "fresh",
    "keyword": "named",
    "arguments": "parameters",
    "argument": "parameter",
    "passed": "given",
    "pass": "give",
    "uses": "employs",
    "use": "employ",
    "used": "employed",
    "without": "lacking",
    "also": "too",
    "only": "just",
    "same": "identical",
    "order": "sequence",
    "string": "text",
    "strings": "texts",
    "function": "callable",
    "functions": "callables",
}


@dataclass
class Suite:
    """A test suite: its catalog and its ground truth."""

    name: str
    related: dict[str, set[str]]
    """Test function (node id without parameters) -> the functions related to it."""
    config: ServerConfig


def run_coverage(root: Path, package: str) -> Path:
    """Run the suite under coverage.py with per-test-function contexts; the data file."""
    data = root / ".quality.coverage"
    rc = root / ".quality.coveragerc"
    rc.write_text(f"[run]\ndynamic_context = test_function\nsource = {package}\n")
    if not data.exists():
        subprocess.run(
            [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", f"--data-file={data}",
             "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:qbench", "tests"],
            cwd=root, check=False, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    return data


def executed_functions(data_file: Path, root: Path) -> dict[str, set[str]]:
    """Test function node id -> ``file:qualname`` of the functions it executed."""
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    found: dict[str, set[str]] = {}
    for measured in data.measured_files():
        spans = _function_spans(Path(measured))
        for line, contexts in data.contexts_by_lineno(measured).items():
            name = _innermost(spans, line)
            if name is None:
                continue
            for context in contexts:
                nodeid = _nodeid(context, root)
                if nodeid:
                    found.setdefault(nodeid, set()).add(f"{measured}:{name}")
    return found


def _function_spans(path: Path) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return spans


def _innermost(spans: list[tuple[int, int, str]], line: int) -> str | None:
    inside = [s for s in spans if s[0] <= line <= s[1]]
    return min(inside, key=lambda s: s[1] - s[0])[2] if inside else None


def _nodeid(context: str, root: Path) -> str | None:
    parts = context.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (root / path).is_file():
            return "::".join([path, *parts[cut:]])
    return None


def related_functions(executed: dict[str, set[str]]) -> dict[str, set[str]]:
    """Test function -> those whose executed functions' Jaccard similarity is >= THRESHOLD."""
    names = sorted(name for name, found in executed.items() if found)
    related: dict[str, set[str]] = {name: set() for name in names}
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = executed[first], executed[second]
            if len(a & b) / len(a | b) >= THRESHOLD:
                related[first].add(second)
                related[second].add(first)
    return related


def ingest(root: Path) -> ServerConfig:
    """The suite's catalog, built by ``ingest_tests`` through an MCP client."""
    import anyio
    from mcp import Client

    from pytest_qbench.mcp.server import build_server

    config = ServerConfig(root=root.resolve(), qbench_dir=root / ".qbench-quality")

    async def main() -> Any:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await client.call_tool("ingest_tests", {})

    result = anyio.run(main)
    if result.is_error:
        raise SystemExit(f"ingest_tests failed in {root}: {result.content}")
    return config


def top_functions(ranking: Ranking, exclude: str | None, count: int = 50) -> list[str]:
    """The first ``count`` test functions of a ranking, ``exclude``'s left out."""
    if exclude is not None:
        ranking = ranking.without(exclude)
    return [ranking.memo.functions[i] for i, _n in ranking.grouped(False, count).hits]


@dataclass
class Query:
    """One query's inputs to the rankings: BM25's matches and the vector hits."""

    memo: Snapshot
    bm25: Matches
    near: list[tuple[int, float]]
    exclude: str | None
    """The reference's test function (left out of the ranking), if any."""
    relevant: set[str]

    def rankings(self, fusion: Fusion = FUSION) -> dict[str, list[str]]:
        """The three rankings' first test functions; hybrid weighed by ``fusion``."""
        return {
            "BM25": top_functions(bm25_only(self.memo, self.bm25), self.exclude),
            "embeddings": top_functions(
                fused(self.memo, NO_MATCHES, self.near, Fusion()), self.exclude
            ),
            "hybrid": top_functions(fused(self.memo, self.bm25, self.near, fusion), self.exclude),
        }


def query_like(catalog: Catalog, uid: str, relevant: set[str]) -> Query:
    """``find_similar_tests``' inputs for the case ``uid`` (scope ``all``)."""
    memo = snapshot(catalog)
    reference = catalog.by_uid(uid)
    assert reference is not None
    exclude = memo.ids[uid]
    words = distinctive(catalog, memo, reference_text(reference, "all"))
    bm25 = bm25_ranked(catalog, memo, words, SCOPES["all"], None, exclude, LIKE_MATCHES)
    vector = vectors.reference_vector(catalog, uid, "all")
    near = vectors.nearest(memo.matrix(catalog, MODEL), vector, None, "all", exclude)
    return Query(memo, bm25, near, function_of(reference), relevant)


def query_for(catalog: Catalog, query: str, relevant: set[str]) -> Query:
    """``search_tests``' inputs for ``query``."""
    memo = snapshot(catalog)
    engine = embedder()
    assert engine is not None
    bm25 = bm25_ranked(catalog, memo, query, FTS_COLUMNS)
    near = vectors.nearest(
        memo.matrix(catalog, MODEL), vectors.query_vector(engine, query), None, "all"
    )
    return Query(memo, bm25, near, None, relevant)


def changed_words(docstring: str, rng: random.Random) -> str | None:
    """The query made from a docstring (module docstring describes the transform)."""
    words = [w.lower() for w in WORD.findall(docstring)][:30]
    if len([w for w in words if w not in STOP_WORDS]) < 4:
        return None
    kept = []
    for word in words:
        if word in SYNONYMS:
            kept.append(SYNONYMS[word])
        elif rng.random() >= DROP:
            kept.append(word)
    rng.shuffle(kept)
    return " ".join(kept) or None


def scores(ranked: Sequence[str], relevant: set[str]) -> tuple[float, float]:
    """recall@10 and reciprocal rank of one ranking."""
    recall = len(relevant & set(ranked[:10])) / min(10, len(relevant))
    rank = next((n for n, name in enumerate(ranked, start=1) if name in relevant), None)
    return recall, 1 / rank if rank else 0.0


def queries(suite: Suite) -> dict[str, list[Query]]:
    """Per tool, every query of the suite with its relevant test functions."""
    found: dict[str, list[Query]] = {"find_similar_tests": [], "search_tests": []}
    rng = random.Random(SEED)
    with open_catalog(suite.config.catalog_path) as catalog:
        first_case: dict[str, str] = {}
        docstrings: dict[str, str] = {}
        for uid in sorted(snapshot(catalog).ids):
            record = catalog.by_uid(uid)
            if record is None or record.source != "pytest":
                continue
            family = function_of(record)
            first_case.setdefault(family, uid)
            if record.description:
                docstrings.setdefault(family, record.description)
        for family, related in sorted(suite.related.items()):
            if related and family in first_case:
                found["find_similar_tests"].append(query_like(catalog, first_case[family], related))
        for family, docstring in sorted(docstrings.items()):
            query = changed_words(docstring, rng)
            if query:
                found["search_tests"].append(query_for(catalog, query, {family}))
    return found


def evaluate(
    asked: dict[str, list[Query]], fusion: Fusion = FUSION
) -> dict[str, dict[str, tuple[float, float, int]]]:
    """Per tool and mode: mean recall@10, MRR and the number of queries."""
    found: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for tool, rows in asked.items():
        found[tool] = {m: [] for m in MODES}
        for query in rows:
            ranked = query.rankings(fusion)
            for mode in MODES:
                found[tool][mode].append(scores(ranked[mode], query.relevant))
    return {
        tool: {
            mode: (
                statistics.fmean(r for r, _ in rows) if rows else 0.0,
                statistics.fmean(m for _, m in rows) if rows else 0.0,
                len(rows),
            )
            for mode, rows in modes.items()
        }
        for tool, modes in found.items()
    }


TUNE_VECTORS = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3)
TUNE_MARGIN = (1.0, 0.3, 0.2, 0.15, 0.1)


def tune(asked: dict[str, list[Query]]) -> Fusion:
    """Hybrid's recall@10 and MRR for each weighing of ``TUNE_*``, and the one chosen: the
    largest smallest gain over BM25 among the four (two tools, two measures), ties by their
    mean. Run it on ONE suite: the weights chosen there are then reported unchanged on the
    others, held out."""
    print("| vectors' weight | margin | tool | recall@10 | MRR | BM25 recall@10 | BM25 MRR |")
    print("|---|---|---|---|---|---|---|")
    best: tuple[float, float, Fusion] | None = None
    for vector_weight in TUNE_VECTORS:
        for margin in TUNE_MARGIN:
            fusion = Fusion(1.0, vector_weight, margin)
            gains = []
            for tool, modes in evaluate(asked, fusion).items():
                recall, mrr, _n = modes["hybrid"]
                base_recall, base_mrr, _n = modes["BM25"]
                gains += [recall - base_recall, mrr - base_mrr]
                print(
                    f"| {vector_weight:.2f} | {margin:.2f} | `{tool}` | {recall:.3f} | "
                    f"{mrr:.3f} | {base_recall:.3f} | {base_mrr:.3f} |",
                    flush=True,
                )
            found = (round(min(gains), 3), round(statistics.fmean(gains), 4), fusion)
            if best is None or found[:2] > best[:2]:
                best = found
    assert best is not None
    print(f"chosen: {best[2]} (smallest gain {best[0]:+.3f}, mean {best[1]:+.4f})")
    return best[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="+", help="SUITE_DIR PACKAGE pairs")
    parser.add_argument(
        "--tune", action="store_true", help="print hybrid for each weighing (one suite only)"
    )
    args = parser.parse_args(argv)
    pairs = list(zip(args.suites[::2], args.suites[1::2], strict=True))
    if args.tune:
        if len(pairs) != 1:
            parser.error("--tune takes one suite: the others are held out")
        root = Path(pairs[0][0]).resolve()
        executed = executed_functions(run_coverage(root, pairs[0][1]), root)
        tune(queries(Suite(root.name, related_functions(executed), ingest(root))))
        return 0
    print("| suite | tool | queries | ranking | recall@10 | MRR |")
    print("|---|---|---|---|---|---|")
    for folder, package in pairs:
        root = Path(folder).resolve()
        executed = executed_functions(run_coverage(root, package), root)
        suite = Suite(root.name, related_functions(executed), ingest(root))
        print(f"<!-- hybrid weighed {FUSION} -->", flush=True)
        for tool, modes in evaluate(queries(suite)).items():
            for mode, (recall, mrr, count) in modes.items():
                print(f"| {suite.name} | `{tool}` | {count} | {mode} | {recall:.3f} | {mrr:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
