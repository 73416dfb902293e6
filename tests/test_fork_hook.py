"""The hooks a run registers with ``os.register_at_fork`` (a fork stops the batched streams'
timer threads first, a forked child closes its copy of the run lock and forgets the streams'
lines) are registered once a process, and reach none of qbench's module globals: the interpreter keeps what is registered to
its very end, and a module's globals kept so go through its last collections (+9.4 M
instructions a run when the hook was a function of ``report/store.py``)."""

from __future__ import annotations

import gc
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="os.register_at_fork (POSIX)")
def test_the_fork_hook_keeps_no_module_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_qbench.report import store

    registered: list[Any] = []
    monkeypatch.setattr(os, "register_at_fork", lambda **hooks: registered.extend(hooks.values()))
    store._fork_hooks.cache_clear()
    try:
        store._fork_hooks()
    finally:
        store._fork_hooks.cache_clear()  # the next run's registers for real
    assert len(registered) == 2  # before the fork, and in the child
    modules = {id(vars(module)) for module in list(sys.modules.values()) if module is not None}
    seen: set[int] = set()
    todo: list[Any] = list(registered)
    while todo:  # everything the hook reaches, but through objects of other modules' classes
        thing = todo.pop()
        if id(thing) in seen or isinstance(thing, (type, types.ModuleType)):
            continue
        seen.add(id(thing))
        assert id(thing) not in modules, "the fork hook reaches a module's globals"
        todo.extend(gc.get_referents(thing))


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="os.register_at_fork (POSIX)")
def test_a_run_lock_and_a_batched_stream_register_one_fork_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's lock and its batched stream (whose timer thread starts with its first line) are
    served by one registration, in a process that registered none yet. Before, each had its own
    (two ``os.register_at_fork`` calls, two guards)."""
    from pytest_qbench.report import store

    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(os, "register_at_fork", lambda **hooks: calls.append(tuple(hooks)))
    guards = [value for value in vars(store).values() if hasattr(value, "cache_clear")]
    for guard in guards:  # as in a process that registered none yet
        guard.cache_clear()
    lock = store.RunLock(tmp_path / "run")
    writer = store.StreamWriter(tmp_path / "results.jsonl", batched=True)
    try:
        lock.claim()
        writer.write_deselected(1)  # its timer thread starts
        assert calls == [("before", "after_in_child")]
    finally:
        writer.close()
        lock.release()
        for guard in guards:
            guard.cache_clear()  # the next run's registers for real
