"""The project's own installed Node binaries: never a global one, never a download."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_qbench.tools.spec import NotInstalled


def project_bin(root: Path, name: str, package: str) -> str:
    """``<root>/node_modules/.bin/<name>`` (``.cmd`` on Windows).

    Raises:
        NotInstalled: the project has not installed it; the message says how to.
    """
    suffix = ".cmd" if sys.platform == "win32" else ""
    path = root / "node_modules" / ".bin" / f"{name}{suffix}"
    if not path.is_file():
        raise NotInstalled(
            f"{name} is not installed in {root} (node_modules/.bin/{name}): "
            f"install it with npm install --save-dev {package}"
        )
    return str(path)


def has_bin(root: Path, name: str) -> bool:
    """Whether the project at ``root`` has installed ``name``."""
    try:
        project_bin(root, name, name)
    except NotInstalled:
        return False
    return True
