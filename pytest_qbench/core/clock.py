"""qbench's clock: the run's dates and duration, and the result stream's timer, out of reach of
a test that freezes or moves the clock.

freezegun replaces ``time.time``, ``time.monotonic``, ``time.perf_counter`` and
``datetime.datetime``, in their modules and in every module attribute holding them (not in a
tuple); time-machine changes the wall clock of ``time.time`` and ``datetime.now`` in C, which
every reference reaches, but not ``time.monotonic``. So the real ``time.monotonic`` is held in
a tuple, and the wall clock is the one read when qbench was imported (before any conftest)
plus the monotonic time since: a freeze started in a ``conftest.py`` or a session fixture, or
left on by a test, no longer dates the run in 2012 nor makes its duration 0 or negative. A
freeze already started when qbench was imported still dates it.
"""

from __future__ import annotations

import time
from datetime import datetime
from datetime import timezone


_REAL = (time.monotonic, datetime)
"""The real functions, where freezegun does not replace them (it replaces module attributes)."""
_MONOTONIC_AT_IMPORT = time.monotonic()
_WALL_AT_IMPORT = time.time()


def monotonic() -> float:
    """``time.monotonic()``, real whatever a test froze."""
    return _REAL[0]()


def wall_time() -> float:
    """Seconds since the epoch (UTC), from the wall clock at qbench's import and the monotonic
    clock since."""
    return _WALL_AT_IMPORT + (_REAL[0]() - _MONOTONIC_AT_IMPORT)


def utc_now() -> datetime:
    """The time now (UTC, aware), as ``datetime.now(timezone.utc)`` gives it unfrozen."""
    return _REAL[1].fromtimestamp(wall_time(), timezone.utc)
