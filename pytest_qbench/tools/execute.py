"""One tool run as a supervised child process (``core/supervise.py``): an argument list (no
shell), a session of its own, a timeout, its whole tree killed at its end (what it left behind
too); its stdout and stderr captured together (bounded: head and tail) into ``<name>.log``."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core import supervise
from pytest_qbench.core.atomic import write_text_atomic


@dataclass(frozen=True)
class Finished:
    """How a supervised run ended."""

    exit_code: int | None
    """Its exit status (negative: killed by that signal); ``None`` when it did not end by
    itself or never started."""
    log: Path
    """Its output (stdout and stderr), bounded."""
    problem: str | None = None
    """Why it has no exit status: could not start, timed out, cancelled."""
    started: float = 0.0
    """``time.time()`` when it started."""
    ended: float = 0.0
    """``time.time()`` when it ended."""


def run_supervised(
    command: list[str],
    cwd: Path,
    log_dir: Path,
    name: str,
    timeout: float,
    stop: threading.Event | None = None,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run ``command`` in ``cwd`` up to ``timeout`` seconds (or until ``stop`` is set), its
    output into ``log_dir/<name>.log``, ``env`` added to this process's environment; then kill
    its whole process tree."""
    log = log_dir / f"{name}.log"
    started = time.time()
    full_env = {**os.environ, **env} if env else None
    try:
        child = supervise.start(
            command, cwd=cwd, env=full_env, capture=True, timeout=timeout, name=name
        )
    except OSError as exc:
        return Finished(None, log, f"could not start {command[0]}: {exc}", started, time.time())
    try:
        ended = child.wait(cancel=stop)
    except BaseException:
        child.stop()
        raise
    ending = child.finish() if ended else child.stop()
    write_text_atomic(log, ending.output)
    if not ended:
        cancelled = stop is not None and stop.is_set() and not ending.timed_out
        why = "was cancelled" if cancelled else f"did not finish in {timeout:g} s"
        return Finished(None, log, f"{name} {why} and was stopped", started, time.time())
    return Finished(ending.exit_status, log, None, started, time.time())
