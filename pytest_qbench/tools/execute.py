"""One tool run as a supervised child process: an argument list (no shell), its own process
group, its output (stdout and stderr together) into a capped log, a timeout, and its whole tree
killed at the end (what it left behind too). The supervision of the static checkers
(``report/checks/runner.py``), reused."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.proctree import ProcessTree
from pytest_qbench.report.checks import runner
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import RunMeta


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
) -> Finished:
    """Run ``command`` in ``cwd`` up to ``timeout`` seconds (or until ``stop`` is set), its
    output into ``log_dir/<name>.log``; then kill its whole process tree."""
    plan = runner.Plan(name, command, frozenset(), lambda raw, cwd: [], merge_stderr=True)
    log = log_dir / f"{name}.log"
    started = time.time()
    try:
        process, logs = runner.spawn(plan, cwd, log_dir)
    except OSError as exc:
        return Finished(None, log, f"could not start {command[0]}: {exc}", started, time.time())
    tree = ProcessTree(process.pid) if sys.platform == "linux" else None
    for one in logs:
        one.watch = tree.snapshot if tree is not None else None
        one.start()
    meta = RunMeta(run_id=name, tool=name, started_at=now(), cwd=str(cwd), command=command)
    handle = runner.Started(plan, meta, process, logs=logs, tree=tree)
    ended = runner.wait_for(process, timeout, stop)
    runner.stop_tree(handle)
    if not ended:
        why = (
            "was cancelled"
            if stop is not None and stop.is_set()
            else f"did not finish in {timeout:g} s"
        )
        return Finished(None, log, f"{name} {why} and was stopped", started, time.time())
    return Finished(process.returncode, log, None, started, time.time())
