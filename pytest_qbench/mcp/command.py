"""A run request into pytest's argument list: no shell, no free-form arguments.

Every value an assistant gives becomes exactly one argument, in a form pytest cannot read as
another option: paths are checked by ``paths``; ``-k`` and ``-m`` expressions are attached to
their option (``-k=EXPR``); numbers are formatted here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.paths import resolve_source
from pytest_qbench.mcp.paths import resolve_test_path
from pytest_qbench.mcp.paths import safe_text
from pytest_qbench.report import store


MAX_PATHS = 50
DEFAULT_MAX_FAILURES = 10
MAX_FAILURES = 100
DIGEST_NAME = "digest.json"
COLLECT_PLUGIN = "pytest_qbench.plugin.collect_dump"
COLLECTION_DUMP = "collection.jsonl"
COLLECT_ROOT = "QBENCH_COLLECT_ROOT"
"""Names the project root to the collection plugin, which collects nothing that resolves
outside it (a symlink out of the project)."""


@dataclass(frozen=True)
class RunRequest:
    """What ``run_test_workflow`` was asked, before any check."""

    test_path: Sequence[str] = ()
    keyword: str | None = None
    markers: str | None = None
    coverage: bool | None = None
    """``None``: not said (a threshold or a source measures it); ``False``: not measured."""
    coverage_threshold: float | None = None
    coverage_source: Sequence[str] = ()
    fail_fast: bool = False
    verbose: bool = False
    max_failures: int = DEFAULT_MAX_FAILURES
    timeout_seconds: float | None = None


@dataclass(frozen=True)
class RunPlan:
    """A checked request: the command line and where the run's files go."""

    run_id: str
    argv: list[str]
    cwd: Path
    run_dir: Path
    staging: Path
    """Where pytest's output is written while it runs (pytest creates the run directory)."""
    timeout: float
    max_failures: int
    verbose: bool
    env: dict[str, str] = field(default_factory=dict)
    """Variables added to the server's environment."""
    collection: bool = False
    """``pytest --collect-only`` for the catalog: no run directory, nothing kept."""

    @property
    def digest_path(self) -> Path:
        """The failure digest pytest writes."""
        return self.run_dir / DIGEST_NAME


def plan_run(config: ServerConfig, request: RunRequest, run_id: str | None = None) -> RunPlan:
    """Check ``request`` and build the command that runs it.

    Raises:
        ToolFailure: a value is refused (the message names it and why).
    """
    run_id = run_id or store.new_run_id()
    run_dir = store.run_dir(config.qbench_dir, run_id)
    argv = [*pytest_command(config), "-p", "qbench", "-p", COLLECT_PLUGIN]
    argv += coverage_args(config, request)
    argv += [
        f"--qbench-dir={config.qbench_dir}",
        f"--qbench-run-id={run_id}",
        f"--qbench-digest={run_dir / DIGEST_NAME}",
        "--color=no",
    ]
    argv += selection_args(request)
    argv += [resolve_test_path(config.root, p) for p in _paths(request.test_path)]
    return RunPlan(
        run_id=run_id,
        argv=argv,
        cwd=config.root,
        run_dir=run_dir,
        staging=config.qbench_dir / "mcp-staging" / run_id,
        timeout=effective_timeout(config, request.timeout_seconds),
        max_failures=_max_failures(request.max_failures),
        verbose=request.verbose,
        env={"COLUMNS": "120", COLLECT_ROOT: str(config.root)},
    )


def plan_collection(config: ServerConfig, timeout: float | None = None) -> RunPlan:
    """``pytest --collect-only`` with the catalog's collection plugin instead of qbench's (so
    collecting writes no run), its dump in a staging directory."""
    run_id = f"collect-{store.new_run_id()}"
    staging = config.qbench_dir / "mcp-staging" / run_id
    return RunPlan(
        run_id=run_id,
        argv=[
            *pytest_command(config),
            "--collect-only",
            "-q",
            "--color=no",
            "-p",
            "no:qbench",
            "-p",
            COLLECT_PLUGIN,
        ],
        cwd=config.root,
        run_dir=staging,
        staging=staging,
        timeout=timeout or config.default_timeout,
        max_failures=1,
        verbose=False,
        env={
            "QBENCH_CATALOG_DUMP": str(staging / COLLECTION_DUMP),
            COLLECT_ROOT: str(config.root),
        },
        collection=True,
    )


def pytest_command(config: ServerConfig) -> list[str]:
    """pytest, run by the project's interpreter (``--python``; the server's own by default)."""
    return [config.python, "-m", "pytest"]


def selection_args(request: RunRequest) -> list[str]:
    """``-x``, ``-v``, ``-k=EXPR``, ``-m=EXPR``, and the traceback style of the raw output:
    short (the result has the traces; long ones cost pytest seconds on large failing runs),
    long with ``verbose``."""
    args = ["--tb=long", "-v"] if request.verbose else ["--tb=short"]
    if request.fail_fast:
        args.append("-x")
    if request.keyword is not None:
        args.append(f"-k={safe_text(request.keyword, 'keyword')}")
    if request.markers is not None:
        args.append(f"-m={safe_text(request.markers, 'markers')}")
    return args


def coverage_args(config: ServerConfig, request: RunRequest) -> list[str]:
    """``--qbench-cov=SOURCE`` for each source (a bare ``--qbench-cov`` leaves the choice to
    coverage.py's configuration), and the threshold.

    Raises:
        ToolFailure: ``coverage`` false with a threshold or a source, or a value refused.
    """
    threshold = request.coverage_threshold
    if request.coverage is False and (threshold is not None or request.coverage_source):
        given = "coverage_threshold" if threshold is not None else "coverage_source"
        raise ToolFailure(
            f"coverage is false, and {given} measures coverage; leave coverage out (or set it "
            f"true) to measure, or leave {given} out"
        )
    if not (request.coverage or threshold is not None or request.coverage_source):
        return []
    sources = [resolve_source(config.root, s) for s in _paths(request.coverage_source)]
    args = [f"--qbench-cov={s}" for s in sources or config.coverage_sources]
    if not args:
        args = ["--qbench-cov"]  # always followed by an option: it must not take a path
    if threshold is not None:
        if not (math.isfinite(threshold) and 0 <= threshold <= 100):
            raise ToolFailure(f"coverage_threshold must be from 0 to 100, given: {threshold}")
        args.append(f"--qbench-cov-fail-under={threshold:.15g}")  # :g made 99.99999 100
    return args


def effective_timeout(config: ServerConfig, asked: float | None) -> float:
    """The timeout asked for, or the default; never above the server's maximum."""
    if asked is None:
        return config.default_timeout
    if not (math.isfinite(asked) and asked > 0):
        raise ToolFailure(f"timeout_seconds must be more than 0, given: {asked}")
    return min(asked, config.max_timeout)


def _paths(values: Sequence[str] | str) -> list[str]:
    listed = [values] if isinstance(values, str) else list(values)
    if len(listed) > MAX_PATHS:
        raise ToolFailure(f"at most {MAX_PATHS} paths, given {len(listed)}; give directories")
    return listed


def _max_failures(value: int) -> int:
    if not 1 <= value <= MAX_FAILURES:
        raise ToolFailure(f"max_failures must be from 1 to {MAX_FAILURES}, given: {value}")
    return value


GENERATION_PREFIX = "generate-"
"""The run id of a generation (``generation.plan_generation``) starts with it."""


def is_generation(run_id: str) -> bool:
    """Whether a run id is a generation's."""
    return run_id.startswith(GENERATION_PREFIX)
