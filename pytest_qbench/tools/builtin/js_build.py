"""The JavaScript workspace build as a checker plugin (``js.build``): each workspace package's
``build`` script run package by package with the lock file's package manager, each failed
package an error naming it."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.js import build_all
from pytest_qbench.tools.js.build import to_build
from pytest_qbench.tools.js.project import find_projects
from pytest_qbench.tools.spec import Checker
from pytest_qbench.tools.spec import Plan


def has_builds(root: Path) -> bool:
    """A JavaScript project at (or just below) ``root`` with a package that has a build
    script."""
    return any(to_build(project) for project in find_projects(root))


def plan_builds(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """The builds, as a child of this Python (``build_all``); ``paths`` are not used."""
    del paths
    command = [sys.executable, "-m", build_all.__name__, str(cwd), str(scratch)]
    return Plan(build_all.TOOL, command, build_all.OK_CODES, build_all.parse_builds)


@hookimpl
def qbench_checkers() -> list[Checker]:
    """The workspace build (build, frontend)."""
    return [
        Checker(
            "js.build",
            "build",
            "frontend",
            build_all.TOOL,
            has_builds,
            plan_builds,
            installed=lambda root: True,
            description="each workspace package's build script, package by package",
        )
    ]
