"""The disposable copy of the project that every child running the target's code works in
(probe, candidates, verification, coverage, Pynguin): whatever a function under generation does
to the files beside it (``rmtree(os.path.join(HERE, sub))``), the project is untouched. Coverage
read in the copy is mapped back to the project's files (``ModuleFile.origin``)."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import replace
from pathlib import Path

from pytest_qbench.generate.target import GenerateError
from pytest_qbench.generate.target import ModuleFile
from pytest_qbench.generate.target import Target


SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        ".qbench",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
    }
)
"""Directories not copied: version control, environments, caches, qbench's own store."""

Manifest = dict[str, tuple[int, int]]


class Sandbox:
    """A copy of ``project`` under ``scratch``, made again when a child changed it."""

    def __init__(self, project: Path, target: Target, scratch: Path) -> None:
        self.project = project
        self.real = target
        self.base = _base(project, target)
        self.tree = scratch.resolve() / "tree"
        self.root = self.tree / project.relative_to(self.base)
        """The project's copy (the child's working directory where the project's is wanted)."""
        self.target = _relocated(target, self.base, self.tree)
        """The target in the copy, its files' ``origin`` the project's."""
        self._manifest: Manifest = {}

    def fresh(self, again: bool = False) -> Path:
        """The copy, as the project is now: made once, and made again when a child deleted,
        changed or added a file in it (checked by size and modification time), or when asked
        (``again``: the project changed)."""
        if not again and self._manifest and _manifest(self.tree) == self._manifest:
            return self.root
        shutil.rmtree(self.tree, ignore_errors=True)
        _copy(self.base, self.tree, self.root)
        _cut_links_out(self.tree)
        self._manifest = _manifest(self.tree)
        return self.root

    def inside(self, path: Path) -> Path:
        """``path`` of the project, in the copy (else as it is)."""
        try:
            return self.root / path.relative_to(self.project)
        except ValueError:
            return path


def _base(project: Path, target: Target) -> Path:
    """What is copied: the project, or the import root above it when the project is itself a
    package (its parent makes it importable)."""
    root = target.import_root
    base = root if project.is_relative_to(root) else project
    for module in target.modules:
        if not module.path.is_relative_to(base):
            raise GenerateError(
                f"target {target.given!r} is outside the project {project}; its code runs only "
                "in a copy of the project: run qbench generate from the project that holds it",
                slug="generate-target",
            )
    return base


def _relocated(target: Target, base: Path, tree: Path) -> Target:
    def moved(path: Path) -> Path:
        try:
            return tree / path.relative_to(base)
        except ValueError:
            return path

    modules = tuple(ModuleFile(moved(m.path), m.name, origin=m.path) for m in target.modules)
    return replace(target, modules=modules, import_root=moved(target.import_root))


def _copy(base: Path, tree: Path, root: Path) -> None:
    """``base`` to ``tree``, without the ``SKIPPED`` directories; when ``base`` is above the
    project, only the project and the files (not directories) of ``base``."""
    ignore = shutil.ignore_patterns(*SKIPPED)
    if root == tree:
        shutil.copytree(base, tree, symlinks=True, ignore=ignore, copy_function=_copy_file)
        return
    tree.mkdir(parents=True)
    for entry in base.iterdir():
        if entry.is_file() and not entry.is_symlink():
            shutil.copy2(entry, tree / entry.name)
    shutil.copytree(
        base / root.relative_to(tree), root, symlinks=True, ignore=ignore, copy_function=_copy_file
    )


def _copy_file(source: str, destination: str) -> None:
    """A regular file only: a FIFO or a device of the project is not read (it could block, or
    never end)."""
    if stat.S_ISREG(os.lstat(source).st_mode):
        shutil.copy2(source, destination)


def _cut_links_out(tree: Path) -> None:
    """A symbolic link of the copy that leads out of it (an absolute link into the project, a
    ``../..`` one) would let a child write through it: a link to a file becomes a copy of the
    file, any other is removed."""
    top = tree.resolve()
    for directory, subdirectories, files in os.walk(tree):
        for name in [*subdirectories, *files]:
            link = Path(directory, name)
            if not link.is_symlink():
                continue
            try:
                pointed: Path | None = link.resolve()
            except (OSError, RuntimeError):  # a loop
                pointed = None
            if pointed is not None and pointed.is_relative_to(top):
                continue
            link.unlink()
            if pointed is not None and pointed.is_file():
                shutil.copy2(pointed, link)


def _manifest(tree: Path) -> Manifest:
    found: Manifest = {}
    for directory, subdirectories, files in os.walk(tree):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED]
        for name in files:
            path = os.path.join(directory, name)
            try:
                status = os.lstat(path)
            except OSError:
                continue
            found[path] = (status.st_size, status.st_mtime_ns)
    return found
