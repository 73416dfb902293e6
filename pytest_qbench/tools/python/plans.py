"""The Python checkers' planners: which binary, which command, which parser (issue 13)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.executables import find_executable
from pytest_qbench.tools.python import build
from pytest_qbench.tools.python import mypy
from pytest_qbench.tools.python import mypy_config
from pytest_qbench.tools.python import pyright
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan


def plan_ruff(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """ruff, as installed beside this Python or on ``PATH``; without ``paths``, on what its
    configuration includes."""
    executable = find_executable("ruff")
    if executable is None:
        raise NotInstalled("install ruff")
    return Plan(ruff.TOOL, ruff.ruff_command(executable, paths), ruff.OK_CODES, ruff.parse_ruff)


def plan_mypy(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """mypy with JSON output where its version has it, else its text format; without
    ``paths``, on what the project's configuration names (its ``files``...), else on ``.``."""
    if importlib.util.find_spec("mypy") is not None:
        base = [sys.executable, "-m", "mypy"]
        try:  # read from its metadata: no child process before the check starts
            version = f"mypy {importlib.metadata.version('mypy')}"
        except importlib.metadata.PackageNotFoundError:
            version = mypy_version(base, cwd)
    else:
        found = find_executable("mypy")
        if found is None:
            raise NotInstalled("install mypy")
        base = [found]
        version = mypy_version(base, cwd)
    json_output = mypy.supports_json(version)
    parse = mypy.parse_mypy_json if json_output else mypy.parse_mypy_text
    targets = paths or ([] if mypy_config.names_targets(cwd) else ["."])
    return Plan(mypy.TOOL, mypy.mypy_command(base, targets, json_output), mypy.OK_CODES, parse)


def mypy_version(base: list[str], cwd: Path) -> str:
    """What ``mypy --version`` prints."""
    done = subprocess.run(
        [*base, "--version"], cwd=cwd, capture_output=True, text=True, check=False
    )
    return done.stdout


def plan_pyright(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """pyright, when installed; without ``paths``, on what its configuration includes."""
    executable = find_executable("pyright")
    if executable is None:
        raise NotInstalled("install pyright")
    command = pyright.pyright_command(executable, paths)
    return Plan(pyright.TOOL, command, pyright.OK_CODES, pyright.parse_pyright)


def plan_build(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """``python -m build`` for a project with a pyproject.toml and ``build`` importable, else
    byte-compiling the sources."""
    if (cwd / "pyproject.toml").is_file() and importlib.util.find_spec("build") is not None:
        command = build.build_command(sys.executable, str(scratch))
        return Plan(
            build.BUILD_TOOL, command, build.OK_CODES, build.parse_build, build.MERGE_STDERR
        )
    command = build.compile_command(sys.executable, cwd, paths or ["."])
    return Plan(build.COMPILE_TOOL, command, build.OK_CODES, build.parse_compile)
