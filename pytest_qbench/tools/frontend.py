"""The JavaScript/TypeScript front end of a project: the directory named in the configuration
(``qbench_frontend``), else the nearest directory under the root with a ``package.json``."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.core.errors import QBenchError


SEARCH_DEPTH = 2
"""Directory levels below the root searched for a ``package.json``."""
SKIPPED = frozenset({"node_modules", "dist", "build", "coverage", "venv", "__pycache__"})


def find_frontend(root: Path, configured: str | None = None) -> Path | None:
    """The front end's directory: ``configured`` (relative to ``root``), else ``root`` itself
    or the first directory (by depth, then name) up to ``SEARCH_DEPTH`` levels down holding a
    ``package.json`` (``node_modules`` and hidden directories left out); ``None``: none.

    Raises:
        QBenchError: ``configured`` names no directory with a ``package.json``.
    """
    if configured:
        given = (root / configured).resolve()
        if not (given / "package.json").is_file():
            raise QBenchError(
                f"qbench_frontend = {configured!r} names no directory with a package.json "
                f"under {root}; set it to the front end's directory, e.g. qbench_frontend = web",
                slug="check-options",
            )
        return given
    level = [root]
    for _ in range(SEARCH_DEPTH + 1):
        for folder in level:
            if (folder / "package.json").is_file():
                return folder
        level = [child for folder in level for child in _children(folder)]
    return None


def _children(folder: Path) -> list[Path]:
    try:
        found = [child for child in folder.iterdir() if child.is_dir()]
    except OSError:
        return []
    return sorted(c for c in found if c.name not in SKIPPED and not c.name.startswith("."))
