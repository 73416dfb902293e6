"""Cheap detection of the kind of project at a root: files only, nothing run."""

from __future__ import annotations

from pathlib import Path


PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "pytest.ini")
SKIPPED_DIRS = frozenset({"node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "build"})


def is_python_project(root: Path) -> bool:
    """A Python packaging or test configuration file at ``root``, or a ``.py`` file in it or
    one directory down (``node_modules`` and hidden directories left out)."""
    if any((root / name).is_file() for name in PYTHON_MARKERS):
        return True
    if any(root.glob("*.py")):
        return True
    return any(
        any(child.glob("*.py"))
        for child in _subdirs(root)
        if child.name not in SKIPPED_DIRS and not child.name.startswith(".")
    )


def _subdirs(root: Path) -> list[Path]:
    try:
        return [child for child in root.iterdir() if child.is_dir()]
    except OSError:
        return []
