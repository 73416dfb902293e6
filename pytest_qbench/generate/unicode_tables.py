"""Hypothesis's Unicode tables, kept between generations. The first text strategy a process
draws from builds them (``charmap.json.gz``, one ``codec-*.json.gz`` per codec: seconds of CPU)
into Hypothesis's storage directory, and each generation's children share a storage directory
of their own in the generation's scratch (``coverage_gap.run_with_coverage``): without this
cache every ``qbench generate`` built them again. They are copied from qbench's cache into the
scratch before the first child starts, and the tables a generation built are copied back
after it, each read as gzipped JSON first (a child runs the target's code, which could have
written anything there). The user's own Hypothesis storage is never read nor written."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

from pytest_qbench.core.atomic import write_bytes_atomic


TABLES = "unicode_data"
"""The sub-directory of Hypothesis's storage that holds the tables."""
MAX_BYTES = 4 * 1024 * 1024
"""A table file larger than this is not kept (Hypothesis's are tens of kilobytes)."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/qbench/hypothesis`` (``~/.cache/qbench/hypothesis`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qbench" / "hypothesis"


def seed(storage: Path, cache: Path | None = None) -> None:
    """Copy the cached tables into the generation's Hypothesis ``storage``."""
    try:
        source = (cache or cache_dir()) / TABLES
        if source.is_dir():
            shutil.copytree(source, storage / TABLES, dirs_exist_ok=True)
    except (OSError, RuntimeError):  # an optimisation (RuntimeError: no home directory)
        return


def keep(storage: Path, cache: Path | None = None) -> None:
    """Copy the tables the generation built and the cache lacks into the cache."""
    try:
        target = (cache or cache_dir()) / TABLES
        for path in sorted((storage / TABLES).glob("*/*.json.gz")):
            kept = target / path.parent.name / path.name
            if not kept.exists() and _valid(path):  # never half a file for another generation
                write_bytes_atomic(kept, [path.read_bytes()])
    except (OSError, RuntimeError):
        return


def _valid(path: Path) -> bool:
    """Whether ``path`` is a regular file of gzipped JSON of a table's size."""
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
        return False
    try:
        with gzip.open(path) as handle:
            json.loads(handle.read(16 * MAX_BYTES))
    except (OSError, ValueError, EOFError):
        return False
    return True
