"""qbench's clock: the run's dates and duration, and the result stream's timer, out of reach of
a test suite that freezes or moves the clock.

freezegun replaces ``time.time``, ``time.monotonic``, ``time.perf_counter`` and
``datetime.datetime``, in their modules and in every module attribute holding them, but not in
a tuple: the real functions are held in one (``_REAL``), taken when qbench is imported, before
any conftest. time-machine moves the wall clock in C, which every reference reaches, but not
``time.monotonic``; while it travels, the wall clock is read through its escape hatch, which
it keeps for this. So a freeze started in a ``conftest.py`` or a session fixture, or left on
by a test, no longer dates the run in 2012 nor makes its duration 0 or negative.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from datetime import timezone


_REAL = (time.monotonic, time.time, datetime)
"""The real functions, where freezegun does not replace them (it replaces module attributes)."""


def monotonic() -> float:
    """``time.monotonic()``, real whatever a test froze."""
    return _REAL[0]()


def wall_time() -> float:
    """``time.time()``, real whatever a test froze or moved."""
    machine = sys.modules.get("time_machine")
    if machine is not None:  # loaded by the suite: ask it only then (importing it costs)
        hatch = getattr(machine, "escape_hatch", None)
        if hatch is not None and hatch.is_travelling():
            return float(hatch.time.time())
    return _REAL[1]()


def utc_now() -> datetime:
    """The time now (UTC, aware), as ``datetime.now(timezone.utc)`` gives it unfrozen."""
    return _REAL[2].fromtimestamp(wall_time(), timezone.utc)
