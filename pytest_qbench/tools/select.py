"""Which checkers a target and kinds of check mean (``qbench check --target``, the MCP build
workflow's ``target`` and ``check_type``)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Literal

from pytest_qbench.tools.registry import Registry
from pytest_qbench.tools.spec import Kind
from pytest_qbench.tools.spec import Target


TargetChoice = Literal["frontend", "backend", "both"]
TARGET_CHOICES: tuple[TargetChoice, ...] = ("frontend", "backend", "both")


def default_target(frontend: Path | None) -> TargetChoice:
    """``both`` when the project has a front end, else ``backend``."""
    return "both" if frontend is not None else "backend"


def targets_of(choice: TargetChoice) -> tuple[Target, ...]:
    """``both`` as both targets."""
    return ("backend", "frontend") if choice == "both" else (choice,)


def checkers_for(
    found: Registry,
    kinds: Collection[Kind],
    targets: Collection[Target],
    root: Path,
    frontend: Path | None,
) -> list[str]:
    """The registered checkers of ``kinds`` for ``targets`` that apply to the project (a
    front-end one to ``frontend``), in the registry's order; an optional one (pyright) only
    where it is installed."""
    names = []
    for name, registered in found.checkers.items():
        checker = registered.tool
        if checker.kind not in kinds or checker.target not in targets:
            continue
        where = frontend if checker.target == "frontend" else root
        if where is None or not checker.applies(where):
            continue
        if checker.optional and checker.installed is not None and not checker.installed(where):
            continue
        names.append(name)
    return names
