"""``qbench`` run in the test's own process, its output captured: for tests whose subject is
what a command reads or writes (the index, a report), not its process. A child Python a
command costs about 0.5 s of CPU (the interpreter, pytest and qbench imported again); the
tests of a command's process (exit status of the console script, signals, crash safety,
import isolation) keep their subprocess."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_qbench.cli import main


@dataclass
class Done:
    """A ``qbench`` command's exit status and output."""

    ret: int
    out: str
    err: str

    def err_lines(self) -> pytest.LineMatcher:
        """stderr's lines, to match as ``RunResult.stderr`` does."""
        return pytest.LineMatcher(self.err.splitlines())


def qbench_here(
    *args: str | os.PathLike[str], cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Done:
    """``qbench ARGS`` in this process, in ``cwd`` (default: its working directory), with
    ``env`` as its whole environment while it runs (default: this process's; the children a
    command starts inherit it): status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    redirected = contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)
    with working_directory(cwd), environment(env), redirected[0], redirected[1]:
        ret = main([os.fspath(arg) for arg in args])
    return Done(ret, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """``os.environ`` made ``env`` (if given) until the block ends, then as it was."""
    if env is None:
        yield
        return
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def working_directory(path: Path | None) -> Iterator[None]:
    """This process in ``path`` (if given) until the block ends (``contextlib.chdir`` from
    Python 3.11)."""
    if path is None:
        yield
        return
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
