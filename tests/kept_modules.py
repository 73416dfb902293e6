"""Packages with a compiled module stay imported after ``pytester`` restores ``sys.modules``.

pytester's teardown (and each in-process ``runpytest``'s end) puts ``sys.modules`` back as it
was: every module imported since is dropped, to be imported anew by whoever needs it next. A
compiled module is never unloaded, though: imported again it is the same one, still holding the
classes of its package's Python modules as they were first imported, while those modules,
imported anew, make new classes. After a test that used ``pytester`` had been the first in its
process to build an MCP server (the SDK imports ``cryptography``), ``cryptography``'s Rust part
checked ``isinstance`` against the first ``hashes.HashAlgorithm``, and the next test in the same
process to build a server failed with "TypeError: Expected instance of hashes.HashAlgorithm"
(CI, under pytest-xdist: whichever test came after on that worker). So each module of such a
package that a test's teardown dropped is put back (tests/test_kept_modules.py)."""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Generator
from typing import Any

import pytest


EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown() -> Generator[None, None, None]:
    """After the test's fixtures are torn down (``pytester``'s among them), the packages with
    a compiled module that the test imported first are imported still."""
    imported = dict(sys.modules)
    try:
        return (yield)
    finally:
        keep_compiled_packages(imported)


def keep_compiled_packages(imported: dict[str, Any]) -> None:
    """Put back into ``sys.modules`` every module of ``imported`` that is gone and whose
    top-level package has a compiled module gone with it."""
    gone = [name for name in imported if name not in sys.modules]
    compiled = {
        name.partition(".")[0]
        for name in gone
        if str(getattr(imported[name], "__file__", None) or "").endswith(EXTENSION_SUFFIXES)
    }
    for name in gone:
        if name.partition(".")[0] in compiled:
            sys.modules[name] = imported[name]
