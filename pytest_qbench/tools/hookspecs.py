"""The hooks a qbench tools plugin implements (issue 22), declared with pluggy as pytest does.

A plugin is a module (or object) named by an entry point in the ``qbench.tools`` group::

    [project.entry-points."qbench.tools"]
    mytool = "my_package.qbench_plugin"

whose functions, marked with ``@hookimpl``, return the tools it adds::

    from pytest_qbench.tools.hookspecs import hookimpl
    from pytest_qbench.tools.spec import Checker

    @hookimpl
    def qbench_checkers() -> list[Checker]:
        return [Checker(name="mytool", ...)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy


if TYPE_CHECKING:
    from pytest_qbench.tools.spec import Checker
    from pytest_qbench.tools.spec import Runner

PROJECT = "qbench"
ENTRY_POINT_GROUP = "qbench.tools"
"""The entry-point group qbench loads tools plugins from."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def qbench_checkers() -> list[Checker]:  # type: ignore[empty-body]
    """The static checkers this plugin adds (`Checker` descriptions)."""


@hookspec
def qbench_runners() -> list[Runner]:  # type: ignore[empty-body]
    """The test runners this plugin adds (`Runner` descriptions)."""
