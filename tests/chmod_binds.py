"""Child processes that file permissions bind, also when the tests run as root (CI does).

chmod does not bind root: its capabilities ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` let
it write a read-only directory and read any file. So a test of a read-only store runs the
child that meets the store through ``run``: as root, the child drops those two capabilities
from its bounding set before it starts its program (``prctl(PR_CAPBSET_DROP)`` in
``preexec_fn``), and the program runs as a root whom chmod binds as it binds any user (the
owner's permission bits of its own files decide, ``os.access`` says the same). Not as another
user such as ``nobody``: the interpreter may live where only root may read (a pyenv Python
under ``/root``, 0700, here and in CI), and that user could not even start it.

Where that cannot be done as root (not Linux, no ``CAP_SETPCAP``), the ``chmod_binds`` fixture
skips, saying why; not as root, the child runs as it is."""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2
PR_CAPBSET_DROP = 24

_prctl: Any = None
if ROOT and sys.platform == "linux":  # looked up here: not in the forked child
    _prctl = ctypes.CDLL(None, use_errno=True).prctl


def _drop_file_overrides() -> None:
    """In the forked child, before it runs its program: root's two capabilities that pass
    over file permissions, out of the bounding set (so not regained at ``exec``)."""
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if _prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run(
    argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``argv`` run in ``cwd`` to its end, bound by file permissions (see the module); its
    output captured as text."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_drop_file_overrides if ROOT else None,
    )


@functools.lru_cache(maxsize=1)
def why_not_bound() -> str | None:
    """Why ``run``'s children would not be bound by file permissions (``None``: they are),
    found once by a child writing into a read-only directory."""
    if not ROOT:
        return None
    if _prctl is None:
        return f"running as root on {sys.platform}: no way to give up root's file overrides"
    with tempfile.TemporaryDirectory(prefix="qbench-chmod-") as name:
        read_only = Path(name, "read-only")
        read_only.mkdir(mode=0o555)
        code = "import os, sys; sys.exit(0 if os.access(sys.argv[1], os.W_OK) else 3)"
        try:
            done = run([sys.executable, "-c", code, str(read_only)], cwd=Path(name))
        except subprocess.SubprocessError as exc:  # prctl refused (no CAP_SETPCAP)
            return f"running as root, and root's file overrides cannot be dropped: {exc}"
    if done.returncode != 3:
        return f"running as root, and chmod 555 still does not bind the child: {done}"
    return None


@pytest.fixture
def chmod_binds() -> None:
    """Skip, saying why, where ``run``'s children would write what chmod made read-only."""
    reason = why_not_bound()
    if reason is not None:
        pytest.skip(reason)
