"""The descendants of a process, found with `psutil` and killed whole.

A child may start a process in a new session (``setsid``, a daemon), which leaves its process
group, so killing the group misses it. ``ProcessTree`` follows the parent links instead: the
descendants are noted while the child runs (``snapshot``), and at the end stopped (so they
cannot fork), looked for again until no new one appears, then killed. A process whose parent
exited before a snapshot saw it is reparented to init and no longer traced back: a daemon that
double-forks between two snapshots can escape (the supervisor's cookie then finds it, unless it
dropped its environment). Used by the supervisor (``core/supervise.py``) when it has no cgroup.

psutil is imported when a tree is first traced, not with this module.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    import psutil


PROC = Path("/proc")
KILL_ROUNDS = 20
"""Times the tree is searched again for processes born while it was being stopped."""


class ProcessTree:
    """The descendants of pytest. Each is held as a `psutil.Process`, which knows its start
    time, so a pid the system gave to another process since is never signalled."""

    kind = "process tree"

    def __init__(self, pid: int) -> None:
        import psutil

        self.pid = pid
        self.known: dict[int, psutil.Process] = {}
        """Every process of the run seen so far, by pid."""
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            if _alive(root):
                self.known[pid] = root

    def snapshot(self) -> None:
        """Note the run's processes now: before pytest is interrupted and may exit, which would
        hand its children to init, out of the tree."""
        self.known.update(self._descendants())

    def kill_all(self) -> set[int]:
        """Stop the tree, look again until nothing new was born, then kill all of it; the
        processes killed."""
        import psutil

        stopped: dict[int, psutil.Process] = {}
        for _ in range(KILL_ROUNDS):
            new = {pid: p for pid, p in self._descendants().items() if pid not in stopped}
            if not new:
                break
            for process in new.values():
                with contextlib.suppress(psutil.Error):
                    process.suspend()
            stopped.update(new)
            self.known.update(new)
        for process in stopped.values():
            with contextlib.suppress(psutil.Error):
                process.kill()
        return set(stopped)

    def close(self) -> None:
        """Nothing to release."""

    def _descendants(self) -> dict[int, psutil.Process]:
        """Every live known process and every live process below one of them."""
        import psutil

        found: dict[int, psutil.Process] = {}
        for pid, process in self.known.items():
            if pid in found or not _alive(process):
                continue  # found under another; or gone, and its pid may be another's now
            found[pid] = process
            with contextlib.suppress(psutil.Error):
                for child in process.children(recursive=True):
                    if _alive(child):
                        found.setdefault(child.pid, child)
        return found


def _alive(process: psutil.Process) -> bool:
    """Still the same process (not a pid reused since), and not a zombie."""
    import psutil

    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists and may be signalled."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
