"""``run_build_workflow`` (issue 13.7): which checkers a check type means, running them as a
check run, the stored check run as the build result (errors only, within the size budget), its
result model and its text. The checkers' machinery is imported when the tool is first called."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal

from pydantic import Field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import first_line
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.command import effective_timeout
from pytest_qbench.mcp.paths import inside_root
from pytest_qbench.mcp.paths import safe_text
from pytest_qbench.mcp.text import fit_lines
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import QBenchModel


if TYPE_CHECKING:
    import threading

    from pytest_qbench.mcp.service import RunService
    from pytest_qbench.tools.spec import Kind


CheckType = Literal["lint", "typecheck", "build", "both", "all"]
"""What ``run_build_workflow`` checks (issue 13.7); ``both`` is the design notes' typecheck and
build (issue 22)."""
Target = Literal["auto", "frontend", "backend", "both"]
"""Which half of the project ``run_build_workflow`` checks (issue 22); ``auto``: both when the
project has a front end, else the back end."""


class BuildSummary(QBenchModel):
    """Counts of a build workflow run (issue 13.7)."""

    total_errors: int = 0
    """All errors (a crashed checker is one)."""
    type_errors: int = 0
    """mypy, pyright."""
    lint_errors: int = 0
    """ruff."""
    build_errors: int = 0
    """Build or compile."""
    warnings: int = 0
    """Listed only when strict."""
    duration_seconds: float = 0.0
    """Seconds."""


class BuildError(QBenchModel):
    """One error (or, when strict, warning) of a checker."""

    file: str | None = None
    """Relative to the project root."""
    line: int | None = None
    """1-based line."""
    column: int | None = None
    """1-based column."""
    error_type: str
    """The code (``arg-type``, ``F401``)."""
    severity: Literal["error", "warning"]
    """How serious it is."""
    message: str
    """Bounded."""
    code_snippet: str | None = None
    """The source line."""
    tool: str
    """``ruff.lint``, ``mypy.typecheck``..."""


class CheckerStatus(QBenchModel):
    """How one checker ended."""

    tool: str
    """Also the get_run_output stream of its log."""
    status: str
    """clean, failed, crashed, not_run."""
    note: str | None = None
    """What went wrong."""


class BuildResult(QBenchModel):
    """A build workflow run (issue 13.7): errors only, never raw logs."""

    run_id: str
    """The check run's id, for get_run_output."""
    success: bool
    """No error (nor, when strict, warning), no checker crashed or missing."""
    summary: BuildSummary
    """Counts."""
    errors: list[BuildError] = Field(default_factory=list)
    """Errors, then warnings when strict."""
    checks: list[CheckerStatus] = Field(default_factory=list)
    """How each checker ended."""
    next_steps: list[str] = Field(default_factory=list)
    """What to do next, most useful first."""
    truncated: int = 0
    """Errors not listed (size budget)."""


CHECK_KINDS: dict[str, tuple[Kind, ...]] = {
    "lint": ("lint",),
    "typecheck": ("typecheck",),
    "build": ("build",),
    "both": ("typecheck", "build"),
    "all": ("lint", "typecheck", "build"),
}
"""The kinds of checkers each check type runs (pyright only where it is installed)."""
KIND_WORDS = {"lint": "lint", "typecheck": "type"}
"""A checker's kind of error, by its tool's suffix (``mypy.typecheck``); every other checker
(``python.build``, ``python.compile``) is the build."""
MAX_MESSAGE = 2000
"""Characters of a message in a result."""
SHORT_MESSAGE = 200
"""Characters of a message shortened to fit the budget."""
MAX_STEPS = 5
"""Errors named in next_steps."""
CRASHED = "checker-crashed"
"""The code of the error a crashed checker is reported as (``runner.crashed``)."""


def checkers(
    check_type: CheckType, target: Target | None, root: Path
) -> tuple[Path | None, list[str]]:
    """The front end's directory and the registered checkers ``check_type`` runs on
    ``target`` (default: both when the project has a front end, else the back end).

    Raises:
        ToolFailure: an unknown check type or target, a front end asked for and not found.
    """
    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.history.database import ini_value
    from pytest_qbench.tools.frontend import find_frontend
    from pytest_qbench.tools.registry import registry
    from pytest_qbench.tools.select import TARGET_CHOICES
    from pytest_qbench.tools.select import checkers_for
    from pytest_qbench.tools.select import default_target
    from pytest_qbench.tools.select import targets_of

    if check_type not in CHECK_KINDS:
        raise ToolFailure(
            f"check_type {check_type!r} is not one of {', '.join(CHECK_KINDS)}; e.g. 'typecheck'"
        )
    if target is not None and target != "auto" and target not in TARGET_CHOICES:
        raise ToolFailure(f"target {target!r} is not one of {', '.join(TARGET_CHOICES)}")
    configured = ini_value(root, "qbench_frontend")
    try:
        frontend = find_frontend(root, configured[1] if configured else None)
    except QBenchError as exc:
        raise ToolFailure(str(exc)) from None
    chosen = default_target(frontend) if target is None or target == "auto" else target
    if chosen != "backend" and frontend is None:
        raise ToolFailure(
            f"target {chosen!r}: no front end (package.json) under the project root; set "
            "qbench_frontend in the pytest configuration"
        )
    names = checkers_for(registry(), CHECK_KINDS[check_type], targets_of(chosen), root, frontend)
    if not names:
        raise ToolFailure(
            f"no checker of check_type {check_type!r} applies to target {chosen!r} "
            "(qbench check --list shows the checkers and where they apply)"
        )
    return frontend, names


def check_paths(root: Path, paths: Sequence[str]) -> list[str]:
    """Each path, inside ``root``, relative to it (empty: the project's configuration decides).

    Raises:
        ToolFailure: a path outside the root, missing, or read as an option.
    """
    return [inside_root(root, safe_text(path, "paths"), "paths") for path in paths]


def build_result(report: CheckReport, strict: bool, budget: int) -> BuildResult:
    """The seed's build result of a stored check run: errors (and warnings when ``strict``)
    first, as many as fit in ``budget`` bytes of JSON, the rest counted."""
    found = [item for check in report.checks for item in check.diagnostics]
    errors = [item for item in found if item.severity == "error"]
    warnings = [item for item in found if item.severity == "warning"]
    summary = BuildSummary(
        total_errors=len(errors),
        type_errors=sum(1 for item in errors if kind(item.tool) == "type"),
        lint_errors=sum(1 for item in errors if kind(item.tool) == "lint"),
        build_errors=sum(1 for item in errors if kind(item.tool) == "build"),
        warnings=len(warnings),
        duration_seconds=round(duration(report), 3),
    )
    not_run = [check for check in report.checks if check.status == "not_run"]
    listed = [entry(item) for item in (errors + warnings if strict else errors)]
    result = BuildResult(
        run_id=report.run.run_id,
        success=not errors and not not_run and not (strict and warnings),
        summary=summary,
        checks=[
            CheckerStatus(tool=check.run.tool, status=check.status, note=check.note)
            for check in report.checks
        ],
        next_steps=next_steps(report, listed, len(warnings), strict),
    )
    room = budget - json_size(result) - 16
    fitted = fit_items(listed, room, shorten)
    return result.model_copy(update={"errors": fitted.items, "truncated": fitted.dropped})


def kind(tool: str) -> str:
    """``lint``, ``type`` or ``build``."""
    return KIND_WORDS.get(tool.rpartition(".")[2], "build")


def duration(report: CheckReport) -> float:
    """Seconds from the first checker's start to the last one's end."""
    completed = report.run.completed_at or report.run.started_at
    return max((completed - report.run.started_at).total_seconds(), 0.0)


def entry(item: Diagnostic) -> BuildError:
    """One diagnostic as the seed's error."""
    message = item.message
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "…"
    return BuildError(
        file=item.file,
        line=item.line,
        column=item.column,
        error_type=item.code or item.tool,
        severity="warning" if item.severity == "warning" else "error",
        message=message,
        code_snippet=item.code_snippet,
        tool=item.tool,
    )


def shorten(error: BuildError) -> BuildError:
    """The error with a short message and no snippet."""
    message = error.message
    if len(message) > SHORT_MESSAGE:
        message = message[:SHORT_MESSAGE] + "…"
    return error.model_copy(update={"message": message, "code_snippet": None})


def next_steps(
    report: CheckReport, listed: list[BuildError], warnings: int, strict: bool
) -> list[str]:
    """``Fix type error in a.py:142 (arg-type)`` for the first errors, then the checkers that
    did not run or crashed, then where the raw logs are."""
    fixable = [error for error in listed if error.error_type != CRASHED]
    steps = [step(error) for error in fixable[:MAX_STEPS]]
    if len(fixable) > MAX_STEPS:
        steps.append(f"... and {len(fixable) - MAX_STEPS} more listed in errors")
    for check in report.checks:
        if check.status == "not_run" and check.note:
            steps.append(f"{check.run.tool} {check.note}, then call run_build_workflow again")
        elif check.status == "crashed":
            steps.append(
                f"{check.run.tool} crashed: read its log with get_run_output("
                f'run_id="{report.run.run_id}", stream="{check.run.tool}")'
            )
    if warnings and not strict:
        steps.append(f"{warnings} warning(s) not listed: call again with strict=true to see them")
    if not steps:
        steps.append("Nothing to fix: every checker is clean")
    return steps


def step(error: BuildError) -> str:
    """``Fix type error in a.py:142 (arg-type)``."""
    what = kind(error.tool)
    where = ":".join(str(part) for part in (error.file, error.line) if part is not None)
    return f"Fix {what} {error.severity} in {where or 'the project'} ({error.error_type})"


def run_build_workflow(
    tools: RunService,
    check_type: CheckType = "all",
    paths: Sequence[str] = (),
    strict: bool = False,
    timeout_seconds: float | None = None,
    stop: threading.Event | None = None,
    target: Target | None = None,
) -> BuildResult:
    """Run the checkers of ``check_type`` for ``target`` on ``paths`` (issues 13.7, 22),
    stored as a check run; its errors (and warnings when ``strict``). The checkers run one
    after the other, each in its own process group, killed at the timeout or when ``stop`` is
    set; a front-end checker runs in the front end's directory.

    Raises:
        ToolFailure: a refused argument, or a run already going on.
    """
    from pytest_qbench.tools.runner import run_checks

    frontend, names = checkers(check_type, target, tools.config.root)
    relative = check_paths(tools.config.root, paths)
    timeout = effective_timeout(tools.config, timeout_seconds)
    with tools.check_run() as started:
        try:
            report, _ = run_checks(
                names,
                tools.config.root,
                relative,
                tools.config.qbench_dir,
                timeout,
                total_timeout=timeout,
                stop=stop,
                tool="run_build_workflow",
                on_start=started,
                frontend=frontend,
            )
        except OSError as exc:
            raise ToolFailure(
                f"cannot run the checkers: {exc}; check the run store {tools.config.qbench_dir}"
            ) from None
    return build_result(report, strict, tools.config.budget)


def build_text(result: BuildResult, limit: int) -> str:
    """The build workflow in a line per error (issue 13.7)."""
    counts = result.summary
    head = (
        f"{'PASSED' if result.success else 'FAILED'} {result.run_id}: "
        f"{counts.total_errors} error(s) ({counts.type_errors} type, {counts.lint_errors} lint, "
        f"{counts.build_errors} build), {counts.warnings} warning(s) in "
        f"{counts.duration_seconds:.2f}s"
    )
    checks = [
        f"{check.tool}: {check.status}" + (f" ({first_line(check.note)})" if check.note else "")
        for check in result.checks
    ]
    errors = []
    for error in result.errors:
        where = ":".join(str(p) for p in (error.file, error.line, error.column) if p is not None)
        errors.append(
            f"{where or '-'}: {error.severity} {error.error_type}: {first_line(error.message)}"
        )
    more = [f"... {result.truncated} more not listed (size budget)"] if result.truncated else []
    steps = ["Next steps:", *(f"- {s}" for s in result.next_steps)]
    return fit_lines([head, *checks, *errors, *more, *steps], limit, "[... {n} more lines]")
