"""Run the chosen test runners (pytest, vitest, jest) on one project and gather their results
into one report: each result names its runner; a runner that could not run or did not end as
documented is an error (``collection_errors``), never a pass.

Shared by ``qbench test`` and the MCP server's ``run_test_workflow``.
"""

from __future__ import annotations

import re
import sys
import tempfile
import threading
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Literal

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.summary_words import plural
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import CoverageReport
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.builtin.detect import is_python_project
from pytest_qbench.tools.execute import run_supervised
from pytest_qbench.tools.js import coverage_wrap
from pytest_qbench.tools.js import jest
from pytest_qbench.tools.js import node_test
from pytest_qbench.tools.js import script_checks
from pytest_qbench.tools.js import vitest
from pytest_qbench.tools.js.build import build_project
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.project import find_projects
from pytest_qbench.tools.js.project import workspace_packages
from pytest_qbench.tools.js.scripts import SCRIPT
from pytest_qbench.tools.js.scripts import invocations
from pytest_qbench.tools.js.scripts import parts_besides
from pytest_qbench.tools.js.scripts import stops_at_first_failure
from pytest_qbench.tools.js.scripts import wrappers
from pytest_qbench.tools.problems import CRASHED
from pytest_qbench.tools.problems import problem
from pytest_qbench.tools.runner import ANSI
from pytest_qbench.tools.runner import last_line
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Runner
from pytest_qbench.tools.spec import Unsupported


RunnerName = Literal["pytest", "vitest", "jest"]
RUNNERS: tuple[RunnerName, ...] = ("pytest", "vitest", "jest")
"""Every test runner, in the order they run."""
CHOICES = (*RUNNERS, "all")
"""What ``--runner`` and ``test_type`` take (``all``: every runner that applies)."""
DEFAULT_TIMEOUT = 900.0
"""Seconds one runner may take before it is stopped (and its results count as an error)."""
PYTEST_DATA = frozenset({0, 1, 5})
"""pytest's exit statuses that mean its report is the answer (5: no tests collected)."""
NO_TEST_IN_FILE = "no-test-in-file"
"""The code of the note naming the files a runner passed that hold no test."""


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
    passed_without_tests: list[str] = field(default_factory=list)
    """Files a runner ran and passed that hold no test (vitest's type-test files of
    assertions outside any test): with them the run ran something, as the runner says."""
    ran_in: dict[Path, tuple[Package, list[str]]] = field(default_factory=dict)
    """Each package a JavaScript runner ran in, with the runners that ran there."""
    parts_ran: set[tuple[Path, str]] = field(default_factory=set)
    """The commands of a package's test script qbench ran itself (``tsc --noEmit``, ``eslint
    .``, ``node --test``), by the package's directory: no parts left out."""
    coverage: CoverageReport | None = None
    environment: Environment | None = None
    """pytest's, when pytest ran."""
    exit_code: int = 0
    """0 when every runner ran and nothing failed; 1 otherwise."""

    @property
    def all_runners(self) -> list[str]:
        """The runners, then those of the test scripts' commands qbench ran (``node``)."""
        return list(dict.fromkeys([*self.runners, *(r.runner for r in self.results if r.runner)]))

    @property
    def ran(self) -> bool:
        """Whether a runner ran something: a test, or a file it passed holding none."""
        return bool(self.results or self.passed_without_tests)

    @property
    def projects_build_failed(self) -> int:
        """Packages whose build did not succeed."""
        return sum(1 for check in self.checks if check.status != "clean")


def parse_choice(value: str) -> list[str] | None:
    """``vitest`` as ``["vitest"]``; ``all`` as ``None`` (every runner that applies); any
    runner a plugin registered by its name.

    Raises:
        QBenchError: an unknown runner (the message lists the registered ones).
    """
    if value == "all":
        return None
    if value not in RUNNERS:
        from pytest_qbench.tools.registry import registry

        try:
            registry().runner(value)
        except QBenchError as exc:
            raise QBenchError(f"--runner: {exc}; or all", slug="test-options") from None
    return [value]


def applicable(root: Path) -> list[str]:
    """The runners that apply to ``root``: pytest for a Python project (or one with no
    JavaScript project at all), vitest and jest for a JavaScript project listing them, and
    each runner of an installed plugin that says it applies."""
    found: list[str] = []
    packages = [p for project in find_projects(root) for p in units(project)]
    if not packages or is_python_project(root):
        found.append("pytest")
    for name, module in (("vitest", vitest), ("jest", jest)):
        if any(module.detect(p) for p in packages):
            found.append(name)
    return found + plugin_runners(root)


def plugin_runners(root: Path) -> list[str]:
    """The runners of installed plugins (not the built-in ones) that apply to ``root``; one
    whose detection raises is listed (it then fails when run, never passes silently)."""
    from pytest_qbench.tools.registry import registry

    found = []
    for name, registered in registry().runners.items():
        if name in RUNNERS:
            continue
        try:
            applies = registered.tool.applies(root)
        except Exception:  # a third party's code: run it, and let it fail visibly
            applies = True
        if applies:
            found.append(name)
    return found


def units(project: Package) -> list[Package]:
    """The packages a runner is run in: the workspace packages, then the project itself."""
    return [*workspace_packages(project), project]


def run_tests(
    root: Path,
    chosen: list[str] | None,
    paths: list[str],
    log_dir: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    build: bool = False,
    pytest_args: list[str] | None = None,
    python: str | None = None,
    stop: threading.Event | None = None,
    on_runner: Callable[[str], None] | None = None,
    whole: bool | None = None,
) -> Gathered:
    """Run each runner of ``chosen`` (``None``: every one that applies) in ``root``; its raw
    output goes to ``log_dir``. With ``build``, each JavaScript workspace package's ``build``
    script runs first, and a package that fails to build has its tests skipped. ``whole``:
    whether the run stands for the project's tests (default: ``chosen`` is ``None``), so that
    a part of a test script no runner ran fails it (`note_parts_not_run`)."""
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
        elif name in ("vitest", "jest"):
            run_js(name, root, paths, log_dir, timeout, gathered, skipped, stop)
        else:
            run_registered(name, root, root, paths, log_dir, timeout, gathered, stop)
    if not paths:
        whole = chosen is None if whole is None else whole
        ran = frozenset({"build"} if build else set())
        idle = not_run_in(root, gathered) if whole else []
        if whole:
            run_script_parts(root, gathered, idle, log_dir, timeout, stop, ran)
        note_parts_not_run(gathered, explicit=not whole, ran=ran)
        if whole:
            note_scripts_not_run(gathered, idle, ran)
    if any_failed(gathered.results) or gathered.problems:
        gathered.exit_code = 1
    else:  # as pytest: no test ran at all is "no tests collected", not "all passed"
        gathered.exit_code = 0 if gathered.ran else int(PytestExit.NO_TESTS_COLLECTED)
    return gathered


def run_js(
    name: str,
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
        ran, failed = 0, []
        for package in runner_units(project, module.detect, name):
            found = True
            if package.path in skipped:
                continue
            selected = paths_in(package.path, root, paths)
            if selected is None:
                continue
            results, problems = len(gathered.results), len(gathered.problems)
            run_registered(name, package.path, root, selected, log_dir, timeout, gathered, stop)
            gathered.ran_in.setdefault(package.path, (package, []))[1].append(name)
            refused = any(p.code == coverage_wrap.REFUSED for p in gathered.problems[problems:])
            if not refused:
                note_wrappers(name, package, gathered)
            ran += 1
            if any_failed(gathered.results[results:]) or len(gathered.problems) > problems:
                failed.append(package.name)
        if ran > 1 and failed:
            note_bail(name, project, ran, failed, gathered)
    if not found:
        gathered.problems.append(
            problem(
                name, f"{name}: no package.json under {root} lists {name}", "runner-not-applicable"
            )
        )


def note_wrappers(name: str, package: Package, gathered: Gathered) -> None:
    """A note for each coverage wrapper the test script runs ``name`` under (``c8 vitest
    run``) that qbench did not run (one checking a threshold refused the runner: no note)."""
    for wrapper in wrappers(package, name):
        message = coverage_wrap.note(f"{name} ({package.path.name})", wrapper)
        gathered.warnings.append(
            Diagnostic(tool=name, severity="info", message=message, code=coverage_wrap.NOT_RUN)
        )


PART_NOT_RUN = "script-part-not-run"
"""The code of the error (the note, with ``--runner``) naming a command of a package's
``test`` script that qbench's run did not run."""


def note_parts_not_run(
    gathered: Gathered, explicit: bool, ran: frozenset[str] = frozenset()
) -> None:
    """For each package a JavaScript runner ran in, the commands of its ``test`` script that
    run none of the runners that ran there (``"test": "vitest run && node --test test/"``,
    ``jest && tsc``): ``npm test`` fails when one of them fails, so a run without them is not
    the package's tests. Every runner that applies (no ``--runner``): an error, the run is
    not complete (fails closed); one runner asked for by name: a note (the run is that
    runner's, as asked). ``ran``: the scripts qbench ran itself (``build`` under
    ``--build``)."""
    for package, runners in gathered.ran_in.values():
        parts = parts_left(gathered, package, runners, ran)
        if not parts:
            continue
        label = f"{'+'.join(runners)} ({package.path.name})"
        message = (
            f"{label}: the package's {SCRIPT!r} script also runs {listed(parts)}, which qbench "
            "does not run: "
        )
        if explicit:
            message += "this run is the runner's alone, as asked, not the whole test script"
            gathered.warnings.append(
                Diagnostic(tool=runners[0], severity="info", message=message, code=PART_NOT_RUN)
            )
            continue
        message += (
            "the run is not the whole test script, and is not called complete (qbench runs "
            "only tsc, tsgo, eslint, oxlint, biome, prettier and oxfmt --check and node --test "
            "commands itself, written plainly); run those "
            f"tests with vitest or jest, or ask for the runner alone (--runner {runners[0]})"
        )
        gathered.problems.append(problem(runners[0], message, PART_NOT_RUN))


def run_script_parts(
    root: Path,
    gathered: Gathered,
    idle: list[tuple[Package, list[str]]],
    log_dir: Path,
    timeout: float,
    stop: threading.Event | None,
    ran: frozenset[str] = frozenset(),
) -> None:
    """Run the commands of each package's ``test`` script that no runner ran and qbench can
    run as written: ``node --test`` (`node_test`: its tests into the run, named ``node``) and
    the checkers ``tsc`` and ``eslint`` (`script_checks`: their diagnostics into the run,
    errors failing it as they fail ``npm test``); each is then no part left out
    (`Gathered.parts_ran`). ``idle``: the packages no runner ran in (`not_run_in`)."""
    for package, runners in [*gathered.ran_in.values(), *idle]:
        for part in parts_besides(package, runners, ran=ran):
            tests = node_test.run_part(part, package.path, root, log_dir, timeout, stop)
            if tests is not None:
                gathered.parts_ran.add((package.path, part))
                gathered.results += tests.results
                gathered.problems += tests.problems
                gathered.warnings += tests.notes
                continue
            done_part = script_checks.run_part(part, package.path, log_dir, timeout, stop)
            if done_part is None:
                continue
            gathered.parts_ran.add((package.path, part))
            for diagnostic in done_part.diagnostics:
                moved = diagnostic.model_copy(
                    update={"file": rebase_path(diagnostic.file, package.path, root)}
                )
                if moved.severity == "error":
                    gathered.problems.append(moved)
                else:
                    gathered.warnings.append(moved)
            gathered.problems += done_part.problems


def not_run_in(root: Path, gathered: Gathered) -> list[tuple[Package, list[str]]]:
    """The packages with a ``test`` script no runner ran in (as `note_scripts_not_run` looks
    at them), with the run's runners."""
    found: list[tuple[Package, list[str]]] = []
    for project in find_projects(root):
        for package in units(project):
            script = package.scripts.get(SCRIPT)
            if package.path in gathered.ran_in or not isinstance(script, str):
                continue
            if PLACEHOLDER not in script:
                found.append((package, gathered.runners))
    return found


def parts_left(
    gathered: Gathered, package: Package, runners: list[str], ran: frozenset[str]
) -> list[str]:
    """The commands of ``package``'s test script that none of ``runners`` ran and qbench did
    not run itself (`run_script_parts`)."""
    return [
        part
        for part in parts_besides(package, runners, ran=ran)
        if (package.path, part) not in gathered.parts_ran
    ]


def listed(parts: list[str]) -> str:
    """The first three of ``parts``, quoted, and how many more."""
    shown = ", ".join(f"`{part[:200]}`" for part in parts[:3])
    return shown + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")


WORKSPACE_BAIL = "workspace-bail"
"""The code of the note saying qbench ran every workspace package where the root's ``test``
script stops at the first that fails."""


PLACEHOLDER = "no test specified"
"""In the ``test`` script ``npm init`` writes (``echo "Error: no test specified" && exit 1``):
no tests to run."""


def note_scripts_not_run(
    gathered: Gathered, idle: list[tuple[Package, list[str]]], ran: frozenset[str] = frozenset()
) -> None:
    """Each package no runner ran in whose ``test`` script runs something no runner of the run
    ran (``"test": "c8 --100 node --test && tstyche"``; pytest's ``"test": "pytest"`` is
    pytest's run): an error, the project's tests not all run (fails closed). A workspace's
    root too, but for its commands running every package's test script (``pnpm -r test``,
    `scripts.runs_workspaces`), which qbench runs package by package; not ``npm init``'s
    placeholder. ``idle``: those packages (`not_run_in`)."""
    for package, runners in idle:
        parts = parts_left(gathered, package, runners, ran)
        if not parts:
            continue
        message = (
            f"{package.path.name}: the package's {SCRIPT!r} script runs {listed(parts)}, which "
            "no runner of qbench ran: the project's tests are not all run, and the run is "
            "not called complete; run those tests with vitest or jest and the checks with "
            "qbench check, or name the runners to run with --runner"
        )
        gathered.problems.append(problem("test-script", message, PART_NOT_RUN))


NOTES = frozenset({NO_TEST_IN_FILE, PART_NOT_RUN, WORKSPACE_BAIL, coverage_wrap.NOT_RUN})
"""The codes of the runners' notes ``qbench test`` prints (``NOTE vitest: ...``)."""


def note_bail(name: str, project: Package, ran: int, failed: list[str], gathered: Gathered) -> None:
    """A note when the workspace's ``test`` script stops at the first package that fails
    (``pnpm -r test``) and one did: qbench ran every package (as ``pnpm -r --no-bail test``),
    so its counts hold tests that the project's own run leaves unrun; the verdict is the same
    (failed)."""
    command = stops_at_first_failure(project)
    if command is None:
        return
    shown = ", ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
    message = (
        f"ran the tests of every one of the {ran} workspace packages; the root's "
        f"{SCRIPT!r} script (`{command[:200]}`) stops at the first package that fails ({shown} "
        "failed here), leaving untested the packages it had not started, so its own run may "
        "count fewer tests: these counts are every package's, the verdict the same"
    )
    gathered.warnings.append(
        Diagnostic(tool=name, severity="info", message=message, code=WORKSPACE_BAIL)
    )


def runner_units(project: Package, detect: Callable[[Package], bool], name: str) -> list[Package]:
    """The workspace packages using the runner: listing it, or whose ``test`` script runs it
    (a workspace's runner installed once at its root, each package's ``"test": "vitest run"``
    run with the package's own configuration by the root's ``pnpm -r test``); else the project
    itself, when it lists it."""
    using = [p for p in workspace_packages(project) if detect(p) or invocations(p, name)]
    return using or ([project] if detect(project) else [])


def paths_in(package: Path, root: Path, paths: list[str]) -> list[str] | None:
    """``paths`` (relative to ``root``) that are inside ``package``, relative to it; ``[]``
    when one of them is the package itself (or one above it: all its tests), ``None`` when
    none is inside it (its tests are not asked for)."""
    inside = []
    for given in paths:
        path = (root / given).resolve()
        if package.resolve().is_relative_to(path):
            return []
        try:
            inside.append(path.relative_to(package.resolve()).as_posix())
        except ValueError:
            continue
    return inside if inside or not paths else None


def run_registered(
    name: str,
    cwd: Path,
    root: Path,
    paths: list[str],
    log_dir: Path,
    timeout: float,
    gathered: Gathered,
    stop: threading.Event | None,
) -> None:
    """The runner registered as ``name`` (a built-in plugin's or an installed one's) in
    ``cwd``: a JavaScript package, or the root for a plugin's runner."""
    from pytest_qbench.tools.registry import registry

    runner = registry().runner(name).tool
    run_plugin(runner, cwd, root, paths, log_dir, timeout, gathered, stop, cwd.name)


def run_plugin(
    runner: Runner,
    cwd: Path,
    root: Path,
    paths: list[str],
    log_dir: Path,
    timeout: float,
    gathered: Gathered,
    stop: threading.Event | None,
    where: str,
) -> None:
    """A runner of the plugin interface planned and run in ``cwd``: its machine-readable
    report parsed, its results' files made relative to ``root``; or a problem saying why not
    (not installed, crashed, timed out, an undocumented exit status, an unreadable report)."""
    label = f"{runner.name} ({where})"
    name = runner.name
    log_name = f"{name}-{len(list(log_dir.glob(f'{name}-*.log'))) + 1}"
    with tempfile.TemporaryDirectory(prefix=f"qbench-{name}-") as scratch:
        try:
            plan = runner.plan(cwd, paths, Path(scratch))
        except NotInstalled as exc:
            gathered.problems.append(problem(name, f"{label}: {exc}", "runner-not-installed"))
            return
        except Unsupported as exc:
            message = f"{label}: not run: {exc}"
            gathered.problems.append(problem(name, message, "runner-options-refused"))
            return
        except Exception as exc:  # a third party's planner: its failure is the runner's
            message = f"{label} could not be planned: {type(exc).__name__}: {str(exc)[:300]}"
            gathered.problems.append(problem(name, message, CRASHED))
            return
        done = run_supervised(plan.command, cwd, log_dir, log_name, timeout, stop, plan.env)
        raw_in = f"raw output in {done.log.name}"
        if done.problem is not None:
            gathered.problems.append(problem(name, f"{label}: {done.problem}; {raw_in}", CRASHED))
            return
        source = plan.output or done.log  # without a report file: its output (stdout+stderr)
        if done.exit_code not in plan.ok_codes or not source.is_file():
            why = f"exit code {done.exit_code}" + ("" if source.is_file() else ", no report")
            last = last_line(done.log.read_bytes()) if done.log.is_file() else ""
            why += f" ({last})" if last else ""
            gathered.problems.append(problem(name, f"{label} crashed: {why}; {raw_in}", CRASHED))
            return
        raw = source.read_bytes()
        try:
            results = plan.parse(raw, cwd)
        except CheckOutputError as exc:
            gathered.problems.append(problem(name, f"{label}: {exc}; {raw_in}", CRASHED))
            return
        except Exception as exc:  # a parser's own failure (a third party's too) is the runner's
            why = f"unparsable report ({type(exc).__name__}: {str(exc)[:300]})"
            gathered.problems.append(problem(name, f"{label} crashed: {why}; {raw_in}", CRASHED))
            return
    gathered.results += [rebase(result, cwd, root, name) for result in results]
    if done.exit_code == 0 and plan.passed_without_tests is not None:
        note_files_without_tests(plan.passed_without_tests(raw, cwd), cwd, root, label, gathered)
    if done.exit_code != 0 and not any_failed(results):
        unmet = coverage_thresholds_unmet(done.log)
        why = f": {'; '.join(unmet)}" if unmet else ""
        message = f"{label} exited {done.exit_code} with no failed test{why}; {raw_in}"
        gathered.problems.append(problem(name, message, CRASHED))


_THRESHOLD = re.compile(r"coverage threshold .*not met|does not meet .*threshold", re.I)


def coverage_thresholds_unmet(log: Path) -> list[str]:
    """The lines of a runner's log saying a coverage threshold was not met (jest's ``Jest:
    "global" coverage threshold for functions (100%) not met: 50%``, vitest's ``ERROR: Coverage
    for functions (50%) does not meet global threshold (100%)``), the first three: why it
    failed a run whose tests all passed (the test script's ``--coverage``)."""
    try:
        text = log.read_bytes().decode("utf-8", "replace")
    except OSError:
        return []
    lines = (ANSI.sub("", line).strip() for line in text.splitlines())
    return [line[:300] for line in lines if _THRESHOLD.search(line)][:3]


def note_files_without_tests(
    files: list[str], cwd: Path, root: Path, label: str, gathered: Gathered
) -> None:
    """The files (relative to ``cwd``) a runner passed that hold no test: kept, so a run of
    only these is the runner's pass, and named in a note."""
    if not files:
        return
    moved = [str(rebase_path(file, cwd, root)) for file in files]
    gathered.passed_without_tests += moved
    shown = ", ".join(moved[:5]) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
    message = (
        f"{label} passed {plural(len(moved), 'file')} holding no test ({shown}): type assertions "
        "outside any test, checked and passed, counted as no test, as the runner counts them"
    )
    gathered.warnings.append(
        Diagnostic(tool=label.split(" ")[0], severity="info", message=message, code=NO_TEST_IN_FILE)
    )


def rebase_path(path: str | None, cwd: Path, root: Path) -> str | None:
    """``path`` (relative to ``cwd``) relative to ``root``; as given when absolute, outside
    ``root`` or ``None``."""
    try:
        prefix = cwd.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path
    if path is None or prefix == "." or path.startswith(("/", "..")):
        return path
    return f"{prefix}/{path}"


def rebase(result: TestResult, cwd: Path, root: Path, runner: str) -> TestResult:
    """``result`` (files relative to ``cwd``) with its files relative to ``root``, naming its
    runner."""
    file = rebase_path(result.file, cwd, root)
    if file == result.file:
        return result.model_copy(update={"runner": runner})
    failure = result.failure
    if failure is not None:
        failure = failure.model_copy(update={"file": rebase_path(failure.file, cwd, root)})
    nodeid = result.nodeid
    if nodeid.startswith(result.file):
        nodeid = f"{file}{nodeid[len(result.file) :]}"
    return result.model_copy(
        update={"nodeid": nodeid, "file": file, "failure": failure, "runner": runner}
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
    elif done.exit_code == 1 and not failed_anything(report):
        gathered.problems.append(
            problem(
                "pytest", f"{unexplained_failure(report)}; raw output in {done.log.name}", CRASHED
            )
        )


def any_failed(results: Iterable[TestResult]) -> bool:
    """Whether a test of ``results`` failed or errored."""
    return any(r.outcome in ("failed", "error") for r in results)


def failed_anything(report: TestReport) -> bool:
    """Whether pytest's report holds a failed or errored test, or a collection error."""
    return any_failed(report.results) or bool(report.collection_errors)


def unexplained_failure(report: TestReport) -> str:
    """Why pytest exited 1 with no failed test: the gates that failed, else a plugin or a
    hook (pytest-cov's ``--cov-fail-under``, a conftest raising at the session's end)."""
    gates = [gate.detail for gate in report.gates if gate.passed is False]
    if gates:
        return f"pytest failed the run with no failed test: {'; '.join(gates)}"
    return "pytest exited 1 with no failed test: a plugin, a hook or a gate failed the run"


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
        tool="+".join(gathered.all_runners) or "none",
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
    if gathered.exit_code == 1 and code in (0, 5, None):
        code = 1
    elif code == PytestExit.NO_TESTS_COLLECTED and gathered.ran:
        code = 0
    tool = "+".join(dict.fromkeys([report.run.tool, *gathered.all_runners]))
    return report.model_copy(
        update={
            "run": report.run.model_copy(update={"exit_code": code, "tool": tool}),
            "summary": report.summary + others.summary,
            "results": [*report.results, *others.results],
            "collection_errors": [*report.collection_errors, *others.collection_errors],
            "checks": [*report.checks, *others.checks],
        }
    )
