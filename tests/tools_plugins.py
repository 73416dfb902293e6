"""Third-party ``qbench.tools`` plugins installed for real: a package directory and its
``.dist-info`` (``METADATA``, ``entry_points.txt``) in a directory put on ``PYTHONPATH``, so
that ``importlib.metadata`` finds them in a child process as it finds any installed package."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.tools.registry import registry
from pytest_qbench.tools.spec import Planner


GOOD_PLUGIN = '''
import json, sys
from pathlib import Path

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.spec import Checker, Plan

SCRIPT = """
import json, pathlib
for path in sorted(pathlib.Path('.').glob('*.txt')):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if 'TODO' in line:
            print(json.dumps({'file': path.name, 'line': number, 'col': line.index('TODO') + 1}))
"""


def parse(raw: bytes, cwd: Path) -> list[Diagnostic]:
    return [
        Diagnostic(tool="todo.lint", severity="error", message="a TODO is left",
                   code="TODO1", file=item["file"], line=item["line"], column=item["col"])
        for item in map(json.loads, raw.decode().splitlines())
    ]


def plan(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    return Plan("todo.lint", [sys.executable, "-c", SCRIPT], frozenset({0}), parse)


@hookimpl
def qbench_checkers() -> list[Checker]:
    return [Checker("todo", "lint", "backend", "todo.lint", lambda root: True, plan)]
'''
BROKEN_PLUGIN = "raise RuntimeError('this plugin is broken on purpose')\n"


def install(site: Path, distribution: str, module: str, source: str) -> None:
    """Install ``module`` (its ``source``) as distribution ``distribution`` into ``site``, with
    a ``qbench.tools`` entry point naming the module."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[qbench.tools]\n{module} = {module}\n")


def site_with_plugins(root: Path) -> Path:
    """A directory holding the working plugin ``qbench-todo`` and the broken
    ``qbench-broken``."""
    site = root / "site"
    site.mkdir()
    install(site, "qbench-todo", "qbench_todo", GOOD_PLUGIN)
    install(site, "qbench-broken", "qbench_broken", BROKEN_PLUGIN)
    return site


def environment_with(site: Path) -> dict[str, str]:
    """This environment with ``site`` first on ``PYTHONPATH``."""
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


PYTHON = sys.executable


def replace_planner(monkeypatch: pytest.MonkeyPatch, name: str, planner: Planner[Any]) -> None:
    """The registered checker ``name`` planned by ``planner`` for this test (in this process)."""
    found = registry()
    registered = found.checker(name)
    tool = dataclasses.replace(registered.tool, plan=planner)
    monkeypatch.setitem(found.checkers, tool.name, dataclasses.replace(registered, tool=tool))
