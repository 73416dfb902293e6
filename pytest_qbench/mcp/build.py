"""``run_build_workflow`` without the SDK (issue 13.7): which checkers a check type means, and
a stored check run as the seed's build result (errors only, within the size budget)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.models import BuildError
from pytest_qbench.mcp.models import BuildResult
from pytest_qbench.mcp.models import BuildSummary
from pytest_qbench.mcp.models import CheckerStatus
from pytest_qbench.mcp.models import CheckType
from pytest_qbench.mcp.paths import inside_root
from pytest_qbench.mcp.paths import safe_text
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import Diagnostic


CHECKERS: dict[str, tuple[str, ...]] = {
    "lint": ("ruff",),
    "typecheck": ("mypy", "pyright"),
    "build": ("build",),
    "all": ("ruff", "mypy", "pyright", "build"),
}
"""The checkers of each check type; pyright only where it is installed."""
KINDS = {"ruff.lint": "lint", "mypy.typecheck": "type", "pyright.typecheck": "type"}
"""A checker's kind of error; every other checker (``python.build``, ``python.compile``) is
the build."""
MAX_MESSAGE = 2000
"""Characters of a message in a result."""
SHORT_MESSAGE = 200
"""Characters of a message shortened to fit the budget."""
MAX_STEPS = 5
"""Errors named in next_steps."""
CRASHED = "checker-crashed"
"""The code of the error a crashed checker is reported as (``runner.crashed``)."""


def checkers(check_type: CheckType, pyright_installed: bool) -> list[str]:
    """The checker names (``runner.PLANNERS`` keys) ``check_type`` runs.

    Raises:
        ToolFailure: an unknown check type.
    """
    if check_type not in CHECKERS:
        raise ToolFailure(
            f"check_type {check_type!r} is not one of {', '.join(CHECKERS)}; e.g. 'typecheck'"
        )
    return [name for name in CHECKERS[check_type] if name != "pyright" or pyright_installed]


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
    return KINDS.get(tool, "build")


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
