"""Expensive set-up made once per test run, shared by every pytest-xdist worker.

A module fixture runs once in every worker that runs one of the module's tests; an
``xdist_group`` keeps its tests on one worker under ``--dist loadgroup`` (``xdist_groups.py``),
but a run under another ``--dist`` (a developer's plain ``-n 2``) would make it in each
worker. So the set-up that costs minutes (a whole ``qbench generate`` run) writes its
outcome into a directory next to the workers' own
temporary directories, under a file lock, as pytest-xdist's documentation advises for session
data: the first worker makes it, the others wait for it and read it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


DONE = ".shared-setup-done"
"""Written last into a shared directory: a directory without it was left half-made by a worker
whose set-up raised, and is made again."""


def shared_dir(
    tmp_path_factory: pytest.TempPathFactory, name: str, fill: Callable[[Path], None]
) -> Path:
    """A directory ``name`` that ``fill`` filled once for the whole run: in the run's shared
    temporary directory under pytest-xdist, in a fresh temporary directory without it."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        path = tmp_path_factory.mktemp(name)
        fill(path)
        return path
    # A worker's basetemp is <the run's basetemp>/popen-gwN: its parent is this run's alone.
    shared = tmp_path_factory.getbasetemp().parent
    path = shared / name
    with FileLock(str(shared / f"{name}.lock")):
        if not (path / DONE).is_file():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            fill(path)
            (path / DONE).touch()
    return path
