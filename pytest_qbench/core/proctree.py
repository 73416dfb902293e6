"""The descendants of a process, traced through Linux's ``/proc`` and killed whole.

A child may start a process in a new session (``setsid``, a daemon), which leaves its process
group, so killing the group misses it. ``ProcessTree`` follows the parent links instead: the
descendants are noted while the child runs (``snapshot``), and at the end stopped (so they
cannot fork), looked for again until no new one appears, then killed. A process whose parent
exited before a snapshot saw it is reparented to init and no longer traced back: a daemon that
double-forks between two snapshots can escape. Used by the MCP server's runs (when it has no
cgroup) and by the static checkers.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


PROC = Path("/proc")
KILL_ROUNDS = 20
"""Times the tree is searched again for processes born while it was being stopped."""


class ProcessTree:
    """The descendants of pytest, traced through ``/proc``. Each process is known by its pid and
    start time, so a pid the system gave to another process since is never signalled."""

    kind = "process tree"

    def __init__(self, pid: int) -> None:
        self.known: dict[int, int] = {}
        """pid -> start time of every process of the run seen so far."""
        self.known.update(self._alive({pid: _start_time(pid)}))
        self.pid = pid

    def snapshot(self) -> None:
        """Note the run's processes now: before pytest is interrupted and may exit, which would
        hand its children to init, out of the tree."""
        table = _processes()
        self.known.update(self._descendants(table))

    def kill_all(self) -> None:
        """Stop the tree, look again until nothing new was born, then kill all of it."""
        stopped: dict[int, int] = {}
        for _ in range(KILL_ROUNDS):
            table = _processes()
            new = {
                pid: start for pid, start in self._descendants(table).items() if pid not in stopped
            }
            if not new:
                break
            signal_all(list(new), signal.SIGSTOP)
            stopped.update(new)
            self.known.update(new)
        signal_all(list(stopped), signal.SIGKILL)

    def close(self) -> None:
        """Nothing to release."""

    def _descendants(self, table: dict[int, tuple[int, int]]) -> dict[int, int]:
        """Every live process whose parent chain leads to a known process that still lives."""
        children: dict[int, list[int]] = {}
        for pid, (ppid, _start) in table.items():
            children.setdefault(ppid, []).append(pid)
        roots = [pid for pid, start in self.known.items() if table.get(pid, (0, -1))[1] == start]
        found: dict[int, int] = {}
        while roots:
            pid = roots.pop()
            if pid in found or pid not in table:
                continue
            found[pid] = table[pid][1]
            roots.extend(children.get(pid, []))
        return found

    @staticmethod
    def _alive(candidates: dict[int, int | None]) -> dict[int, int]:
        return {pid: start for pid, start in candidates.items() if start is not None}


def _processes() -> dict[int, tuple[int, int]]:
    """Each live process (zombies left out): its parent and start time, from ``/proc``."""
    table: dict[int, tuple[int, int]] = {}
    with contextlib.suppress(OSError):
        for entry in PROC.iterdir():
            if entry.name.isdigit():
                fields = _stat_fields(int(entry.name))
                if fields and fields[0] != "Z":
                    table[int(entry.name)] = (int(fields[1]), int(fields[19]))
    return table


def _start_time(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and fields[0] != "Z" else None


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return []
    return stat.rsplit(")", 1)[1].split()


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists and may be signalled."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
