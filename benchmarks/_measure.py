"""Measure one command: wall time, CPU time (user + sys) and peak RSS, through a small launcher.

Why a launcher: on Linux, a child's ``ru_maxrss`` is at least the resident size of the process
that spawned it, because ``exec`` records the high-water mark of the memory it replaces, and
``subprocess`` starts children with ``vfork``/``fork`` from the caller's memory. A benchmark that
holds a 300 MiB report and spawns ``qbench render`` directly would read about 300 MiB for a
command that used 90. So the command is started by a fresh, stdlib-only Python process (about
10 MiB), which ``wait4``s it and reports the command's own rusage; that floor is far below any
pytest run.

The launcher also pins the command to CPU cores when asked (``cores``): it sets its own affinity
before starting the command, which inherits it, so the command never runs on another core even
for its first instruction.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO


MIB = 1024 * 1024
CHECKOUT = Path(__file__).resolve().parent.parent

# Runs as ``python -c LAUNCHER RESULT_FILE TIMEOUT_S CORES ARGV...`` (CORES: "" for any core, or
# "0" or "0,1"); stdlib only, no imports of ours.
LAUNCHER = """
import json, os, signal, subprocess, sys, time
result_file, timeout, cores, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
if cores:
    os.sched_setaffinity(0, {int(core) for core in cores.split(",")})
pinned = sorted(os.sched_getaffinity(0))
started = time.perf_counter()
proc = subprocess.Popen(argv)


def stop(signum, frame):
    proc.kill()
    proc.wait()
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, stop)
deadline = time.monotonic() + timeout
timed_out = False
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid == proc.pid:
        break
    if time.monotonic() > deadline:
        proc.kill()
        timed_out = True
        pid, status, usage = os.wait4(proc.pid, 0)
        break
    time.sleep(0.01)
wall = time.perf_counter() - started
proc.returncode = os.waitstatus_to_exitcode(status)
with open(result_file, "w") as handle:
    json.dump(
        {
            "exit_code": proc.returncode,
            "wall_s": wall,
            "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime,
            "max_rss_kib": usage.ru_maxrss,
            "timed_out": timed_out,
            "cores": pinned,
        },
        handle,
    )
"""


@dataclass(frozen=True)
class Usage:
    """What one run of a command cost."""

    exit_code: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_mib: float
    timed_out: bool
    cores: tuple[int, ...] = ()
    """The cores the command was allowed to run on."""

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds."""
        return self.user_s + self.sys_s


def measure(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    output: IO[bytes] | int | None = subprocess.DEVNULL,
    timeout: float = 3600.0,
    cores: Sequence[int] = (),
) -> Usage:
    """Run ``argv`` through the launcher; its stdout and stderr both go to ``output``.

    ``cores``: the CPU cores the command may run on (``os.sched_setaffinity``); any when empty.

    Raises:
        RuntimeError: the launcher itself failed (not the command: its exit code is returned).
    """
    fd, result_name = tempfile.mkstemp(prefix="qbench-bench-", suffix=".json")
    os.close(fd)
    result = Path(result_name)
    cores_arg = ",".join(str(core) for core in cores)
    try:
        launcher = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(result), str(timeout), cores_arg, *argv],
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
        )
        try:
            launcher.wait()
        except BaseException:  # Ctrl-C or SIGTERM: the launcher kills the command, then exits
            launcher.terminate()
            launcher.wait()
            raise
        text = result.read_text()
        if launcher.returncode != 0 or not text:
            raise RuntimeError(f"launcher failed ({launcher.returncode}) running {list(argv)}")
        data = json.loads(text)
    finally:
        result.unlink(missing_ok=True)
    return Usage(
        exit_code=int(data["exit_code"]),
        wall_s=float(data["wall_s"]),
        user_s=float(data["user_s"]),
        sys_s=float(data["sys_s"]),
        max_rss_mib=int(data["max_rss_kib"]) * 1024 / MIB,  # Linux reports KiB
        timed_out=bool(data["timed_out"]),
        cores=tuple(int(core) for core in data["cores"]),
    )


def source_revision(checkout: Path = CHECKOUT) -> str:
    """The commit of a checkout, and whether its package has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=checkout,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "pytest_qbench", "templates"],
            cwd=checkout,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return f"unknown revision at {checkout}"
    if not head:
        return f"unknown revision at {checkout}"
    changes = " + uncommitted changes" if dirty else ""
    return f"{head}{changes} at {checkout}"


def imported_package_revision(python: str, env: Mapping[str, str] | None = None) -> str:
    """Which pytest-qbench ``python`` imports (with ``env``), and its commit.

    The benchmarks measure the package that is imported, which ``PYTHONPATH`` can point at a
    frozen checkout while others edit the working tree.
    """
    code = "import pathlib, pytest_qbench; print(pathlib.Path(pytest_qbench.__file__).parent)"
    found = subprocess.run(
        [python, "-c", code],
        cwd=tempfile.gettempdir(),  # not a checkout: ``-c`` puts the working directory first
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not found:
        return "pytest_qbench not importable"
    return source_revision(Path(found).parent)


def exit_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit``, so that a running command is stopped with the script."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def add_checkout_option(parser: argparse.ArgumentParser) -> None:
    """``--checkout NAME=DIR`` (repeatable): the checkouts a script compares."""
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="A checkout to time (repeatable). Default: this one, as 'this'",
    )


def checkouts_of(specs: Sequence[str]) -> list[tuple[str, Path]]:
    """``--checkout`` values as (name, resolved directory); this checkout when none is given."""
    pairs = [spec.split("=", 1) for spec in specs] or [["this", str(CHECKOUT)]]
    return [(name, Path(directory).resolve()) for name, directory in pairs]


def compile_package(checkout: Path) -> None:
    """Byte-compile ``checkout``'s package, as installing it does (with
    ``PYTHONDONTWRITEBYTECODE`` set, a checkout never imported before would otherwise compile
    its modules on every measured run)."""
    argv = [sys.executable, "-m", "compileall", "-q", str(checkout / "pytest_qbench")]
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
