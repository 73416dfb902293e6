"""The MCP server's settings, and the command-line options of ``qbench mcp`` / ``qbench-mcp``.

Options are defined once (``add_server_options``) and shared by both commands.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.install import install_qbench
from pytest_qbench.core.numbers import parse_name
from pytest_qbench.core.numbers import parse_path
from pytest_qbench.core.numbers import parse_seconds
from pytest_qbench.core.numbers import parse_whole


DEFAULT_TIMEOUT = 50.0
"""Seconds a run may take when the assistant does not say: under the 60 seconds after which
many clients stop waiting, so that a long run comes back partial rather than not at all."""
MAX_TIMEOUT = 1800.0
"""Seconds a run may take at most, whatever the assistant asks."""
DEFAULT_BUDGET = 12_000
"""Bytes of JSON a structured result takes at most, by default."""
HARD_CAP = 48_000
"""Bytes a whole response never exceeds: the structured result and the text next to it each
take at most the budget."""
MAX_BUDGET = 22_000
"""The largest budget: twice this, with the JSON escapes of the text, stays under the cap."""
PYTHON_CHECK = "import pytest, pytest_qbench.plugin.collect_dump"
"""What the interpreter given by ``--python`` must import: pytest and qbench's pytest plugins."""
STOP_GRACE = 5.0
"""Seconds pytest gets after an interrupt to write its reports, before the group is killed."""
FINISH_GRACE = 30.0
"""Seconds past its timeout a run gets when every test has its result and pytest is in its
session end (writing reports, coverage, other plugins' hooks): such a run is complete."""


@dataclass(frozen=True)
class ServerConfig:
    """Where the project is, where runs go, and the limits."""

    root: Path
    """The project root: every path an assistant gives must resolve inside it."""
    qbench_dir: Path
    """The run store (``--qbench-dir`` of every run)."""
    default_timeout: float = DEFAULT_TIMEOUT
    max_timeout: float = MAX_TIMEOUT
    budget: int = DEFAULT_BUDGET
    """Bytes of JSON of a structured result."""
    stop_grace: float = STOP_GRACE
    finish_grace: float = FINISH_GRACE
    """Seconds past the timeout for the session end of a run whose tests all finished."""
    coverage_sources: tuple[str, ...] = ()
    """What runs measure when the assistant asks for coverage without naming sources."""
    python: str = sys.executable
    """The interpreter that runs pytest: the project's (``--python``), else the server's own."""

    @property
    def catalog_path(self) -> Path:
        """The test catalog's SQLite file."""
        return self.qbench_dir / "catalog.sqlite"


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``qbench mcp`` and ``qbench-mcp``."""
    parser.add_argument(
        "--root",
        type=parse_path,
        default=None,
        help="Project root; test paths must resolve inside it and pytest runs there. "
        "Default: the working directory",
    )
    parser.add_argument(
        "--qbench-dir",
        type=parse_path,
        default=None,
        help="Run store (as pytest's --qbench-dir). Default: ROOT/.qbench",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="The project's Python, which runs pytest (it needs pytest and pytest-qbench): a "
        "path (relative ones from ROOT) or a command name. Default: the server's own interpreter",
    )
    parser.add_argument(
        "--default-timeout",
        type=parse_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="Timeout of a run when the assistant gives none. Default: %(default)r",
    )
    parser.add_argument(
        "--max-timeout",
        type=parse_seconds,
        default=MAX_TIMEOUT,
        metavar="SECONDS",
        help="Longest timeout an assistant may ask for. Default: %(default)r",
    )
    parser.add_argument(
        "--stop-grace",
        type=parse_seconds,
        default=STOP_GRACE,
        metavar="SECONDS",
        help="After a timeout or a cancellation, how long pytest may take to write its reports "
        "before its process group is killed. Default: %(default)r",
    )
    parser.add_argument(
        "--finish-grace",
        type=parse_seconds,
        default=FINISH_GRACE,
        metavar="SECONDS",
        help="When the timeout falls after every test had its result, how much longer pytest's "
        "session end (reports, coverage) may take before the run is stopped. Default: %(default)r",
    )
    parser.add_argument(
        "--coverage-source",
        action="append",
        type=parse_name,
        default=[],
        metavar="SOURCE",
        help="What runs measure when coverage is asked for without sources (a directory or a "
        "package, as --qbench-cov=SOURCE). Repeatable. Default: coverage.py's configured source",
    )
    parser.add_argument(
        "--budget",
        type=_budget,
        default=DEFAULT_BUDGET,
        metavar="BYTES",
        help=f"Bytes a structured result (and, apart, its text) takes at most; up to "
        f"{MAX_BUDGET}. Default: %(default)r",
    )


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The settings the options give."""
    root = (args.root or Path.cwd()).resolve()
    if not root.is_dir():
        raise QBenchError(f"--root {root} is not a directory; give the project's directory")
    qbench_dir = (args.qbench_dir or root / ".qbench").resolve()
    if args.default_timeout != DEFAULT_TIMEOUT and args.default_timeout > args.max_timeout:
        raise QBenchError(
            f"--default-timeout {args.default_timeout:g} is above --max-timeout "
            f"{args.max_timeout:g}, the longest a run may take; give a default of at most "
            f"{args.max_timeout:g}, or a larger --max-timeout",
            slug="mcp-options",
        )
    default = min(args.default_timeout, args.max_timeout)  # the built-in default, brought down
    return ServerConfig(
        root=root,
        qbench_dir=qbench_dir,
        default_timeout=default,
        max_timeout=args.max_timeout,
        budget=args.budget,
        stop_grace=args.stop_grace,
        finish_grace=args.finish_grace,
        coverage_sources=tuple(args.coverage_source),
        python=sys.executable if args.python is None else find_python(args.python, root),
    )


def find_python(value: str, root: Path) -> str:
    """The interpreter ``--python`` names, checked to import pytest and qbench's plugin.

    Raises:
        QBenchError: no such executable, or it lacks pytest or pytest-qbench.
    """
    given = Path(value).expanduser()
    if given.is_absolute() or os.sep in value or (os.altsep and os.altsep in value):
        found: str | None = str(given if given.is_absolute() else root / given)
    else:
        found = shutil.which(value)
    if found is None or not Path(found).is_file() or not os.access(found, os.X_OK):
        raise QBenchError(
            f"--python {value}: no such executable; give the project's interpreter, e.g. "
            f"--python {root / '.venv' / 'bin' / 'python'}",
            slug="mcp-python",
        )
    problem = _import_problem(found)
    if problem:
        raise QBenchError(
            f"--python {value}: {found} cannot import pytest and pytest-qbench ({problem}); "
            f"install them in that environment: {install_qbench(found)}",
            slug="mcp-python",
        )
    return found


def run_python(python: str, code: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with no input, its output captured as text.

    Raises:
        OSError: ``python`` cannot be run.
        subprocess.TimeoutExpired: it took longer than ``timeout`` seconds.
    """
    return subprocess.run(
        [python, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _import_problem(python: str) -> str | None:
    """The last line of the error ``python -c PYTHON_CHECK`` ends with, or ``None``."""
    try:
        done = run_python(python, PYTHON_CHECK, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def _budget(value: str) -> int:
    return parse_whole(
        value, minimum=4_000, maximum=MAX_BUDGET, what="a whole number of bytes", unit=" bytes"
    )
