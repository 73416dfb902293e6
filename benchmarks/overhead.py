"""How much CPU time and memory a pytest reporter adds to a run, qbench among its peers.

Generates a synthetic suite of N tests (mostly passing, some printing, ~5% failing with deep
tracebacks, skips, xfails, parametrized tests, spread over many files), then runs pytest on it
once per configuration and round: plain pytest, ``--junitxml``, pytest-json-report, pytest-html,
pytest-reportlog, allure-pytest (when installed) and qbench. Rounds are interleaved (every
configuration once per round, in a rotated or shuffled order) so that a noisy machine slows all of
them alike. Each run is a fresh subprocess with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and an
explicit ``-p`` for the plugin under test; its CPU time (user + sys) and peak RSS come from
``os.wait4``, called by a small launcher process (see ``_measure.py`` for why).

Every run must produce its output file(s) and exit with pytest's status for failed tests (1); a
run that wrote nothing, or crashed, is flagged in the table and in the JSON, never silently
counted.

``--method simultaneous`` (or ``both``: each round runs the sequential round and the pairs, in
turn first): on a shared host whose cores change speed from minute to minute, runs made one
after another do not see the same machine, and a 4 % difference drowns in a 30 % drift. So each
round runs, for every configuration X, plain pytest and X at the same time, each pinned to its
own core (``os.sched_setaffinity`` in the launcher, inherited by pytest), and takes the ratio of
their CPU times: both saw the host at the same moment. The cores are swapped every round, so
that neither configuration keeps the better core, and the core the first of the two to finish
frees runs an unmeasured run of the same configuration (ballast) until the other ends, so that
the longer run does not finish on a quieter machine. The result is the median over the rounds
of the per-round ratios, with their smallest and largest.

Why pairs (plain, X) in turn, and not every configuration at once: two cores give two runs at a
time; three or more runs on two cores would share cores, and time-shared runs evict each other's
caches at every switch, which the CPU time counts unequally. Each pair has plain pytest as its
own baseline, at its own moment, so a ratio never divides by a run made under another load.
``--aa`` pairs each configuration with its own twin (``plain`` beside ``plain'``): the
ratio must read 1.00, and the spread of its rounds is what the method cannot resolve.

Usage::

    python benchmarks/overhead.py --sizes 1000 10000 50000 --rounds 5 [--json out.json]
    python benchmarks/overhead.py --sizes 10000 --rounds 8 --method simultaneous \
        --configs plain junitxml qbench
    python benchmarks/overhead.py --sizes 10000 --rounds 8 --method both --aa \
        --configs plain qbench
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import Any

from _measure import exit_on_sigterm
from _measure import imported_package_revision
from _measure import measure


HERE = Path(__file__).resolve().parent
DEFAULT_WORK_DIR = HERE / ".work"
GENERATOR_VERSION = 1
EXPECTED_EXIT = 1  # pytest's status when some tests failed

# One hundred test slots: what a file of 100 tests holds (scaled for a shorter last file).
SLOT_COUNTS = {
    "plain": 57,  # passing, no output
    "print": 10,  # passing, prints one line
    "class": 10,  # passing method of a test class, with a fixture
    "param": 10,  # one case of a parametrized test
    "fail": 5,  # assertion 19 frames deep (a recursive helper)
    "skip_mark": 2,  # @pytest.mark.skip(reason=...)
    "skip_call": 2,  # pytest.skip(...) in the body
    "xfail": 3,  # @pytest.mark.xfail, fails as expected
    "xpass": 1,  # @pytest.mark.xfail, passes anyway (not strict)
}
OUTCOME_OF_KIND = {
    "plain": "passed",
    "print": "passed",
    "class": "passed",
    "param": "passed",
    "fail": "failed",
    "skip_mark": "skipped",
    "skip_call": "skipped",
    "xfail": "xfailed",
    "xpass": "xpassed",
}
RECURSION_DEPTH = 18
SKIP_REASONS = ("not supported on this platform", "needs a GPU", "backend unavailable")


# --- the generated suite --------------------------------------------------------------------


@dataclass(frozen=True)
class Suite:
    """A generated test suite and the outcomes pytest must report for it."""

    path: Path
    total: int
    outcomes: dict[str, int]
    files: int


def slot_pattern(seed: int = 1234) -> list[str]:
    """The 100 slot kinds of a full file, interleaved in a fixed pseudo-random order."""
    slots = [kind for kind, count in SLOT_COUNTS.items() for _ in range(count)]
    random.Random(seed).shuffle(slots)
    return slots


def module_source(
    module: int, count: int, pattern: Sequence[str], depth: int = RECURSION_DEPTH
) -> tuple[str, dict[str, int]]:
    """Source of one test module holding ``count`` tests, and its expected outcome counts.

    A failing test fails ``depth + 1`` frames below itself (a recursive helper).
    """
    kinds = [pattern[j % len(pattern)] for j in range(count)]
    outcomes: dict[str, int] = {}
    for kind in kinds:
        outcome = OUTCOME_OF_KIND[kind]
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    lines = [
        f'"""Generated by benchmarks/overhead.py: module {module} ({count} tests)."""',
        "",
        "import pytest",
        "",
        f"DEPTH = {depth}",
        "",
        "",
        "def _descend(level, value):",
        '    """Recurse ``level`` frames, then fail: a deep traceback like real helpers make."""',
        "    if level == 0:",
        '        assert value == -1, f"value {value} never reached the sentinel"',
        "    return _descend(level - 1, value + 1)",
        "",
        "",
        "@pytest.fixture",
        "def numbers():",
        "    return list(range(10))",
        "",
    ]
    params = 0
    methods: list[int] = []
    for j, kind in enumerate(kinds):
        name = f"test_{kind}_{module:04d}_{j:03d}"
        if kind == "param":
            params += 1
            continue
        if kind == "class":
            methods.append(j)
            continue
        lines.append("")
        if kind == "plain":
            lines += [f"def {name}():", f"    assert {j} + 1 == {j + 1}"]
        elif kind == "print":
            lines += [
                f"def {name}():",
                f'    print("module {module} test {j}: checked {j} items, all fine")',
                f"    assert sum(range({j})) >= 0",
            ]
        elif kind == "fail":
            lines += [
                f"def {name}():",
                f'    print("module {module} test {j}: about to descend")',
                f"    _descend(DEPTH, {j})",
            ]
        elif kind == "skip_mark":
            reason = SKIP_REASONS[j % len(SKIP_REASONS)]
            lines += [f'@pytest.mark.skip(reason="{reason}")', f"def {name}():", "    assert False"]
        elif kind == "skip_call":
            reason = SKIP_REASONS[(j + 1) % len(SKIP_REASONS)]
            lines += [f"def {name}():", f'    pytest.skip("{reason}")']
        elif kind == "xfail":
            lines += [
                f'@pytest.mark.xfail(reason="known bug #{j}")',
                f"def {name}():",
                f"    assert {j} == {j + 1}",
            ]
        elif kind == "xpass":
            lines += [
                '@pytest.mark.xfail(reason="fixed upstream?")',
                f"def {name}():",
                "    assert True",
            ]
        lines.append("")
    if params:
        lines += [
            "",
            f'@pytest.mark.parametrize("n", range({params}))',
            f"def test_param_{module:04d}(n):",
            "    assert n * 2 == n + n",
            "",
        ]
    if methods:
        lines += ["", f"class TestGroup{module:04d}:"]
        for j in methods:
            lines += [
                f"    def test_method_{j:03d}(self, numbers):",
                f"        assert len(numbers) == 10 and {j} >= 0",
                "",
            ]
    return "\n".join(lines).rstrip("\n") + "\n", outcomes


def generate_suite(
    work_dir: Path, total: int, per_file: int, depth: int = RECURSION_DEPTH
) -> Suite:
    """Write a suite of ``total`` tests, ``per_file`` per module (reused when already there).

    ``depth``: how deep below the test its failures fail; a suite with another depth than the
    default gets its own directory.
    """
    suffix = "" if depth == RECURSION_DEPTH else f"-d{depth}"
    path = work_dir / f"suite-{total}-{per_file}{suffix}"
    manifest_path = path / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("generator") == GENERATOR_VERSION:
            return Suite(path, manifest["total"], manifest["outcomes"], manifest["files"])
    if path.exists():
        shutil.rmtree(path)
    tests = path / "tests"
    tests.mkdir(parents=True)
    # Its own ini file, so the project's pyproject.toml (addopts, filterwarnings) stays out.
    (path / "pytest.ini").write_text("[pytest]\n")
    pattern = slot_pattern()
    outcomes: dict[str, int] = {}
    files = 0
    for start in range(0, total, per_file):
        count = min(per_file, total - start)
        source, counts = module_source(files, count, pattern, depth)
        (tests / f"test_mod_{files:04d}.py").write_text(source)
        for outcome, n in counts.items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
        files += 1
    manifest = {
        "generator": GENERATOR_VERSION,
        "total": total,
        "outcomes": outcomes,
        "files": files,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return Suite(path, total, outcomes, files)


# --- configurations -------------------------------------------------------------------------


Verifier = Callable[[Path, Suite], list[str]]


@dataclass(frozen=True)
class Config:
    """One way of running pytest: its extra arguments and how to check what it wrote."""

    name: str
    args: Callable[[Path], list[str]]
    verify: Verifier
    module: str | None = None
    """A module that must be importable for this configuration to run."""
    pythonpath: str | None = None
    """A checkout put first on ``PYTHONPATH`` (``--qbench-at``): another revision of qbench."""


def _nonempty(path: Path) -> list[str]:
    if not path.is_file():
        return [f"{path.name} missing"]
    if path.stat().st_size == 0:
        return [f"{path.name} empty"]
    return []


def _count_problem(what: str, found: int, expected: int) -> list[str]:
    return [] if found == expected else [f"{what}: {found}, expected {expected}"]


def verify_plain(out: Path, suite: Suite) -> list[str]:
    """Plain pytest writes no file."""
    return []


def verify_junit(out: Path, suite: Suite) -> list[str]:
    """junit.xml exists and its ``tests`` attribute counts every test."""
    path = out / "junit.xml"
    problems = _nonempty(path)
    if problems:
        return problems
    root = ET.parse(path).getroot()
    suite_el = root if root.tag == "testsuite" else root.find("testsuite")
    tests = int(suite_el.get("tests", "-1")) if suite_el is not None else -1
    return _count_problem("junit tests", tests, suite.total)


def verify_json_report(out: Path, suite: Suite) -> list[str]:
    """report.json exists and its summary counts every test."""
    path = out / "report.json"
    problems = _nonempty(path)
    if problems:
        return problems
    summary = json.loads(path.read_text())["summary"]
    return _count_problem("json-report summary.total", summary.get("total", -1), suite.total)


def verify_html(out: Path, suite: Suite) -> list[str]:
    """report.html exists and is not a stub."""
    path = out / "report.html"
    problems = _nonempty(path)
    if not problems and path.stat().st_size < 10_000:
        problems.append(f"report.html only {path.stat().st_size} bytes")
    return problems


def verify_reportlog(out: Path, suite: Suite) -> list[str]:
    """log.jsonl exists, has one call report per test, and ends with the session's finish."""
    path = out / "log.jsonl"
    problems = _nonempty(path)
    if problems:
        return problems
    calls = 0
    last = ""
    with path.open() as handle:
        for line in handle:
            last = line
            if '"when": "call"' in line or ('"when": "setup"' in line and '"skipped"' in line):
                calls += 1
    if '"SessionFinish"' not in last:
        problems.append("log.jsonl has no SessionFinish line")
    return problems + _count_problem("reportlog call/skip reports", calls, suite.total)


def verify_allure(out: Path, suite: Suite) -> list[str]:
    """One ``*-result.json`` per test."""
    directory = out / "allure"
    if not directory.is_dir():
        return ["allure directory missing"]
    found = sum(1 for _ in directory.glob("*-result.json"))
    return _count_problem("allure result files", found, suite.total)


def verify_qbench(out: Path, suite: Suite) -> list[str]:
    """results.jsonl, report.json and report.md exist; the summary matches the suite."""
    runs = sorted((out / "qbench" / "runs").glob("*")) if (out / "qbench").is_dir() else []
    if len(runs) != 1:
        return [f"expected one run directory, found {len(runs)}"]
    run = runs[0]
    problems = []
    for name in ("results.jsonl", "report.json", "report.md"):
        problems += _nonempty(run / name)
    if problems:
        return problems
    report = json.loads((run / "report.json").read_text())
    summary = report["summary"]
    problems += _count_problem("qbench summary.total", summary["total"], suite.total)
    problems += _count_problem("qbench results", len(report["results"]), suite.total)
    for outcome, field_name in (("failed", "failed"), ("skipped", "skipped")):
        expected = suite.outcomes.get(outcome, 0)
        problems += _count_problem(f"qbench summary.{field_name}", summary[field_name], expected)
    if report["run"]["interrupted"]:
        problems.append("qbench report marked interrupted")
    return problems


CONFIGS: tuple[Config, ...] = (
    Config("plain", lambda out: [], verify_plain),
    Config("junitxml", lambda out: [f"--junitxml={out / 'junit.xml'}"], verify_junit),
    Config(
        "json-report",
        lambda out: [
            "-p",
            "pytest_jsonreport.plugin",
            "--json-report",
            f"--json-report-file={out / 'report.json'}",
        ],
        verify_json_report,
        module="pytest_jsonreport",
    ),
    Config(
        "html",
        lambda out: [
            # pytest-html imports pytest-metadata's stash key: both must be loaded.
            "-p",
            "pytest_metadata.plugin",
            "-p",
            "pytest_html.plugin",
            f"--html={out / 'report.html'}",
            "--self-contained-html",
        ],
        verify_html,
        module="pytest_html",
    ),
    Config(
        "reportlog",
        lambda out: ["-p", "pytest_reportlog.plugin", f"--report-log={out / 'log.jsonl'}"],
        verify_reportlog,
        module="pytest_reportlog",
    ),
    Config(
        "allure",
        lambda out: ["-p", "allure_pytest.plugin", f"--alluredir={out / 'allure'}"],
        verify_allure,
        module="allure_pytest",
    ),
    Config(
        "qbench-html",
        lambda out: [
            "-p",
            "qbench",
            f"--qbench-dir={out / 'qbench'}",
            f"--qbench-html={out / 'report.html'}",
        ],
        verify_qbench,
        module="pytest_qbench",
    ),
    Config(
        "qbench",
        lambda out: ["-p", "qbench", f"--qbench-dir={out / 'qbench'}"],
        verify_qbench,
        module="pytest_qbench",
    ),
)
BASELINE = "plain"
COMMON_ARGS = ["-q", "-p", "no:cacheprovider"]
SEQUENTIAL = "sequential"
SIMULTANEOUS = "simultaneous"
TWIN_MARK = "'"
"""Ends the name of a configuration's twin in an A/A comparison (``plain'`` beside ``plain``)."""


# --- running and measuring ------------------------------------------------------------------


@dataclass
class Measurement:
    """One run of one configuration."""

    config: str
    size: int
    round: int
    cpu_s: float
    user_s: float
    sys_s: float
    wall_s: float
    max_rss_mib: float
    exit_code: int
    problems: list[str] = field(default_factory=list)
    method: str = SEQUENTIAL
    """``sequential`` (alone) or ``simultaneous`` (at the same time as ``partner``)."""
    core: int | None = None
    """The one core the run was pinned to, if it was."""
    partner: str | None = None
    """The configuration that ran at the same time (``simultaneous``)."""
    load: float | None = None
    """The host's load average over the last minute when the run started."""

    @property
    def ok(self) -> bool:
        """Whether the run exited as expected and wrote what it should."""
        return not self.problems


def child_env(pythonpath: str | None = None) -> dict[str, str]:
    """The environment of every pytest run: no autoloaded plugins, no user options, no colour."""
    env = dict(os.environ)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["COLUMNS"] = "120"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("FORCE_COLOR", None)
    env.pop("PY_COLORS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    # Measured as installed: pip leaves a package byte-compiled, and pytest keeps its rewritten
    # test modules. With PYTHONDONTWRITEBYTECODE, every run would compile each module from
    # source again, and measure the compiler (0.6 G instructions for qbench's modules).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    return env


def byte_compile(python: str, configs: Sequence[Config]) -> None:
    """Write the ``.pyc`` files of each qbench measured (its own checkout, or the installed
    one), as ``pip install`` does: no measured run compiles qbench's modules."""
    code = (
        "import compileall, os, pytest_qbench\n"
        "compileall.compile_dir(os.path.dirname(pytest_qbench.__file__), quiet=1)"
    )
    for pythonpath in {c.pythonpath for c in configs if c.name.startswith("qbench")}:
        subprocess.run([python, "-c", code], env=child_env(pythonpath), check=True)


def importable(python: str, module: str) -> bool:
    """Whether ``module`` can be imported by the interpreter that runs the benchmarks."""
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", code], env=child_env(), check=False).returncode == 0


def command(python: str, config: Config, out: Path) -> list[str]:
    """The pytest command line of ``config``, writing into ``out``."""
    return [python, "-m", "pytest", *COMMON_ARGS, *config.args(out), "tests"]


def run_once(
    python: str,
    config: Config,
    suite: Suite,
    out: Path,
    round_no: int,
    timeout: float,
    *,
    core: int | None = None,
    partner: Config | None = None,
) -> Measurement:
    """Run pytest once as a fresh process; measure it; check what it wrote.

    ``core``: pin the run to this core. ``partner``: the configuration run at the same time.
    """
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    log_path = out / "pytest-output.txt"
    load = os.getloadavg()[0]
    with log_path.open("wb") as log:
        usage = measure(
            command(python, config, out),
            cwd=suite.path,
            env=child_env(config.pythonpath),
            output=log,
            timeout=timeout,
            cores=() if core is None else (core,),
        )
    problems: list[str] = []
    if usage.timed_out:
        problems.append(f"killed after {timeout:g} s")
    if usage.exit_code != EXPECTED_EXIT:
        problems.append(f"exit code {usage.exit_code}, expected {EXPECTED_EXIT} (see {log_path})")
    try:
        problems += config.verify(out, suite)
    except Exception as exc:  # a malformed output file is a finding, not a benchmark crash
        problems.append(f"output unreadable: {type(exc).__name__}: {exc}")
    return Measurement(
        config=config.name,
        size=suite.total,
        round=round_no,
        cpu_s=usage.cpu_s,
        user_s=usage.user_s,
        sys_s=usage.sys_s,
        wall_s=usage.wall_s,
        max_rss_mib=usage.max_rss_mib,
        exit_code=usage.exit_code,
        problems=problems,
        method=SEQUENTIAL if partner is None else SIMULTANEOUS,
        core=usage.cores[0] if len(usage.cores) == 1 else None,
        partner=None if partner is None else partner.name,
        load=load,
    )


def schedule(
    configs: Sequence[Config], round_no: int, order: str, rng: random.Random
) -> list[Config]:
    """The configurations of one round: rotated by the round number, or shuffled."""
    items = list(configs)
    if order == "shuffle":
        rng.shuffle(items)
        return items
    shift = round_no % len(items)
    return items[shift:] + items[:shift]


WARM_SIZE = 100
"""Tests of the suite each reporter's configuration is warmed on before a size is measured."""


def warm_up(
    python: str, configs: Sequence[Config], suite: Suite, out_root: Path, args: argparse.Namespace
) -> None:
    """Unmeasured runs before a size's rounds: plain pytest on the suite, the others on a small
    one."""
    baseline = next(c for c in configs if c.name == BASELINE)
    for _ in range(args.warmup):  # compile the suite's .pyc files, warm the page cache
        run_once(python, baseline, suite, out_root / "warmup", 0, args.timeout)
    # Each other configuration once on a small suite: a checkout's first run compiles its
    # modules and report.md's template (Jinja's bytecode cache), which would add about 4 MiB
    # to that run's peak and its CPU, and land in the first measured round.
    small = generate_suite(out_root.parent, WARM_SIZE, args.per_file)
    for config in configs:
        if config is not baseline:
            run_once(python, config, small, out_root / "warmup" / config.name, 0, args.timeout)


def report_run(m: Measurement, rounds: int) -> None:
    """One line on stderr for a measured run."""
    flag = "" if m.ok else "  PROBLEM: " + "; ".join(m.problems)
    where = f" core {m.core} beside {m.partner}" if m.partner is not None else ""
    print(
        f"  n={m.size:>6} round {m.round}/{rounds} {m.config:<12} "
        f"cpu {m.cpu_s:7.2f}s  wall {m.wall_s:7.2f}s  rss {m.max_rss_mib:6.1f} MiB{where}{flag}",
        file=sys.stderr,
        flush=True,
    )


def sequential_round(
    python: str,
    configs: Sequence[Config],
    suite: Suite,
    out_root: Path,
    round_no: int,
    args: argparse.Namespace,
    rng: random.Random,
) -> list[Measurement]:
    """Every configuration once, one after the other, in the round's order."""
    measurements = []
    for config in schedule(configs, round_no - 1, args.order, rng):
        m = run_once(python, config, suite, out_root / config.name, round_no, args.timeout)
        report_run(m, args.rounds)
        measurements.append(m)
    return measurements


def run_size(
    python: str,
    configs: Sequence[Config],
    suite: Suite,
    work_dir: Path,
    args: argparse.Namespace,
) -> list[Measurement]:
    """Every round of every configuration on one suite, interleaved, one run at a time."""
    rng = random.Random(args.seed + suite.total)
    out_root = work_dir / f"out-{suite.total}"
    warm_up(python, configs, suite, out_root, args)
    measurements: list[Measurement] = []
    for round_no in range(1, args.rounds + 1):
        measurements += sequential_round(python, configs, suite, out_root, round_no, args, rng)
    return measurements


# --- simultaneous pairs ---------------------------------------------------------------------


Pair = tuple[Config, Config]


def twin(config: Config) -> Config:
    """The same configuration under another name, for an A/A comparison with itself."""
    return dataclasses.replace(config, name=config.name + TWIN_MARK)


def pairs_of(configs: Sequence[Config], same: bool = False) -> list[Pair]:
    """The pairs compared: (plain, X) for each other configuration, in order; with ``same``
    (an A/A run), each configuration beside its own twin.

    Pairs, not all at once: the host has two cores for us, and a ratio between two runs that
    shared the machine at the same moment needs both to have shared it alike. Plain pytest
    runs once in each pair, so every ratio has a baseline of its own moment.
    """
    if same:
        return [(config, twin(config)) for config in configs]
    base = next(c for c in configs if c.name == BASELINE)
    return [(base, config) for config in configs if config is not base]


def cores_of(round_no: int, cores: Sequence[int]) -> tuple[int, int]:
    """The cores of a pair's (first, second) run in a round: swapped every round, so that
    neither configuration keeps the better core (with an odd number of rounds, one order runs
    once more than the other)."""
    first, second = cores[0], cores[1]
    return (first, second) if round_no % 2 == 1 else (second, first)


PIN_AND_EXEC = (
    "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)


def ballast(
    python: str, config: Config, suite: Suite, out: Path, core: int
) -> subprocess.Popen[bytes]:
    """Start an unmeasured run of ``config`` pinned to ``core``."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return subprocess.Popen(
        [sys.executable, "-c", PIN_AND_EXEC, str(core), *command(python, config, out)],
        cwd=suite.path,
        env=child_env(config.pythonpath),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def keep_busy(until: Future[Measurement], start: Callable[[], subprocess.Popen[bytes]]) -> None:
    """Run ``start()``'s processes one after another until ``until`` is done, then kill the
    last: the core the first finisher of a pair freed stays as busy as it was, so the other
    run does not finish on a quieter machine (its caches and memory bandwidth less shared)."""
    proc: subprocess.Popen[bytes] | None = None
    try:
        while not until.done():
            if proc is None or proc.poll() is not None:
                proc = start()
            wait_for([until], timeout=0.05)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def run_pair(
    python: str,
    pair: Pair,
    suite: Suite,
    out_root: Path,
    round_no: int,
    cores: Sequence[int],
    timeout: float,
) -> list[Measurement]:
    """Run both configurations of ``pair`` at the same time, each pinned to its own core (the
    round's assignment); the first to finish is replaced by ballast until the other does."""
    out = out_root / SIMULTANEOUS
    placed = list(zip(pair, cores_of(round_no, cores), strict=True))
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(
                run_once,
                python,
                config,
                suite,
                out / config.name,
                round_no,
                timeout,
                core=core,
                partner=pair[1 - i],
            )
            for i, (config, core) in enumerate(placed)
        ]
        wait_for(futures, return_when=FIRST_COMPLETED)
        finished = [i for i, future in enumerate(futures) if future.done()]
        if len(finished) == 1:
            config, core = placed[finished[0]]
            start = partial(ballast, python, config, suite, out / f"ballast-{core}", core)
            keep_busy(futures[1 - finished[0]], start)
        return [future.result() for future in futures]


def simultaneous_round(
    python: str,
    pairs: Sequence[Pair],
    suite: Suite,
    out_root: Path,
    round_no: int,
    args: argparse.Namespace,
) -> list[Measurement]:
    """Each pair at once, the pairs one after another, rotated by the round."""
    measurements = []
    shift = (round_no - 1) % len(pairs)
    for pair in [*pairs[shift:], *pairs[:shift]]:
        for m in run_pair(python, pair, suite, out_root, round_no, args.cores, args.timeout):
            report_run(m, args.rounds)
            measurements.append(m)
    return measurements


def run_size_methods(
    python: str,
    configs: Sequence[Config],
    suite: Suite,
    work_dir: Path,
    args: argparse.Namespace,
    after_round: Callable[[list[Measurement]], None] | None = None,
) -> list[Measurement]:
    """The rounds of ``args.method`` on one suite; with ``both``, each round runs the
    sequential round and the simultaneous pairs, in turn first, so both methods see the same
    hour of the host. ``after_round`` is given the measurements so far after each round."""
    rng = random.Random(args.seed + suite.total)
    out_root = work_dir / f"out-{suite.total}"
    warm_up(python, configs, suite, out_root, args)
    pairs = pairs_of(configs, args.aa)
    members = list(dict.fromkeys(config for pair in pairs for config in pair))
    measurements: list[Measurement] = []
    for round_no in range(1, args.rounds + 1):
        steps: list[Callable[[], list[Measurement]]] = []
        if args.method in (SEQUENTIAL, "both"):
            steps.append(
                partial(sequential_round, python, members, suite, out_root, round_no, args, rng)
            )
        if args.method in (SIMULTANEOUS, "both"):
            steps.append(
                partial(simultaneous_round, python, pairs, suite, out_root, round_no, args)
            )
        if round_no % 2 == 0:
            steps.reverse()
        for step in steps:
            measurements += step()
        if after_round is not None:
            after_round(measurements)
    return measurements


# --- the tables -----------------------------------------------------------------------------


@dataclass
class Row:
    """Medians of one configuration at one size."""

    config: str
    runs: int
    failed_runs: int
    cpu_s: float
    cpu_min_s: float
    cpu_max_s: float
    cpu_ratio: float
    paired_ratio: float
    wall_s: float
    rss_mib: float
    extra_rss_mib: float
    problems: list[str]


def summarize(measurements: Sequence[Measurement], configs: Sequence[Config]) -> list[Row]:
    """Medians per configuration; ratios and extra memory against plain pytest.

    ``cpu_ratio`` is the ratio of the medians; ``paired_ratio`` the median, over rounds, of the
    configuration's CPU time divided by plain pytest's in the same round (less sensitive to a
    machine that got slower or faster between rounds).

    Medians are taken over the runs that succeeded; a configuration whose every run failed keeps
    its (meaningless) medians over all runs and is flagged.
    """
    rows: list[Row] = []
    by_config = {c.name: [m for m in measurements if m.config == c.name] for c in configs}
    base = [m for m in by_config[BASELINE] if m.ok] or by_config[BASELINE]
    base_cpu = statistics.median(m.cpu_s for m in base)
    base_rss = statistics.median(m.max_rss_mib for m in base)
    base_by_round = {m.round: m.cpu_s for m in base}
    for name, runs in by_config.items():
        good = [m for m in runs if m.ok] or runs
        problems = sorted({p for m in runs for p in m.problems})
        cpu = statistics.median(m.cpu_s for m in good)
        rss = statistics.median(m.max_rss_mib for m in good)
        paired = [m.cpu_s / base_by_round[m.round] for m in good if m.round in base_by_round]
        rows.append(
            Row(
                config=name,
                runs=len(runs),
                failed_runs=sum(1 for m in runs if not m.ok),
                cpu_s=cpu,
                cpu_min_s=min(m.cpu_s for m in good),
                cpu_max_s=max(m.cpu_s for m in good),
                cpu_ratio=cpu / base_cpu,
                paired_ratio=statistics.median(paired) if paired else float("nan"),
                wall_s=statistics.median(m.wall_s for m in good),
                rss_mib=rss,
                extra_rss_mib=rss - base_rss,
                problems=problems,
            )
        )
    return rows


def markdown_table(size: int, rows: Sequence[Row]) -> str:
    """The Markdown table of one size."""
    lines = [
        f"### {size} tests",
        "",
        "| config | median CPU s | CPU min–max s | CPU ratio | paired ratio | median wall s "
        "| median peak RSS MiB | extra RSS MiB | output |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        status = "ok" if not r.failed_runs else f"**FAILED {r.failed_runs}/{r.runs}**"
        lines.append(
            f"| {r.config} | {r.cpu_s:.2f} | {r.cpu_min_s:.2f}–{r.cpu_max_s:.2f} "
            f"| {r.cpu_ratio:.3f}x | {r.paired_ratio:.3f}x | {r.wall_s:.2f} | {r.rss_mib:.1f} "
            f"| {r.extra_rss_mib:+.1f} | {status} |"
        )
    flagged = [r for r in rows if r.problems]
    if flagged:
        lines.append("")
        for r in flagged:
            lines.append(f"- **{r.config}**: " + "; ".join(r.problems))
    return "\n".join(lines)


@dataclass
class PairRow:
    """One pair's CPU ratios by one method: the second configuration over the first, round by
    round."""

    method: str
    base: str
    other: str
    ratios: dict[int, float]
    """Round number -> the ratio of that round (rounds where either run failed are left out)."""

    @property
    def median(self) -> float:
        """The median of the rounds' ratios."""
        return statistics.median(self.ratios.values()) if self.ratios else float("nan")

    @property
    def low(self) -> float:
        """The smallest ratio of a round."""
        return min(self.ratios.values(), default=float("nan"))

    @property
    def high(self) -> float:
        """The largest ratio of a round."""
        return max(self.ratios.values(), default=float("nan"))

    @property
    def couples(self) -> list[float]:
        """The geometric mean of each two rounds in a row, rounds 1 and 2, 3 and 4...: in a
        simultaneous run the two had the cores swapped, so a core slower than the other for
        those minutes weighs on both configurations alike (a couple missing a round is left
        out)."""
        return [
            math.sqrt(self.ratios[r] * self.ratios[r + 1])
            for r in range(1, max(self.ratios, default=0), 2)
            if r in self.ratios and r + 1 in self.ratios
        ]


def round_ratios(
    measurements: Sequence[Measurement], method: str, base: str, other: str
) -> dict[int, float]:
    """CPU of ``other`` over ``base`` in each round, by ``method``.

    Sequential: each configuration's run of the round. Simultaneous: the two runs made at the
    same time (plain pytest runs once beside each configuration in a round, and is divided
    into only the one it ran beside).
    """
    runs = [m for m in measurements if m.method == method and m.ok]
    if method == SIMULTANEOUS:
        base_runs = [m for m in runs if m.config == base and m.partner == other]
        other_runs = [m for m in runs if m.config == other and m.partner == base]
    else:
        base_runs = [m for m in runs if m.config == base]
        other_runs = [m for m in runs if m.config == other]
    base_by_round = {m.round: m.cpu_s for m in base_runs}
    return {
        m.round: m.cpu_s / base_by_round[m.round]
        for m in sorted(other_runs, key=lambda m: m.round)
        if m.round in base_by_round
    }


def pair_rows(
    measurements: Sequence[Measurement], pairs: Sequence[tuple[str, str]]
) -> list[PairRow]:
    """Each pair's ratios by each method that measured it."""
    methods = [m for m in (SEQUENTIAL, SIMULTANEOUS) if any(x.method == m for x in measurements)]
    return [
        PairRow(method, base, other, round_ratios(measurements, method, base, other))
        for base, other in pairs
        for method in methods
    ]


def pairs_measured(measurements: Sequence[Measurement]) -> list[tuple[str, str]]:
    """The (base, other) pairs of a run's measurements: twins when it was an A/A run."""
    names = list(dict.fromkeys(m.config for m in measurements))
    twins = [(n, n + TWIN_MARK) for n in names if n + TWIN_MARK in names]
    if twins:
        return twins
    return [(BASELINE, n) for n in names if n != BASELINE]


def ratio_table(size: int, rows: Sequence[PairRow], rounds: int) -> str:
    """The Markdown table of the per-round ratios of each pair and method."""
    heads = "".join(f" r{r} |" for r in range(1, rounds + 1))
    lines = [
        f"### {size} tests: CPU ratio per round",
        "",
        f"| pair | method |{heads} median | min–max | spread | couples | couples min–max |",
        "|---|---|" + "---:|" * (rounds + 5),
    ]
    for row in rows:
        cells = "".join(
            f" {row.ratios[r]:.3f} |" if r in row.ratios else " – |" for r in range(1, rounds + 1)
        )
        couples = row.couples
        paired = (
            f" {statistics.median(couples):.3f}x | {min(couples):.3f}–{max(couples):.3f} |"
            if couples
            else " – | – |"
        )
        lines.append(
            f"| {row.other} / {row.base} | {row.method} |{cells} {row.median:.3f}x "
            f"| {row.low:.3f}–{row.high:.3f} | {row.high - row.low:.3f} |{paired}"
        )
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    names = [c.name for c in CONFIGS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], metavar="N")
    parser.add_argument("--rounds", type=int, default=3, help="Runs per configuration and size")
    parser.add_argument("--per-file", type=int, default=100, help="Tests per generated module")
    parser.add_argument(
        "--configs", nargs="+", choices=names, default=names, help="Configurations to run"
    )
    parser.add_argument("--order", choices=["rotate", "shuffle"], default="rotate")
    parser.add_argument(
        "--method",
        choices=[SEQUENTIAL, SIMULTANEOUS, "both"],
        default=SEQUENTIAL,
        help="sequential: one run at a time; simultaneous: each pair (plain, X) at the same "
        "time, each run pinned to its own core, the cores swapped every round; both: each "
        "round runs both. Default: %(default)r",
    )
    parser.add_argument(
        "--aa",
        action="store_true",
        help="An A/A run: each configuration against its own twin (CONFIG'), not plain pytest",
    )
    parser.add_argument(
        "--cores",
        type=int,
        nargs=2,
        default=sorted(os.sched_getaffinity(0))[:2],
        metavar="CORE",
        help="The two cores of --method simultaneous. Default: the first two this may use",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of --order shuffle")
    parser.add_argument(
        "--warmup", type=int, default=1, help="Unmeasured plain runs per size first"
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="Seconds per run")
    parser.add_argument("--python", default=sys.executable, help="Interpreter that runs pytest")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument(
        "--json", type=Path, help="Also write every measurement here (rewritten after each size)"
    )
    parser.add_argument(
        "--qbench-at",
        action="append",
        default=[],
        metavar="NAME=CHECKOUT",
        help="Also measure qbench imported from CHECKOUT (another revision), as config "
        "qbench@NAME, interleaved with the others. Repeatable",
    )
    parser.add_argument(
        "--tables-from",
        type=Path,
        metavar="JSON",
        help="Run nothing: print the tables of a file written by --json",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if BASELINE not in args.configs:
        args.configs = [BASELINE, *args.configs]
    if args.method != SEQUENTIAL:
        usable = os.sched_getaffinity(0)
        if len(set(args.cores)) != 2 or not set(args.cores) <= usable:
            parser.error(
                f"--cores must be two different cores of {sorted(usable)}, given: {args.cores}"
            )
    if os.sep in args.python:  # the runs start in the suite's directory: keep the venv's link
        args.python = os.path.abspath(args.python)
    return args


def revision_configs(specs: Sequence[str]) -> list[Config]:
    """``--qbench-at NAME=CHECKOUT``: qbench from another checkout, as config ``qbench@NAME``."""
    qbench = next(c for c in CONFIGS if c.name == "qbench")
    configs = []
    for spec in specs:
        name, sep, checkout = spec.partition("=")
        if not sep or not name or not Path(checkout, "pytest_qbench").is_dir():
            raise SystemExit(f"--qbench-at must be NAME=CHECKOUT (a checkout), given: {spec!r}")
        configs.append(
            Config(f"qbench@{name}", qbench.args, qbench.verify, pythonpath=str(Path(checkout)))
        )
    return configs


def tables_from(path: Path) -> int:
    """Print the tables of a saved ``--json`` file; return 1 when any of its runs failed."""
    data = json.loads(path.read_text())
    print(f"pytest-qbench at {data.get('revision', 'unknown')}\n")
    any_failed = False
    for size, entry in data["sizes"].items():
        measurements = [Measurement(**run) for run in entry["runs"]]
        names = list(dict.fromkeys(m.config for m in measurements))
        configs = [Config(n, CONFIGS[-1].args, verify_qbench) for n in names]
        print(tables(int(size), measurements, configs, data["rounds"]) + "\n")
        any_failed = any_failed or not all(m.ok for m in measurements)
    return 1 if any_failed else 0


def tables(
    size: int, measurements: Sequence[Measurement], configs: Sequence[Config], rounds: int
) -> str:
    """The tables of one size: the sequential runs' medians, and the per-round ratios."""
    parts = []
    alone = [m for m in measurements if m.method == SEQUENTIAL]
    if alone:
        names = {m.config for m in alone}
        parts.append(
            markdown_table(size, summarize(alone, [c for c in configs if c.name in names]))
        )
    rows = pair_rows(measurements, pairs_measured(measurements))
    parts.append(ratio_table(size, rows, rounds))
    loads = [m.load for m in measurements if m.load is not None]
    if loads:
        parts.append(
            f"Load average (1 min) as the runs started: {min(loads):.1f} to {max(loads):.1f}."
        )
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 when any run failed to produce its output."""
    args = parse_args(argv)
    exit_on_sigterm()
    if args.tables_from:
        return tables_from(args.tables_from)
    work_dir: Path = args.work_dir.resolve()
    configs: list[Config] = []
    skipped: list[str] = []
    for config in CONFIGS:
        if config.name not in args.configs:
            continue
        if config.module and not importable(args.python, config.module):
            skipped.append(f"{config.name} ({config.module} is not installed)")
            continue
        configs.append(config)
    configs += revision_configs(args.qbench_at)
    if skipped:
        print(f"skipped: {', '.join(skipped)}", file=sys.stderr)
    revision = imported_package_revision(args.python, child_env())
    for config in configs:
        if config.pythonpath:
            at = imported_package_revision(args.python, child_env(config.pythonpath))
            print(f"{config.name}: pytest-qbench at {at}", file=sys.stderr)
    print(f"measuring pytest-qbench at {revision}", file=sys.stderr)
    byte_compile(args.python, configs)
    results: dict[str, Any] = {
        "revision": revision,
        "python": args.python,
        "rounds": args.rounds,
        "order": args.order,
        "method": args.method,
        "aa": args.aa,
        "cores": args.cores,
        "common_args": COMMON_ARGS,
        "commands": {c.name: command("python", c, Path("OUT"))[1:] for c in configs},
        "skipped": skipped,
        "sizes": {},
    }
    any_failed = False
    for size in args.sizes:
        suite = generate_suite(work_dir, size, args.per_file)
        print(
            f"suite of {suite.total} tests in {suite.files} files at {suite.path}: "
            f"{suite.outcomes}",
            file=sys.stderr,
        )
        load = os.getloadavg()

        def save(so_far: list[Measurement], entry: str = str(size)) -> None:
            """Keep the rounds so far in --json: a run stopped early still has them."""
            results["sizes"][entry] = {"runs": [asdict(m) for m in so_far]}
            if args.json:
                args.json.write_text(json.dumps(results, indent=2) + "\n")

        measurements = run_size_methods(args.python, configs, suite, work_dir, args, save)
        members = list(dict.fromkeys(c for pair in pairs_of(configs, args.aa) for c in pair))
        alone = [m for m in measurements if m.method == SEQUENTIAL]
        rows = summarize(alone, members) if alone else []
        ratios = pair_rows(measurements, pairs_measured(measurements))
        any_failed = any_failed or not all(m.ok for m in measurements)
        print(tables(size, measurements, members, args.rounds) + "\n", flush=True)
        load_after = os.getloadavg()
        print(
            f"load average (1, 5, 15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
            f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n",
            flush=True,
        )
        results["sizes"][str(size)] = {
            "suite": {"total": suite.total, "files": suite.files, "outcomes": suite.outcomes},
            "load_before": load,
            "load_after": load_after,
            "rows": [asdict(r) for r in rows],
            "ratios": [
                asdict(r) | {"median": r.median, "min": r.low, "max": r.high} for r in ratios
            ],
            "runs": [asdict(m) for m in measurements],
        }
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    if skipped:
        print(f"Not measured: {', '.join(skipped)}.")
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
