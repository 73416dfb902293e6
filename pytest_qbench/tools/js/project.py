"""A JavaScript/TypeScript project as its files describe it: its ``package.json``, its
package manager (from the lock file), its workspace packages and its installed binaries.

Standard library and PyYAML only; nothing here starts a process.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal


Manager = Literal["npm", "pnpm", "yarn"]
"""A package manager."""
LOCK_FILES: tuple[tuple[str, Manager], ...] = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"),
)
"""Which lock file means which package manager, looked for in this order."""
SKIPPED = frozenset({"node_modules", "dist", "build", "coverage", "__pycache__"})
"""Directories never searched for a project."""


@dataclass(frozen=True)
class Package:
    """One package: its directory, its name and its ``package.json``."""

    path: Path
    name: str
    manifest: dict[str, Any]

    @property
    def scripts(self) -> dict[str, Any]:
        """Its ``scripts``."""
        scripts = self.manifest.get("scripts")
        return scripts if isinstance(scripts, dict) else {}

    def depends_on(self, name: str) -> bool:
        """Whether it lists ``name`` among its dependencies of any kind."""
        for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
            deps = self.manifest.get(key)
            if isinstance(deps, dict) and name in deps:
                return True
        return False


def read_package(directory: Path) -> Package | None:
    """The package in ``directory``; ``None`` without a readable ``package.json`` object."""
    try:
        manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    name = manifest.get("name")
    return Package(directory, name if isinstance(name, str) and name else directory.name, manifest)


def find_projects(root: Path) -> list[Package]:
    """The JavaScript projects of ``root``: ``root`` itself when it has a ``package.json``,
    else each directory just below it that has one (a ``frontend/`` beside a Python package)."""
    own = read_package(root)
    if own is not None:
        return [own]
    found = []
    for child in sorted(root.iterdir()) if root.is_dir() else []:
        if child.is_dir() and not child.name.startswith(".") and child.name not in SKIPPED:
            package = read_package(child)
            if package is not None:
                found.append(package)
    return found


def package_manager(project: Package) -> Manager:
    """The manager whose lock file the project has; else the one its ``packageManager`` field
    names (``pnpm@9.15.0``); else npm."""
    for name, manager in LOCK_FILES:
        if (project.path / name).is_file():
            return manager
    declared = str(project.manifest.get("packageManager", "")).split("@", 1)[0]
    return declared if declared in ("pnpm", "yarn") else "npm"  # type: ignore[return-value]


def workspace_patterns(project: Package) -> list[str]:
    """The workspace globs: ``pnpm-workspace.yaml``'s ``packages``, else package.json's
    ``workspaces`` (a list, or yarn's ``{"packages": [...]}``)."""
    pnpm = project.path / "pnpm-workspace.yaml"
    if pnpm.is_file():
        import yaml

        try:
            loaded = yaml.safe_load(pnpm.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            loaded = {}
        listed = loaded.get("packages") if isinstance(loaded, dict) else None
        return [str(p) for p in listed] if isinstance(listed, list) else []
    declared = project.manifest.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    return [str(p) for p in declared] if isinstance(declared, list) else []


def workspace_packages(project: Package) -> list[Package]:
    """The project's workspace packages, sorted by path (``!pattern`` excludes); empty when it
    declares no workspaces."""
    included: dict[Path, Package] = {}
    excluded: set[Path] = set()
    for pattern in workspace_patterns(project):
        negate = pattern.startswith("!")
        glob = pattern.removeprefix("!").rstrip("/")
        for directory in sorted(project.path.glob(glob)) if glob else []:
            if not directory.is_dir() or "node_modules" in directory.parts:
                continue
            if negate:
                excluded.add(directory)
            elif directory != project.path:
                package = read_package(directory)
                if package is not None:
                    included[directory] = package
    return [p for path, p in sorted(included.items()) if path not in excluded]


def find_binary(name: str, *directories: Path) -> Path | None:
    """``node_modules/.bin/<name>`` in the first of ``directories`` that has it (a workspace
    package, then its root: the project's own install, never a global one)."""
    for directory in directories:
        candidate = directory / "node_modules" / ".bin" / name
        if candidate.is_file():
            return candidate
    return None


def find_manager(manager: Manager, *directories: Path) -> str | None:
    """The package manager's executable: the project's own (``node_modules/.bin``) first,
    else the one on ``PATH``."""
    own = find_binary(manager, *directories)
    return str(own) if own is not None else shutil.which(manager)
