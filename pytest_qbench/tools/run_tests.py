"""Run the chosen test runners (pytest, vitest, jest) on one project and gather their results
into one report: each result names its runner; a runner that could not run or did not end as
documented is an error (``collection_errors``), never a pass.

Shared by ``qbench test`` and the MCP server's ``run_test_workflow``.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone
from pathlib import Path
from types import ModuleType
from typing import Literal

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import CoverageReport
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.execute import run_supervised
from pytest_qbench.tools.js import jest
from pytest_qbench.tools.js import vitest
from pytest_qbench.tools.js.build import build_project
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.project import find_binary
from pytest_qbench.tools.js.project import find_projects
from pytest_qbench.tools.js.project import workspace_packages


RunnerName = Literal["pytest", "vitest", "jest"]
RUNNERS: tuple[RunnerName, ...] = ("pytest", "vitest", "jest")
"""Every test runner, in the order they run."""
CHOICES = (*RUNNERS, "all")
"""What ``--runner`` and ``test_type`` take (``all``: every runner that applies)."""
DEFAULT_TIMEOUT = 900.0
"""Seconds one runner may take before it is stopped (and its results count as an error)."""
PYTEST_DATA = frozenset({0, 1, 5})
"""pytest's exit statuses that mean its report is the answer (5: no tests collected)."""
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")
"""Files that make a project a Python one (pytest applies)."""


@dataclass
class Gathered:
    """What the runners gave."""

    runners: list[str] = field(default_factory=list)
    """The runners that ran (or were asked for and could not)."""
    results: list[TestResult] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    """Runners that could not run, crashed or timed out; packages that did not build."""
    warnings: list[Diagnostic] = field(default_factory=list)
    checks: list[CheckRun] = field(default_factory=list)
    """Each workspace package's build, when asked for."""
    coverage: CoverageReport | None = None
    environment: Environment | None = None
    """pytest's, when pytest ran."""
    exit_code: int = 0
    """0 when every runner ran and nothing failed; 1 otherwise."""

    @property
    def projects_build_failed(self) -> int:
        """Packages whose build did not succeed."""
        return sum(1 for check in self.checks if check.status != "clean")


def parse_choice(value: str) -> list[RunnerName] | None:
    """``vitest`` as ``["vitest"]``; ``all`` as ``None`` (every runner that applies).

    Raises:
        QBenchError: an unknown runner.
    """
    if value == "all":
        return None
    if value not in RUNNERS:
        raise QBenchError(
            f"--runner has unknown runner {value!r}; use one of {', '.join(CHOICES)}",
            slug="test-options",
        )
    return [value]


def applicable(root: Path) -> list[RunnerName]:
    """The runners that apply to ``root``: pytest for a Python project (or one with no
    JavaScript project at all), vitest and jest for a JavaScript project listing them."""
    found: list[RunnerName] = []
    packages = [p for project in find_projects(root) for p in units(project)]
    if not packages or is_python(root):
        found.append("pytest")
    for name, module in (("vitest", vitest), ("jest", jest)):
        if any(module.detect(p) for p in packages):
            found.append(name)  # type: ignore[arg-type]
    return found


def is_python(root: Path) -> bool:
    """Whether ``root`` looks like a Python project."""
    if any((root / name).is_file() for name in PYTHON_MARKERS):
        return True
    return any(root.glob("test_*.py")) or any(root.glob("tests/**/*.py"))


def units(project: Package) -> list[Package]:
    """The packages a runner is run in: the workspace packages, then the project itself."""
    return [*workspace_packages(project), project]


def run_tests(
    root: Path,
    chosen: list[RunnerName] | None,
    paths: list[str],
    log_dir: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    build: bool = False,
    pytest_args: list[str] | None = None,
    python: str | None = None,
    stop: threading.Event | None = None,
    on_runner: Callable[[str], None] | None = None,
) -> Gathered:
    """Run each runner of ``chosen`` (``None``: every one that applies) in ``root``; its raw
    output goes to ``log_dir``. With ``build``, each JavaScript workspace package's ``build``
    script runs first, and a package that fails to build has its tests skipped."""
    names = chosen if chosen is not None else applicable(root)
    gathered = Gathered(runners=list(names))
    skipped: set[Path] = set()
    if build:
        for project in find_projects(root):
            runs = build_project(project, root, log_dir, timeout, stop)
            gathered.checks += runs
            for run in runs:
                gathered.problems += run.diagnostics
                if run.status != "clean":
                    skipped |= {p.path for p in units(project) if p.name == run.package}
    for name in names:
        if on_runner is not None:
            on_runner(name)
        if name == "pytest":
            run_pytest(root, paths, log_dir, timeout, gathered, pytest_args or [], python, stop)
        else:
            run_js(name, root, paths, log_dir, timeout, gathered, skipped, stop)
    failed = any(r.outcome in ("failed", "error") for r in gathered.results)
    gathered.exit_code = 1 if failed or gathered.problems else 0
    return gathered


def run_js(
    name: RunnerName,
    root: Path,
    paths: list[str],
    log_dir: Path,
    timeout: float,
    gathered: Gathered,
    skipped: set[Path],
    stop: threading.Event | None,
) -> None:
    """vitest or jest, in each package that uses it."""
    module = vitest if name == "vitest" else jest
    found = False
    for project in find_projects(root):
        for package in runner_units(project, module.detect):
            found = True
            if package.path in skipped:
                continue
            selected = paths_in(package.path, root, paths)
            if paths and not selected:
                continue
            run_js_unit(
                name, module, package, project, root, selected, log_dir, timeout, gathered, stop
            )
    if not found:
        gathered.problems.append(
            problem(
                name, f"{name}: no package.json under {root} lists {name}", "runner-not-applicable"
            )
        )


def runner_units(project: Package, detect: Callable[[Package], bool]) -> list[Package]:
    """The workspace packages using the runner; else the project itself, when it does."""
    using = [p for p in workspace_packages(project) if detect(p)]
    return using or ([project] if detect(project) else [])


def paths_in(package: Path, root: Path, paths: list[str]) -> list[str]:
    """``paths`` (relative to ``root``) that are inside ``package``, relative to it."""
    inside = []
    for given in paths:
        try:
            inside.append((root / given).resolve().relative_to(package.resolve()).as_posix())
        except ValueError:
            continue
    return [p for p in inside if p != "."]


def run_js_unit(
    name: str,
    module: ModuleType,
    package: Package,
    project: Package,
    root: Path,
    paths: list[str],
    log_dir: Path,
    timeout: float,
    gathered: Gathered,
    stop: threading.Event | None,
) -> None:
    """One runner in one package: its JSON report parsed, or a problem saying why not."""
    label = f"{name} ({package.name})"
    binary = find_binary(name, package.path, project.path)
    if binary is None:
        message = f"{label}: not installed: no node_modules/.bin/{name} (run the package manager's install)"
        gathered.problems.append(problem(name, message, "runner-not-installed"))
        return
    with tempfile.TemporaryDirectory(prefix=f"qbench-{name}-") as scratch:
        output = Path(scratch) / "report.json"
        command = module.command(binary, output, paths)
        log_name = f"{name}-{len([d for d in log_dir.glob(f'{name}-*.log')]) + 1}"
        done = run_supervised(command, package.path, log_dir, log_name, timeout, stop)
        if done.problem is not None:
            gathered.problems.append(
                problem(
                    name,
                    f"{label}: {done.problem}; raw output in {done.log.name}",
                    "runner-crashed",
                )
            )
            return
        if done.exit_code not in module.OK_CODES or not output.is_file():
            why = f"exit code {done.exit_code}" + ("" if output.is_file() else ", no JSON report")
            gathered.problems.append(
                problem(
                    name, f"{label} crashed: {why}; raw output in {done.log.name}", "runner-crashed"
                )
            )
            return
        try:
            results = module.parse(output.read_bytes(), root, package.path)
        except CheckOutputError as exc:
            gathered.problems.append(
                problem(name, f"{label}: {exc}; raw output in {done.log.name}", "runner-crashed")
            )
            return
    gathered.results += results
    if done.exit_code != 0 and not any(r.outcome in ("failed", "error") for r in results):
        gathered.problems.append(
            problem(
                name,
                f"{label} exited {done.exit_code} with no failed test; raw output in {done.log.name}",
                "runner-crashed",
            )
        )


def run_pytest(
    root: Path,
    paths: list[str],
    log_dir: Path,
    timeout: float,
    gathered: Gathered,
    args: list[str],
    python: str | None,
    stop: threading.Event | None,
) -> None:
    """pytest with qbench's plugin, as a child process; its report.json read back."""
    with tempfile.TemporaryDirectory(prefix="qbench-pytest-") as scratch:
        output = Path(scratch) / "report.json"
        command = [
            python or sys.executable,
            "-m",
            "pytest",
            "-p",
            "qbench",
            f"--qbench-dir={Path(scratch) / 'store'}",
            f"--qbench-json={output}",
            *args,
            *paths,
        ]
        done = run_supervised(command, root, log_dir, "pytest", timeout, stop)
        if done.problem is not None:
            gathered.problems.append(
                problem(
                    "pytest",
                    f"pytest: {done.problem}; raw output in {done.log.name}",
                    "runner-crashed",
                )
            )
            return
        try:
            report = TestReport.model_validate_json(output.read_bytes())
        except (OSError, ValueError) as exc:
            why = f"exit code {done.exit_code}, no readable report ({type(exc).__name__})"
            gathered.problems.append(
                problem(
                    "pytest",
                    f"pytest crashed: {why}; raw output in {done.log.name}",
                    "runner-crashed",
                )
            )
            return
    gathered.results += report.results
    gathered.problems += report.collection_errors
    gathered.warnings += report.warnings
    gathered.coverage = report.coverage
    gathered.environment = report.environment
    data = done.exit_code in PYTEST_DATA or (done.exit_code == 2 and report.collection_errors)
    if not data:
        gathered.problems.append(
            problem(
                "pytest",
                f"pytest exited {done.exit_code}; raw output in {done.log.name}",
                "runner-crashed",
            )
        )


def problem(tool: str, message: str, code: str) -> Diagnostic:
    """A runner that could not give its results: an error."""
    return Diagnostic(tool=tool, severity="error", message=message, code=code)


def environment() -> Environment:
    """Where ``qbench test`` ran, when pytest did not say."""
    import platform

    return Environment(
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        platform=platform.platform(),
        pytest_version="",
        qbench_version=__version__,
    )


def started_now() -> datetime:
    """Now, UTC."""
    return datetime.now(timezone.utc)


def build_report(
    gathered: Gathered, run_id: str, started: datetime, command: list[str], cwd: Path
) -> TestReport:
    """One report of the run: every runner's results, the runners' problems as collection
    errors (counted among ``errors``), the packages' builds as ``checks``."""
    from pytest_qbench.report.aggregate import Aggregator

    aggregator = Aggregator(slowest=0)
    results = [r.model_dump(mode="json") for r in gathered.results]
    for record in results:
        aggregator.add_result(record)
    for diagnostic in gathered.problems:
        aggregator.add_collection_error(diagnostic)
    completed = started_now()
    duration = (completed - started).total_seconds()
    summary = ReportSummary.model_validate(
        {**aggregator.summary(duration), "projects_build_failed": gathered.projects_build_failed}
    )
    run = RunMeta(
        run_id=run_id,
        tool="+".join(gathered.runners) or "none",
        started_at=started,
        completed_at=completed,
        exit_code=gathered.exit_code,
        cwd=str(cwd),
        command=command,
    )
    return TestReport(
        meta=ReportMeta(qbench_version=__version__, created_at=completed),
        run=run,
        environment=gathered.environment or environment(),
        summary=summary,
        results=gathered.results,
        collection_errors=gathered.problems,
        warnings=gathered.warnings,
        coverage=gathered.coverage,
        checks=gathered.checks,
    )


def merge_report(report: TestReport, gathered: Gathered) -> TestReport:
    """``report`` (pytest's) with the other runners' results, problems and builds added: one
    run, its summary the sum, its exit status failed when either failed."""
    others = build_report(gathered, report.run.run_id, started_now(), [], Path(report.run.cwd))
    code = report.run.exit_code
    if gathered.exit_code and code in (0, 5, None):
        code = gathered.exit_code
    tool = "+".join(dict.fromkeys([report.run.tool, *gathered.runners]))
    return report.model_copy(
        update={
            "run": report.run.model_copy(update={"exit_code": code, "tool": tool}),
            "summary": report.summary + others.summary,
            "results": [*report.results, *others.results],
            "collection_errors": [*report.collection_errors, *others.collection_errors],
            "checks": [*report.checks, *others.checks],
        }
    )
