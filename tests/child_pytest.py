"""A child ``python -m pytest -p qbench`` in a process of its own, as the tests that need a real
process start it (concurrent runs, exit statuses, a suite run once for a module's tests): one
environment and one command for all of them.

The child's environment is the outer one without what would change what the child does: the
outer run's pytest variables (``PYTEST_ADDOPTS``, xdist's ``PYTEST_XDIST_WORKER``...), qbench's
own (a history database ``QBENCH_DB``...), a CI provider's (under one every run would record the
same commit), the terminal's width and colour; and plugins are not autoloaded, so the child loads
what its command names (``-p qbench``), as the ``pytester`` fixture of tests/conftest.py does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


CI_MARKERS = ("GITHUB_ACTIONS", "GITLAB_CI", "TF_BUILD", "CIRCLECI", "BUILDKITE", "JENKINS_URL")
"""The variables by which qbench recognises a CI provider: under one, every run of the outer
suite would record the same commit, and the history tests would see flaky tests everywhere."""

OUTER_PREFIXES = ("PYTEST_", "QBENCH_", "GITHUB_")
OUTER_NAMES = frozenset({"CI", "COLUMNS", "NO_COLOR", "FORCE_COLOR", *CI_MARKERS})


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The outer environment without the outer run's pytest, qbench, CI and terminal variables,
    with plugin autoloading off, then ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(OUTER_PREFIXES) and name not in OUTER_NAMES
    }
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra or {})
    return env


def pytest_command(*args: str, run_id: str | None = None) -> list[str]:
    """``python -m pytest -p qbench [--qbench-run-id=RUN_ID] ARGS`` with this Python."""
    named = [f"--qbench-run-id={run_id}"] if run_id is not None else []
    return [sys.executable, "-m", "pytest", "-p", "qbench", *named, *args]


def run_child(
    cwd: Path,
    *args: str,
    run_id: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``pytest_command(ARGS, run_id=RUN_ID)`` in ``cwd`` with ``child_env(env)`` to its
    end (``timeout`` is a safety net); its exit status and output."""
    return subprocess.run(
        pytest_command(*args, run_id=run_id),
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_child(
    cwd: Path,
    *args: str,
    run_id: str | None = None,
    env: Mapping[str, str] | None = None,
    **popen: Any,
) -> subprocess.Popen[Any]:
    """Start ``pytest_command(ARGS, run_id=RUN_ID)`` in ``cwd`` with ``child_env(env)``;
    ``popen`` goes to ``subprocess.Popen`` (its output's pipes)."""
    return subprocess.Popen(
        pytest_command(*args, run_id=run_id), cwd=cwd, env=child_env(env), **popen
    )
