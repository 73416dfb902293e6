"""Run one child process (argument list, no shell) in its own process group, with a timeout
that kills the whole group: the target's code runs only in such children."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.report.checks.runner import kill_group


OUTPUT_TAIL = 4000
"""Characters of a child's output kept for messages."""


@dataclass(frozen=True)
class Finished:
    """How a child ended."""

    returncode: int | None
    """``None`` when it was killed on timeout."""
    output: str
    """Its stdout and stderr, interleaved."""

    @property
    def timed_out(self) -> bool:
        """Whether it was killed on timeout."""
        return self.returncode is None

    def tail(self, chars: int = OUTPUT_TAIL) -> str:
        """The end of its output."""
        return self.output[-chars:]


def child_env(import_root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this one, with ``import_root`` first on ``PYTHONPATH``.

    Set ``HYPOTHESIS_STORAGE_DIRECTORY`` in ``extra`` to share Hypothesis's caches (its Unicode
    tables take seconds to build) between children that run in different directories."""
    env = dict(os.environ)
    paths = [str(import_root), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra or {})
    return env


def run_child(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float, stdin: str = ""
) -> Finished:
    """Run ``command``; kill its process group after ``timeout`` seconds.

    The output goes to a temporary file, not a pipe: a process the child leaves behind in a
    session of its own (a daemon a test started) may hold it open, and waiting for the end of
    a pipe would wait for that process; the wait is for the child itself."""
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=sys.platform != "win32",
        )
        try:
            process.communicate(stdin.encode(), timeout=timeout)
            code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            kill_group(process)
            code = None
        output.seek(0)
        return Finished(code, output.read().decode(errors="replace"))


def python() -> str:
    """This interpreter: children run with the same packages as qbench."""
    return sys.executable
