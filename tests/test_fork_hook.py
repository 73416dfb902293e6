"""The hook a run registers with ``os.register_at_fork`` (a forked child closes its copy of the
run lock) reaches none of qbench's module globals: the interpreter keeps what is registered to
its very end, and a module's globals kept so go through its last collections (+9.4 M
instructions a run when the hook was a function of ``report/store.py``)."""

from __future__ import annotations

import gc
import os
import sys
import types
from typing import Any

import pytest


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="os.register_at_fork (POSIX)")
def test_the_fork_hook_keeps_no_module_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_qbench.report import store

    registered: list[Any] = []
    monkeypatch.setattr(os, "register_at_fork", lambda **hooks: registered.extend(hooks.values()))
    store._forget_in_children.cache_clear()
    try:
        store._forget_in_children()
    finally:
        store._forget_in_children.cache_clear()  # the next run's registers for real
    assert len(registered) == 1
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
