"""Pausing Python's cyclic garbage collector around work that makes many acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection meanwhile.

    Parsing, rendering and indexing make hundreds of thousands of short-lived, acyclic objects,
    which reference counting frees; each collection they trigger would walk every live object of
    the process (all of pytest's items and reports at the end of a run, every result read by
    ``qbench render``) for nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
