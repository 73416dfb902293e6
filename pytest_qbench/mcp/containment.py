"""Every process a run starts, found and killed: a cgroup where one can be made, else the tree.

A test may start a process in a new session (``start_new_session=True``, a daemon), which leaves
pytest's process group, so killing the group misses it. Two ways reach it:

- ``CgroupJail``: on Linux with a writable cgroup v2 hierarchy, pytest is moved into a cgroup of
  its own right after it starts (before it imports anything, let alone runs a test); everything
  it starts is born inside, whatever its session, and killing the cgroup kills all of it.
- ``ProcessTree`` (the fallback, with psutil, in ``core/proctree.py``; the static checkers
  use it too): the descendants of pytest, found through their parent links, are stopped (so they cannot fork), looked for again until no new one appears,
  then killed. A process whose parent already exited is reparented to init and no longer traced
  back: a daemon that double-forks while pytest still runs can escape; the docs name the limit.

Elsewhere the process group alone is killed (``process.py``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Protocol

from pytest_qbench.core.proctree import KILL_ROUNDS
from pytest_qbench.core.proctree import PROC
from pytest_qbench.core.proctree import ProcessTree
from pytest_qbench.core.proctree import signal_all


class Containment(Protocol):
    """What holds a run's processes."""

    kind: str
    """``cgroup`` or ``process tree``."""

    def snapshot(self) -> None:
        """Note the processes of the run now (before pytest may exit)."""

    def kill_all(self) -> None:
        """Kill every process of the run that is still alive."""

    def close(self) -> None:
        """Release what holds the run (a cgroup directory)."""


def contain(pid: int, name: str) -> Containment:
    """A cgroup for ``pid`` named after the run when one can be made, else its process tree."""
    jail = CgroupJail.create(pid, name)
    return jail if jail is not None else ProcessTree(pid)


def cgroup_base() -> Path | None:
    """The cgroup v2 directory this process is in, when it can be written (else ``None``)."""
    mount = _cgroup2_mount()
    if mount is None:
        return None
    own = _own_cgroup()
    if own is None:
        return None
    base = mount / own.lstrip("/")
    if not (base / "cgroup.procs").is_file() or not os.access(base, os.W_OK):
        return None
    return base


def _cgroup2_mount() -> Path | None:
    with contextlib.suppress(OSError):
        for line in (PROC / "self" / "mountinfo").read_text().splitlines():
            pre, _, post = line.partition(" - ")
            if post.split(" ", 1)[0] == "cgroup2":
                return Path(pre.split()[4])
    return None


def _own_cgroup() -> str | None:
    with contextlib.suppress(OSError):
        for line in (PROC / "self" / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    return None


def sweep_stale(base: Path) -> None:
    """Remove the empty cgroups that servers no longer running left (one killed mid-run)."""
    with contextlib.suppress(OSError):
        for stale in base.glob("qbench-*-*"):
            owner = stale.name.split("-")[1]
            if owner.isdigit() and not (PROC / owner).exists():
                with contextlib.suppress(OSError):
                    stale.rmdir()  # refused while a process is in it


class CgroupJail:
    """A cgroup v2 of the run's own: every process pytest starts is born inside it."""

    kind = "cgroup"

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, pid: int, name: str) -> CgroupJail | None:
        """Make the cgroup and move ``pid`` into it; ``None`` when the system does not let us."""
        base = cgroup_base()
        if base is None:
            return None
        sweep_stale(base)
        path = base / f"qbench-{os.getpid()}-{name}"
        try:
            path.mkdir()
        except OSError:
            return None
        jail = cls(path)
        try:
            (path / "cgroup.procs").write_text(str(pid))
        except OSError:
            jail.close()
            return None
        return jail

    def snapshot(self) -> None:
        """Nothing to note: the cgroup holds every process."""

    def members(self) -> list[int]:
        """The processes in the cgroup."""
        with contextlib.suppress(OSError):
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        return []

    def kill_all(self) -> None:
        """``cgroup.kill`` (Linux 5.14+), else kill the members until none is left."""
        killer = self.path / "cgroup.kill"
        for _ in range(KILL_ROUNDS * 10):
            members = self.members()
            if not members:
                return
            if killer.is_file():
                with contextlib.suppress(OSError):
                    killer.write_text("1")
            else:
                signal_all(members, signal.SIGKILL)
            time.sleep(0.01)

    def close(self) -> None:
        """Remove the cgroup (it can go once it is empty)."""
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
