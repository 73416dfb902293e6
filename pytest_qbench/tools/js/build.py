"""A JavaScript project's ``build`` scripts, package by package: each workspace package that has
one (or the project itself, without workspaces) is built with the project's package manager
(``npm run build --workspace X``, ``pnpm --filter X run build``, ``yarn workspace X run
build``), one at a time, each with its own status (a ``CheckRun`` naming its package)."""

from __future__ import annotations

import threading
from pathlib import Path

from pytest_qbench.core.text import bound_text
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import RunMeta
from pytest_qbench.tools.execute import run_supervised
from pytest_qbench.tools.js.project import Manager
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.project import find_manager
from pytest_qbench.tools.js.project import package_manager
from pytest_qbench.tools.js.project import workspace_packages
from pytest_qbench.tools.js.results import relative


SCRIPT = "build"
TAIL_LINES = 5
"""Last lines of a failed build's output quoted in its error."""


def build_command(manager: str, manager_name: Manager, package: Package | None) -> list[str]:
    """The command building ``package`` of a workspace (``None``: the project itself)."""
    if package is None:
        return [manager, "run", SCRIPT]
    if manager_name == "pnpm":
        return [manager, "--filter", package.name, "run", SCRIPT]
    if manager_name == "yarn":
        return [manager, "workspace", package.name, "run", SCRIPT]
    return [manager, "run", SCRIPT, "--workspace", package.name]


def to_build(project: Package) -> list[Package | None]:
    """The packages of ``project`` that have a ``build`` script (``None``: the project itself,
    when it declares no workspaces)."""
    packages = workspace_packages(project)
    if not packages:
        return [None] if SCRIPT in project.scripts else []
    return [p for p in packages if SCRIPT in p.scripts]


def build_project(
    project: Package, root: Path, log_dir: Path, timeout: float, stop: threading.Event | None = None
) -> list[CheckRun]:
    """Build each package of ``project`` that has a ``build`` script, in order."""
    manager_name = package_manager(project)
    manager = find_manager(manager_name, project.path)
    runs = []
    for package in to_build(project):
        where = package or project
        name = where.name
        started = now()
        tool = f"{manager_name}.build"
        if manager is None:
            meta = RunMeta(
                run_id="",
                tool=tool,
                started_at=started,
                completed_at=now(),
                cwd=str(project.path),
                command=[],
            )
            note = (
                f"not run: {manager_name} is not installed (install it, or add it to the project)"
            )
            runs.append(
                CheckRun(
                    run=meta,
                    status="not_run",
                    note=note,
                    package=name,
                    diagnostics=[_error(tool, f"{name}: {note}", where, root)],
                )
            )
            continue
        command = build_command(manager, manager_name, package)
        log_name = f"{tool}-{len(runs) + 1}"
        done = run_supervised(command, project.path, log_dir, log_name, timeout, stop)
        meta = RunMeta(
            run_id="",
            tool=tool,
            started_at=started,
            completed_at=now(),
            exit_code=done.exit_code,
            cwd=str(project.path),
            command=command,
        )
        log = done.log.name if done.log.is_file() else None
        if done.problem is not None:
            runs.append(
                CheckRun(
                    run=meta,
                    status="crashed",
                    note=done.problem,
                    log=log,
                    package=name,
                    diagnostics=[_error(tool, f"{name}: {done.problem}", where, root)],
                )
            )
        elif done.exit_code != 0:
            message = f"{name}: build failed (exit code {done.exit_code}): {_tail(done.log)}"
            runs.append(
                CheckRun(
                    run=meta,
                    status="failed",
                    log=log,
                    package=name,
                    diagnostics=[_error(tool, message, where, root)],
                )
            )
        else:
            runs.append(CheckRun(run=meta, status="clean", log=log, package=name))
    return runs


def _error(tool: str, message: str, package: Package, root: Path) -> Diagnostic:
    return Diagnostic(
        tool=tool,
        severity="error",
        message=bound_text(message, 2000, keep="tail"),
        code="build-failed",
        file=relative(str(package.path / "package.json"), root, root),
    )


def _tail(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no output)"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-TAIL_LINES:]) or "(no output)"
