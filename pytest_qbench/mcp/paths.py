"""Paths an assistant gives, resolved inside the project root or refused.

A path is refused when it is empty, starts with ``-`` or ``@`` (an option, or pytest's
``@argsfile``), holds ``..``, is absolute outside the root, leads outside the root through a
symlink, or does not exist. What comes back is relative to the root, so it is one argument of
pytest's command line that pytest reads as a path and nothing else.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure


MAX_ARGUMENT = 1000
"""Characters of one argument at most."""
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def safe_text(value: str, what: str) -> str:
    """``value`` when it cannot be read as an option: not empty, no control characters, not
    starting with ``-`` or ``@``, not too long.

    Raises:
        ToolFailure: naming ``what`` and the rule broken.
    """
    stripped = value.strip()
    if not stripped:
        raise ToolFailure(f"{what} is empty; leave it out instead")
    if len(stripped) > MAX_ARGUMENT:
        raise ToolFailure(f"{what} is longer than {MAX_ARGUMENT} characters")
    if any(ord(ch) < 32 for ch in stripped):
        raise ToolFailure(f"{what} holds a control character (newline, NUL...); give plain text")
    if stripped.startswith(("-", "@")):
        raise ToolFailure(
            f"{what} {stripped!r} starts with {stripped[0]!r}: options are not accepted here; "
            "give a path, a node id or an expression"
        )
    return stripped


def resolve_test_path(root: Path, value: str, what: str = "test_path") -> str:
    """A file, directory or node id (``path::Class::test[param]``) inside ``root``, as a path
    relative to it (POSIX separators), the node id part kept.

    Raises:
        ToolFailure: the path breaks one of the rules in the module docstring.
    """
    text = safe_text(value, what)
    path_part, sep, node_part = text.partition("::")
    relative = inside_root(root, path_part, what)
    return relative + sep + node_part


def inside_root(root: Path, value: str, what: str) -> str:
    """``value`` (relative to ``root``, or absolute) as an existing path inside ``root``,
    relative to it.

    Raises:
        ToolFailure: ``..``, outside the root, a symlink out of it, or missing.
    """
    given = Path(value)
    if ".." in given.parts:
        raise ToolFailure(f"{what} {value!r} holds '..'; give a path inside the project root")
    candidate = Path(os.path.normpath(given if given.is_absolute() else root / given))
    if not candidate.is_relative_to(root):
        raise ToolFailure(f"{what} {value!r} is outside the project root {root}")
    if not candidate.resolve().is_relative_to(root):
        raise ToolFailure(
            f"{what} {value!r} leads outside the project root {root} through a symlink"
        )
    if not candidate.exists():
        raise ToolFailure(f"{what} {value!r} does not exist in {root}")
    relative = candidate.relative_to(root).as_posix()
    if relative == ".":
        return "."
    # a file really named "-x.py" stays a path for pytest
    return f"./{relative}" if relative.startswith(("-", "@")) else relative


def resolve_source(root: Path, value: str) -> str:
    """A coverage source: a dotted module name as is, else a directory inside ``root``.

    Raises:
        ToolFailure: neither a module name nor a path inside the root.
    """
    text = safe_text(value, "coverage_source")
    if MODULE_NAME.match(text) and not (root / text).exists():
        return text
    return inside_root(root, text, "coverage_source")
