"""What a runner or a checker is: how to detect that it applies, how to run it and how to read
its machine-readable output (issue 22).

A tool never runs through a shell. Its `Plan` is an argument list run in its own process group,
with the timeout and kill rules of qbench's process supervision; the exit status must be one of
the plan's documented ``ok_codes`` (any other is a crash); its machine-readable output is read
from stdout or from the file the plan names, once the process ended, and turned into qbench's
models by the plan's parser. A tool that cannot run here (its binary is missing) raises
`NotInstalled` from its planner: the verdict is "not run", which fails closed, never "clean".
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Generic
from typing import Literal
from typing import TypeVar


if TYPE_CHECKING:
    from pytest_qbench.report.models import Diagnostic
    from pytest_qbench.report.models import TestResult

Kind = Literal["typecheck", "lint", "build"]
"""What a checker checks."""
KINDS: tuple[Kind, ...] = ("typecheck", "lint", "build")
Target = Literal["backend", "frontend"]
"""Which half of a full-stack project a tool is for: the Python back end, or the
JavaScript/TypeScript front end."""
TARGETS: tuple[Target, ...] = ("backend", "frontend")

Item = TypeVar("Item")
Parser = Callable[[bytes, Path], "list[Item]"]
"""A tool's machine-readable output (bytes) and the directory it ran in, into models.

Raises ``pytest_qbench.core.errors.CheckOutputError`` when the output is not in the tool's
documented format: the verdict is then "crashed", never "clean".
"""


class NotInstalled(Exception):
    """A tool that cannot run here (its binary is missing); the message is the fix, such as
    ``install mypy`` or ``npm install --save-dev typescript``."""


@dataclass(frozen=True)
class Plan(Generic[Item]):
    """How to run a tool once: its command, documented exit statuses, output and parser.

    ``tool`` names the run and its models (``ruff.lint``, ``tsc.typecheck``, ``vitest``); the
    raw logs are stored as ``<tool>.log`` and ``<tool>.stderr.log``.
    """

    tool: str
    command: list[str]
    """The argument list (no shell); the first item is the executable."""
    ok_codes: frozenset[int]
    """The tool's documented exit statuses (e.g. 0 clean, 1 errors found); any other is a
    crash, whatever the output says."""
    parse: Callable[[bytes, Path], list[Item]]
    """Turns the machine-readable output into models (`Parser`)."""
    merge_stderr: bool = False
    """Whether stderr goes into the same log as stdout (the parser then reads both)."""
    output: Path | None = None
    """The file the tool writes its machine-readable output to (e.g. a JSON reporter's
    ``--outputFile`` in the plan's scratch directory), read once it ended; ``None``: its
    stdout is the output."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the environment the tool inherits."""
    passed_without_tests: Callable[[bytes, Path], list[str]] | None = None
    """The files the tool ran and passed that hold no test, read from the same output (vitest's
    type-test files whose assertions stand outside any test: ``Test Files 1 passed``, ``Tests
    no tests``, exit 0): a run of only these is the tool's pass, not "no tests ran". ``None``:
    the tool has no such files (a jest file without a test fails)."""


_STORE: ContextVar[Path | None] = ContextVar("qbench_store", default=None)


def store_directory() -> Path | None:
    """The qbench directory the run being planned writes to (its reports, its raw logs), for
    a planner to leave out of the tool's files: ESLint lints every file below its directory,
    a flat configuration ignoring no dot-directory and none reading ``.gitignore``. ``None``
    outside a planning (a planner called by hand)."""
    return _STORE.get()


def store_of(run_dir: Path) -> Path | None:
    """The qbench directory a run directory (``<qbench-dir>/runs/<run id>``) is in: the store
    to plan for (`planning_for`); ``None`` for another directory."""
    from pytest_qbench.report.store import RUNS_DIR

    return run_dir.parent.parent if run_dir.parent.name == RUNS_DIR else None


@contextlib.contextmanager
def planning_for(store: Path | None) -> Iterator[None]:
    """`store_directory` is ``store`` while the block runs (a checker planned for a run
    stored there)."""
    token = _STORE.set(store)
    try:
        yield
    finally:
        _STORE.reset(token)


class Unsupported(Exception):
    """A run the tool's plan cannot make the way the project makes it (the test script gives
    the runner options qbench cannot carry into its one run); the message says what and the
    fix. The verdict is "not run", which fails closed, never a run of other tests."""


Planner = Callable[[Path, list[str], Path], "Plan[Item]"]
"""``planner(cwd, paths, scratch)``: the plan to run the tool in ``cwd`` on ``paths`` (empty:
what the project's own configuration names), with ``scratch`` a fresh temporary directory
removed once the tool ended (for output files). Raises `NotInstalled`."""


@dataclass(frozen=True)
class Checker:
    """A static checker: finds `Diagnostic`s in a project.

    A plugin returns these from ``qbench_checkers()``. ``name`` is what ``qbench check
    --checker`` takes; ``tool`` names its diagnostics (``<name>.<kind>`` by convention).
    """

    name: str
    kind: Kind
    target: Target
    tool: str
    """The name of its run and of its diagnostics' ``tool``, e.g. ``tsc.typecheck``."""
    applies: Callable[[Path], bool]
    """Whether the project at this root is one the checker checks (a ``tsconfig.json``, a
    ``pyproject.toml``...): cheap, reads files only, runs nothing."""
    plan: Callable[[Path, list[str], Path], Plan[Diagnostic]]
    """The `Planner`: how to run it; raises `NotInstalled` when its binary is missing."""
    installed: Callable[[Path], bool] | None = None
    """Whether its binary is there for the project at this root (``qbench check --list``);
    ``None``: planned in a scratch directory to find out."""
    description: str = ""
    aliases: tuple[str, ...] = ()
    """Other names it is known by (older option values)."""
    optional: bool = False
    """Run by a selection of kinds or targets only where ``installed`` says it is (pyright);
    named explicitly, it runs, or is "not run" when missing."""


@dataclass(frozen=True)
class Runner:
    """A test runner: runs a project's tests into `TestResult`s.

    A plugin returns these from ``qbench_runners()``. The contract:

    - ``applies(root)`` detects the runner from files only (``package.json`` naming vitest in
      its dependencies, a ``pytest.ini``...), without running anything.
    - ``plan(cwd, paths, scratch)`` returns a `Plan` whose command runs the project's own
      installed binary (``node_modules/.bin/vitest``, this Python's pytest), never through a
      shell nor a package manager download (``npx`` fetching a missing tool is forbidden);
      a missing binary raises `NotInstalled`, options of the project's test script it cannot carry
      raise `Unsupported`. ``paths`` narrows the run to these test files
      (empty: the runner's own configuration decides).
    - The runner writes a machine-readable report (JSON or JUnit XML reporter) to a file in
      ``scratch`` named by ``Plan.output``, never scraped from the console; ``ok_codes`` are
      the statuses it documents for "all passed" and "some failed" (and "no tests" when it
      has one); any other status is a crash.
    - ``Plan.parse`` turns that file's bytes into one `TestResult` per test, with ``nodeid``
      ``<file>::<test name>`` (file relative to ``cwd``), the outcome, duration and failure
      message, so the counts equal the runner's own summary line. A malformed report raises
      ``CheckOutputError`` (the run then fails, never passes).
    """

    name: str
    tool: str
    """The name of its run (``RunMeta.tool``), e.g. ``vitest``."""
    applies: Callable[[Path], bool]
    plan: Callable[[Path, list[str], Path], Plan[TestResult]]
    installed: Callable[[Path], bool] | None = None
    description: str = ""


__all__ = [
    "KINDS",
    "TARGETS",
    "Checker",
    "Kind",
    "NotInstalled",
    "Parser",
    "Plan",
    "Planner",
    "Runner",
    "Target",
    "Unsupported",
    "planning_for",
    "store_directory",
]
