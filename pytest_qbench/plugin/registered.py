"""The plugins qbench registers beside itself, kept in ``config.stash`` so that
``pytest_unconfigure`` unregisters exactly those (`unregister_all`), with no list of names to
keep in step.
"""

from __future__ import annotations

import pytest


_registered_key = pytest.StashKey[list[tuple[str, object]]]()


def register(config: pytest.Config, plugin: object, name: str) -> None:
    """Register ``plugin`` under ``name``, and remember it for `unregister_all`."""
    config.pluginmanager.register(plugin, name)
    config.stash.setdefault(_registered_key, []).append((name, plugin))


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


__all__ = ["register", "registered_names", "unregister_all"]
