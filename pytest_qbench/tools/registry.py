"""Every runner and checker qbench knows: the built-in plugins and those installed packages
add through the ``qbench.tools`` entry-point group (issue 22).

One broken third-party plugin (it fails to import, its hook raises or returns something else
than tool descriptions, it reuses a taken name) is reported as a `PluginError` naming its
distribution; it never stops the others from loading. That is why the entry points are loaded
one by one here rather than by pluggy's ``load_setuptools_entrypoints``, which stops at the
first failure.
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Generic
from typing import TypeVar

import pluggy

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.tools import hookspecs
from pytest_qbench.tools.builtin import BUILTIN_PLUGINS
from pytest_qbench.tools.spec import Checker
from pytest_qbench.tools.spec import Runner


BUILTIN_DISTRIBUTION = "pytest-qbench"
Tool = TypeVar("Tool", Checker, Runner)


@dataclass(frozen=True)
class Registered(Generic[Tool]):
    """A tool and where it comes from."""

    tool: Tool
    distribution: str
    """The distribution (package) that installed it; ``pytest-qbench`` for the built-ins."""
    plugin: str
    """Its plugin's name (the entry point's name; ``builtin.<module>`` for the built-ins)."""


@dataclass(frozen=True)
class PluginError:
    """A plugin that could not give its tools."""

    distribution: str
    plugin: str
    message: str

    def line(self) -> str:
        """One line for the user: what, where from, why."""
        return (
            f"qbench.tools plugin {self.plugin!r} of distribution {self.distribution} is "
            f"broken: {self.message}"
        )


@dataclass
class Registry:
    """The registered checkers and runners by name, and the plugins that failed."""

    checkers: dict[str, Registered[Checker]] = field(default_factory=dict)
    runners: dict[str, Registered[Runner]] = field(default_factory=dict)
    errors: list[PluginError] = field(default_factory=list)

    def checker_names(self) -> list[str]:
        """Every name a checker answers to: each one's name, then its aliases."""
        return [
            alias
            for name, registered in self.checkers.items()
            for alias in (name, *registered.tool.aliases)
        ]

    def checker(self, name: str) -> Registered[Checker]:
        """The checker named ``name`` (or one of its aliases).

        Raises:
            QBenchError: no checker has that name; the message lists the registered ones.
        """
        for registered in self.checkers.values():
            if name == registered.tool.name or name in registered.tool.aliases:
                return registered
        raise QBenchError(
            f"unknown checker {name!r}; registered checkers: {', '.join(self.checkers)}"
            + "".join(f"; {error.line()}" for error in self.errors),
            slug="check-options",
        )

    def runner(self, name: str) -> Registered[Runner]:
        """The runner named ``name``.

        Raises:
            QBenchError: no runner has that name; the message lists the registered ones.
        """
        if name in self.runners:
            return self.runners[name]
        raise QBenchError(
            f"unknown runner {name!r}; registered runners: {', '.join(self.runners)}"
            + "".join(f"; {error.line()}" for error in self.errors),
            slug="check-options",
        )


@functools.cache
def registry() -> Registry:
    """The tools of the built-in plugins and of the installed ones, loaded once a process."""
    return load_registry()


def load_registry(*, entry_points: bool = True) -> Registry:
    """Register the built-in plugins, then (unless told not to) each ``qbench.tools`` entry
    point of the installed distributions, and collect their tools."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    found = Registry()
    origins: dict[str, str] = {}
    for name, plugin in BUILTIN_PLUGINS.items():
        manager.register(plugin, name=name)
        origins[name] = BUILTIN_DISTRIBUTION
    if entry_points:
        _load_entry_points(manager, origins, found.errors)
    _collect(manager.hook.qbench_checkers, Checker, origins, found.checkers, found.errors)
    _collect(manager.hook.qbench_runners, Runner, origins, found.runners, found.errors)
    return found


def _load_entry_points(
    manager: pluggy.PluginManager, origins: dict[str, str], errors: list[PluginError]
) -> None:
    for dist in importlib.metadata.distributions():
        dist_name = dist.metadata["Name"] or "(unnamed distribution)"
        for point in dist.entry_points:
            if point.group != hookspecs.ENTRY_POINT_GROUP or manager.has_plugin(point.name):
                continue
            try:
                manager.register(point.load(), name=point.name)
            except Exception as exc:  # a third party's code: any failure is reported, not fatal
                errors.append(PluginError(dist_name, point.name, _describe(exc)))
                continue
            origins[point.name] = dist_name


def _collect(
    caller: Any,
    kind: type[Tool],
    origins: dict[str, str],
    into: dict[str, Registered[Tool]],
    errors: list[PluginError],
) -> None:
    """Call each plugin's implementation of the hook on its own, so one that raises or returns
    garbage is reported alone; the first plugin to claim a name keeps it (built-ins first)."""
    for impl in caller.get_hookimpls():
        origin = origins.get(impl.plugin_name, "(unknown distribution)")
        try:
            given = list(impl.function())
        except Exception as exc:  # a third party's code: reported, the others go on
            errors.append(PluginError(origin, impl.plugin_name, _describe(exc)))
            continue
        for tool in given:
            if not isinstance(tool, kind):
                message = f"its hook returned {tool!r:.100}, not a {kind.__name__}"
                errors.append(PluginError(origin, impl.plugin_name, message))
            elif tool.name in into:
                taken = into[tool.name].distribution
                message = f"the {kind.__name__.lower()} name {tool.name!r} is taken by {taken}"
                errors.append(PluginError(origin, impl.plugin_name, message))
            else:
                into[tool.name] = Registered(tool, origin, impl.plugin_name)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"
