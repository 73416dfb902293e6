"""The byte-code cache of ``qbench generate``'s children, kept between generations.

Children write no byte-code beside a source: they keep it under one prefix
(``PYTHONPYCACHEPREFIX``, ``process.child_env``), where CPython mirrors each source's absolute
path. With a prefix of its own in each generation's scratch, the first child of every
generation compiled the standard library, pytest, Hypothesis and qbench again (1.7 s of CPU
instead of 0.35 s for a one-test child). The prefix is shared instead: ``--pycache DIR``, else
``$QBENCH_PYCACHE``, else ``$XDG_CACHE_HOME/qbench/pycache/<interpreter tag>``
(``~/.cache/...``); ``off`` keeps today's cache of the generation alone. What mirrors the
scratch (the project's copy, the candidates: temporary paths) is removed at the generation's
end, so the cache grows with the installed packages and the user's projects, not with each
generation. A cache that cannot be created or written falls back to the scratch's, with a note.

Stale byte-code is never used (CPython checks each entry against its source's modification
time and size, pytest's rewritten modules likewise), and concurrent generations may share the
cache (CPython and pytest write each entry to a temporary file and rename it)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.generate.process import PYCACHE


ENV = "QBENCH_PYCACHE"
"""The environment variable naming the shared cache's directory (or ``off``)."""
OFF = "off"
"""The value that keeps each generation's byte-code in its scratch alone."""
_PREFIXES: dict[Path, Path] = {}
"""The prefix of each running generation's children, by its scratch."""


@dataclass(frozen=True)
class ByteCodeCache:
    """Where a generation's children keep their byte-code, and why not in the shared cache."""

    prefix: Path
    note: str = ""


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/qbench/pycache/<tag>`` (``~/.cache/...`` by default), ``<tag>`` this
    interpreter's (``cpython-312``): each interpreter's entries apart."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qbench" / "pycache" / (sys.implementation.cache_tag or "none")


def choose(given: str | None, scratch: Path) -> ByteCodeCache:
    """The cache of the generation whose scratch is ``scratch``: ``given`` (``--pycache``),
    else ``$QBENCH_PYCACHE``, else `default_dir`; the scratch's own when it is ``off`` or
    cannot be created or written (then with a note saying why)."""
    chosen = given or os.environ.get(ENV) or ""
    own = scratch / PYCACHE
    if chosen.strip().lower() == OFF:
        return ByteCodeCache(own)
    shared = Path(chosen).expanduser() if chosen else None
    try:
        shared = (shared or default_dir()).absolute()
        shared.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=shared, prefix=".qbench-probe-"):
            pass
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home directory
        where = f"{shared} " if shared else ""
        why = getattr(exc, "strerror", None) or str(exc)
        note = (
            f"the byte-code cache {where}cannot be used ({why}): this generation's children "
            f"compiled into its scratch; give --pycache DIR (or set {ENV}) to a writable "
            f"directory, or --pycache {OFF}"
        )
        return ByteCodeCache(own, note)
    return ByteCodeCache(shared)


def start(cache: ByteCodeCache, scratch: Path) -> None:
    """The children of the generation in ``scratch`` keep their byte-code under ``cache``."""
    _PREFIXES[scratch] = cache.prefix


def prefix_of(scratch: Path) -> Path:
    """The byte-code prefix of the children of the generation in ``scratch``: the one it
    `start`-ed with, else a cache in the scratch."""
    return _PREFIXES.get(scratch, scratch / PYCACHE)


def forget(scratch: Path) -> None:
    """Remove what the generation in ``scratch`` kept under a shared prefix for the scratch's
    own files, and the directories that leaves empty, up to the prefix."""
    prefix = _PREFIXES.pop(scratch, None)
    if prefix is None or prefix.is_relative_to(scratch):
        return
    for path in dict.fromkeys([scratch.absolute(), scratch.resolve()]):
        mirror = mirrored(prefix, path)
        shutil.rmtree(mirror, ignore_errors=True)
        for parent in mirror.parents:
            if parent == prefix or not parent.is_relative_to(prefix):
                break
            try:
                parent.rmdir()  # only when empty: another generation may be writing there
            except OSError:
                break


def mirrored(prefix: Path, path: Path) -> Path:
    """Where CPython keeps the byte-code of the files of directory ``path`` under ``prefix``:
    the absolute path without its root (and drive) below the prefix."""
    return prefix.joinpath(*path.parts[1:])
