"""Install commands that work on a fresh machine, for the messages that name a missing extra.

pytest-qbench is installed from a checkout or a built wheel, not from a package index, so
``pip install 'pytest-qbench[mcp]'`` cannot work: a missing extra is named by the requirements
it stands for (``mcp<3,>=2.3``, read from the installed package's metadata), installed into the
interpreter that runs qbench; pytest-qbench itself by the checkout it runs from.
"""

from __future__ import annotations

import re
import shlex
import sys
from importlib import metadata
from pathlib import Path


DISTRIBUTION = "pytest-qbench"
SOURCE_PLACEHOLDER = "/path/to/pytest-qbench"
"""Stands for a checkout or a built wheel when qbench does not run from a checkout."""


def extra_requirements(extra: str) -> list[str]:
    """The requirements of ``extra`` as the installed package declares them (``[]`` when the
    package's metadata cannot be read)."""
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    marker = re.compile(rf"""^(?P<req>[^;]+);\s*extra\s*==\s*['"]{re.escape(extra)}['"]\s*$""")
    found = [m.group("req").strip() for m in map(marker.match, declared) if m]
    return list(dict.fromkeys(found))


def install_extra(extra: str, python: str | None = None) -> str:
    """The command that installs what ``extra`` adds into ``python`` (this interpreter by
    default): its requirements, which come from the package index, so it works whether or not
    pytest-qbench itself is published."""
    wanted = extra_requirements(extra) or [f"{qbench_source()}[{extra}]"]
    return f"{python or sys.executable} -m pip install {shlex.join(wanted)}"


def install_qbench(python: str) -> str:
    """The command that installs pytest (and pytest-qbench from the checkout qbench runs from,
    or a placeholder for a checkout or wheel) into ``python``."""
    return f"{python} -m pip install pytest {shlex.quote(qbench_source())}"


def qbench_source() -> str:
    """The checkout this pytest-qbench runs from (an editable install), else a placeholder."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "pytest_qbench").is_dir():
        return str(root)
    return SOURCE_PLACEHOLDER
