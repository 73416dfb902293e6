"""The project's own installed Node binaries: never a global one, never a download."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytest_qbench.tools.spec import NotInstalled


def search_directories(start: Path) -> list[Path]:
    """Where a package's ``node_modules/.bin`` may be, nearest first: ``start`` and the
    directories above it up to the repository's root (the nearest holding ``.git``), where
    npm, yarn and pnpm workspaces hoist the tools; outside a repository, up to the nearest
    workspace root (``pnpm-workspace.yaml``, or a ``package.json`` with ``workspaces``), else
    ``start`` alone. Never past them: a tool in a home directory is not the project's."""
    start = start.resolve()
    chain = [start, *start.parents]
    for number, directory in enumerate(chain):
        if (directory / ".git").exists():
            return chain[: number + 1]
    for number, directory in enumerate(chain):
        if is_workspace_root(directory):
            return chain[: number + 1]
    return [start]


def is_workspace_root(directory: Path) -> bool:
    """A ``pnpm-workspace.yaml``, or a ``package.json`` declaring ``workspaces``."""
    if (directory / "pnpm-workspace.yaml").is_file():
        return True
    try:
        manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and bool(manifest.get("workspaces"))


def project_bin(root: Path, name: str, package: str) -> str:
    """``node_modules/.bin/<name>`` (``.cmd`` on Windows) of ``root`` or of a directory above
    it up to the workspace's or repository's root (`search_directories`).

    Raises:
        NotInstalled: the project has not installed it; the message says how to.
    """
    suffix = ".cmd" if sys.platform == "win32" else ""
    directories = search_directories(root)
    for directory in directories:
        path = directory / "node_modules" / ".bin" / f"{name}{suffix}"
        if path.is_file():
            return str(path)
    where = str(root) if len(directories) == 1 else f"{root} nor above it up to {directories[-1]}"
    raise NotInstalled(
        f"{name} is not installed in {where} (node_modules/.bin/{name}): "
        f"install it with npm install --save-dev {package}"
    )


def has_bin(root: Path, name: str) -> bool:
    """Whether the project at ``root`` has installed ``name``."""
    try:
        project_bin(root, name, name)
    except NotInstalled:
        return False
    return True
