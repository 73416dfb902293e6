"""One byte-code cache for every ``qbench generate`` of a test run.

Each generation's children keep their byte-code under ``QBENCH_PYCACHE``
(``generate/pycache.py``), by default the user's cache directory. The test run sets it to a
directory of its own, made in the process that runs no test under pytest-xdist (its workers,
started after, inherit it) or the one that runs them without it, and removed at its end: the
first generation of the run compiles the standard library, pytest, Hypothesis and qbench there,
every later one reads them (a one-test child: 1.7 s of CPU cold, 0.35 s warm), and nothing is
written to the user's cache. A ``QBENCH_PYCACHE`` set outside the run is kept as it is."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from pytest_qbench.generate.pycache import ENV


_made: list[str] = []
"""The directory this process made, to remove at the run's end."""


def pytest_configure(config: pytest.Config) -> None:
    """Set ``QBENCH_PYCACHE`` to a new directory, unless it is set (a worker's, the user's)."""
    if hasattr(config, "workerinput") or os.environ.get(ENV):
        return
    _made.append(tempfile.mkdtemp(prefix="qbench-tests-pycache-"))
    os.environ[ENV] = _made[-1]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the directory ``pytest_configure`` made."""
    while _made:
        made = _made.pop()
        if os.environ.get(ENV) == made:
            del os.environ[ENV]
        shutil.rmtree(made, ignore_errors=True)
