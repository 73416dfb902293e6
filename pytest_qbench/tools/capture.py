"""A checker's output, read from its pipe into a log of bounded size, and its process tree.

A checker that prints gigabytes must not fill the disk nor the memory: a thread reads each
pipe and writes the first ``head`` bytes to the log, keeps only the last ``tail`` bytes in
memory, and at the end writes a note of what was cut, then that tail. The same thread notes the
checker's descendants now and then (its supervisor's containment), so that one that left the process
group (``setsid``) and whose parent then exited is still known when the tree is killed.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO


MIB = 1024 * 1024
LOG_HEAD = 48 * MIB
LOG_TAIL = 16 * MIB
"""Bytes of a checker's output log kept: its first ``LOG_HEAD`` and last ``LOG_TAIL``."""
STDERR_HEAD = 2 * MIB
STDERR_TAIL = 2 * MIB
"""The same for its stderr log (only its last lines are read, for a crash's note)."""
READ_BYTES = 64 * 1024
POLL_SECONDS = 0.1
WATCH_SECONDS = 0.5
"""How often the checker's descendants are noted while it runs."""
DRAIN_SECONDS = 5.0
"""How long a pipe is still read once the checker's tree was killed (a process that escaped
the tree may hold it open)."""
CUT_NOTE = (
    "\n[... qbench cut {cut} bytes of this output here: the log keeps its first {head} and "
    "last {tail} bytes ...]\n"
)


class CappedLog(threading.Thread):
    """Reads the pipe ``fd`` into ``path``, keeping its head and its tail (bounded)."""

    def __init__(
        self,
        fd: int,
        path: Path,
        head: int,
        tail: int,
        watch: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(name=f"qbench-log-{path.name}", daemon=True)
        self.fd = fd
        self.path = path
        self.head = head
        self.tail = tail
        self.watch = watch
        self.cut = 0
        """Bytes of the output not kept (0: the log is the whole output)."""
        self._kept: collections.deque[bytes] = collections.deque()
        self._kept_size = 0
        self._written = 0
        self._closing = threading.Event()
        self._watching = threading.Lock()
        self._give_up = float("inf")

    def run(self) -> None:
        """Copy the pipe until its end (or the drain time after `finish` was asked)."""
        try:
            with self.path.open("wb", buffering=0) as out:  # readable while it runs
                self._copy(out)
                self._write_tail(out)
        except OSError:  # the run directory went away: the output is lost, not the run
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    def stop_watching(self) -> None:
        """No more `watch` calls from now on (one under way is waited for)."""
        with self._watching:
            self.watch = None

    def finish(self, drain: float = DRAIN_SECONDS) -> None:
        """Read what is left (up to ``drain`` seconds), then close the log."""
        self._give_up = time.monotonic() + drain
        self._closing.set()
        self.join(drain + 5.0)

    def _copy(self, out: IO[bytes]) -> None:
        watched = 0.0
        while not (self._closing.is_set() and time.monotonic() > self._give_up):
            if time.monotonic() - watched > WATCH_SECONDS:
                with self._watching:
                    if self.watch is not None:
                        self.watch()
                watched = time.monotonic()
            if sys.platform != "win32":
                ready, _, _ = select.select([self.fd], [], [], POLL_SECONDS)
                if not ready:
                    continue
            chunk = os.read(self.fd, READ_BYTES)
            if not chunk:
                return
            self._take(chunk, out)

    def _take(self, chunk: bytes, out: IO[bytes]) -> None:
        room = self.head - self._written
        if room > 0:
            write_all(out, chunk[:room])
            self._written += min(room, len(chunk))
            chunk = chunk[room:]
        if not chunk:
            return
        self._kept.append(chunk)
        self._kept_size += len(chunk)
        while self._kept and self._kept_size - len(self._kept[0]) >= self.tail:
            self.cut += len(self._kept[0])
            self._kept_size -= len(self._kept.popleft())

    def _write_tail(self, out: IO[bytes]) -> None:
        kept = b"".join(self._kept)
        self._kept.clear()
        if len(kept) > self.tail:
            self.cut += len(kept) - self.tail
            kept = kept[len(kept) - self.tail :]
        if self.cut:
            note = CUT_NOTE.format(cut=self.cut, head=self.head, tail=self.tail)
            write_all(out, note.encode())
        write_all(out, kept)


def write_all(out: IO[bytes], data: bytes) -> None:
    """Write every byte of ``data`` to the unbuffered ``out`` (a raw write may take part)."""
    view = memoryview(data)
    while view:
        view = view[out.write(view) or len(view) :]
