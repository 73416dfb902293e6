"""The MCP tool run_build_workflow and the check runs' raw logs through get_run_output, with
real ruff and mypy on a small project with a type error and a lint error (issue 13.7)."""

from __future__ import annotations

import sys
import threading
import time
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pytest
from tools_plugins import replace_planner

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp import build
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.build import build_result
from pytest_qbench.mcp.calllog import CallLog
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.tools import QBenchTools
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import RunMeta
from pytest_qbench.tools.executables import find_executable
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.spec import Plan


pytestmark = pytest.mark.skipif(
    find_executable("ruff") is None, reason="needs ruff beside this Python or on PATH"
)

SOURCE = """\
import os


def greet(name: str) -> int:
    return "hello " + name
"""
"""A lint error (F401, line 1) and a type error (return-value, line 5)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "a.py").write_text(SOURCE)
    (project / "pkg" / "clean.py").write_text("X = 1\n")
    return project.resolve()


@pytest.fixture
def config(root: Path) -> ServerConfig:
    return ServerConfig(root=root, qbench_dir=root / ".qbench", default_timeout=120.0)


def test_build_workflow_returns_the_type_and_the_lint_error(config: ServerConfig) -> None:
    """issue 13.7: all checkers on a project with a type error and a lint error give both, with
    file, line, column, code and source line, counted per kind, with next steps, stored as a
    check run."""
    tools = QBenchTools(config)
    result = tools.run_build_workflow("all", ["pkg"])
    assert result.success is False
    rows = {(e.tool, e.file, e.line, e.error_type) for e in result.errors}
    assert rows == {
        ("ruff.lint", "pkg/a.py", 1, "F401"),
        ("mypy.typecheck", "pkg/a.py", 5, "return-value"),
    }
    lint = next(e for e in result.errors if e.tool == "ruff.lint")
    assert (lint.column, lint.severity, lint.code_snippet) == (8, "error", "import os")
    summary = result.summary
    assert (summary.total_errors, summary.type_errors, summary.lint_errors) == (2, 1, 1)
    assert summary.build_errors == 0 and summary.duration_seconds > 0
    assert "Fix type error in pkg/a.py:5 (return-value)" in result.next_steps
    assert "Fix lint error in pkg/a.py:1 (F401)" in result.next_steps
    statuses = {c.tool: c.status for c in result.checks}
    assert statuses["ruff.lint"] == statuses["mypy.typecheck"] == "failed"
    assert statuses["python.compile"] == "clean"
    run_dir = config.qbench_dir / "runs" / result.run_id
    assert (run_dir / "check.json").is_file() and (run_dir / "mypy.typecheck.log").is_file()
    assert "FAILED" in build.build_text(result, 5000)


def test_check_types_choose_the_checkers(config: ServerConfig) -> None:
    """issue 13.7: lint runs ruff only, typecheck mypy only (pyright not installed here); a
    clean path succeeds."""
    tools = QBenchTools(config)
    lint = tools.run_build_workflow("lint", ["pkg/a.py"])
    assert [c.tool for c in lint.checks] == ["ruff.lint"]
    assert (lint.summary.lint_errors, lint.summary.type_errors) == (1, 0)
    clean = tools.run_build_workflow("typecheck", ["pkg/clean.py"])
    assert clean.checks[0].tool == "mypy.typecheck"
    assert clean.success is True and clean.errors == []
    assert clean.next_steps == ["Nothing to fix: every checker is clean"]


def test_get_run_output_pages_the_checkers_logs(config: ServerConfig) -> None:
    """issue 13.7: a check run's streams are its checkers' logs: 'stdout' is the first one, a
    checker's name its own; a stream it lacks is refused with the list."""
    tools = QBenchTools(config)
    result = tools.run_build_workflow("all", ["pkg"])
    first = tools.get_run_output(result.run_id)
    assert first.stream == "ruff.lint" and first.run.tool == "ruff.lint"
    assert '"code": "F401"' in first.text
    assert first.note is not None and "mypy.typecheck" in first.note
    mypy_page = tools.get_run_output(result.run_id[:12], "mypy.typecheck", 0, 1)
    assert mypy_page.lines == 1 and "return-value" in mypy_page.text
    with pytest.raises(ToolFailure, match=r"its streams: ruff\.lint, mypy\.typecheck"):
        tools.get_run_output(result.run_id, "markdown")


def test_paths_and_check_types_are_refused_outside_the_rules(config: ServerConfig) -> None:
    """issue 13.7: paths outside the root, options and unknown check types are tool errors;
    nothing runs."""
    tools = QBenchTools(config)
    with pytest.raises(ToolFailure, match="outside the project root"):
        tools.run_build_workflow("lint", ["/etc"])
    with pytest.raises(ToolFailure, match=r"holds '\.\.'"):
        tools.run_build_workflow("lint", ["../x"])
    with pytest.raises(ToolFailure, match="options are not accepted"):
        tools.run_build_workflow("lint", ["--fix"])
    with pytest.raises(ToolFailure, match="check_type 'tsc' is not one of"):
        tools.run_build_workflow("tsc")  # type: ignore[arg-type]
    assert not (config.qbench_dir / "runs").exists()


def test_one_check_run_at_a_time(config: ServerConfig) -> None:
    """issue 13.7: while a run goes on (a test run or a check run) a check run is refused."""
    tools = QBenchTools(config)
    assert tools._lock.acquire(blocking=False)
    tools.active_check = "20260101-000000-abcd"
    try:
        with pytest.raises(ToolFailure, match="check run 20260101-000000-abcd"):
            tools.run_build_workflow("lint")
    finally:
        tools.active_check = None
        tools._lock.release()


GRANDCHILD = "sleep 600 & echo $!; sleep 600; echo woke"
"""sh starts a sleep in its process group and prints its pid at once (a Python had a second to
start, start its child and print, which a loaded machine could take), then sleeps and says
``woke`` at its natural end: a log without it means the checker was stopped before, however
slow the machine."""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_hanging_checker_is_killed_with_its_group_at_the_timeout(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: at timeout_seconds the checker's process group is killed; the result says it
    crashed and where its log is; the lock is free again."""
    plan = Plan(ruff.TOOL, ["sh", "-c", GRANDCHILD], ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", lambda cwd, paths, scratch: plan)
    tools = QBenchTools(config)
    result = tools.run_build_workflow("lint", timeout_seconds=2.0)
    assert result.success is False and result.checks[0].status == "crashed"
    assert "did not finish in 2 s" in (result.checks[0].note or "")
    assert any("get_run_output" in step for step in result.next_steps)
    log = config.qbench_dir / "runs" / result.run_id / "ruff.lint.log"
    assert "woke" not in log.read_text()  # stopped before its natural end
    grandchild = int(log.read_text().split()[0])
    deadline = time.monotonic() + 60  # ends when it is gone
    while Path(f"/proc/{grandchild}").exists() and time.monotonic() < deadline:
        stat = Path(f"/proc/{grandchild}/stat").read_text(errors="replace")
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.05)
    stat_path = Path(f"/proc/{grandchild}/stat")
    assert not stat_path.exists() or stat_path.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    assert tools.active_check is None and tools._lock.acquire(blocking=False)


def test_a_stop_event_ends_the_check_run(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: the event the server sets on cancellation stops the checker at once."""
    plan = Plan(ruff.TOOL, ["sh", "-c", GRANDCHILD], ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", lambda cwd, paths, scratch: plan)
    tools = QBenchTools(config)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    result = tools.run_build_workflow("lint", stop=stop)
    assert "was cancelled and stopped" in (result.checks[0].note or "")
    log = config.qbench_dir / "runs" / result.run_id / "ruff.lint.log"
    assert "woke" not in log.read_text()  # stopped before its natural end
    tools.wait_for_checks(1.0)


def report_of(diagnostics: list[Diagnostic]) -> CheckReport:
    """A stored check run of ruff with ``diagnostics``."""
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    meta = RunMeta(
        run_id="20260101-000000-abcd", tool="ruff.lint", started_at=moment, command=[], cwd="."
    )
    return CheckReport(
        meta=ReportMeta(qbench_version="0", created_at=moment),
        run=meta.model_copy(update={"tool": "qbench.run_build_workflow"}),
        checks=[CheckRun(run=meta, status="failed", diagnostics=diagnostics)],
    )


def test_warnings_only_when_strict() -> None:
    """issue 13.7: warnings are counted but not listed, and do not fail, unless strict."""
    found = [
        Diagnostic(tool="ruff.lint", severity="warning", message="w", code="W1", file="a.py"),
        Diagnostic(tool="ruff.lint", severity="info", message="i", code="I1", file="a.py"),
    ]
    loose = build_result(report_of(found), strict=False, budget=12_000)
    assert loose.success is True and loose.errors == [] and loose.summary.warnings == 1
    assert any("strict=true" in step for step in loose.next_steps)
    strict = build_result(report_of(found), strict=True, budget=12_000)
    assert strict.success is False
    assert [(e.severity, e.error_type) for e in strict.errors] == [("warning", "W1")]


def test_500_errors_stay_within_the_budget() -> None:
    """issue 13.7: the result fits the response budget; the first errors are listed, the rest
    counted in truncated."""
    found = [
        Diagnostic(
            tool="mypy.typecheck",
            severity="error",
            message="Incompatible types " * 20,
            code="arg-type",
            file=f"pkg/m{i}.py",
            line=i + 1,
            column=1,
            code_snippet="x = f(y)  " * 10,
        )
        for i in range(500)
    ]
    result = build_result(report_of(found), strict=False, budget=12_000)
    assert json_size(result) <= 12_000
    assert result.summary.total_errors == 500
    assert result.truncated == 500 - len(result.errors) > 0
    assert result.errors[0].file == "pkg/m0.py"
    assert len(build.build_text(result, 12_000)) <= 12_000


def test_the_call_log_counts_the_checkers_logs_as_replaced(config: ServerConfig) -> None:
    """issue 13.7/13.8: a run_build_workflow response stands for every checker's raw log."""
    run_dir = config.qbench_dir / "runs" / "20260101-000000-abcd"
    run_dir.mkdir(parents=True)
    (run_dir / "ruff.lint.log").write_bytes(b"x" * 300)
    (run_dir / "mypy.typecheck.stderr.log").write_bytes(b"y" * 20)
    (run_dir / "check.json").write_text("{}")
    content = {"run_id": "20260101-000000-abcd"}
    assert CallLog(config).replaced_bytes("run_build_workflow", {}, content) == 320


def test_the_log_of_the_check_run_going_on_can_be_paged(
    config: ServerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: while a checker runs, get_run_output pages what it has written so far (no
    exit status yet); a test run is refused meanwhile; the stop event then ends it."""
    code = "import time; print('partial line', flush=True); time.sleep(60)"
    plan = Plan(ruff.TOOL, [sys.executable, "-c", code], ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", lambda cwd, paths, scratch: plan)
    tools = QBenchTools(config)
    stop = threading.Event()
    worker = threading.Thread(target=tools.run_build_workflow, args=("lint", (), False, 60, stop))
    worker.start()
    try:
        deadline = time.monotonic() + 120  # ends at the first line
        page = None
        while time.monotonic() < deadline:
            run_id = tools.active_check
            if run_id and run_id != "starting":
                try:
                    page = tools.get_run_output(run_id, "ruff.lint")
                except ToolFailure:  # the checker's log is not created yet
                    page = None
                if page is not None and page.lines:
                    break
            time.sleep(0.05)
        assert page is not None and page.text == "partial line"
        assert page.run.exit_code is None and page.run.tool == "ruff.lint"
        with pytest.raises(ToolFailure, match="check run"):
            tools.start_collection()
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive() and tools.active_check is None


def test_without_paths_mypy_checks_the_files_the_project_configures(
    root: Path, config: ServerConfig
) -> None:
    """issue 19.3: no paths given, mypy checks what ``[tool.mypy] files`` names (clean here),
    not ``.`` (which has a type error outside those files)."""
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text('[tool.mypy]\nfiles = ["pkg/clean.py"]\n')
    result = QBenchTools(config).run_build_workflow("typecheck")
    assert [(c.tool, c.status) for c in result.checks] == [("mypy.typecheck", "clean")]
    assert result.success is True and result.errors == []
