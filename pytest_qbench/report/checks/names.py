"""The checkers' names and defaults, apart from their machinery: ``qbench``'s parser shows them
without loading the checkers."""

from __future__ import annotations


TOOLS = ("ruff", "mypy", "pyright", "build")
"""Every checker, by the name ``--tools`` takes."""
DEFAULT_TOOLS = ("ruff", "mypy")
DEFAULT_TIMEOUT = 900.0
"""Seconds a checker may take before it is stopped and reported as crashed."""
