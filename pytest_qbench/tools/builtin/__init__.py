"""The built-in tools, as plugins of the same interface as a third party's (issue 22)."""

from __future__ import annotations

from types import ModuleType

from pytest_qbench.tools.builtin import js_build
from pytest_qbench.tools.builtin import js_runners
from pytest_qbench.tools.builtin import node_checkers
from pytest_qbench.tools.builtin import pytest_runner
from pytest_qbench.tools.builtin import python_checkers


BUILTIN_PLUGINS: dict[str, ModuleType] = {
    "builtin.python": python_checkers,
    "builtin.node": node_checkers,
    "builtin.pytest": pytest_runner,
    "builtin.js": js_runners,
    "builtin.js_build": js_build,
}
"""The built-in plugins by name, registered before any installed one (their names win)."""
