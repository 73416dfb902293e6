"""The checkers qbench runs, by name, their defaults, and reading a comma list of them: one rule
for ``--qbench-check``, its ini value and ``qbench check --tools``. Standard library only, apart
from the checkers' machinery: the plugin imports it whenever pytest starts, and ``qbench``'s
parser shows the names without loading the checkers."""

from __future__ import annotations

from collections.abc import Sequence


TOOLS = ("ruff", "mypy", "pyright", "build")
"""Every checker, by the name ``--tools`` takes, in the order they are listed."""
DEFAULT_TOOLS = ("ruff", "mypy")
DEFAULT_TIMEOUT = 900.0
"""Seconds a checker may take before it is stopped and reported as crashed."""


def parse_checker_names(value: str, known: Sequence[str] = TOOLS) -> tuple[str, ...]:
    """``ruff,mypy`` (or one a line): checker names, in order, without repeats, each one of
    ``known`` (the registered checkers' names and aliases, or the built-in Python ones).

    Raises:
        ValueError: an unknown name, or none; its message follows the option's name.
    """
    names = tuple(
        dict.fromkeys(n.strip() for n in value.replace("\n", ",").split(",") if n.strip())
    )
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise ValueError(
            f"has unknown checker(s) {', '.join(unknown) or '(none given)'}, given: {value!r}; "
            f"use a comma list of {', '.join(known)}, e.g. ruff,mypy"
        )
    return names


__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_TOOLS", "TOOLS", "parse_checker_names"]
