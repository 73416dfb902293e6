"""Test generators compared on real modules: ``qbench generate``, Pynguin and ``hypothesis write``.

For each target module (pure-Python modules from PyPI, pinned, nobody here wrote them) and each
tool, in a fresh copy of a small project holding the module and a minimal existing suite (one
test that imports the module, so "before" is the module's import-time coverage), with the same
time budget ``--budget`` seconds per module per tool:

1. run the tool (its wall time is measured), writing its tests to ``tests/generated/``;
2. run pytest over the existing test and the generated ones, recording each test's outcome:
   passed (and xfailed, Pynguin's expected-exception tests) are *kept*, every other outcome
   (failed, error, xpassed, skipped, a file that does not collect) is *dropped*;
3. measure line coverage of the target with coverage.py, running pytest over the existing test
   plus the kept tests only: the same measurement for every tool, never a tool's own figure.

Prints a Markdown table: module | tool | coverage before | coverage after | tests kept | tests
dropped | wall s, then the notes (a skipped tool, a generator that failed, qbench's own figures
next to the measured ones) and the exact commands run.

Usage::

    python benchmarks/generate_compare.py [--budget 60] [--rounds 1]
        [--modules inflection strutils] [--tools qbench pynguin hypothesis-write]
        [--pynguin /tmp/pynguin310/bin/pynguin] [--hypothesis /tmp/hypwrite/bin/hypothesis]
        [--qbench-checkout PATH] [--json out.json] [--md out.md]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any


CHECKOUT = Path(__file__).resolve().parent.parent
WORK_DIR = CHECKOUT / "benchmarks" / ".work" / "genbench"
GENERATED = "tests/generated"
TOOLS = (
    "qbench",
    "qbench-hypothesis",
    "qbench-template",
    "qbench+llm",
    "qbench-llm",
    "qbench+pynguin",
    "pynguin",
    "hypothesis-write",
)
SCRIPTED_MODEL = CHECKOUT / "benchmarks" / "_scripted_model.py"
"""The ``--llm-command`` of ``qbench+llm``: a script, not a model (see its docstring)."""
DEFAULT_TOOLS = ("qbench", "pynguin", "hypothesis-write")


@dataclass(frozen=True)
class Target:
    """A module from a pinned wheel on PyPI, copied out as ``<module>.py``."""

    module: str
    requirement: str
    member: str

    @property
    def label(self) -> str:
        """``module (project==version)``."""
        return f"{self.module} ({self.requirement})"


TARGETS = {
    "inflection": Target("inflection", "inflection==0.5.1", "inflection/__init__.py"),
    "strutils": Target("strutils", "boltons==25.0.0", "boltons/strutils.py"),
}

# Loaded into the measuring pytest with ``-p``: one JSON line per event, appended to
# $GENBENCH_OUTCOMES as it happens, so that a run killed by a test (out of memory, os._exit)
# still says which tests finished and which one was running.
OUTCOME_PLUGIN = """
import json
import os


def _write(**event):
    with open(os.environ["GENBENCH_OUTCOMES"], "a") as handle:
        handle.write(json.dumps(event) + "\\n")


def pytest_collectreport(report):
    if report.failed:
        _write(collect_error=report.nodeid)


def pytest_runtest_logstart(nodeid, location):
    _write(start=nodeid)


def pytest_runtest_logreport(report):
    if report.failed:
        outcome = "failed" if report.when == "call" else "error"
    elif report.skipped:
        outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
    elif report.when == "call":
        outcome = "xpassed" if hasattr(report, "wasxfail") else "passed"
    else:
        return
    _write(nodeid=report.nodeid, outcome=outcome)


def pytest_sessionfinish(session):
    _write(finished=True)
"""

PUBLIC_FUNCTIONS = """
import importlib, inspect, json, sys
module = importlib.import_module(sys.argv[1])
names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
print(json.dumps(sorted(
    n for n in names
    if inspect.isfunction(getattr(module, n, None))
    and getattr(module, n).__module__ == module.__name__
)))
"""

KEPT = ("passed", "xfailed")


@dataclass
class Row:
    """One tool on one module in one round."""

    module: str
    tool: str
    round: int
    coverage_before: float | None = None
    coverage_after: float | None = None
    kept: int | None = None
    dropped: int | None = None
    wall_s: float | None = None
    commands: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: bool = False
    own: dict[str, Any] = field(default_factory=dict)
    """qbench's own JSON output (qbench rows only)."""


@dataclass
class Settings:
    """What every run shares."""

    budget: int
    python: str
    pynguin: str
    hypothesis: str
    qbench_checkout: Path
    pynguin_mutation_time: int
    work_dir: Path
    memory_mib: int
    qbench_args: list[str]


@dataclass
class Done:
    """A finished (or killed) command."""

    exit_code: int
    wall_s: float
    output: str
    timed_out: bool


def run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    log: Path | None = None,
    memory_mib: int | None = None,
) -> Done:
    """Run a command in its own process group; kill the whole group at the timeout.

    ``memory_mib`` caps the child's address space: a generated test that builds a list of
    billions of integers then fails with MemoryError instead of taking the shared machine's RAM.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=None if memory_mib is None else functools.partial(cap_memory, memory_mib),
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        timed_out = True
    wall = time.perf_counter() - started
    if log is not None:
        log.write_text(f"$ {shlex.join(argv)}\n{output}", encoding="utf-8")
    return Done(proc.returncode, wall, output, timed_out)


def cap_memory(mib: int) -> None:
    """In the child: limit its address space to ``mib`` MiB."""
    limit = mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def base_env(pythonpath: list[Path]) -> dict[str, str]:
    """The environment of every child: no PYTHONPATH of ours, plugins not autoloaded."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return env


# --- the targets --------------------------------------------------------------------------------


def fetch_target(target: Target, python: str, src_dir: Path) -> Path:
    """``<src_dir>/<module>.py`` from the pinned wheel, downloaded with pip when not there yet."""
    dest = src_dir / f"{target.module}.py"
    if dest.exists():
        return dest
    wheels = src_dir / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            target.requirement,
            "-d",
            str(wheels),
        ],
        check=True,
    )
    project, version = target.requirement.split("==")
    wheel = next(wheels.glob(f"{project.replace('-', '_')}-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        dest.write_bytes(archive.read(target.member))
    return dest


def make_project(root: Path, source: Path, module: str) -> Path:
    """A fresh project: the module, one existing test that imports it, pytest's settings."""
    if root.exists():
        shutil.rmtree(root)
    (root / GENERATED).mkdir(parents=True)
    shutil.copy(source, root / f"{module}.py")
    (root / "tests" / "test_existing.py").write_text(
        f"import {module}\n\n\ndef test_imports():\n    assert {module}.__name__ == {module!r}\n",
        encoding="utf-8",
    )
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\ntestpaths = ["tests"]\n',
        encoding="utf-8",
    )
    return root


def public_functions(settings: Settings, project: Path, module: str) -> list[str]:
    """The module's public functions (``__all__`` when it has one), as the measuring Python sees."""
    done = run([settings.python, "-c", PUBLIC_FUNCTIONS, module], project, base_env([project]), 60)
    if done.exit_code != 0:
        raise RuntimeError(f"cannot import {module}: {done.output.strip()[-500:]}")
    names: list[str] = json.loads(done.output.strip().splitlines()[-1])
    return names


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Outcomes:
    """What one pytest run (or several, around tests that killed it) said about each test."""

    results: dict[str, str] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    finished: bool = False


def read_outcomes(path: Path, into: Outcomes) -> str | None:
    """Add the events of one run to ``into``; return the test that was running when it died."""
    running = None
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    for event in map(json.loads, lines):
        if "start" in event:
            running = event["start"]
        elif "nodeid" in event:
            if into.results.get(event["nodeid"]) not in ("failed", "error"):
                into.results[event["nodeid"]] = event["outcome"]
            running = None
        elif "collect_error" in event:
            into.collect_errors.append(event["collect_error"])
        elif event.get("finished"):
            into.finished = True
    return None if into.finished else running


def run_pytest(
    settings: Settings, project: Path, selected: list[str], name: str, skip: list[str]
) -> tuple[Outcomes, Path]:
    """pytest under coverage.py over ``selected`` less ``skip``: outcomes and the data file."""
    out = project / ".genbench"
    out.mkdir(exist_ok=True)
    (out / "_genbench_outcomes.py").write_text(OUTCOME_PLUGIN, encoding="utf-8")
    data_file = out / f"{name}.coverage"
    events = out / f"{name}.events.jsonl"
    events.unlink(missing_ok=True)
    env = base_env([out, project])
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["GENBENCH_OUTCOMES"] = str(events)
    argv = [settings.python, "-m", "coverage", "run", f"--data-file={data_file}", "-m", "pytest"]
    argv += ["-q", "-p", "no:cacheprovider", "-p", "_genbench_outcomes"]
    argv += ["--continue-on-collection-errors", *selected]
    argv += [f"--deselect={nodeid}" for nodeid in skip]
    timeout = max(600, 10 * settings.budget)
    run(argv, project, env, timeout, out / f"{name}.log", settings.memory_mib)
    outcomes = Outcomes()
    outcomes.crashed += filter(None, [read_outcomes(events, outcomes)])
    return outcomes, data_file


def run_to_the_end(settings: Settings, project: Path, selected: list[str]) -> Outcomes:
    """pytest over ``selected``; when a test kills the run, again without it and the finished."""
    total = Outcomes()
    for attempt in range(100):
        skip = [*total.results, *total.crashed]
        part, _ = run_pytest(settings, project, selected, f"all-{attempt}", skip)
        total.results.update(part.results)
        total.collect_errors += [e for e in part.collect_errors if e not in total.collect_errors]
        total.crashed += part.crashed
        if part.finished or not part.crashed:
            total.finished = part.finished
            break
    return total


def line_coverage(settings: Settings, project: Path, data_file: Path, module: str) -> float | None:
    """Line coverage % of ``<module>.py`` in a coverage data file, read by ``coverage json``."""
    report = data_file.with_suffix(".json")
    argv = [settings.python, "-m", "coverage", "json", f"--data-file={data_file}", "-q"]
    argv += ["-o", str(report), f"--include={module}.py"]
    done = run(argv, project, base_env([]), 120)
    if done.exit_code != 0:
        return None
    files = json.loads(report.read_text("utf-8"))["files"]
    return float(files[f"{module}.py"]["summary"]["percent_covered"])


def count_tests(path: Path) -> int:
    """How many test functions a generated file defines (for a file that did not collect)."""
    return len(re.findall(r"^\s*(?:async\s+)?def test_", path.read_text("utf-8"), re.M))


def classify(
    project: Path, outcomes: Outcomes, findings: list[str]
) -> tuple[list[str], int, list[str]]:
    """Generated tests kept (node ids), how many dropped, and notes on what was not a test run;
    the tests of ``findings`` files are counted apart."""
    prefix = GENERATED + "/"
    mine = {n: o for n, o in outcomes.results.items() if n.startswith(prefix)}
    found = [n for n in mine if n.split("::")[0] in findings]
    mine = {n: o for n, o in mine.items() if n not in found}
    kept = [n for n, o in mine.items() if o in KEPT]
    dropped = len(mine) - len(kept) + len(outcomes.crashed)
    notes = [f"{n} killed the pytest run (counted as dropped)" for n in outcomes.crashed]
    xfailed = sum(1 for o in mine.values() if o == "xfailed")
    if xfailed:
        notes.append(f"{xfailed} of the {len(kept)} kept are xfailed (expected exceptions)")
    for nodeid in outcomes.collect_errors:
        if nodeid.startswith(prefix) and nodeid.endswith(".py"):
            lost = count_tests(project / nodeid)
            dropped += lost
            notes.append(f"{nodeid} did not collect: its {lost} tests counted as dropped")
    if found:
        notes.append(f"{len(found)} findings (strict xfails) in {', '.join(findings)}: apart")
    if not outcomes.finished:
        notes.append("the pytest run over the generated tests did not finish")
    return kept, dropped, notes


def measure(settings: Settings, project: Path, module: str, row: Row, findings: list[str]) -> None:
    """Outcomes of the generated tests, then coverage with the existing test plus the kept ones.

    ``findings`` are files of tests that fail on purpose (qbench's strict xfails, possible bugs):
    run, but counted apart, neither kept nor dropped, and left out of the coverage after.
    """
    existing = ["tests/test_existing.py"]
    _, data_file = run_pytest(settings, project, existing, "before", [])
    row.coverage_before = line_coverage(settings, project, data_file, module)
    if not any((project / GENERATED).rglob("*.py")):
        row.kept, row.dropped, row.coverage_after = 0, 0, row.coverage_before
        row.notes.append("no test file generated")
        return
    outcomes = run_to_the_end(settings, project, ["tests"])
    kept, row.dropped, notes = classify(project, outcomes, findings)
    row.notes += notes
    row.kept = len(kept)
    after, data_file = run_pytest(settings, project, [*existing, *kept], "after", [])
    if not after.finished:
        row.notes.append("the coverage run over the kept tests did not finish: no figure")
        return
    row.coverage_after = line_coverage(settings, project, data_file, module)
    again = [n for n in kept if after.results.get(n) not in KEPT]
    if again:
        row.notes.append(f"{len(again)} kept tests did not pass again in the coverage run")


# --- the tools ----------------------------------------------------------------------------------


def qbench_available(settings: Settings) -> str | None:
    """None when ``python -m pytest_qbench generate`` runs from the checkout, else why not."""
    env = base_env([settings.qbench_checkout])
    probe = "import pytest_qbench, sys; sys.stdout.write(pytest_qbench.__file__)"
    where = run([settings.python, "-c", probe], settings.work_dir, env, 60)
    if where.exit_code != 0:
        return f"pytest_qbench does not import from {settings.qbench_checkout}"
    if not Path(where.output.strip()).resolve().is_relative_to(settings.qbench_checkout.resolve()):
        return f"pytest_qbench imports from {where.output.strip()}, not the checkout"
    argv = [settings.python, "-m", "pytest_qbench", "generate", "--help"]
    done = run(argv, settings.work_dir, env, 60)
    if done.exit_code != 0:
        return (
            f"qbench generate not available in {settings.qbench_checkout} "
            f"(`{shlex.join(argv[1:])}` exited {done.exit_code})"
        )
    return None


def run_qbench(settings: Settings, project: Path, module: str, tool: str, row: Row) -> None:
    """``qbench generate MODULE.py --strategy S --out tests/generated --json --timeout T
    [--qbench-args]``.

    ``--timeout T`` is qbench generate's budget for the whole generation (issue 14 fix; a
    checkout older than that reads it as the per-test limit): then it starts no new candidate,
    writes and measures what it kept. The final measurement comes on top, so it is still killed
    only at ``max(600, 10 × budget)`` s; its wall time is in the table.
    ``qbench+pynguin`` also hands it Pynguin's Python with the budget as Pynguin's search time.
    """
    strategies = {"qbench-hypothesis": "hypothesis", "qbench-template": "template"}
    strategy = {**strategies, "qbench-llm": "llm"}.get(tool, "hybrid")
    argv = [settings.python, "-m", "pytest_qbench", "generate", f"{module}.py"]
    argv += ["--strategy", strategy, "--out", GENERATED, "--json"]
    argv += ["--timeout", str(settings.budget), *settings.qbench_args]
    if tool in ("qbench+llm", "qbench-llm"):
        argv += ["--llm-command", shlex.join([settings.python, str(SCRIPTED_MODEL)])]
    if tool == "qbench+pynguin":
        python = str(Path(settings.pynguin).parent / "python")
        argv += ["--pynguin-python", python, "--pynguin-seconds", str(settings.budget)]
    row.commands.append(f"PYTHONPATH={settings.qbench_checkout} {shlex.join(argv)}")
    env = base_env([settings.qbench_checkout])
    limit = max(600, 10 * settings.budget)
    done = run(argv, project, env, limit, project / "tool.log", settings.memory_mib)
    row.wall_s = done.wall_s
    if done.timed_out or done.exit_code not in (0, 1):
        row.notes.append(f"qbench generate exited {done.exit_code}, timed out: {done.timed_out}")
    elif done.exit_code == 1:
        row.notes.append("qbench generate exited 1: a written test fails, or nothing verified")
    row.own = last_json(done.output)
    if not row.own:
        row.notes.append("qbench generate printed no JSON")


def last_json(text: str) -> dict[str, Any]:
    """The last JSON object in a command's output that starts a line (empty when none)."""
    decoder = json.JSONDecoder()
    for match in reversed(list(re.finditer(r"^\{", text, re.M))):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def with_qbench_figures(row: Row) -> None:
    """qbench's own kept and dropped next to the measured ones: the tests it dropped are not in
    its files, so they are added to the measured dropped; its figures go to the notes."""
    own = row.own
    dropped = own.get("dropped")
    if isinstance(dropped, list) and row.dropped is not None:
        row.dropped += len(dropped)
    auto = own.get("auto_generated", {})
    figures = {
        "kept": own.get("kept"),
        "dropped": len(dropped) if isinstance(dropped, list) else dropped,
        "findings": len(own.get("findings") or []),
        "coverage_before": own.get("coverage_before"),
        "coverage_achieved": auto.get("coverage_achieved") if isinstance(auto, dict) else None,
        "success": own.get("success"),
        "tokens_used": own.get("tokens_used"),
        "llm_requests": own.get("llm_requests"),
        "llm": (auto.get("generation_method") or {}).get("llm") if isinstance(auto, dict) else None,
        "problems": own.get("problems"),
    }
    row.notes.append(f"qbench's own figures: {json.dumps(figures)}")
    if own.get("kept") is not None and own.get("kept") != row.kept:
        row.notes.append(f"qbench says it kept {own.get('kept')}; {row.kept} of its tests pass")


def run_pynguin(settings: Settings, project: Path, module: str, round_: int, row: Row) -> None:
    """Pynguin (its own Python 3.10) with the budget as search time, its tests as pytest files."""
    out = project / ".pynguin-out"
    argv = [settings.pynguin, "--project-path", str(project), "--module-name", module]
    argv += ["--output-path", str(out), "--maximum-search-time", str(settings.budget)]
    argv += ["--maximum-mutation-time", str(settings.pynguin_mutation_time)]
    argv += ["--seed", str(round_), "--no-rich"]
    row.commands.append(f"PYNGUIN_DANGER_AWARE=1 {shlex.join(argv)}")
    env = base_env([])
    env["PYNGUIN_DANGER_AWARE"] = "1"
    scratch = Path(tempfile.mkdtemp(prefix="pynguin-", dir=project.parent))
    limit = 3 * settings.budget + settings.pynguin_mutation_time + 120
    done = run(argv, scratch, env, limit, project / "tool.log", settings.memory_mib)
    row.wall_s = done.wall_s
    if done.timed_out or done.exit_code != 0:
        row.notes.append(f"pynguin exited {done.exit_code}, timed out: {done.timed_out}")
    for path in out.glob("test_*.py") if out.exists() else []:
        shutil.copy(path, project / GENERATED / f"test_pynguin_{path.name[5:]}")


def run_hypothesis_write(settings: Settings, project: Path, module: str, row: Row) -> None:
    """``hypothesis write --style pytest`` on the module's public functions, within the budget.

    First one command naming them all (so that the ghostwriter can pair round-trips); if that
    fails, one command per function until the budget is spent, each failure noted.
    """
    functions = [f"{module}.{name}" for name in public_functions(settings, project, module)]
    env = base_env([project])
    started = time.perf_counter()
    argv = [settings.hypothesis, "write", "--style", "pytest", *functions]
    row.commands.append(f"PYTHONPATH=. {shlex.join(argv)} > {GENERATED}/test_hypothesis_write.py")
    done = run(argv, project, env, settings.budget, None, settings.memory_mib)
    if done.exit_code == 0 and not done.timed_out:
        (project / GENERATED / "test_hypothesis_write.py").write_text(done.output, "utf-8")
    else:
        row.notes.append(f"one command for all {len(functions)} functions failed: one each")
        write_one_by_one(settings, project, functions, started, row)
    row.wall_s = time.perf_counter() - started


def write_one_by_one(
    settings: Settings, project: Path, functions: list[str], started: float, row: Row
) -> None:
    """``hypothesis write`` per function, while the budget lasts."""
    env = base_env([project])
    failed = []
    for function in functions:
        left = settings.budget - (time.perf_counter() - started)
        if left <= 0:
            row.notes.append(f"budget spent before {function}")
            break
        argv = [settings.hypothesis, "write", "--style", "pytest", function]
        done = run(argv, project, env, left, None, settings.memory_mib)
        if done.exit_code == 0 and not done.timed_out:
            name = f"test_hw_{function.rsplit('.', 1)[1]}.py"
            (project / GENERATED / name).write_text(done.output, "utf-8")
        else:
            failed.append(function)
    if failed:
        row.notes.append(f"hypothesis write failed on {', '.join(failed)}")
    row.commands.append(f"PYTHONPATH=. {settings.hypothesis} write --style pytest FUNC (each)")


def run_tool(settings: Settings, project: Path, module: str, tool: str, round_: int) -> Row:
    """One tool on one module: generate, then measure."""
    row = Row(module=module, tool=tool, round=round_)
    if tool.startswith("qbench"):
        run_qbench(settings, project, module, tool, row)
    elif tool == "pynguin":
        run_pynguin(settings, project, module, round_, row)
    else:
        run_hypothesis_write(settings, project, module, row)
    findings = row.own.get("findings_file")
    measure(settings, project, module, row, [findings] if isinstance(findings, str) else [])
    if row.own:
        with_qbench_figures(row)
    return row


# --- the table ----------------------------------------------------------------------------------


def median(values: list[Any]) -> float | None:
    """Median of the values that are not None."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, spec: str) -> str:
    """A number, or a dash."""
    return "–" if value is None else format(value, spec)


def table(rows: list[Row]) -> str:
    """The Markdown table, medians over rounds."""
    lines = [
        "| module | tool | coverage before | coverage after | tests kept | tests dropped | wall s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    keys = list(dict.fromkeys((r.module, r.tool) for r in rows))
    for module, tool in keys:
        same = [r for r in rows if (r.module, r.tool) == (module, tool)]
        label = TARGETS[module].label if module in TARGETS else module
        if all(r.skipped for r in same):
            lines.append(f"| {label} | {tool} | skipped | | | | |")
            continue
        cells = [
            fmt(median([r.coverage_before for r in same]), ".1f") + " %",
            fmt(median([r.coverage_after for r in same]), ".1f") + " %",
            fmt(median([r.kept for r in same]), "g"),
            fmt(median([r.dropped for r in same]), "g"),
            fmt(median([r.wall_s for r in same]), ".1f"),
        ]
        lines.append(f"| {label} | {tool} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(rows: list[Row]) -> str:
    """Every row's notes and commands."""
    out: list[str] = []
    for row in rows:
        head = f"- {row.module} / {row.tool} / round {row.round}"
        out.extend(f"{head}: {note}" for note in row.notes)
        out.extend(f"{head}: `{command}`" for command in row.commands)
    return "\n".join(out)


# --- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=60, help="seconds per module per tool")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--modules", nargs="+", choices=sorted(TARGETS), default=sorted(TARGETS))
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(DEFAULT_TOOLS))
    parser.add_argument("--python", default=sys.executable, help="runs pytest and coverage")
    parser.add_argument("--pynguin", default="/tmp/pynguin310/bin/pynguin")
    parser.add_argument(
        "--pynguin-mutation-time",
        type=int,
        default=None,
        help="Pynguin's --maximum-mutation-time (assertion generation), default the budget",
    )
    parser.add_argument("--hypothesis", default="/tmp/hypwrite/bin/hypothesis")
    parser.add_argument("--qbench-checkout", type=Path, default=CHECKOUT)
    parser.add_argument(
        "--qbench-args",
        default="",
        help='more arguments of qbench generate, e.g. "--test-timeout 10"',
    )
    parser.add_argument("--work-dir", type=Path, default=WORK_DIR)
    parser.add_argument(
        "--memory-mib",
        type=int,
        default=4096,
        help="address-space cap of every tool and pytest run (a generated test can allocate "
        "without bound)",
    )
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--md", type=Path, help="write the table, notes and commands here")
    return parser.parse_args(argv)


def settings_of(args: argparse.Namespace) -> Settings:
    """Settings from the command line."""
    mutation = args.budget if args.pynguin_mutation_time is None else args.pynguin_mutation_time
    return Settings(
        budget=args.budget,
        python=args.python,
        pynguin=args.pynguin,
        hypothesis=args.hypothesis,
        qbench_checkout=args.qbench_checkout.resolve(),
        pynguin_mutation_time=mutation,
        work_dir=args.work_dir.resolve(),
        memory_mib=args.memory_mib,
        qbench_args=shlex.split(args.qbench_args),
    )


def missing_tool(settings: Settings, tool: str) -> str | None:
    """Why a tool cannot run here, or None."""
    if tool.startswith("qbench"):
        return qbench_available(settings)
    path = settings.pynguin if tool == "pynguin" else settings.hypothesis
    if not Path(path).exists() and shutil.which(path) is None:
        option = "--pynguin" if tool == "pynguin" else "--hypothesis"
        return f"{tool}: {path} not found (see benchmarks/README.md; or pass {option} PATH)"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run every tool on every module, print the table (and write it after every row)."""
    args = parse_args(argv)
    settings = settings_of(args)
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    sources = {
        m: fetch_target(TARGETS[m], settings.python, settings.work_dir) for m in args.modules
    }
    missing = {tool: missing_tool(settings, tool) for tool in args.tools}
    for why in filter(None, missing.values()):
        print(why, file=sys.stderr)
    rows: list[Row] = []
    for round_ in range(1, args.rounds + 1):
        for module in args.modules:
            for tool in args.tools:
                rows.append(one_row(settings, sources[module], module, tool, round_, missing[tool]))
                save(args, settings, rows)
    print(report_text(settings, rows))
    return 1 if any(r.coverage_after is None and not r.skipped for r in rows) else 0


def one_row(
    settings: Settings, source: Path, module: str, tool: str, round_: int, missing: str | None
) -> Row:
    """One tool on one module, or a skipped row saying why; an error becomes a note."""
    if missing:
        return Row(module, tool, round_, skipped=True, notes=[missing])
    print(f"round {round_}: {tool} on {module} ...", file=sys.stderr, flush=True)
    project = make_project(settings.work_dir / f"r{round_}" / module / tool, source, module)
    try:
        return run_tool(settings, project, module, tool, round_)
    except (OSError, RuntimeError, ValueError, KeyError) as error:
        return Row(module, tool, round_, notes=[f"failed: {error!r}; see {project}"])


def save(args: argparse.Namespace, settings: Settings, rows: list[Row]) -> None:
    """Write ``--md`` and ``--json`` with the rows so far."""
    if args.md:
        args.md.write_text(report_text(settings, rows) + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2), encoding="utf-8")


def report_text(settings: Settings, rows: list[Row]) -> str:
    """Table, then notes and commands."""
    head = (
        f"Budget {settings.budget} s per module per tool; coverage is line coverage of the module "
        f"measured by coverage.py under {settings.python} (pytest over the existing test plus "
        "the kept generated tests)."
    )
    return f"{head}\n\n{table(rows)}\n\n{notes(rows)}"


if __name__ == "__main__":
    sys.exit(main())
