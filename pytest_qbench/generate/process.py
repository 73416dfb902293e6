"""The environment and interpreter of ``qbench generate``'s children. They run through the one
supervisor (``core/supervise.py``): an argument list, a session of their own, a timeout, their
whole tree killed at their end (a daemon the target's code started included), their output
captured bounded."""

from __future__ import annotations

import os
import sys
from pathlib import Path


START_SECONDS = 60.0
"""What a child that runs tests may take beyond the seconds its tests are given (its start, its
imports, coverage's set-up): a safety net, since each test's own time is bounded inside the
child (``_alarm``), so that a loaded machine's slow start never decides a verdict."""
ALARM = ["-p", "pytest_qbench.generate._alarm"]
"""The arguments of a child pytest whose every test is stopped after ``QBENCH_TEST_SECONDS``."""


def child_env(
    import_root: Path, extra: dict[str, str] | None = None, pycache: Path | None = None
) -> dict[str, str]:
    """The environment of a child: this one, with ``import_root`` first on ``PYTHONPATH``.

    Set ``HYPOTHESIS_STORAGE_DIRECTORY`` in ``extra`` to share Hypothesis's caches (its Unicode
    tables take seconds to build) between children that run in different directories.

    No child writes byte-code beside a source (the project's copy, the user's project, an
    installed package stay without ``__pycache__``). Given ``pycache`` (the cache shared between
    generations, or one in the generation's scratch: ``pycache.py``), the children keep their
    byte-code there (``PYTHONPYCACHEPREFIX``), pytest's assertion-rewritten modules included: a
    child that autoloads the user's plugins rewrites each plugin's modules once, not once a
    child. Without it, none is written."""
    env = dict(os.environ)
    paths = [str(import_root), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra or {})
    return env


PYCACHE = "pycache"
"""The sub-directory of a generation's scratch that holds its children's byte-code when the
shared cache is off or cannot be used (``pycache.py``)."""


def python() -> str:
    """This interpreter: children run with the same packages as qbench."""
    return sys.executable
