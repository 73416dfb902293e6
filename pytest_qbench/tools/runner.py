"""Run the checkers as child processes (argument lists, no shell) and store a ``qbench check``
run (issue 13): ``<qbench-dir>/runs/<run id>/check.json`` and each checker's raw output."""

from __future__ import annotations

import contextlib
import importlib.metadata
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
from pytest_qbench.core.proctree import ProcessTree
from pytest_qbench.report.checks.stored import finish_check_run
from pytest_qbench.report.checks.stored import new_check_dir
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import RunMeta
from pytest_qbench.tools import capture
from pytest_qbench.tools.names import DEFAULT_TIMEOUT
from pytest_qbench.tools.names import parse_checker_names
from pytest_qbench.tools.python import build
from pytest_qbench.tools.python import mypy
from pytest_qbench.tools.python import mypy_config
from pytest_qbench.tools.python import pyright
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan


POLL_SECONDS = 0.1
"""How often a wait looks whether it was asked to stop."""


def find_executable(name: str) -> str | None:
    """``name`` beside this Python (its virtual environment) first, else on ``PATH``."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)


def plan_ruff(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """ruff, as installed beside this Python or on ``PATH``; without ``paths``, on what its
    configuration includes."""
    executable = find_executable("ruff")
    if executable is None:
        raise NotInstalled("install ruff")
    return Plan(ruff.TOOL, ruff.ruff_command(executable, paths), ruff.OK_CODES, ruff.parse_ruff)


def plan_mypy(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """mypy with JSON output where its version has it, else its text format; without
    ``paths``, on what the project's configuration names (its ``files``...), else on ``.``."""
    if importlib.util.find_spec("mypy") is not None:
        base = [sys.executable, "-m", "mypy"]
        try:  # read from its metadata: no child process before the check starts
            version = f"mypy {importlib.metadata.version('mypy')}"
        except importlib.metadata.PackageNotFoundError:
            version = mypy_version(base, cwd)
    else:
        found = find_executable("mypy")
        if found is None:
            raise NotInstalled("install mypy")
        base = [found]
        version = mypy_version(base, cwd)
    json_output = mypy.supports_json(version)
    parse = mypy.parse_mypy_json if json_output else mypy.parse_mypy_text
    targets = paths or ([] if mypy_config.names_targets(cwd) else ["."])
    return Plan(mypy.TOOL, mypy.mypy_command(base, targets, json_output), mypy.OK_CODES, parse)


def mypy_version(base: list[str], cwd: Path) -> str:
    """What ``mypy --version`` prints."""
    done = subprocess.run(
        [*base, "--version"], cwd=cwd, capture_output=True, text=True, check=False
    )
    return done.stdout


def plan_pyright(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """pyright, when installed; without ``paths``, on what its configuration includes."""
    executable = find_executable("pyright")
    if executable is None:
        raise NotInstalled("install pyright")
    command = pyright.pyright_command(executable, paths)
    return Plan(pyright.TOOL, command, pyright.OK_CODES, pyright.parse_pyright)


def plan_build(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """``python -m build`` for a project with a pyproject.toml and ``build`` importable, else
    byte-compiling the sources."""
    if (cwd / "pyproject.toml").is_file() and importlib.util.find_spec("build") is not None:
        command = build.build_command(sys.executable, str(scratch))
        return Plan(
            build.BUILD_TOOL, command, build.OK_CODES, build.parse_build, build.MERGE_STDERR
        )
    command = build.compile_command(sys.executable, cwd, paths or ["."])
    return Plan(build.COMPILE_TOOL, command, build.OK_CODES, build.parse_compile)


PLANNERS: dict[str, Callable[[Path, list[str], Path], Plan[Diagnostic]]] = {
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
    try:
        return list(parse_checker_names(given))
    except ValueError as exc:
        raise QBenchError(f"--tools {exc}", slug="check-options") from None


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
    """Run each checker in ``cwd`` on ``paths`` (all at once) and store the run; return it and
    its directory.

    ``timeout`` bounds each checker, ``total_timeout`` all of them together; ``stop``, once
    set, stops every checker still running; ``tool`` names the run (``qbench.<tool>``);
    ``on_start`` is told the run directory before the checkers start.
    """
    started = now()
    directory = new_check_dir(qbench_dir, started)
    if on_start is not None:
        on_start(directory)
    deadline = None if total_timeout is None else time.monotonic() + total_timeout
    running = start_checks(names, cwd, paths, directory)
    checks = []
    for one in running:
        wait = remaining(one, timeout)
        limit = f"{timeout:g} s"
        if deadline is not None and deadline - time.monotonic() < wait:
            wait, limit = max(0.0, deadline - time.monotonic()), f"{total_timeout:g} s"
        checks.append(collect_one(one, cwd, directory, wait, limit, stop))
    command = ["qbench", tool, "--tools", ",".join(names), *paths]
    return finish_check_run(directory, started, cwd, command, paths, checks), directory


@dataclass
class Started:
    """A checker started as a child process (or already decided: not installed, could not
    start); `collect_one` waits for it and reads its output."""

    plan: Plan[Diagnostic] | None
    meta: RunMeta
    process: subprocess.Popen[bytes] | None = None
    done: CheckRun | None = None
    scratch: str | None = None
    clock: float = 0.0
    """``time.monotonic()`` when it started."""
    logs: tuple[capture.CappedLog, ...] = ()
    """The threads writing its output and stderr logs (bounded)."""
    tree: ProcessTree | None = None
    """Its descendants, those that left its process group included (Linux)."""


def remaining(one: Started, timeout: float) -> float:
    """Seconds left of ``timeout`` counted from the checker's start (0 or more)."""
    return max(0.0, one.clock + timeout - time.monotonic())


def start_checks(names: list[str], cwd: Path, paths: list[str], directory: Path) -> list[Started]:
    """Start each checker in ``cwd`` on ``paths`` as a child process writing its raw output to
    ``directory``; they run while the caller goes on."""
    return [start_one(name, cwd, paths, directory) for name in names]


def start_one(name: str, cwd: Path, paths: list[str], directory: Path) -> Started:
    """One checker started (its stdout to ``<tool>.log``, its stderr to ``<tool>.stderr.log``)."""
    started = now()
    scratch = tempfile.mkdtemp(prefix="qbench-check-")
    try:
        plan = PLANNERS[name](cwd, paths, Path(scratch))
    except NotInstalled as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        meta = RunMeta(
            run_id=directory.name,
            tool=TOOL_NAMES[name],
            started_at=started,
            completed_at=now(),
            cwd=str(cwd),
            command=[],
        )
        return Started(
            None, meta, done=CheckRun(run=meta, status="not_run", note=f"not run: {exc}")
        )
    meta = RunMeta(
        run_id=directory.name,
        tool=plan.tool,
        started_at=started,
        cwd=str(cwd),
        command=plan.command,
    )
    try:
        process, logs = spawn(plan, cwd, directory)
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        meta = meta.model_copy(update={"completed_at": now()})
        return Started(
            plan, meta, done=crashed(meta, f"{plan.tool} could not start: {exc}", None, None)
        )
    tree = ProcessTree(process.pid) if sys.platform == "linux" else None
    for log in logs:
        log.watch = tree.snapshot if tree is not None and log is logs[0] else None
        log.start()
    return Started(
        plan,
        meta,
        process=process,
        scratch=scratch,
        clock=time.monotonic(),
        logs=logs,
        tree=tree,
    )


def spawn(
    plan: Plan[Diagnostic], cwd: Path, directory: Path
) -> tuple[subprocess.Popen[bytes], tuple[capture.CappedLog, ...]]:
    """Start the checker with its stdout (and stderr) on pipes, each read into a capped log
    (``<tool>.log``, ``<tool>.stderr.log``) by a thread not yet started."""
    pipes = [os.pipe()] if plan.merge_stderr else [os.pipe(), os.pipe()]
    try:
        process = subprocess.Popen(
            plan.command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=pipes[0][1],
            stderr=subprocess.STDOUT if plan.merge_stderr else pipes[1][1],
            start_new_session=sys.platform != "win32",  # its own group: killed whole
            env={**os.environ, **plan.env} if plan.env else None,
        )
    except OSError:
        for read, write in pipes:
            os.close(read)
            os.close(write)
        raise
    for _, write in pipes:
        os.close(write)
    log = directory / f"{plan.tool}.log"
    logs = [capture.CappedLog(pipes[0][0], log, capture.LOG_HEAD, capture.LOG_TAIL)]
    if not plan.merge_stderr:
        err = directory / f"{plan.tool}.stderr.log"
        logs.append(capture.CappedLog(pipes[1][0], err, capture.STDERR_HEAD, capture.STDERR_TAIL))
    return process, tuple(logs)


def collect_one(
    one: Started,
    cwd: Path,
    directory: Path,
    timeout: float,
    limit: str | None = None,
    stop: threading.Event | None = None,
) -> CheckRun:
    """Wait up to ``timeout`` seconds (or until ``stop`` is set) for a started checker, then
    read its verdict; one still running then is stopped with its whole process group and
    reported as crashed (the note says it did not finish in ``limit``, by default the timeout,
    or that it was cancelled)."""
    if one.done is not None or one.process is None or one.plan is None:
        return one.done or crashed(one.meta, f"{one.meta.tool} did not start", None, None)
    plan, process = one.plan, one.process
    try:
        if not wait_for(process, timeout, stop):
            stop_tree(one)
            log, err = stored_logs(directory, plan.tool)
            meta = one.meta.model_copy(update={"completed_at": now()})
            if stop is not None and stop.is_set():
                why = "was cancelled and stopped"
            else:
                why = f"did not finish in {limit or f'{timeout:g} s'} and was stopped"
            return crashed(meta, f"{plan.tool} {why}; raw output in {log}", log, err)
        stop_tree(one)  # what the checker started and left behind goes with it
        output = keep_output(plan, directory)
    finally:
        if one.scratch:
            shutil.rmtree(one.scratch, ignore_errors=True)
    log, err = stored_logs(directory, plan.tool)
    meta = one.meta.model_copy(update={"completed_at": now(), "exit_code": process.returncode})
    if plan.output is not None:
        if output is None:
            note = f"{plan.tool} wrote no output file {plan.output.name}; raw output in {log}"
            return crashed(meta, note, log, err)
        log = output
    if one.logs and one.logs[0].cut:
        note = (
            f"{plan.tool} printed {one.logs[0].cut} bytes more than qbench keeps "
            f"({capture.LOG_HEAD + capture.LOG_TAIL} bytes: its head and tail, with a note of "
            f"the cut); its output was not read; raw output in {log}"
        )
        return crashed(meta, note, log, err)
    stdout = (directory / log).read_bytes() if log else b""  # bounded: a capped log
    stderr = (directory / err).read_bytes() if err else b""
    return judge(plan, meta, stdout, stderr, cwd, log, err)


def keep_output(plan: Plan[Diagnostic], directory: Path) -> str | None:
    """The tool's output file (``Plan.output``) copied into the run directory as
    ``<tool>.output<suffix>``; its name, or ``None`` when there is no such file or it is
    larger than a log is kept."""
    if plan.output is None or not plan.output.is_file():
        return None
    if plan.output.stat().st_size > capture.LOG_HEAD + capture.LOG_TAIL:
        return None
    name = f"{plan.tool}.output{plan.output.suffix}"
    shutil.copyfile(plan.output, directory / name)
    return name


def wait_for(
    process: subprocess.Popen[bytes], timeout: float, stop: threading.Event | None
) -> bool:
    """Whether ``process`` ended within ``timeout`` seconds, before ``stop`` was set."""
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        left = deadline - time.monotonic()
        if left <= 0 or (stop is not None and stop.is_set()):
            return False
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(min(POLL_SECONDS, left) if stop is not None else left)
    return True


def stop_all(running: list[Started]) -> None:
    """Stop every checker still running (the session was interrupted, say), with its tree."""
    for one in running:
        stop_tree(one)
        if one.scratch:
            shutil.rmtree(one.scratch, ignore_errors=True)


def stop_tree(one: Started) -> None:
    """Kill the checker's process group and every descendant noted or found now (those that
    left the group in a session of their own too), then close its logs (idempotent)."""
    for log in one.logs:
        log.stop_watching()
    if one.process is not None:
        if one.tree is not None:
            one.tree.snapshot()
            one.tree.kill_all()
        kill_group(one.process)
    for log in one.logs:
        if log.is_alive():
            log.finish()


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the checker's process group (POSIX; the process alone elsewhere) and reap it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        if process.poll() is None:
            process.kill()
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def judge(
    plan: Plan[Diagnostic],
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


def stored_logs(directory: Path, tool: str) -> tuple[str | None, str | None]:
    """The names of ``<tool>.log`` (always) and ``<tool>.stderr.log`` (removed when empty)."""
    log = f"{tool}.log"
    err = directory / f"{tool}.stderr.log"
    if err.is_file() and err.stat().st_size:
        return log, err.name
    err.unlink(missing_ok=True)
    return log, None
