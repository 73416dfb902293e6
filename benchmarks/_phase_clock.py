"""A pytest plugin (``-p _phase_clock``, ``benchmarks/`` on ``PYTHONPATH``) that writes the
process's own CPU clock (user, system), minor page faults and garbage collector's time at the
edges of a run's phases to the JSON file named by ``PHASE_CLOCK_OUT``. Used by
``phase_times.py``; stdlib only, and it changes nothing in the run.

Phases: ``start`` (interpreter, pytest's and the plugins' imports, configuration, up to
collection), ``collect``, ``tests`` (``pytest_runtestloop``), ``finish`` (``pytest_sessionfinish``
and the terminal summary; ``qbench_finish`` is qbench's ``finish`` within it, when loaded),
``failures`` is pytest's summary of the failures within it (the terminal reporter's
``summary_failures``), ``exit`` (``pytest_unconfigure`` and the interpreter's end up to ``atexit``).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import resource
import time
from collections.abc import Generator
from typing import Any

import pytest


MARKS: dict[str, dict[str, float]] = {}
GC = {"s": 0.0, "runs": 0.0, "gen2": 0.0}
_GC_STARTED = [0.0]


def _mark(name: str) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    MARKS[name] = {
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "minflt": float(usage.ru_minflt),
        "gc_s": GC["s"],
        "gc_gen2": GC["gen2"],
    }


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC_STARTED[0] = time.process_time()
    else:
        GC["s"] += time.process_time() - _GC_STARTED[0]
        GC["runs"] += 1
        if info.get("generation") == 2:
            GC["gen2"] += 1


def _write() -> None:
    _mark("exit")
    path = os.environ.get("PHASE_CLOCK_OUT")
    if path:
        with open(path, "w") as handle:
            json.dump(MARKS, handle)


_mark("imported")
gc.callbacks.append(_gc_callback)
atexit.register(_write)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    _mark("collect_start")
    try:
        return (yield)
    finally:
        _mark("collect_end")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    _mark("tests_start")
    try:
        return (yield)
    finally:
        _mark("tests_end")


def _timed(name: str, method: Any) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        _mark(f"{name}_start")
        try:
            return method(*args, **kwargs)
        finally:
            _mark(f"{name}_end")

    return timed


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    terminal: Any = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:  # pytest's own summary of the failures (tracebacks, teardowns)
        terminal.summary_failures = _timed("failures", terminal.summary_failures)
    holder: Any = config.pluginmanager.get_plugin("qbench-session")
    plugin = getattr(holder, "plugin", holder)  # qbench registers a holder of its hooks
    finish = getattr(plugin, "finish", None)
    if finish is None:
        return

    plugin.finish = _timed("qbench_finish", finish)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, object, object]:
    _mark("finish_start")
    try:
        return (yield)
    finally:
        _mark("finish_end")
