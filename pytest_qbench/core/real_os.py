"""The ``os`` and ``os.path`` functions as this process imported qbench, put back for the time
qbench ends a run (``restored``) when a test left a mock of one on (``mock.patch("os.replace")
.start()`` never stopped, ``os.path.exists = ...`` in a test module).

qbench's session end writes its files through the standard library (``tempfile``,
``pathlib``, ``os.fdopen``), which call ``os``'s functions as the module holds them: a mock
left on made it write nothing (``os.replace``: report.json never put in place, yet the
terminal said it was written), an empty report (``os.fdopen``), or none of the results
(``os.fstat``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextlib import suppress
from types import ModuleType


_OS_NAMES = (
    "access",
    "chmod",
    "close",
    "fdopen",
    "fspath",
    "fstat",
    "fsync",
    "ftruncate",
    "getcwd",
    "getpid",
    "listdir",
    "lseek",
    "lstat",
    "makedirs",
    "mkdir",
    "open",
    "pread",
    "read",
    "readlink",
    "remove",
    "rename",
    "replace",
    "rmdir",
    "scandir",
    "stat",
    "unlink",
    "urandom",
    "utime",
    "write",
)
_PATH_NAMES = (
    "abspath",
    "exists",
    "getmtime",
    "getsize",
    "isdir",
    "isfile",
    "islink",
    "lexists",
    "realpath",
)
_REAL = {
    **{(os, name): getattr(os, name) for name in _OS_NAMES if hasattr(os, name)},
    **{(os.path, name): getattr(os.path, name) for name in _PATH_NAMES},
}
"""Each function as the module held it when qbench was imported."""


@contextmanager
def restored() -> Iterator[list[str]]:
    """Put the real functions back in place of those a test left replaced, for the time of the
    ``with`` block; yield their names (``os.replace``...). Each replacement is put back after
    the block, unless the function was changed again meanwhile. Never raises itself: what it
    cannot put back (a test's own ``__getattr__`` or ``__setattr__`` on ``os``) stays as the
    test left it, and the run's end goes on."""
    replaced: dict[tuple[ModuleType, str], object] = {}
    with suppress(Exception):
        for (module, name), real in _REAL.items():
            current = getattr(module, name, None)
            if current is not real:
                setattr(module, name, real)
                replaced[module, name] = current
    try:
        yield _names(replaced)
    finally:
        with suppress(Exception):
            for (module, name), current in replaced.items():
                if getattr(module, name, None) is _REAL[module, name]:
                    setattr(module, name, current)


def _names(replaced: Mapping[tuple[ModuleType, str], object]) -> list[str]:
    """``os.NAME`` or ``os.path.NAME`` of each key of ``replaced``."""
    return [f"os.path.{name}" if module is os.path else f"os.{name}" for module, name in replaced]
