"""Run the checkers as child processes (argument lists, no shell) and store a ``qbench check``
run (issue 13): ``<qbench-dir>/runs/<run id>/check.json`` and each checker's raw output."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pytest_qbench.core import supervise
from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.report.checks.stored import finish_check_run
from pytest_qbench.report.checks.stored import new_check_dir
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import RunMeta
from pytest_qbench.tools import capture
from pytest_qbench.tools.names import DEFAULT_TIMEOUT
from pytest_qbench.tools.spec import Checker
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported
from pytest_qbench.tools.spec import planning_for
from pytest_qbench.tools.spec import store_of


_JS_FRAME = re.compile(r"^\s+at \S|^Node\.js v\d+\.\d+\.\d+$")
"""A frame of a JavaScript stack, ``    at compileSourceTextModule (node:internal/...)``, or
the ``Node.js v20.20.2`` line Node prints below an uncaught error's stack."""
ANSI = re.compile(r"\x1b\[[0-9;]*m")
"""A terminal colour."""
POLL_SECONDS = 0.1
"""How often a wait looks whether it was asked to stop."""


def parse_tools(given: str, option: str = "--tools") -> list[str]:
    """``ruff,mypy`` (or several such values) as a list of registered checker names, in
    order, without repeats.

    Raises:
        QBenchError: no name, or one no registered checker has (the message lists them).
    """
    from pytest_qbench.tools.registry import registry

    names = list(dict.fromkeys(n.strip() for n in given.replace("\n", ",").split(",")))
    names = [name for name in names if name]
    if not names:
        raise QBenchError(f"{option} names no checker, given: {given!r}", slug="check-options")
    found = registry()
    for name in names:
        try:
            found.checker(name)
        except QBenchError as exc:
            raise QBenchError(f"{option}: {exc}", slug="check-options") from None
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
    frontend: Path | None = None,
) -> tuple[CheckReport, Path]:
    """Run each checker in ``cwd`` on ``paths`` (all at once) and store the run; return it and
    its directory.

    ``timeout`` bounds each checker, ``total_timeout`` all of them together; ``stop``, once
    set, stops every checker still running; ``tool`` names the run (``qbench.<tool>``);
    ``on_start`` is told the run directory before the checkers start; the front-end checkers
    run in ``frontend`` (default: ``cwd``).
    """
    started = now()
    directory = new_check_dir(qbench_dir, started)
    if on_start is not None:
        on_start(directory)
    deadline = None if total_timeout is None else time.monotonic() + total_timeout
    running = start_checks(names, cwd, paths, directory, frontend)
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
    child: supervise.Child | None = None
    done: CheckRun | None = None
    scratch: str | None = None
    clock: float = 0.0
    """``time.monotonic()`` when it started."""
    logs: tuple[capture.CappedLog, ...] = ()
    """The threads writing its output and stderr logs (bounded)."""
    cwd: Path | None = None
    """The directory it runs in, when not the project's root (a front-end checker)."""


def remaining(one: Started, timeout: float) -> float:
    """Seconds left of ``timeout`` counted from the checker's start (0 or more)."""
    return max(0.0, one.clock + timeout - time.monotonic())


def start_checks(
    names: list[str], cwd: Path, paths: list[str], directory: Path, frontend: Path | None = None
) -> list[Started]:
    """Start each checker in ``cwd`` on ``paths`` (a front-end checker in ``frontend``, by
    default ``cwd`` too) as a child process writing its raw output to ``directory``; they run
    while the caller goes on."""
    return [start_one(name, cwd, paths, directory, frontend) for name in names]


def start_one(
    name: str, root: Path, paths: list[str], directory: Path, frontend: Path | None = None
) -> Started:
    """One registered checker started (its stdout to ``<tool>.log``, its stderr to
    ``<tool>.stderr.log``), in ``root``, or in ``frontend`` for a front-end checker."""
    from pytest_qbench.tools.registry import registry

    started = now()
    checker = registry().checker(name).tool
    cwd, paths = where_to_run(checker, root, paths, frontend)
    scratch = tempfile.mkdtemp(prefix="qbench-check-")
    try:
        with planning_for(store_of(directory)):
            plan = checker.plan(cwd, paths, Path(scratch))
    except Exception as exc:  # NotInstalled, or a third party's planner failing
        shutil.rmtree(scratch, ignore_errors=True)
        return not_planned(checker.tool, exc, directory, cwd, started)
    if not isinstance(plan, Plan):
        shutil.rmtree(scratch, ignore_errors=True)
        return not_planned(
            checker.tool, TypeError(f"planned {plan!r:.100}"), directory, cwd, started
        )
    meta = RunMeta(
        run_id=directory.name,
        tool=plan.tool,
        started_at=started,
        cwd=str(cwd),
        command=plan.command,
    )
    try:
        child, logs = spawn(plan, cwd, directory)
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        meta = meta.model_copy(update={"completed_at": now()})
        return Started(
            plan, meta, done=crashed(meta, f"{plan.tool} could not start: {exc}", None, None)
        )
    watch = child.containment.snapshot if child.containment is not None else None
    logs[0].watch = watch  # its tree noted while it runs, even when nobody waits for it
    for log in logs:
        log.start()
    return Started(
        plan,
        meta,
        child=child,
        scratch=scratch,
        clock=time.monotonic(),
        logs=logs,
        cwd=cwd,
    )


def where_to_run(
    checker: Checker, root: Path, paths: list[str], frontend: Path | None
) -> tuple[Path, list[str]]:
    """The directory a checker runs in and its paths: a front-end checker runs in the
    front end's directory on those of ``paths`` inside it (relative to it; none: what its own
    configuration names), any other in ``root`` on ``paths``."""
    if checker.target != "frontend" or frontend is None or frontend == root:
        return root, paths
    inside = []
    for given in paths:
        with contextlib.suppress(ValueError):
            inside.append(str((root / given).resolve().relative_to(frontend.resolve())))
    return frontend, inside


def not_planned(
    tool: str, exc: Exception, directory: Path, cwd: Path, started: datetime
) -> Started:
    """A checker that could not be planned: "not run" when not installed or when it cannot
    run as the project runs it (`Unsupported`: its note says why), else crashed (a third
    party's planner that raised)."""
    meta = RunMeta(
        run_id=directory.name,
        tool=tool,
        started_at=started,
        completed_at=now(),
        cwd=str(cwd),
        command=[],
    )
    if isinstance(exc, (NotInstalled, Unsupported)):
        return Started(
            None, meta, done=CheckRun(run=meta, status="not_run", note=f"not run: {exc}")
        )
    note = f"{tool} could not be planned: {type(exc).__name__}: {str(exc)[:300]}"
    return Started(None, meta, done=crashed(meta, note, None, None))


def spawn(
    plan: Plan[Diagnostic], cwd: Path, directory: Path
) -> tuple[supervise.Child, tuple[capture.CappedLog, ...]]:
    """Start the checker through the process supervisor (its own session, its whole tree
    killed at its end) with its stdout (and stderr) on pipes, each read into a capped log
    (``<tool>.log``, ``<tool>.stderr.log``) by a thread not yet started."""
    pipes = [os.pipe()] if plan.merge_stderr else [os.pipe(), os.pipe()]
    try:
        child = supervise.start(
            plan.command,
            cwd=cwd,
            env={**os.environ, **plan.env} if plan.env else None,
            stdout=pipes[0][1],
            stderr=subprocess.STDOUT if plan.merge_stderr else pipes[1][1],
            name=plan.tool,
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
    return child, tuple(logs)


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
    if one.done is not None or one.child is None or one.plan is None:
        return one.done or crashed(one.meta, f"{one.meta.tool} did not start", None, None)
    plan, process = one.plan, one.child.process
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
    if one.cwd is None or one.cwd == cwd:
        return judge(plan, meta, stdout, stderr, cwd, log, err)
    return rebased(judge(plan, meta, stdout, stderr, one.cwd, log, err), one.cwd, cwd)


def rebased(check: CheckRun, ran_in: Path, root: Path) -> CheckRun:
    """The diagnostics of a checker run in ``ran_in`` (a front end) with their files made
    relative to the project's ``root``."""
    try:
        prefix = ran_in.resolve().relative_to(root.resolve())
    except ValueError:
        return check
    found = [
        item.model_copy(update={"file": (prefix / item.file).as_posix()})
        if item.file and not Path(item.file).is_absolute()
        else item
        for item in check.diagnostics
    ]
    return check.model_copy(update={"diagnostics": found})


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
    """Kill the checker's whole tree through the supervisor (its group, its cgroup or noted
    descendants, those that left the group in a session of their own too), then close its
    logs (idempotent)."""
    for log in one.logs:
        log.stop_watching()
    if one.child is not None:
        one.child.finish()
    for log in one.logs:
        if log.is_alive():
            log.finish()


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
    except Exception as exc:  # CheckOutputError, or a third party's parser failing
        why = exc if isinstance(exc, CheckOutputError) else f"{type(exc).__name__}: {exc}"
        note = (
            f"{plan.tool} crashed: exit code {code}, unparsable output ({why}); raw output in {log}"
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
    """``mypy.typecheck crashed: exit code 2 (last line); raw output in mypy.typecheck.log``:
    the last line that is not a frame of a JavaScript stack (a Node tool's crash ends with
    ``    at async ModuleJob._link (...)`` below its ``SyntaxError: ...``, and Node's uncaught
    error with ``Node.js v20.20.2``)."""
    last = last_line(output)
    stored = f"; raw output in {where}" if where else ""
    return f"{tool} crashed: exit code {code}{f' ({last})' if last else ''}{stored}"


def last_line(output: bytes) -> str:
    """The last line of a crashed tool's output that is not a frame of a JavaScript stack,
    without its colours (vitest's ``MISSING DEPENDENCY  Cannot find dependency
    '@vitest/coverage-v8'``), at most 200 characters; empty for no output."""
    decoded = ANSI.sub("", output.decode("utf-8", "replace"))
    text = [line for line in decoded.splitlines() if line.strip()]
    lines = [line for line in text if not _JS_FRAME.match(line)] or text
    return lines[-1].strip()[:200] if lines else ""


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
