"""Writing a file so that a half-written one never exists: `write_text_atomic`, `atomic_writer`.

The text goes to a temporary file in the target's directory, which then replaces the target.
The file gets the permissions of any new file (what the umask allows), and the umask is only
ever read, never set: `current_umask` is safe in the MCP server's threads.

Only a regular file (or a missing one) is replaced: a device or a FIFO (``/dev/null``,
``/dev/stdout``, a named pipe) is written in place, and a symlink is written through, atomically
at its target, so the link stays a link; a symlink loop is refused (``ELOOP``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import IO


PROC_STATUS = Path("/proc/self/status")
DESCRIPTOR_PATH = r"^/(?:proc/self|proc/thread-self|dev)/fd/(\d+)$"
"""Compiled (``re``'s cache) only for a path under ``/proc/`` or ``/dev/``."""


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a half-written file never exists; ``-`` is stdout.

    Parent directories are created. The text goes to a temporary file in the same directory,
    which then replaces ``path``.
    """
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_writer(Path(path)) as handle:
        handle.write(text)


class atomic_writer:
    """Context manager: a text file handle whose content replaces ``path`` only on success.

    A ``path`` that is a device or a FIFO is opened and written in place (it cannot be
    replaced); a symlink is followed, and its target replaced. Text that UTF-8 cannot hold (a
    lone surrogate from a test's message or output) is written as ``?``, not fatal to the file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> IO[str]:
        self._tmp: Path | None = None
        descriptor = descriptor_of(self.path)
        if descriptor is not None:  # through the process's own descriptor: its offset, no O_TRUNC
            for stream in (sys.stdout, sys.stderr):
                with suppress(Exception):
                    stream.flush()
            self._handle = os.fdopen(
                os.dup(descriptor), "w", encoding="utf-8", errors="replace", newline="\n"
            )
            return self._handle
        if is_special_file(self.path):
            self._handle = self.path.open("w", encoding="utf-8", errors="replace", newline="\n")
            return self._handle
        target = link_target(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        self._tmp, self._target = Path(tmp), target
        try:
            # mkstemp makes the file owner-only; a report is as readable as any new file would be.
            os.chmod(tmp, 0o666 & ~current_umask())
            self._handle = os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n")
        except BaseException:
            os.close(fd)
            self._tmp.unlink(missing_ok=True)
            raise
        return self._handle

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._tmp is None:  # written in place
            self._handle.close()
            return
        try:
            self._handle.close()  # flushes: a full disk fails here
            if exc_type is None:
                self._tmp.replace(self._target)
                return
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise
        self._tmp.unlink(missing_ok=True)


def write_bytes_atomic(path: Path, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to the regular file ``path`` so that a half-written file never exists;
    return the bytes written.

    Parent directories are created; the bytes go to a temporary file beside ``path``, which then
    replaces it. Unlike `atomic_writer`, ``path`` is always replaced (an attachment is never a
    device or a link).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
    written = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            os.chmod(tmp, 0o666 & ~current_umask())
            for chunk in chunks:
                handle.write(chunk)
                written += len(chunk)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return written


def is_special_file(path: Path) -> bool:
    """Whether ``path`` (its symlinks followed) exists and is neither a regular file nor a
    directory: a device, a FIFO or a socket, which is written in place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def names_a_descriptor(path: Path) -> bool:
    """Whether ``path`` is, or links to, one of this process's open descriptors (``/dev/stdout``
    is a link to ``/proc/self/fd/1``), which is written through, never replaced."""
    return descriptor_of(path) is not None


def descriptor_of(path: Path) -> int | None:
    """The descriptor ``path`` names (``/proc/self/fd/N``, ``/dev/fd/N``, or a link to one, as
    ``/dev/stdout`` is); ``None`` for any other path.

    What such a path refers to is written through the descriptor itself, even when it is a
    regular file (``pytest --qbench-md=/dev/stdout > log``): reopening it would truncate the
    log, and replacing it would replace the link.
    """
    for _hop in range(40):
        text = str(path)
        match = re.match(DESCRIPTOR_PATH, text) if text.startswith(("/proc/", "/dev/")) else None
        if match:
            return int(match.group(1))
        try:
            target = Path(os.readlink(path))
        except OSError:  # not a link (or gone)
            return None
        path = target if target.is_absolute() else path.parent / target
    return None


def link_target(path: Path) -> Path:
    """The file a write to ``path`` must replace: ``path`` itself, or the final target of the
    symlink ``path`` is (which may not exist yet); `OSError` ``ELOOP`` for a symlink loop."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # never replace a loop by a file: say the system's word
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from None
    return Path(os.path.realpath(path))  # a dangling link: its target is made


def current_umask() -> int:
    """The process's umask, read without changing it.

    Read from ``/proc/self/status`` where there is one (Linux); elsewhere, the umask this module
    saw when it was imported (in the main thread, before any thread could race with it).
    """
    mask = _proc_umask()
    return _UMASK_AT_IMPORT if mask is None else mask


def _proc_umask() -> int | None:
    try:
        # UTF-8, not ASCII: the same "Umask:" line, without loading the ASCII codec's module.
        with PROC_STATUS.open(encoding="utf-8", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _umask_at_import() -> int:
    mask = _proc_umask()
    if mask is None:  # no /proc: set and restore, once, while the process has one thread
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_UMASK_AT_IMPORT = _umask_at_import()


__all__ = [
    "atomic_writer",
    "current_umask",
    "descriptor_of",
    "is_special_file",
    "link_target",
    "names_a_descriptor",
    "write_bytes_atomic",
    "write_text_atomic",
]
