"""GitHub Actions: the job summary (``$GITHUB_STEP_SUMMARY``) and workflow-command annotations.

Pure functions and one append; no pytest here. Workflow commands are documented at
https://docs.github.com/actions/reference/workflow-commands-for-github-actions: data is escaped
(``%``, CR, LF) and property values too (also ``:`` and ``,``), so a test's message can never end
the command early or forge another one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.text import bound_text


if TYPE_CHECKING:
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.report.records import TestResultRecord


STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
STEP_SUMMARY_TEMPLATE = "step-summary.md.j2"
MAX_STEP_SUMMARY = 1024 * 1024
"""GitHub refuses a step summary larger than 1 MiB."""
MAX_ANNOTATION_MESSAGE = 2000
DEFAULT_MAX_ANNOTATIONS = 10
"""GitHub shows at most 10 error annotations per step."""


def step_summary_path(environ: Mapping[str, str]) -> Path | None:
    """The job summary file GitHub Actions gives this step, if any."""
    value = environ.get(STEP_SUMMARY_ENV, "").strip()
    return Path(value) if value else None


def append_step_summary(path: Path, markdown: str) -> Path:
    """Append ``markdown`` to the job summary in one write, cut to GitHub's size limit."""
    data = markdown.encode("utf-8")
    if len(data) > MAX_STEP_SUMMARY:
        note = "\n\n…cut to fit GitHub's 1 MiB job summary; the full report is report.md.\n"
        keep = MAX_STEP_SUMMARY - len(note.encode("utf-8"))
        data = data[:keep].decode("utf-8", errors="ignore").encode("utf-8") + note.encode("utf-8")
    separator = b"\n" if path.is_file() and path.stat().st_size else b""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, separator + data)
    finally:
        os.close(fd)
    return path


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``file=``, ``title=``...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    column: int | None = None,
) -> str:
    """``::error file=F,line=L,col=C,title=T::message``, escaped."""
    properties = []
    if file:
        properties.append(f"file={escape_property(file)}")
        if line:
            properties.append(f"line={line}")
            if column:
                properties.append(f"col={column}")
    if title:
        properties.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(properties)}" if properties else f"::{level}"
    return f"{head}::{escape_data(bound_text(message, MAX_ANNOTATION_MESSAGE))}"


def failure_annotations(results: Iterable[TestResultRecord], root: str = "") -> list[str]:
    """One ``::error`` per failed or errored test, at its failing line.

    ``root`` (the rootdir relative to the repository checkout, ``""`` when they are the same)
    prefixes paths, since GitHub resolves them from the checkout.
    """
    commands = []
    for result in results:
        failure = result["failure"]
        file = (failure and failure["file"]) or result["file"]
        line = (failure and failure["line"]) or result["line"]
        kind = (failure and failure["error_type"]) or result["outcome"]
        message = (
            failure and failure["error_message"]
        ) or f"{result['nodeid']} {result['outcome']}"
        commands.append(
            workflow_command(
                "error",
                message,
                file=_join(root, file) if file else None,
                line=line,
                title=f"{result['nodeid']}: {kind}",
            )
        )
    return commands


def diagnostic_annotations(diagnostics: Iterable[DiagnosticRecord], root: str = "") -> list[str]:
    """One workflow command per static-checker finding (``--qbench-check``): ``::error
    file=a.py,line=3,col=8,title=ruff.lint F401::message`` (``::warning``, ``::notice``)."""
    levels = {"error": "error", "warning": "warning", "info": "notice"}
    return [
        workflow_command(
            levels[item["severity"]],
            item["message"],
            file=_join(root, item["file"]) if item["file"] else None,
            line=item["line"],
            column=item["column"],
            title=f"{item['tool']} {item['code']}" if item["code"] else item["tool"],
        )
        for item in diagnostics
    ]


def gate_annotations(gates: Iterable[GateResultRecord]) -> list[str]:
    """An ``::error`` per failed gate (coverage, metric mean, baseline), with its numbers."""
    return [
        workflow_command("error", gate["detail"], title=_gate_title(gate))
        for gate in gates
        if gate["passed"] is False
    ]


def _gate_title(gate: GateResultRecord) -> str:
    from pytest_qbench.report.gates.text import gate_label

    label = gate_label(gate)
    return label if gate["kind"] == "coverage" else f"{label}: {gate['name']}"


def checkout_prefix(rootdir: Path, environ: Mapping[str, str]) -> str:
    """The rootdir relative to ``$GITHUB_WORKSPACE`` (``""`` outside it or without it)."""
    workspace = environ.get("GITHUB_WORKSPACE")
    if not workspace:
        return ""
    try:
        relative = os.path.relpath(rootdir, workspace)
    except ValueError:
        return ""
    return "" if relative == "." or relative.startswith("..") else Path(relative).as_posix()


def _join(root: str, path: str) -> str:
    return f"{root}/{path}" if root and not path.startswith("/") else path
