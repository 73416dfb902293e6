"""Whether a project's mypy configuration names what to check (``files``, ``packages`` or
``modules``): then ``qbench check`` gives mypy no path, as the project runs it.

The configuration is found as mypy finds it: ``mypy.ini``, ``.mypy.ini``, ``pyproject.toml``
(with a ``[tool.mypy]`` table) or ``setup.cfg`` (with a ``[mypy]`` section) in the working
directory, then in each parent up to the repository's root (a ``.git`` or ``.hg``), then the
user's own files. A file mypy cannot parse is passed over, as mypy does.
"""

from __future__ import annotations

import configparser
import importlib
import os
import sys
from pathlib import Path
from typing import Any


CONFIG_NAMES = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
"""mypy's configuration files, in the order it looks for them in a directory."""
SHARED_NAMES = ("pyproject.toml", "setup.cfg")
"""The files that are mypy's only when they have a mypy section."""
TARGET_KEYS = ("files", "packages", "modules")
"""The settings that name what mypy checks."""


def names_targets(cwd: Path) -> bool:
    """Whether the mypy configuration that applies in ``cwd`` names what to check."""
    for path in config_candidates(cwd):
        section = mypy_section(path)
        if section is not None:
            return any(section.get(key) for key in TARGET_KEYS)
    return False


def config_candidates(cwd: Path) -> list[Path]:
    """Every file mypy may read its configuration from, in its order."""
    found: list[Path] = []
    directory = cwd.resolve()
    while True:
        found.extend(directory / name for name in CONFIG_NAMES)
        if any((directory / mark).exists() for mark in (".git", ".hg")):
            break
        if directory.parent == directory:
            break
        directory = directory.parent
    return found + [Path(name) for name in user_config_files()]


def user_config_files() -> list[str]:
    """The user's own mypy configuration files, as mypy lists them."""
    names = ["~/.config/mypy/config", "~/.mypy.ini"]
    if "XDG_CONFIG_HOME" in os.environ:
        names.insert(0, os.path.join(os.environ["XDG_CONFIG_HOME"], "mypy/config"))
    return [os.path.expanduser(name) for name in names]


def mypy_section(path: Path) -> dict[str, Any] | None:
    """The mypy section of ``path`` (``None`` when the file is missing, unparsable, or a shared
    file without one)."""
    if not path.is_file():
        return None
    try:
        if path.suffix == ".toml":
            toml: Any = importlib.import_module(
                "tomllib" if sys.version_info >= (3, 11) else "tomli"
            )
            with path.open("rb") as handle:
                section = toml.load(handle).get("tool", {}).get("mypy")
            return dict(section) if isinstance(section, dict) else None
        parser = configparser.RawConfigParser()
        parser.read(path, encoding="utf-8")
    except (OSError, ValueError, configparser.Error):  # TOMLDecodeError is a ValueError
        return None
    if parser.has_section("mypy"):
        return dict(parser["mypy"])
    return None if path.name in SHARED_NAMES else {}
