"""Paths an assistant gives, resolved inside the project root or refused.

A path is refused when it is empty, starts with ``-`` or ``@`` (an option, or pytest's
``@argsfile``), holds ``..``, is absolute outside the root, leads outside the root through a
symlink, does not exist, or is neither a regular file nor a directory (a FIFO, a socket, a
device: reading one blocks forever or never ends). What comes back is relative to the root, so
it is one argument of pytest's command line that pytest reads as a path and nothing else.
A file the server reads itself is opened with `open_regular`, which checks the same again on
the opened file (it may have been swapped since).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

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


def listed(values: list[str] | str | None, what: str) -> list[str]:
    """``values`` as a list: one string a list of one, ``None`` (left out) an empty one.

    Raises:
        ToolFailure: an empty list, which would read as the argument left out.
    """
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    if not values:
        raise ToolFailure(f"{what} is an empty list; leave it out instead, or give one or more")
    return list(values)


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
        ToolFailure: ``..``, outside the root, a symlink out of it, missing, or neither a
            regular file nor a directory.
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
    kind = stat.S_IFMT(candidate.stat().st_mode)
    if kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise not_regular(what, value, kind)
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


def inside_root_file(root: Path, path: Path, what: str) -> Path:
    """``path`` (found under ``root``, say by a glob) when it resolves inside ``root`` to a
    regular file.

    Raises:
        ToolFailure: it leads outside the root, or is not a regular file.
    """
    resolved = path.resolve()
    if not resolved.is_relative_to(root):
        raise ToolFailure(f"{what} {path.name!r} leads outside the project root {root}")
    kind = stat.S_IFMT(resolved.stat().st_mode)
    if kind != stat.S_IFREG:
        raise not_regular(what, path.relative_to(root).as_posix(), kind, directory=False)
    return path


def open_regular(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading when it is a regular file: opened without blocking (a FIFO
    opens at once) and checked on the open descriptor, so a file swapped for a FIFO or a device
    after an earlier check is refused too.

    Raises:
        ToolFailure: not a regular file.
        OSError: it cannot be opened.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        kind = stat.S_IFMT(os.fstat(fd).st_mode)
        if kind != stat.S_IFREG:
            raise not_regular(what, path.name, kind, directory=False)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def not_regular(what: str, value: str, kind: int, directory: bool = True) -> ToolFailure:
    """The refusal of a path that is not a regular file (nor a directory, where ``directory``
    allows one)."""
    found = KINDS.get(kind, "not a file")
    allowed = "a regular file or a directory" if directory else "a regular file"
    return ToolFailure(f"{what} {value!r} is {found}, not {allowed}; give {allowed} instead")
