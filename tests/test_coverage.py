"""Coverage in the report: qbench's own measurement, pytest-cov's data, xdist, the gate.

Every number is checked against coverage.py's own report on the same data file, never against
hand-typed numbers alone. Runs are subprocesses: coverage.py traces a whole process.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path

import coverage
import pytest

from pytest_qbench.report.models import CoverageReport
from pytest_qbench.report.models import FailureDigest

from conftest import QBenchRun
from conftest import RunQBench
from conftest import assert_summary_matches_pytest


# 16 statements; the tests run 7 of them (43.75%), four of which only run at import time, through
# conftest.py: a measurement that starts after conftest files load would see 3 (18.75%).
CALC = """
PRECISION = 2


def add(a, b):
    return a + b


def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


def unused():
    value = 1
    return value
"""
NEVER = """
X = 1
Y = 2


def f():
    return X + Y
"""
TESTS = """
from pkg.calc import add, sign


def test_add():
    assert add(1, 2) == 3


def test_sign():
    assert sign(3) == 1
"""
PYPROJECT = """
[tool.pytest.ini_options]
pythonpath = ["."]
{extra}
"""


def make_project(pytester: pytest.Pytester, coverage_config: str = "") -> None:
    """A tiny package (pkg/calc.py half tested, pkg/never.py never imported) and its tests."""
    pkg = pytester.mkpydir("pkg")
    (pkg / "calc.py").write_text(CALC.lstrip())
    (pkg / "never.py").write_text(NEVER.lstrip())
    tests = pytester.mkdir("tests")
    (tests / "conftest.py").write_text("import pkg.calc  # noqa: F401\n")
    (tests / "test_calc.py").write_text(TESTS.lstrip())
    pytester.makefile(".toml", pyproject=PYPROJECT.format(extra=coverage_config))


def coverage_py_report(data_file: Path, project: Path) -> tuple[float, dict[str, list[str]]]:
    """coverage.py's own ``report -m`` on ``data_file``: the total, and each file's row.

    Made in ``project``: coverage.py names the files relative to the working directory, which
    is another test's project when the test that made the run (``made_once``) was not this one
    (absolute paths then: a verdict that depended on the tests' order)."""
    here = os.getcwd()
    os.chdir(project)
    try:
        cov = coverage.Coverage(
            data_file=str(data_file), config_file=str(project / "pyproject.toml")
        )
        cov.load()
        out = io.StringIO()
        total = cov.report(file=out, show_missing=True)
    finally:
        os.chdir(here)
    rows: dict[str, list[str]] = {}
    for line in out.getvalue().splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if parts and parts[0].endswith(".py"):
            rows[parts[0]] = parts[1:]
    return total, rows


def assert_equals_coverage_py(report: CoverageReport, data_file: Path, project: Path) -> None:
    """The report's totals and rows are coverage.py's report on the same data."""
    total, rows = coverage_py_report(data_file, project)
    assert report.percentage == total
    assert {f.path for f in report.files} == set(rows)
    for f in report.files:
        row = rows[f.path]
        assert int(row[0]) == f.statements, (f.path, row)
        assert int(row[1]) == f.missing, (f.path, row)
        if f.branches is not None:
            assert int(row[2]) == f.branches, (f.path, row)
        missing_column = row[-1] if not row[-1].endswith("%") else ""
        assert ", ".join(f.missing_ranges) == missing_column, (f.path, row)
    assert report.lines_total == sum(f.statements for f in report.files)
    assert report.lines_covered == sum(f.covered for f in report.files)


def own_data_file(run: QBenchRun) -> Path:
    return run.run_dir / "coverage.db"


def project_of(run: QBenchRun) -> Path:
    """The project a run ran in (its run directory is ``.qbench/runs/<id>`` there)."""
    return run.run_dir.parents[2]


@pytest.fixture(scope="module")
def made_once() -> dict[str, QBenchRun]:
    """Runs several tests read, made by the first of them that runs in this process."""
    return {}


@pytest.fixture
def plain_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, made_once: dict[str, QBenchRun]
) -> QBenchRun:
    """``--qbench-cov=pkg`` on ``make_project``'s project, serial: made once per module and
    xdist worker (a child pytest measuring coverage), read by every test of the plain run."""
    if "plain" not in made_once:
        make_project(pytester)
        made_once["plain"] = run_qbench("--qbench-cov=pkg", subprocess=True)
    return made_once["plain"]


PLAIN = pytest.mark.xdist_group("test_coverage.plain")
"""The tests of the plain run: on one xdist worker, which makes it once."""

GATED_OPTIONS = (
    "--qbench-cov=pkg",
    "--qbench-cov=notimported",
    "--qbench-cov-contexts",
    "--qbench-cov-fail-under=90",
)
"""The gated runs' options: the gate (90%, above the 43.75% measured), the contexts, and a
second source no test imports; each test of them reads its own facts of the same run."""
GATED = pytest.mark.xdist_group("test_coverage.gated")
"""The tests of the gated runs: on one xdist worker, which makes them once."""


@pytest.fixture
def gated_runs(
    pytester: pytest.Pytester, run_qbench: RunQBench, made_once: dict[str, QBenchRun]
) -> dict[str, QBenchRun]:
    """``GATED_OPTIONS`` on ``make_project``'s project, ``serial`` and under ``xdist`` (two
    workers), both in the project of the first test that asks: made once per module and xdist
    worker (two child pytests measuring coverage)."""
    pytest.importorskip("xdist")
    if "serial" not in made_once:
        make_project(pytester)
        for mode, extra in (("serial", ()), ("xdist", ("-p", "xdist", "-n", "2"))):
            made_once[mode] = run_qbench(
                *GATED_OPTIONS, *extra, f"--qbench-run-id={mode}", subprocess=True, run_dir=mode
            )
    return {mode: made_once[mode] for mode in ("serial", "xdist")}


MODES = pytest.mark.parametrize("mode", ["serial", "xdist"])


@PLAIN
def test_own_measurement_equals_coverage_py(plain_run: QBenchRun) -> None:
    run = plain_run
    run.result.assert_outcomes(passed=2)
    cov = run.report.coverage
    assert cov is not None
    assert (cov.percentage, cov.lines_covered, cov.lines_total) == (43.75, 7, 16)
    assert cov.measured_by == "qbench"
    assert cov.sources == ["pkg"]
    assert cov.data_file == own_data_file(run).relative_to(project_of(run)).as_posix()
    assert cov.missing_files == ["pkg/never.py"]  # never imported, still listed at 0%
    assert cov.branches_total is None and cov.threshold is None and cov.met is None
    assert_equals_coverage_py(cov, own_data_file(run), project_of(run))
    calc = next(f for f in cov.files if f.path == "pkg/calc.py")
    assert calc.missing_ranges == ["11-13", "17-18"]
    run.result.stdout.fnmatch_lines(["qbench: coverage 43.75% (7/16 lines, 1 file never executed)"])
    assert run.result.ret == 0
    assert_summary_matches_pytest(run)  # coverage.py's warnings never count as pytest's


def test_package_name_source_and_a_directory_source(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A directory given as a path is measured the same as the package name."""
    make_project(pytester)
    by_dir = run_qbench("--qbench-cov", "pkg/", "tests", subprocess=True)  # greedy: use = or order
    assert by_dir.report.coverage is not None
    assert by_dir.report.coverage.percentage == 43.75
    assert by_dir.report.coverage.sources == ["pkg"]


@GATED
def test_xdist_combines_workers_to_the_serial_totals(gated_runs: dict[str, QBenchRun]) -> None:
    serial, parallel = gated_runs["serial"], gated_runs["xdist"]
    parallel.result.assert_outcomes(passed=2)
    assert serial.report.coverage is not None and parallel.report.coverage is not None
    ignore = {"data_file", "contexts_file"}
    assert parallel.report.coverage.model_dump(exclude=ignore) == serial.report.coverage.model_dump(
        exclude=ignore
    )
    project = project_of(parallel)
    assert_equals_coverage_py(parallel.report.coverage, own_data_file(parallel), project)
    files = [r.report.coverage.contexts_file for r in (serial, parallel) if r.report.coverage]
    assert None not in files and files[0] != files[1]
    contexts = [json.loads((project / str(f)).read_text()) for f in files]
    assert contexts[0] == contexts[1]


def test_omit_and_branch_from_the_users_coverage_config(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    make_project(
        pytester,
        '[tool.coverage.run]\nbranch = true\nomit = ["*/never.py"]\n'
        '[tool.coverage.report]\nexclude_lines = ["def unused"]\n',
    )
    run = run_qbench("--qbench-cov=pkg", subprocess=True)
    cov = run.report.coverage
    assert cov is not None
    assert [f.path for f in cov.files] == ["pkg/__init__.py", "pkg/calc.py"]
    assert cov.missing_files == []
    calc = cov.files[1]
    assert calc.excluded == 3  # the excluded def takes its body with it
    assert cov.branches_total is not None and cov.branches_total > 0
    assert cov.branches_covered is not None and cov.branches_covered < cov.branches_total
    assert_equals_coverage_py(cov, own_data_file(run), pytester.path)


def test_reads_pytest_cov_and_matches_its_total(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    make_project(pytester)
    run = run_qbench(
        "-p",
        "pytest_cov.plugin",
        "--cov=pkg",
        "--cov-fail-under=1",
        "--qbench-cov=pkg",
        subprocess=True,
    )
    cov = run.report.coverage
    assert cov is not None and cov.measured_by == "pytest-cov"
    assert cov.data_file == ".coverage"
    assert not (run.run_dir / "coverage.db").exists()  # qbench measured nothing itself
    run.result.stdout.fnmatch_lines(
        [
            "qbench: coverage measured by pytest-cov (--cov); --qbench-cov is not used",
            "qbench: coverage 43.75% (7/16 lines, 1 file never executed) (measured by pytest-cov)",
            "*Required test coverage of 1% reached. Total coverage: 43.75%",
        ]
    )
    assert_equals_coverage_py(cov, pytester.path / ".coverage", pytester.path)


@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_reads_pytest_cov_given_a_bare_cov(
    pytester: pytest.Pytester, run_qbench: RunQBench, xdist: list[str]
) -> None:
    """A bare ``--cov`` (the source from coverage's configuration, as multidict's ``addopts``
    writes it): pytest-cov measures and prints its total, but it rewrites its option to
    ``None`` when it starts, and qbench read that as "pytest-cov does not measure": the report
    had no coverage and no warning, and ``--qbench-cov-fail-under`` was refused as having no
    coverage data (found on multidict, trial14)."""
    make_project(pytester, '[tool.coverage.run]\nsource = ["pkg"]')
    run = run_qbench(
        "-p", "pytest_cov.plugin", *xdist, "--cov", "--qbench-cov-fail-under=40", subprocess=True
    )
    run.result.assert_outcomes(passed=2)
    cov = run.report.coverage
    assert cov is not None and cov.measured_by == "pytest-cov"
    assert cov.percentage == 43.75 and cov.threshold == 40
    run.result.stdout.fnmatch_lines(
        ["qbench: coverage 43.75% (7/16 lines*) (measured by pytest-cov)", "*43.75%*"]
    )
    assert_equals_coverage_py(cov, pytester.path / ".coverage", pytester.path)
    assert run.result.ret == 0
    # --no-cov after it: pytest-cov measures nothing, and neither does qbench read anything
    refused = run_qbench(
        "-p", "pytest_cov.plugin", "--cov", "--no-cov", "--qbench-cov-fail-under=40"
    )
    assert refused.result.ret == 4
    refused.result.stderr.fnmatch_lines(["*--qbench-cov-fail-under needs coverage data*"])


def test_reads_pytest_cov_under_xdist(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    make_project(pytester)
    run = run_qbench(
        "-p",
        "pytest_cov.plugin",
        "-p",
        "xdist",
        "-n",
        "2",
        "--cov=pkg",
        "--cov-fail-under=1",
        subprocess=True,
    )
    run.result.assert_outcomes(passed=2)
    cov = run.report.coverage
    assert cov is not None and cov.measured_by == "pytest-cov"
    assert cov.percentage == 43.75
    run.result.stdout.fnmatch_lines(["*Total coverage: 43.75%"])
    assert_equals_coverage_py(cov, pytester.path / ".coverage", pytester.path)


@GATED
@MODES
def test_gate_below_fails_the_run(gated_runs: dict[str, QBenchRun], mode: str) -> None:
    run = gated_runs[mode]
    assert run.result.ret == 1
    run.result.assert_outcomes(passed=2)  # every test passed: the gate alone failed the run
    run.result.stdout.fnmatch_lines(["qbench: coverage 43.75% is below the required 90%"])
    cov = run.report.coverage
    assert cov is not None and (cov.threshold, cov.met) == (90.0, False)
    assert run.report.run.exit_code == 1
    assert "❌" in run.markdown.splitlines()[0]
    assert "## Coverage 43.75% ❌ required 90%" in run.markdown


# "43.75": the total itself meets its gate; "0": a gate of 0% is a gate (it once read as no
# threshold, and failed the run as unmeasured). A gate strictly between ("40", a case once) took
# the same comparison as these two: a gate read as "equal to" fails on "0" as on it.
@pytest.mark.parametrize("threshold", ["43.75", "0"])
def test_gate_at_or_above_leaves_the_exit_status(
    pytester: pytest.Pytester, run_qbench: RunQBench, threshold: str
) -> None:
    make_project(pytester)
    run = run_qbench("--qbench-cov=pkg", f"--qbench-cov-fail-under={threshold}", subprocess=True)
    assert run.result.ret == 0
    run.result.stdout.fnmatch_lines([f"qbench: coverage 43.75% meets the required {threshold}%"])
    assert run.report.coverage is not None and run.report.coverage.met is True


def test_gate_keeps_a_failing_runs_status(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    make_project(pytester)
    pytester.path.joinpath("tests", "test_more.py").write_text("def test_bad():\n    assert 0\n")
    run = run_qbench("--qbench-cov=pkg", "--qbench-cov-fail-under=40", subprocess=True)
    assert run.result.ret == 1  # from the failed test; the gate passed
    run.result.assert_outcomes(passed=2, failed=1)
    assert run.report.coverage is not None and run.report.coverage.met is True


def test_gate_from_the_ini_file_and_from_coverage_config(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    make_project(pytester, 'qbench_cov = ["pkg"]\nqbench_cov_fail_under = "50"\n')
    run = run_qbench(subprocess=True)
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(["qbench: coverage 43.75% is below the required 50%"])
    pytester.makefile(
        ".toml",
        pyproject=PYPROJECT.format(extra="[tool.coverage.report]\nfail_under = 45.5\n"),
    )
    run = run_qbench(
        "--qbench-cov=pkg", "--qbench-run-id=config", subprocess=True, run_dir="config"
    )
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(["qbench: coverage 43.75% is below the required 45.5%"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--qbench-cov-fail-under=90"],
            "*--qbench-cov-fail-under needs coverage data, and none is measured; add "
            "--qbench-cov=SOURCE*",
        ),
        (
            ["--qbench-cov-contexts"],
            "*--qbench-cov-contexts needs coverage data*",
        ),
        (
            ["--qbench-cov=pkg", "--qbench-cov-fail-under=120"],
            "*--qbench-cov-fail-under: must be a percentage from 0 to 100, given: 120; e.g. 90*",
        ),
        (
            ["--qbench-cov=no/such/dir"],
            "*--qbench-cov is neither a directory nor a package name, given: no/such/dir;*",
        ),
        (
            ["--qbench-cov=pkg/calc.py"],
            "*--qbench-cov must be a directory or an importable package, given: pkg/calc.py*",
        ),
        (
            ["-p", "pytest_cov.plugin", "--cov=pkg", "--qbench-cov-contexts"],
            "*pytest-cov records the per-test contexts; add --cov-context=test*",
        ),
    ],
)
def test_bad_coverage_options_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    """Each stops pytest before any test runs (in process: qbench refuses the options before it
    starts a measurement; pytest-cov starts its own before, so that one runs in a subprocess)."""
    make_project(pytester)
    uses_pytest_cov = "pytest_cov.plugin" in args
    runner = pytester.runpytest_subprocess if uses_pytest_cov else pytester.runpytest
    result = runner("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / ".qbench" / "runs").exists() or not any(
        (pytester.path / ".qbench" / "runs").iterdir()
    )


@GATED
@MODES
def test_contexts_say_which_tests_executed_each_file(
    gated_runs: dict[str, QBenchRun], mode: str
) -> None:
    run = gated_runs[mode]
    cov = run.report.coverage
    assert cov is not None and cov.contexts_file is not None
    contexts = json.loads((project_of(run) / cov.contexts_file).read_text())
    assert contexts == {
        "format": 1,
        "tests": 2,
        "files": {"pkg/calc.py": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sign"]},
    }
    assert cov.percentage == 43.75  # switching contexts changes nothing in the totals


def test_contexts_from_pytest_cov(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    make_project(pytester)
    run = run_qbench(
        "-p",
        "pytest_cov.plugin",
        "--cov=pkg",
        "--cov-context=test",
        "--qbench-cov-contexts",
        subprocess=True,
    )
    cov = run.report.coverage
    assert cov is not None and cov.contexts_file is not None
    files = json.loads((pytester.path / cov.contexts_file).read_text())["files"]
    assert files["pkg/calc.py"] == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sign"]


def test_digest_and_rebuilt_report_keep_coverage(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    make_project(pytester)
    run = run_qbench(
        "--qbench-cov=pkg",
        "--qbench-cov-fail-under=90",
        "--qbench-digest=digest.json",
        subprocess=True,
    )
    digest = FailureDigest.model_validate_json((pytester.path / "digest.json").read_text())
    assert digest.success is False
    assert digest.coverage is not None
    assert [f.path for f in digest.coverage.least_covered] == ["pkg/never.py", "pkg/calc.py"]
    assert digest.coverage.missing_files == ["pkg/never.py"]
    assert digest.next_steps == [
        "Raise coverage from 43.75% to the required 90%: start with pkg/never.py (0.00% covered)",
        "Add tests for pkg/never.py (0% covered)",
    ]
    # the stream's end record carries coverage: a rebuilt report keeps it
    (run.run_dir / "report.json").unlink()
    rebuilt = pytester.run(Path(sys.executable).with_name("qbench"), "render", str(run.run_dir))
    assert rebuilt.ret == 0, rebuilt.stderr.str()
    again = json.loads((run.run_dir / "report.json").read_text())
    assert again["coverage"] == run.report.coverage.model_dump(mode="json")  # type: ignore[union-attr]


@PLAIN
def test_markdown_section(plain_run: QBenchRun) -> None:
    md = plain_run.markdown
    assert "· coverage **43.75%** ·" in md
    assert "## Coverage 43.75%\n\n7 of 16 lines covered in 3 files · measured by qbench" in md
    assert "| `pkg/never.py` | 0.00% | 1-6 |" in md
    assert "| `pkg/calc.py` | 58.33% | 11-13, 17-18 |" in md
    assert "**Never executed (1):** `pkg/never.py`" in md


def test_no_data_collected_is_a_warning_not_a_crash(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A source no test touches: 0%, said plainly; a gate then fails, as with pytest-cov."""
    make_project(pytester)
    pytester.mkpydir("other").joinpath("mod.py").write_text("A = 1\n")
    (pytester.path / "tests" / "conftest.py").write_text("")
    (pytester.path / "tests" / "test_calc.py").write_text("def test_nothing():\n    pass\n")
    run = run_qbench("--qbench-cov=other", "--qbench-cov-fail-under=10", subprocess=True)
    assert run.result.ret == 1
    cov = run.report.coverage
    assert cov is not None and cov.percentage == 0.0
    assert cov.missing_files == ["other/mod.py"]
    messages = [w.message for w in run.report.warnings if w.code == "coverage"]
    assert any("no data collected for other" in m for m in messages), messages


def test_collect_only_applies_no_gate(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    make_project(pytester)
    run = run_qbench("--qbench-cov=pkg", "--qbench-cov-fail-under=90", "--co", subprocess=True)
    assert run.result.ret == 0
    assert "required" not in run.result.stdout.str()


def test_under_coverage_run_qbench_does_not_measure_twice(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``coverage run -m pytest --qbench-cov``: coverage run's data stays complete."""
    make_project(pytester)
    result = pytester.run(
        sys.executable,
        "-m",
        "coverage",
        "run",
        "--source=pkg",
        "-m",
        "pytest",
        "-p",
        "qbench",
        "--qbench-cov=pkg",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["qbench: coverage: coverage.py already measures this process*"])
    total, _ = coverage_py_report(pytester.path / ".coverage", pytester.path)
    assert total == 43.75  # a second tracer would have paused coverage run's
    report = json.loads(
        next((pytester.path / ".qbench" / "runs").glob("*/report.json")).read_text()
    )
    assert report["coverage"] is None


@GATED
@MODES
def test_source_package_never_imported_is_warned(
    gated_runs: dict[str, QBenchRun], mode: str
) -> None:
    """(issue 11.3) A --qbench-cov package that no test imports keeps coverage.py's warning, in
    the report and on the terminal, serial and under xdist."""
    run = gated_runs[mode]
    assert run.report.coverage is not None and run.report.coverage.percentage > 0
    messages = [w.message for w in run.report.warnings if w.code == "coverage"]
    expected = "coverage.py: Module notimported was never imported. (module-not-imported)"
    (warning,) = [m for m in messages if "never imported" in m]
    assert warning.startswith(expected)
    assert warning.endswith(
        "; so no file of it is in the report: check that --qbench-cov (or coverage's "
        "source_pkgs) names a package your tests import"
    )
    run.result.stdout.fnmatch_lines([f"*{expected}*"])
    assert "Module pkg was never imported" not in run.result.stdout.str()


def coverage_py_outputs(data_file: Path, project: Path, out: Path) -> dict[str, str]:
    """coverage.py's own xml, lcov and json reports of ``data_file`` (as measured: source pkg)."""
    cov = coverage.Coverage(
        data_file=str(data_file),
        source=[str(project / "pkg")],
        config_file=str(project / "pyproject.toml"),
    )
    cov.load()
    out.mkdir()
    cov.xml_report(outfile=str(out / "c.xml"))
    cov.lcov_report(outfile=str(out / "c.lcov"))
    cov.json_report(outfile=str(out / "c.json"))
    terminal = io.StringIO()
    cov.report(file=terminal, show_missing=True)
    return {
        "xml": (out / "c.xml").read_text(encoding="utf-8"),
        "lcov": (out / "c.lcov").read_text(encoding="utf-8"),
        "json": (out / "c.json").read_text(encoding="utf-8"),
        "term-missing": terminal.getvalue(),
    }


def without_timestamps(text: str) -> str:
    text = re.sub(r'timestamp="\d+"', "", text)
    return re.sub(r'"timestamp": "[^"]+"', "", text)


def test_cov_report_types_are_coverage_pys(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """(issue 11.17) --qbench-cov-report writes coverage.py's own term-missing, xml, lcov, json
    and html reports of the run's data, equal to coverage.py's on the same data file."""
    make_project(pytester)
    run = run_qbench(
        "--qbench-cov=pkg",
        "--qbench-cov-report=term-missing",
        "--qbench-cov-report=xml:out/cov.xml",
        "--qbench-cov-report=lcov",
        "--qbench-cov-report=json:cov.json",
        "--qbench-cov-report=html:hc",
        subprocess=True,
    )
    expected = coverage_py_outputs(run.run_dir / "coverage.db", pytester.path, pytester.path / "x")
    path = pytester.path
    assert without_timestamps((path / "out" / "cov.xml").read_text()) == without_timestamps(
        expected["xml"]
    )
    assert (path / "coverage.lcov").read_text() == expected["lcov"]
    assert without_timestamps((path / "cov.json").read_text()) == without_timestamps(
        expected["json"]
    )
    assert (path / "hc" / "index.html").is_file()
    assert expected["term-missing"] in run.result.stdout.str()
    run.result.stdout.fnmatch_lines(
        [
            "qbench: coverage 43.75%*",
            "qbench: coverage xml report: out/cov.xml",
            "qbench: coverage lcov report: coverage.lcov",
            "qbench: coverage json report: cov.json",
            "qbench: coverage html report: hc",
        ]
    )
    assert not list(path.glob("**/.*.tmp"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--qbench-cov=pkg", "--qbench-cov-report=pdf"],
            "*--qbench-cov-report: must be TYPE[[]:DEST] with TYPE one of term, term-missing, "
            "xml, lcov, html, json, given: 'pdf'; e.g. xml:coverage.xml",
        ),
        (
            ["--qbench-cov=pkg", "--qbench-cov-report=term:out.txt"],
            "*term prints to the terminal and takes no DEST*",
        ),
        (["--qbench-cov-report=xml"], "*--qbench-cov-report needs coverage data*"),
    ],
)
def test_cov_report_bad_values(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    """(issue 11.17) A bad --qbench-cov-report stops pytest before any test runs."""
    make_project(pytester)
    result = pytester.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
