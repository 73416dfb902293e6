"""The plugins qbench registers beside itself, kept in ``config.stash`` so that
``pytest_unconfigure`` unregisters exactly those (`unregister_all`), with no list of names to
keep in step.

What is registered is not the plugin object itself but a `Hooks` holder of its hook
implementations (its bound ``pytest_*`` methods): pluggy looks at every name in ``dir()`` of a
registered object for a hook, and pytest's fixture manager at every one for a fixture (a lookup
in each class of its MRO and a ``getattr`` each). ``QBenchSession`` holds about 110 names, of
which 12 are hooks; the holder holds those and ``object``'s own (issue 28). The hooks run as
they did: pluggy calls the same bound methods, with no call in between.
"""

from __future__ import annotations

import inspect

import pytest


_registered_key = pytest.StashKey[list[tuple[str, object]]]()


class Hooks:
    """The hook implementations of one plugin object, as the attributes pluggy reads."""

    def __init__(self, plugin: object) -> None:
        self.plugin = plugin
        """The object whose hooks these are."""
        for name in hook_names(type(plugin)):
            setattr(self, name, getattr(plugin, name))
        overrides = getattr(plugin, "hook_overrides", None)
        if overrides is not None:  # one of its hooks implemented another way (session.py)
            for name, function in overrides().items():
                if function is not None:
                    setattr(self, name, function)
                elif name in vars(self):  # not implemented where this object runs
                    delattr(self, name)

    def __repr__(self) -> str:
        return f"<hooks of {self.plugin!r}>"


_hook_names: dict[type, tuple[str, ...]] = {}


def hook_names(cls: type) -> tuple[str, ...]:
    """The names of the hook implementations a class defines (``pytest_*`` functions): the
    only attributes pluggy takes from a plugin object that is not a module."""
    names = _hook_names.get(cls)
    if names is None:
        names = _hook_names[cls] = tuple(
            name
            for name in dir(cls)
            if name.startswith("pytest_") and inspect.isroutine(getattr(cls, name, None))
        )
    return names


def register(config: pytest.Config, plugin: object, name: str) -> None:
    """Register ``plugin``'s hooks (a `Hooks` holder) under ``name``, and remember them for
    `unregister_all`."""
    hooks = Hooks(plugin)
    config.pluginmanager.register(hooks, name)
    config.stash.setdefault(_registered_key, []).append((name, hooks))


def registered_names(config: pytest.Config) -> list[str]:
    """The names of the plugins registered through `register` and not yet unregistered."""
    return [name for name, _ in config.stash.get(_registered_key, [])]


def unregister_all(config: pytest.Config) -> None:
    """Unregister, last first, every plugin registered through `register` that still is."""
    registered = config.stash.get(_registered_key, [])
    while registered:
        name, plugin = registered.pop()
        if config.pluginmanager.get_plugin(name) is plugin:
            config.pluginmanager.unregister(plugin, name)


__all__ = ["Hooks", "hook_names", "register", "registered_names", "unregister_all"]
