"""A cgroup v2 of a child's own, where the system lets this process make one (Linux).

The cgroup is made before the child starts, and the child moves itself into it between its fork
and the ``exec`` of its program (``join``, ``Popen``'s ``preexec_fn``): it runs no code of the
user's outside it, so every process it starts is born inside, whatever its session: a daemon
that forks at once, double-forks and calls ``setsid`` included. Killing the cgroup kills all of
it. ``core/supervise.py`` uses it first;
the process tree (``core/proctree.py``) and the cookie in the environment are its fallbacks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from pytest_qbench.core.proctree import KILL_ROUNDS
from pytest_qbench.core.proctree import PROC
from pytest_qbench.core.proctree import signal_all


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

    def __init__(self, path: Path, door: int | None = None) -> None:
        self.path = path
        self.door = door
        """Its ``cgroup.procs`` open for writing, until the child joined it."""

    @classmethod
    def make(cls, name: str) -> CgroupJail | None:
        """Make an empty cgroup for a child about to start (``join`` moves it in); ``None``
        when the system does not let us."""
        base = cgroup_base()
        if base is None:
            return None
        sweep_stale(base)
        path = base / f"qbench-{os.getpid()}-{name}"
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            door = os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            cls(path).close()
            return None
        return cls(path, door)

    def join(self) -> None:
        """Move the calling process into the cgroup: run in the child between its fork and
        its ``exec`` (``Popen``'s ``preexec_fn``), so only a write of a constant. An error
        fails the start (``Popen`` raises ``SubprocessError``) and the program never runs.

        Raises:
            OSError: the write was refused.
        """
        if self.door is None:
            raise OSError("the cgroup's door is closed")
        os.write(self.door, b"0")  # "0": the process that writes

    def shut(self) -> None:
        """Close the door (the child started, inside)."""
        if self.door is not None:
            os.close(self.door)
            self.door = None

    def snapshot(self) -> None:
        """Nothing to note: the cgroup holds every process."""

    def members(self) -> list[int]:
        """The processes in the cgroup and in the cgroups below it (a supervisor inside the
        child, such as ``qbench generate`` under the MCP server, makes its own)."""
        found: list[int] = []
        for group in [self.path, *self._below()]:
            with contextlib.suppress(OSError):
                found.extend(int(p) for p in (group / "cgroup.procs").read_text().split())
        return found

    def _below(self) -> list[Path]:
        """The cgroups below this one, deepest first."""
        with contextlib.suppress(OSError):
            below = [p for p in self.path.rglob("*") if p.is_dir()]
            return sorted(below, key=lambda p: len(p.parts), reverse=True)
        return []

    def kill_all(self) -> set[int]:
        """``cgroup.kill`` (Linux 5.14+), else kill the members until none is left; the
        processes that were still in it."""
        killer = self.path / "cgroup.kill"
        killed: set[int] = set()
        for _ in range(KILL_ROUNDS * 10):
            members = self.members()
            if not members:
                return killed
            killed.update(members)
            if killer.is_file():
                with contextlib.suppress(OSError):
                    killer.write_text("1")
            else:
                signal_all(members, signal.SIGKILL)
            time.sleep(0.01)
        return killed

    def close(self) -> None:
        """Remove the cgroup, and those below it that a killed supervisor left (each can go
        once it is empty)."""
        self.shut()
        for _ in range(100):
            for group in self._below():
                with contextlib.suppress(OSError):
                    group.rmdir()
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
