"""Run the checkers as child processes (argument lists, no shell) and store a ``qbench check``
run (issue 13): ``<qbench-dir>/runs/<run id>/check.json`` and each checker's raw output."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.report.checks import build
from pytest_qbench.report.checks import mypy
from pytest_qbench.report.checks import pyright
from pytest_qbench.report.checks import ruff
from pytest_qbench.report.checks.stored import finish_check_run
from pytest_qbench.report.checks.stored import new_check_dir
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import RunMeta


TOOLS = ("ruff", "mypy", "pyright", "build")
"""Every checker, by the name ``--tools`` takes."""
DEFAULT_TOOLS = ("ruff", "mypy")
DEFAULT_TIMEOUT = 900.0
"""Seconds a checker may take before it is stopped and reported as crashed."""

POLL_SECONDS = 0.1
"""How often a running checker is looked at (its end, the deadline, a stop)."""

Parser = Callable[[bytes, Path], list[Diagnostic]]


@dataclass(frozen=True)
class Plan:
    """How to run one checker: its tool name, command, documented exit statuses and parser."""

    tool: str
    command: list[str]
    ok_codes: frozenset[int]
    parse: Parser
    merge_stderr: bool = False
    """Whether stderr goes into the same log as stdout (the parser reads both)."""


class NotInstalled(Exception):
    """A checker that cannot run here; the message is the note (``install X``)."""


def find_executable(name: str) -> str | None:
    """``name`` beside this Python (its virtual environment) first, else on ``PATH``."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)


def plan_ruff(cwd: Path, paths: list[str], scratch: Path) -> Plan:
    """ruff, as installed beside this Python or on ``PATH``."""
    executable = find_executable("ruff")
    if executable is None:
        raise NotInstalled("install ruff")
    return Plan(ruff.TOOL, ruff.ruff_command(executable, paths), ruff.OK_CODES, ruff.parse_ruff)


def plan_mypy(cwd: Path, paths: list[str], scratch: Path) -> Plan:
    """mypy with JSON output where its version has it, else its text format."""
    if importlib.util.find_spec("mypy") is not None:
        base = [sys.executable, "-m", "mypy"]
    else:
        found = find_executable("mypy")
        if found is None:
            raise NotInstalled("install mypy")
        base = [found]
    version = subprocess.run(
        [*base, "--version"], cwd=cwd, capture_output=True, text=True, check=False
    ).stdout
    json_output = mypy.supports_json(version)
    parse = mypy.parse_mypy_json if json_output else mypy.parse_mypy_text
    return Plan(mypy.TOOL, mypy.mypy_command(base, paths, json_output), mypy.OK_CODES, parse)


def plan_pyright(cwd: Path, paths: list[str], scratch: Path) -> Plan:
    """pyright, when installed."""
    executable = find_executable("pyright")
    if executable is None:
        raise NotInstalled("install pyright")
    command = pyright.pyright_command(executable, paths)
    return Plan(pyright.TOOL, command, pyright.OK_CODES, pyright.parse_pyright)


def plan_build(cwd: Path, paths: list[str], scratch: Path) -> Plan:
    """``python -m build`` for a project with a pyproject.toml and ``build`` importable, else
    byte-compiling the sources."""
    if (cwd / "pyproject.toml").is_file() and importlib.util.find_spec("build") is not None:
        command = build.build_command(sys.executable, str(scratch))
        return Plan(
            build.BUILD_TOOL, command, build.OK_CODES, build.parse_build, build.MERGE_STDERR
        )
    command = build.compile_command(sys.executable, cwd, paths)
    return Plan(build.COMPILE_TOOL, command, build.OK_CODES, build.parse_compile)


PLANNERS: dict[str, Callable[[Path, list[str], Path], Plan]] = {
    "ruff": plan_ruff,
    "mypy": plan_mypy,
    "pyright": plan_pyright,
    "build": plan_build,
}
TOOL_NAMES = {"ruff": ruff.TOOL, "mypy": mypy.TOOL, "pyright": pyright.TOOL, "build": "build"}


def parse_tools(given: str) -> list[str]:
    """``ruff,mypy`` as a list of checker names, in order, without repeats.

    Raises:
        QBenchError: an unknown name.
    """
    names = list(dict.fromkeys(name.strip() for name in given.split(",") if name.strip()))
    unknown = [name for name in names if name not in PLANNERS]
    if unknown or not names:
        raise QBenchError(
            f"--tools has unknown checker(s) {', '.join(unknown) or '(none given)'}, given: "
            f"{given!r}; use a comma list of {', '.join(TOOLS)}",
            slug="check-options",
        )
    return names


def run_checks(
    names: list[str],
    cwd: Path,
    paths: list[str],
    qbench_dir: Path,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    total_timeout: float | None = None,
    stop: threading.Event | None = None,
    tool: str = "check",
    on_start: Callable[[Path], None] | None = None,
) -> tuple[CheckReport, Path]:
    """Run each checker in ``cwd`` on ``paths`` and store the run; return it and its directory.

    ``timeout`` bounds each checker, ``total_timeout`` all of them together (a checker started
    late gets what is left); ``stop``, once set, stops the checker running and the ones after
    it; ``tool`` names the run (``qbench.<tool>``); ``on_start`` is told the run directory.
    """
    started = now()
    directory = new_check_dir(qbench_dir, started)
    if on_start is not None:
        on_start(directory)
    deadline = None if total_timeout is None else time.monotonic() + total_timeout
    checks: list[CheckRun] = []
    with tempfile.TemporaryDirectory(prefix="qbench-check-") as scratch:
        for name in names:
            left = timeout if deadline is None else min(timeout, deadline - time.monotonic())
            checks.append(run_one(name, cwd, paths, directory, Path(scratch), max(left, 0.0), stop))
    command = ["qbench", tool, "--tools", ",".join(names), *paths]
    return finish_check_run(directory, started, cwd, command, paths, checks), directory


def run_one(
    name: str,
    cwd: Path,
    paths: list[str],
    directory: Path,
    scratch: Path,
    timeout: float,
    stop: threading.Event | None = None,
) -> CheckRun:
    """One checker: not run, crashed, failed or clean; its raw output stored in ``directory``."""
    started = now()
    try:
        plan = PLANNERS[name](cwd, paths or ["."], scratch)
    except NotInstalled as exc:
        meta = RunMeta(
            run_id=directory.name,
            tool=TOOL_NAMES[name],
            started_at=started,
            completed_at=now(),
            cwd=str(cwd),
            command=[],
        )
        return CheckRun(run=meta, status="not_run", note=f"not run: {exc}")
    meta = RunMeta(
        run_id=directory.name,
        tool=plan.tool,
        started_at=started,
        cwd=str(cwd),
        command=plan.command,
    )
    try:
        done = run_in_group(plan, cwd, directory, timeout, stop)
    except subprocess.TimeoutExpired:
        log, err = stored_names(directory, plan.tool)
        meta = meta.model_copy(update={"completed_at": now()})
        if stop is not None and stop.is_set():
            why = "was cancelled and stopped"
        else:
            why = f"did not finish in {round(timeout, 1):g} s and was stopped"
        note = f"{plan.tool} {why}; raw output in {log}"
        return crashed(meta, note, log, err)
    except OSError as exc:
        meta = meta.model_copy(update={"completed_at": now()})
        return crashed(meta, f"{plan.tool} could not start: {exc}", None, None)
    log, err = stored_names(directory, plan.tool)
    meta = meta.model_copy(update={"completed_at": now(), "exit_code": done.returncode})
    return judge(plan, meta, done.stdout, done.stderr or b"", cwd, log, err)


def run_in_group(
    plan: Plan, cwd: Path, directory: Path, timeout: float, stop: threading.Event | None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``plan``'s command in a process group of its own, its output written straight to
    ``<tool>.log`` and ``<tool>.stderr.log`` in ``directory``; at the timeout, or when ``stop``
    is set, the whole group is killed (whatever the checker started dies with it).

    Raises:
        subprocess.TimeoutExpired: it was stopped.
        OSError: it could not start.
    """
    out_path = directory / f"{plan.tool}.log"
    err_path = directory / f"{plan.tool}.stderr.log"
    deadline = time.monotonic() + timeout
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            plan.command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if plan.merge_stderr else err,
            start_new_session=sys.platform != "win32",
        )
        try:
            while proc.poll() is None:
                if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                    raise subprocess.TimeoutExpired(plan.command, timeout)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(POLL_SECONDS)
        finally:
            kill_group(proc)
    code = proc.returncode
    stdout, stderr = out_path.read_bytes(), err_path.read_bytes()
    if not stderr:
        err_path.unlink()
    return subprocess.CompletedProcess(plan.command, code, stdout, stderr)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the checker's process group (POSIX; the process alone elsewhere) and reap it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        if proc.poll() is None:
            proc.kill()
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def stored_names(directory: Path, tool: str) -> tuple[str | None, str | None]:
    """The file names of the checker's stored stdout and (when not empty) stderr."""
    err = f"{tool}.stderr.log"
    if (directory / err).is_file() and not (directory / err).stat().st_size:
        (directory / err).unlink()
    return f"{tool}.log", err if (directory / err).is_file() else None


def judge(
    plan: Plan,
    meta: RunMeta,
    stdout: bytes,
    stderr: bytes,
    cwd: Path,
    log: str | None,
    err: str | None,
) -> CheckRun:
    """The checker's verdict from its exit status and parsed output."""
    code = meta.exit_code
    if code not in plan.ok_codes:
        return crashed(meta, crash_note(plan.tool, code, stderr or stdout, err or log), log, err)
    try:
        found = plan.parse(stdout, cwd)
    except CheckOutputError as exc:
        note = (
            f"{plan.tool} crashed: exit code {code}, unparsable output ({exc}); raw output in {log}"
        )
        return crashed(meta, note, log, err)
    if code != 0 and not found:
        return crashed(meta, crash_note(plan.tool, code, stderr or stdout, err or log), log, err)
    failed = any(item.severity == "error" for item in found) or code != 0
    return CheckRun(
        run=meta,
        status="failed" if failed else "clean",
        log=log,
        stderr_log=err,
        diagnostics=found,
    )


def crash_note(tool: str, code: int | None, output: bytes, where: str | None) -> str:
    """``mypy.typecheck crashed: exit code 2 (last line); raw output in mypy.typecheck.log``."""
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    last = f" ({lines[-1].strip()[:200]})" if lines else ""
    stored = f"; raw output in {where}" if where else ""
    return f"{tool} crashed: exit code {code}{last}{stored}"


def crashed(meta: RunMeta, note: str, log: str | None, err: str | None) -> CheckRun:
    """A checker that did not end as documented: one error diagnostic saying so."""
    diagnostic = Diagnostic(tool=meta.tool, severity="error", message=note, code="checker-crashed")
    return CheckRun(
        run=meta, status="crashed", note=note, log=log, stderr_log=err, diagnostics=[diagnostic]
    )
