"""The installed pytest plugins' assertion-rewritten byte-code, written once at the start of a
test run, for the child pytest runs of the tests to read.

pytest rewrites the asserts of every module of each installed distribution with a ``pytest11``
entry point (Hypothesis, anyio, pytest-xdist, pytest-cov, qbench's wheel...) as a run imports
it, and keeps the result in the module's ``__pycache__`` unless byte-code is not written: under
tox's ``PYTHONDONTWRITEBYTECODE`` every child pytest that loads the installed plugins
(``pytester.runpytest_subprocess``, the README's commands, a generation with the user's
plugins) rewrote them again, Hypothesis's terminal summary alone importing 73 of Hypothesis's
modules: about 2.2 s of CPU a one-test child here, 0.65 s with the rewritten byte-code cached.
pytest reads a cached rewritten module whether or not it may write one, so one child Python
allowed to write byte-code imports those modules under pytest once, before the first test (in
the run's controller, not in each pytest-xdist worker): every child after reads what it wrote.
Only the installed distributions' ``__pycache__`` are written, the files pytest itself would
write there without ``PYTHONDONTWRITEBYTECODE``; nothing of a test's project, and no child's
verdict changes (the rewritten code is the same, made once). A failure to write costs time
only."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest


WARM = r"""
import contextlib
import importlib
import importlib.metadata
import sys
import tempfile

import pytest


def rewritten():
    # The modules of the distributions pytest marks for rewriting (those with a pytest11 entry
    # point): every .py file the distribution installed.
    for dist in importlib.metadata.distributions():
        if not any(entry.group == "pytest11" for entry in dist.entry_points):
            continue
        for file in dist.files or ():
            parts = list(file.parts)
            if file.suffix != ".py" or not all(p.isidentifier() for p in parts[:-1]):
                continue
            parts[-1] = file.stem
            if parts[-1] == "__init__":
                parts.pop()
            if parts and "__main__" not in parts and all(p.isidentifier() for p in parts):
                yield ".".join(parts)


class Warm:
    def pytest_configure(self, config):
        # Imported after pytest marked them, so through its rewriting hook.
        for name in sorted(set(rewritten())):
            with contextlib.suppress(Exception, SystemExit):
                importlib.import_module(name)


with tempfile.TemporaryDirectory() as empty:
    args = ["-q", "--collect-only", "-p", "no:cacheprovider", "--rootdir", empty, empty]
    sys.exit(pytest.main(args, plugins=[Warm()]))
"""
"""A child Python's program: a pytest run of nothing, with the installed plugins loaded, whose
configuration imports every module of theirs (an optional dependency's module that cannot be
imported is skipped)."""


def pytest_configure(config: pytest.Config) -> None:
    """Write the cache once a run: in the process that runs no test under pytest-xdist (its
    workers start after), in the one that runs them without it; only when this process does
    not write byte-code (without ``PYTHONDONTWRITEBYTECODE`` each child pytest writes its own)."""
    if hasattr(config, "workerinput") or not sys.dont_write_bytecode:
        return
    drop = {"PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS"}
    env = {key: value for key, value in os.environ.items() if key not in drop}
    with tempfile.TemporaryDirectory() as cwd:
        try:
            subprocess.run(
                [sys.executable, "-c", WARM],
                cwd=cwd,
                env=env,
                capture_output=True,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return
