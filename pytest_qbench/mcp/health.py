"""``check_health``: versions, the run store, the history index, the catalog and the limits;
its result model (``Health``) and its text.
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal

from pydantic import Field

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.config import run_python
from pytest_qbench.mcp.text import cut_lines
from pytest_qbench.report.models import QBenchModel


if TYPE_CHECKING:
    from pytest_qbench.mcp.service import RunService


class ToolCallTotals(QBenchModel):
    """One tool's calls in the server's tool-call log."""

    tool: str
    calls: int
    """Calls logged."""
    success_rate: float
    """Share of them that succeeded, 0 to 1."""
    median_duration: float
    """Seconds."""
    bytes_saved: int
    """Raw output the responses replaced, less the responses."""


class EmbedderHealth(QBenchModel):
    """The embedding model of the catalog's hybrid ranking."""

    provider: str | None = None
    """``wordllama``; ``None`` without the ``[search]`` extra."""
    model: str | None = None
    dimensions: int = 0
    items_embedded: int = 0
    """Catalog cases with a vector of this model."""
    ranking: str
    """Hybrid (BM25 and vectors) or BM25 only, and why."""


class Health(QBenchModel):
    """The server's state and limits."""

    status: Literal["ok", "degraded"]
    """``degraded`` when something below is not usable."""
    qbench_version: str
    """pytest-qbench version."""
    mcp_version: str
    """MCP SDK version."""
    python: str
    """Python version of the interpreter that runs pytest."""
    pytest_version: str | None = None
    """pytest version, as installed for that interpreter."""
    interpreter: str
    """The interpreter that runs pytest (``--python``; by default the server's own)."""
    project_root: str
    """Every test path resolves inside this directory."""
    qbench_dir: str
    """The run store."""
    store_writable: bool
    """Whether the run store can be written."""
    runs_indexed: int | None = None
    """Runs in the history index (``None`` without one)."""
    catalog_size: int = 0
    """Test cases in the catalog."""
    catalog_location: str = ""
    """SQLite file or PostgreSQL URL."""
    fts5: bool
    embedder: EmbedderHealth
    """The catalog's embedding model (provider, model, dimensions, cases embedded)."""
    """Whether SQLite has FTS5 (the catalog needs it)."""
    run_in_progress: str | None = None
    """The run going on now, if any."""
    limits: dict[str, float] = Field(default_factory=dict)
    """Timeouts (seconds) and response budgets (bytes)."""
    tool_calls: list[ToolCallTotals] = Field(default_factory=list)
    """The tool-call log's totals per tool (``qbench mcp-log`` lists the calls)."""
    problems: list[str] = Field(default_factory=list)
    """What is wrong, when degraded."""


def _tool_calls_text(health: Health) -> str:
    return "; ".join(
        f"{t.tool} {t.calls} ({t.success_rate:.0%} ok, median {t.median_duration:.2f}s, "
        f"{t.bytes_saved} bytes saved)"
        for t in health.tool_calls
    )


def health_text(health: Health, limit: int) -> str:
    """Status, versions, sizes, limits."""
    lines = [
        f"Status: {health.status}",
        f"pytest-qbench {health.qbench_version}, mcp {health.mcp_version}, Python "
        f"{health.python}, pytest {health.pytest_version or 'not found'}",
        f"Project root: {health.project_root}",
        f"Run store: {health.qbench_dir} ({'writable' if health.store_writable else 'NOT writable'})",
        f"Runs indexed: {health.runs_indexed if health.runs_indexed is not None else 'no index yet'}",
        f"Catalog: {health.catalog_size} test cases in {health.catalog_location} (FTS5 {'yes' if health.fts5 else 'NO'})",
        _embedder_text(health.embedder),
        f"Run in progress: {health.run_in_progress or 'none'}",
        "Limits: " + ", ".join(f"{k}={v:g}" for k, v in health.limits.items()),
        "Tool calls logged: " + (_tool_calls_text(health) or "none"),
        *(f"Problem: {p}" for p in health.problems),
    ]
    return cut_lines(lines, limit)


def check_health(tools: RunService) -> Health:
    """Versions, the store, the index, the catalog, the limits."""
    from pytest_qbench.mcp.embed import MODEL
    from pytest_qbench.mcp.shared_catalog import open_project_catalog

    problems: list[str] = []
    writable = _writable(tools.config.qbench_dir, problems)
    fts5 = _has_fts5()
    if not fts5:
        problems.append("SQLite has no FTS5: the test catalog cannot work")
    catalog_size = embedded = 0
    try:
        with open_project_catalog(tools.config) as catalog:
            catalog_size = catalog.size()
            embedded = catalog.embedded(MODEL)
    except ToolFailure as exc:
        problems.append(str(exc))
    python, pytest_version = _interpreter(tools.config.python, problems)
    runs_indexed = _runs_indexed(tools, problems)
    tool_calls = _tool_calls(tools) if runs_indexed is not None else []
    active = tools.active
    return Health(
        status="ok" if not problems else "degraded",
        qbench_version=__version__,
        mcp_version=_version("mcp") or "not installed",
        python=python,
        pytest_version=pytest_version,
        interpreter=tools.config.python,
        project_root=str(tools.config.root),
        qbench_dir=str(tools.config.qbench_dir),
        store_writable=writable,
        runs_indexed=runs_indexed,
        catalog_size=catalog_size,
        catalog_location=_catalog_location(tools),
        fts5=fts5,
        embedder=_embedder(embedded),
        run_in_progress=active.plan.run_id if active else tools.active_check,
        limits={
            "default_timeout_seconds": tools.config.default_timeout,
            "max_timeout_seconds": tools.config.max_timeout,
            "budget_bytes": tools.config.budget,
            "stop_grace_seconds": tools.config.stop_grace,
            "finish_grace_seconds": tools.config.finish_grace,
        },
        tool_calls=tool_calls,
        problems=problems,
    )


def _catalog_location(tools: RunService) -> str:
    """The catalog's SQLite file, or the redacted URL of the database ``QBENCH_DB`` or the ini
    ``qbench_db`` names (as ``open_project_catalog`` chooses)."""
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.dburl import redact

    try:
        url = configured_db(None, tools.config.root)
    except HistoryError:
        return "not known: the database setting is refused (see the problems)"
    return str(tools.config.catalog_path) if url is None else redact(url)


def _runs_indexed(tools: RunService, problems: list[str]) -> int | None:
    """The runs in the index; ``None`` without one. An index that cannot be read is a
    problem, not "no index yet"."""
    from pytest_qbench.history.queries import runs_held

    try:
        index = runs.open_history_seeing_died(tools.config)
    except HistoryError as exc:
        if exc.slug not in ("index-missing", "no-qbench-dir"):
            problems.append(str(exc))
        return None
    try:
        return runs_held(index)
    except HistoryError as exc:
        problems.append(str(exc))
        return None
    finally:
        index.close()


def _tool_calls(tools: RunService) -> list[ToolCallTotals]:
    """The tool-call log's totals per tool (none when the index cannot be read: the runs
    count says why)."""
    from pytest_qbench.history.toollog import tool_totals

    try:
        index = runs.open_history(tools.config)
    except HistoryError:
        return []
    try:
        totals = tool_totals(index)
    except HistoryError:
        return []
    finally:
        index.close()
    return [
        ToolCallTotals(
            tool=t.tool,
            calls=t.calls,
            success_rate=round(t.success_rate, 4),
            median_duration=round(t.median_duration, 3),
            bytes_saved=t.saved_bytes,
        )
        for t in totals
    ]


def _writable(directory: Path, problems: list[str]) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError as exc:
        problems.append(f"the run store {directory} is not writable: {exc.strerror}")
        return False


def _embedder(embedded: int) -> EmbedderHealth:
    """The embedder as installed (found, not loaded) and the catalog's vectors of its model."""
    from pytest_qbench.mcp import embed

    found = embed.info()
    if found.provider is None:
        ranking = embed.INSTALL_HINT
    elif embedded:
        ranking = "hybrid: BM25 and vector similarity, weighted reciprocal rank fusion"
    else:
        ranking = "BM25 only until ingest_tests embeds the catalog"
    return EmbedderHealth(
        provider=found.provider,
        model=found.model,
        dimensions=found.dimensions,
        items_embedded=embedded,
        ranking=ranking,
    )


def _embedder_text(found: EmbedderHealth) -> str:
    if found.provider is None:
        return f"Embedder: none ({found.ranking})"
    return (
        f"Embedder: {found.provider} {found.model} ({found.dimensions} dimensions, "
        f"{found.items_embedded} cases embedded; {found.ranking})"
    )


def _has_fts5() -> bool:
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5 (a)")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


def _interpreter(python: str, problems: list[str]) -> tuple[str, str | None]:
    """The Python and pytest versions of the interpreter that runs pytest (asked, when it is
    not the server's own)."""
    if python == sys.executable:
        return platform.python_version(), _version("pytest")
    code = "import platform, pytest; print(platform.python_version(), pytest.__version__)"
    try:
        done = run_python(python, code, timeout=30)
        versions = done.stdout.split()
    except (OSError, subprocess.TimeoutExpired) as exc:
        versions, done = [], None
        problems.append(f"the interpreter {python} cannot be run: {exc}")
    if len(versions) == 2:
        return versions[0], versions[1]
    if done is not None:
        problems.append(f"the interpreter {python} cannot import pytest; install it there")
    return "unknown", None


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
