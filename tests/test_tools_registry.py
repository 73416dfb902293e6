"""The runners' and checkers' plugin interface (issue 22): the built-ins are plugins of it, an
installed distribution adds a checker through the ``qbench.tools`` entry-point group, and a
broken one is reported by its distribution's name without stopping the others."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tools_plugins import environment_with
from tools_plugins import site_with_plugins

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.tools.registry import load_registry


LIST = """
import json
from pytest_qbench.tools.registry import load_registry
found = load_registry()
print(json.dumps({
    "checkers": {n: [r.tool.kind, r.tool.target, r.distribution] for n, r in found.checkers.items()},
    "runners": {n: r.distribution for n, r in found.runners.items()},
    "errors": [e.line() for e in found.errors],
}))
"""


def test_builtins_are_plugins_of_the_interface() -> None:
    found = load_registry(entry_points=False)
    assert {n: (r.tool.kind, r.tool.target) for n, r in found.checkers.items()} == {
        "ruff": ("lint", "backend"),
        "mypy": ("typecheck", "backend"),
        "pyright": ("typecheck", "backend"),
        "python.build": ("build", "backend"),
        "tsc": ("typecheck", "frontend"),
        "eslint": ("lint", "frontend"),
        "oxlint": ("lint", "frontend"),
        "biome": ("lint", "frontend"),
        "prettier": ("lint", "frontend"),
        "js.build": ("build", "frontend"),
    }
    assert list(found.runners) == ["pytest", "vitest", "jest"]
    assert found.checker("build").tool.name == "python.build"  # its older name
    with pytest.raises(QBenchError, match=r"unknown checker 'nope'; registered checkers: ruff, "):
        found.checker("nope")


def test_installed_distribution_adds_a_checker_and_a_broken_one_is_named(tmp_path: Path) -> None:
    site = site_with_plugins(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", LIST],
        env=environment_with(site),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    answer = json.loads(done.stdout)
    assert answer["checkers"]["todo"] == ["lint", "backend", "qbench-todo"]
    assert answer["checkers"]["ruff"] == ["lint", "backend", "pytest-qbench"]
    assert answer["runners"]["pytest"] == "pytest-qbench"
    [error] = [line for line in answer["errors"] if "qbench_broken" in line]
    assert "of distribution qbench-broken is broken: RuntimeError: this plugin is broken" in error


def qbench(args: list[str], cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """The real ``qbench`` console script, with the plugins of ``site`` installed."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "qbench"), *args],
        cwd=cwd,
        env=environment_with(site),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_installed_checker_is_listed_and_runs(tmp_path: Path) -> None:
    """A third party's checker, installed as a distribution, appears in ``qbench check
    --list`` with its distribution and runs by ``--checker``; the broken plugin beside it is
    named on stderr and stops neither."""
    site = site_with_plugins(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("fine\nstill TODO here\n")
    listed = qbench(["check", "--list"], project, site)
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert rows[0] == ["name", "kind", "target", "distribution", "applies", "installed"]
    assert ["todo", "lint", "backend", "qbench-todo", "yes", "yes"] in rows
    assert "distribution qbench-broken is broken" in listed.stderr
    assert listed.returncode == 1  # a broken plugin is an error, reported

    done = qbench(["check", "--checker", "todo", "--json"], project, site)
    assert done.returncode == 1, done.stderr
    [check] = json.loads(done.stdout)["checks"]
    assert check["status"] == "failed"
    assert [(d["file"], d["line"], d["column"], d["code"]) for d in check["diagnostics"]] == [
        ("notes.txt", 2, 7, "TODO1")
    ]
