"""The Python back end's checkers as a plugin: ruff, mypy, pyright and ``python.build``."""

from __future__ import annotations

from pytest_qbench.tools.builtin.detect import is_python_project
from pytest_qbench.tools.executables import find_executable
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.python import mypy
from pytest_qbench.tools.python import plans
from pytest_qbench.tools.python import pyright
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.python.build import BUILD_TOOL
from pytest_qbench.tools.spec import Checker


@hookimpl
def qbench_checkers() -> list[Checker]:
    """ruff (lint), mypy and pyright (typecheck), ``python.build`` (build; ``build`` too)."""
    return [
        Checker(
            "ruff",
            "lint",
            "backend",
            ruff.TOOL,
            is_python_project,
            plans.plan_ruff,
            description="ruff check, JSON output",
        ),
        Checker(
            "mypy",
            "typecheck",
            "backend",
            mypy.TOOL,
            is_python_project,
            plans.plan_mypy,
            description="mypy, JSON lines (text before 1.11)",
        ),
        Checker(
            "pyright",
            "typecheck",
            "backend",
            pyright.TOOL,
            is_python_project,
            plans.plan_pyright,
            installed=lambda root: find_executable("pyright") is not None,
            description="pyright --outputjson",
            optional=True,
        ),
        Checker(
            "python.build",
            "build",
            "backend",
            BUILD_TOOL,
            is_python_project,
            plans.plan_build,
            description="python -m build, else byte-compiling the sources",
            aliases=("build",),
        ),
    ]
