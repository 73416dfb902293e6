"""The environment and interpreter of ``qbench generate``'s children. They run through the one
supervisor (``core/supervise.py``): an argument list, a session of their own, a timeout, their
whole tree killed at their end (a daemon the target's code started included), their output
captured bounded."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def child_env(import_root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this one, with ``import_root`` first on ``PYTHONPATH``.

    Set ``HYPOTHESIS_STORAGE_DIRECTORY`` in ``extra`` to share Hypothesis's caches (its Unicode
    tables take seconds to build) between children that run in different directories."""
    env = dict(os.environ)
    paths = [str(import_root), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra or {})
    return env


def python() -> str:
    """This interpreter: children run with the same packages as qbench."""
    return sys.executable
