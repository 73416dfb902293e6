"""vitest and jest as runners of the plugin interface: each applies to a project whose
``package.json`` (at the root, one directory down, or a workspace package) lists it, and runs
the project's own binary (``node_modules/.bin``, looked for from the package up, as Node
resolves it, up to the workspace's or repository's root) with its JSON reporter into the
scratch directory; vitest with the ``--typecheck`` options of the package's test script."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.js import jest
from pytest_qbench.tools.js import scripts
from pytest_qbench.tools.js import vitest
from pytest_qbench.tools.js.project import find_binary
from pytest_qbench.tools.js.project import find_projects
from pytest_qbench.tools.js.project import read_package
from pytest_qbench.tools.js.project import workspace_packages
from pytest_qbench.tools.node.bins import search_directories
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Runner


def applies(module: ModuleType) -> Callable[[Path], bool]:
    """Whether a package of the project at a root lists the runner."""

    def check(root: Path) -> bool:
        for project in find_projects(root):
            if any(module.detect(p) for p in [project, *workspace_packages(project)]):
                return True
        return False

    return check


def binary_of(name: str, cwd: Path) -> Path | None:
    """``node_modules/.bin/<name>`` of ``cwd`` or its nearest parent that has it, up to the
    workspace's or repository's root."""
    return find_binary(name, *search_directories(cwd))


def planner(module: ModuleType) -> Callable[[Path, list[str], Path], Plan[TestResult]]:
    """The runner's plan in a package's directory."""

    def plan(cwd: Path, paths: list[str], scratch: Path) -> Plan[TestResult]:
        binary = binary_of(module.NAME, cwd)
        if binary is None:
            raise NotInstalled(
                f"not installed: no node_modules/.bin/{module.NAME} in {cwd} or above it up to "
                "the workspace's or repository's root (run the package manager's install)"
            )
        output = scratch / f"{module.NAME}.json"
        package = read_package(cwd)
        launch = scripts.launch(package, module.NAME) if package is not None else None
        start = [str(binary)]
        if launch is not None and launch.node:
            node = shutil.which("node")
            if node is None:
                raise NotInstalled("node is not on PATH: install Node.js to run the test script")
            start = [node, *launch.node]
        return Plan(
            module.NAME,
            module.command(start, output, paths, package),
            module.OK_CODES,
            module.parse,
            merge_stderr=True,
            output=output,
            env=launch.env if launch is not None else {},
            passed_without_tests=getattr(module, "passed_without_tests", None),
        )

    return plan


def installed(module: ModuleType) -> Callable[[Path], bool]:
    """Whether a package using the runner has its binary."""

    def check(root: Path) -> bool:
        for project in find_projects(root):
            for package in [project, *workspace_packages(project)]:
                if module.detect(package) and binary_of(module.NAME, package.path) is None:
                    return False
        return True

    return check


def runner(module: ModuleType, description: str) -> Runner:
    """The runner of ``module`` (``vitest``, ``jest``)."""
    return Runner(
        module.NAME,
        module.NAME,
        applies(module),
        planner(module),
        installed=installed(module),
        description=description,
    )


@hookimpl
def qbench_runners() -> list[Runner]:
    """The built-in vitest and jest runners."""
    return [
        runner(vitest, "the project's vitest run with its JSON reporter"),
        runner(jest, "the project's jest run with --json"),
    ]
