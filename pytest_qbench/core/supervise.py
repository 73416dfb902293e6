"""The one process supervisor: start a child, bound its time, kill its whole tree, say how it
ended. Every child qbench runs that is not its own code (pytest under the MCP server, the
target's code under ``qbench generate``, a checker) goes through here.

A child is started from an argument list (never a shell) in a session and process group of its
own, in ``cwd``, with ``env`` (this process's environment by default), its stdin from bytes or
nothing, and its output to the files or descriptors given, or into a bounded capture (its first
and last bytes, with a note of the cut). At its end, normal or not, every process it started is
killed, those that left its process group too (a daemon that double-forks and calls
``setsid``), by three nets, the first that applies holding the most:

1. a cgroup v2 of its own (``core/cgroup.py``) where this process may make one: made before
   the child starts, the child moves itself into it before its program begins (``preexec_fn``),
   so every process the child starts is born inside, whatever its session or environment, even
   one forked at once;
2. its process tree (``core/proctree.py``, psutil, Linux): descendants noted while it runs
   (each ``poll``/``wait`` looks), stopped, then killed;
3. a cookie: an environment variable with a value of the child's own (``COOKIE``), which every
   descendant inherits; the processes carrying it are found in ``/proc`` and killed, even after
   their parent exited. A process that dropped its environment and double-forked between two
   looks escapes nets 2 and 3: only a cgroup holds it (the docs name the limit).

Two ways to use it::

    ending = run(["pytest", "-x"], cwd=root, timeout=60, capture=True)   # blocking
    ending.returncode, ending.timed_out, ending.leftovers, ending.output

    child = start(argv, cwd=root, stdout=log, stderr=err)   # non-blocking (checkers in parallel)
    if not child.wait(30, cancel=event):  # True once it ended; looks at its tree meanwhile
        ending = child.stop(grace=1.0)    # interrupt its group, then kill the whole tree
    else:
        ending = child.finish()           # kill what it left behind, reap it, close its output
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
from typing import TypeAlias


if TYPE_CHECKING:
    from pytest_qbench.core.cgroup import CgroupJail


COOKIE = "QBENCH_SUPERVISED"
"""The environment variable whose value marks every process of one child's tree."""
POLL_SECONDS = 0.1
"""How often a wait looks at the child's tree (and whether it was cancelled)."""
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 448 * 1024
OUTPUT_CAP = HEAD_BYTES + TAIL_BYTES
"""Bytes of a captured output kept at most (its head and its tail), besides the note of the cut."""
OUTPUT_TAIL = 4000
"""Characters of a captured output ``Ending.tail`` gives by default."""
DRAIN_SECONDS = 5.0
"""How long a capture is still read after the tree was killed (a process that escaped every
net may hold the pipe open)."""
COOKIE_ROUNDS = 5
"""Passes over /proc killing the cookie's processes (one may fork while the last is killed)."""

Output: TypeAlias = "int | IO[bytes] | None"
"""Where a stream goes, as ``subprocess.Popen`` takes it: a file, a descriptor,
``subprocess.DEVNULL``, ``subprocess.STDOUT`` (stderr only), or ``None`` (inherited)."""


class Containment(Protocol):
    """What holds a child's processes beyond its process group (a cgroup, its process tree)."""

    kind: str
    """``cgroup`` or ``process tree``."""

    def snapshot(self) -> None:
        """Note the child's processes now (before it may exit and orphan them)."""

    def kill_all(self) -> set[int]:
        """Kill every process it holds that is still alive; their ids."""

    def close(self) -> None:
        """Release what holds the child (a cgroup directory)."""


@dataclass(frozen=True)
class Ending:
    """How a child ended."""

    exit_status: int
    """Its status as ``Popen.returncode`` gives it (negative: the signal that killed it)."""
    timed_out: bool
    """It was still running at its timeout and was killed."""
    stopped: bool
    """The caller stopped it (``Child.stop``) before it ended (a timeout included)."""
    leftovers: int
    """Processes of its tree other than itself still alive at its end, and killed then (one that
    dies with its process group's kill first may not be counted)."""
    held_by: str
    """What held its tree: ``cgroup``, ``process tree`` or ``process group``; the cookie
    always besides (POSIX)."""
    output: str = ""
    """Its stdout and stderr interleaved, when captured; head and tail only past
    ``OUTPUT_CAP``."""

    @property
    def returncode(self) -> int | None:
        """Its exit status, ``None`` when it was killed on its timeout."""
        return None if self.timed_out else self.exit_status

    def tail(self, chars: int = OUTPUT_TAIL) -> str:
        """The end of its captured output."""
        return self.output[-chars:]


class Child:
    """A child process started in a session of its own, held until ``finish``.

    Args:
        argv: the program and its arguments (no shell).
        cwd: its working directory.
        env: its whole environment (default: this process's); the cookie is added.
        stdin: bytes written to its stdin (then closed), or ``None`` for no stdin.
        stdout, stderr: where its output goes (see ``Output``); ignored with ``capture``.
        capture: read stdout and stderr together into a bounded capture (``Ending.output``).
        timeout: seconds it may run (``wait`` stops there; ``overdue`` says when it passed).
        name: a word naming it in its cgroup's name.

    Raises:
        OSError: the program could not be started.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        stdout: Output = None,
        stderr: Output = None,
        capture: bool = False,
        timeout: float | None = None,
        name: str = "child",
    ) -> None:
        self.cookie = uuid.uuid4().hex
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.stopped = False
        self.timed_out = False
        self._ending: Ending | None = None
        self._sink: BoundedSink | None = None
        writer = None
        cell = prepare(f"{name}-{self.cookie[:8]}")
        if capture:
            reader, writer = os.pipe()
            stdout, stderr = writer, subprocess.STDOUT
        try:
            self.process, cell = _popen(
                argv,
                cell,
                cwd=cwd,
                env={**(os.environ if env is None else env), COOKIE: self.cookie},
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=stdout,
                stderr=stderr,
                start_new_session=NEW_SESSION,
                creationflags=GROUP_FLAGS,
            )
        except BaseException:
            if writer is not None:
                os.close(reader)
            if cell is not None:
                cell.close()
            raise
        finally:
            if writer is not None:
                os.close(writer)
        if writer is not None:
            self._sink = BoundedSink(reader)
        self.containment = contain(self.process.pid, cell)
        if stdin is not None:
            _feed(self.process, stdin)

    @property
    def pid(self) -> int:
        """The child's process id (and its process group's)."""
        return self.process.pid

    @property
    def held_by(self) -> str:
        """``cgroup``, ``process tree`` or ``process group``."""
        return self.containment.kind if self.containment is not None else "process group"

    def poll(self) -> int | None:
        """Its exit status, or ``None`` while it runs (its tree is noted meanwhile)."""
        code = self.process.poll()
        if code is None and self.containment is not None:
            self.containment.snapshot()
        return code

    def overdue(self) -> bool:
        """Whether its timeout has passed."""
        return self.deadline is not None and time.monotonic() > self.deadline

    def wait(self, seconds: float | None = None, cancel: threading.Event | None = None) -> bool:
        """Wait until it ends (``True``), or ``seconds`` pass, its timeout passes or ``cancel``
        is set (``False``); its tree is noted meanwhile. It is not stopped here."""
        ends = [d for d in (self.deadline,) if d is not None]
        if seconds is not None:
            ends.append(time.monotonic() + seconds)
        end = min(ends) if ends else None
        while self.poll() is None:
            left = None if end is None else end - time.monotonic()
            if (left is not None and left <= 0) or (cancel is not None and cancel.is_set()):
                return False
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(POLL_SECONDS if left is None else min(POLL_SECONDS, left))
        return True

    def interrupt(self) -> None:
        """Ask its process group to stop (``SIGINT``; ``CTRL_BREAK`` on Windows)."""
        if self.process.poll() is None:
            if self.containment is not None:
                self.containment.snapshot()
            _interrupt(self.process)

    def stop(self, grace: float = 0.0) -> Ending:
        """Stop it: with a ``grace``, interrupt its group and give it that long to end (pytest
        then writes its reports); then kill its whole tree (``finish``). It counts as timed
        out when its timeout has passed."""
        if self.process.poll() is None and self._ending is None:
            self.stopped = True
            self.timed_out = self.overdue()
            if grace > 0:
                self.interrupt()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(grace)
        return self.finish()

    def finish(self) -> Ending:
        """Kill whatever is left of its tree (every net), reap it, close its capture; how it
        ended. Idempotent."""
        if self._ending is not None:
            return self._ending
        killed: set[int] = set()
        if self.containment is not None:
            self.containment.snapshot()
            killed |= self.containment.kill_all()
        _kill_group(self.process)
        killed |= kill_marked(self.cookie)
        code = self.process.wait()
        if self.containment is not None:
            self.containment.close()
        killed.discard(self.pid)
        output = self._sink.text() if self._sink is not None else ""
        self._ending = Ending(
            exit_status=code,
            timed_out=self.timed_out,
            stopped=self.stopped,
            leftovers=len(killed),
            held_by=self.held_by,
            output=output,
        )
        return self._ending


start = Child
"""``start(argv, cwd=..., ...)``: a started ``Child`` (non-blocking); see its docstring."""


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    stdout: Output = None,
    stderr: Output = None,
    capture: bool = True,
    name: str = "child",
) -> Ending:
    """Run ``argv`` to its end or its ``timeout`` (then its whole tree is killed at once), and
    kill what it left behind; how it ended. The wait is for the child itself, not for the end
    of its output, which a process left behind may hold open."""
    child = Child(
        argv,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        capture=capture,
        timeout=timeout,
        name=name,
    )
    try:
        ended = child.wait()
    except BaseException:
        child.stop()
        raise
    return child.finish() if ended else child.stop()


def prepare(name: str) -> CgroupJail | None:
    """An empty cgroup named ``name`` for a child about to start (Linux, where one can be
    made): the child joins it before its program begins (``CgroupJail.join``)."""
    if sys.platform != "linux":
        return None
    from pytest_qbench.core.cgroup import CgroupJail

    return CgroupJail.make(name)


def _popen(
    argv: Sequence[str], cell: CgroupJail | None, **options: Any
) -> tuple[subprocess.Popen[bytes], CgroupJail | None]:
    """The started child, and ``cell`` when the child joined it before its program began;
    a child that could not join (the write refused) is started again without it (the first
    never ran its program: ``Popen`` reaped it)."""
    if cell is not None:
        try:
            return subprocess.Popen(list(argv), preexec_fn=cell.join, **options), cell
        except subprocess.SubprocessError:  # raised in preexec_fn: cell.join
            cell.close()
    return subprocess.Popen(list(argv), **options), None


def contain(pid: int, cell: CgroupJail | None) -> Containment | None:
    """What holds ``pid``'s tree: the cgroup ``cell`` it joined, else its process tree
    (Linux); ``None`` elsewhere (its process group and the cookie only)."""
    if cell is not None:
        cell.shut()
        return cell
    if sys.platform != "linux":
        return None
    from pytest_qbench.core.proctree import ProcessTree

    return ProcessTree(pid)


def kill_marked(cookie: str) -> set[int]:
    """Kill every process carrying ``cookie`` in its environment (``/proc``; nothing where
    there is none); their ids."""
    killed: set[int] = set()
    entry = f"{COOKIE}={cookie}".encode()
    for _ in range(COOKIE_ROUNDS):
        marked = carrying(entry)
        if not marked:
            break
        for pid in marked:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(marked)
    return killed


def carrying(entry: bytes) -> list[int]:
    """The live processes whose environment holds ``entry`` (``NAME=value``)."""
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
            continue  # gone, a zombie, or another user's
        if entry in values:
            found.append(pid)
    return found


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    """Write ``data`` to the child's stdin from a thread, then close it (a child that does not
    read never blocks the caller)."""

    def write() -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.write(data)
        with contextlib.suppress(OSError):
            process.stdin.close()

    threading.Thread(target=write, daemon=True).start()


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


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    NEW_SESSION = False
    GROUP_FLAGS = subprocess.CREATE_NEW_PROCESS_GROUP

    def _interrupt(process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(OSError):
            process.send_signal(signal.CTRL_BREAK_EVENT)

    def _kill_group(process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(process.pid)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )

else:
    NEW_SESSION = True
    GROUP_FLAGS = 0

    def _interrupt(process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGINT)

    def _kill_group(process: subprocess.Popen[bytes]) -> None:
        # a group's id stays reserved while any member lives, even after the child was reaped
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
