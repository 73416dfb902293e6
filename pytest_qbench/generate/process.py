"""Run one child process (argument list, no shell) in its own process group, with a timeout;
at its end, normal or not, its whole tree is killed: its process group, and every process that
carries its cookie (an environment variable each child gets its own value of), which finds the
descendants that left the group (``setsid``, a daemon) even after their parent exited. Its
output is read through a bounded sink: the first and the last bytes are kept, never the whole."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.tools.runner import kill_group


OUTPUT_TAIL = 4000
"""Characters of a child's output kept for messages."""
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 448 * 1024
OUTPUT_CAP = HEAD_BYTES + TAIL_BYTES
"""Bytes of a child's output kept at most (its head and its tail), besides the note of the cut."""
COOKIE = "QBENCH_GENERATE_CHILD"
"""The environment variable that marks every process of one child's tree."""
DRAIN_SECONDS = 5.0
"""How long the output is still read after the tree was killed (a process that escaped both
the group and the cookie may hold the pipe open)."""
KILL_ROUNDS = 5
"""Passes over /proc killing the cookie's processes (one may fork while the last is killed)."""


@dataclass(frozen=True)
class Finished:
    """How a child ended."""

    returncode: int | None
    """``None`` when it was killed on timeout."""
    output: str
    """Its stdout and stderr, interleaved; its head and tail only past ``OUTPUT_CAP``."""

    @property
    def timed_out(self) -> bool:
        """Whether it was killed on timeout."""
        return self.returncode is None

    def tail(self, chars: int = OUTPUT_TAIL) -> str:
        """The end of its output."""
        return self.output[-chars:]


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


class BoundedSink:
    """Reads a pipe in a thread, keeping its first ``HEAD_BYTES`` and last ``TAIL_BYTES``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            readable, _, _ = select.select([self.fd], [], [], 0.1)
            if not readable:
                if self.stop.is_set():
                    return
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return
            self._keep(chunk)

    def _keep(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]

    def text(self) -> str:
        """What was kept, with a note where bytes were cut; waits for the end of the pipe for
        ``DRAIN_SECONDS`` at most."""
        self.thread.join(DRAIN_SECONDS)
        self.stop.set()
        self.thread.join()
        os.close(self.fd)
        tail = bytes(self.tail[-TAIL_BYTES:])
        cut = self.total - len(self.head) - len(tail)
        note = f"\n[qbench: {cut} bytes of output cut]\n".encode() if cut else b""
        return (bytes(self.head) + note + tail).decode(errors="replace")


def run_child(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float, stdin: str = ""
) -> Finished:
    """Run ``command``; kill its process group after ``timeout`` seconds, and its whole tree
    when it ends either way.

    The output goes through a pipe read by a thread (``BoundedSink``); the wait is for the child
    itself, not for the end of the pipe, which a process left behind may hold open."""
    cookie = uuid.uuid4().hex
    reader, writer = os.pipe()
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env={**env, COOKIE: cookie},
            stdin=subprocess.PIPE,
            stdout=writer,
            stderr=subprocess.STDOUT,
            start_new_session=sys.platform != "win32",
        )
    except BaseException:
        os.close(reader)
        raise
    finally:
        os.close(writer)
    sink = BoundedSink(reader)
    try:
        process.communicate(stdin.encode(), timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        kill_group(process)
        code = None
    finally:
        kill_tree(process.pid, cookie)
    return Finished(code, sink.text())


def kill_tree(pid: int, cookie: str) -> None:
    """Kill what is left of a child's tree: its process group and, where ``/proc`` is there,
    every process carrying ``cookie`` in its environment (those that left the group)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for _ in range(KILL_ROUNDS):
        marked = _carrying(f"{COOKIE}={cookie}".encode())
        if not marked:
            return
        for found in marked:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(found, signal.SIGKILL)


def _carrying(entry: bytes) -> list[int]:
    """The processes whose environment holds ``entry`` (``NAME=value``)."""
    found = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                values = environ.read().split(b"\0")
        except OSError:
            continue
        if entry in values:
            found.append(pid)
    return found


def python() -> str:
    """This interpreter: children run with the same packages as qbench."""
    return sys.executable
