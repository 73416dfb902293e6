"""A third party's test runner, installed for real as a ``qbench.tools`` plugin and run by
``qbench test --runner NAME``: its results stored like any runner's; and a runner whose parser
or planner raises is a crashed runner in the stored run (exit 1, the error named), never a
traceback that stores nothing nor a clean pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tools_plugins import environment_with
from tools_plugins import install

from pytest_qbench.report.models import TestReport


# A runner whose "tests" are the lines of cases.txt ("name ok" or "name fail"); the child
# writes them as a JSON report into the scratch directory. FAULT, replaced per distribution,
# makes the planner or the parser raise.
RUNNER_PLUGIN = '''
import json, sys
from pathlib import Path

from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.spec import Plan, Runner

SCRIPT = """
import json, pathlib, sys
rows = [line.split() for line in pathlib.Path('cases.txt').read_text().splitlines()]
pathlib.Path(sys.argv[1]).write_text(json.dumps(rows))
sys.exit(1 if any(state == 'fail' for _, state in rows) else 0)
"""
FAULT = None


def parse(raw: bytes, cwd: Path) -> list[TestResult]:
    if FAULT == "parse":
        raise RuntimeError("the parser is broken on purpose")
    outcomes = {"ok": "passed", "fail": "failed"}
    return [TestResult(nodeid=f"cases.txt::{name}", test_name=name, file="cases.txt",
                       outcome=outcomes[state])
            for name, state in json.loads(raw)]


def plan(cwd: Path, paths: list[str], scratch: Path) -> Plan[TestResult]:
    if FAULT == "plan":
        raise RuntimeError("the planner is broken on purpose")
    out = scratch / "cases.json"
    return Plan("lines", [sys.executable, "-c", SCRIPT, str(out)], frozenset({0, 1}), parse,
                output=out)


@hookimpl
def qbench_runners() -> list[Runner]:
    return [Runner(NAME, "lines", lambda root: (root / "cases.txt").is_file(), plan)]
'''

pytestmark = pytest.mark.engine  # runs no pytest


def runner_site(root: Path) -> Path:
    """Three runner plugins: ``lines`` (works), ``lines-badparse`` (its parser raises) and
    ``lines-badplan`` (its planner raises)."""
    site = root / "site"
    site.mkdir()
    for name, fault in (("lines", None), ("lines-badparse", "parse"), ("lines-badplan", "plan")):
        module = name.replace("-", "_")
        source = RUNNER_PLUGIN.replace("FAULT = None", f"FAULT = {fault!r}\nNAME = {name!r}")
        install(site, f"qbench-{name}", module, source)
    return site


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project of three line "tests", one failing, and the plugins' site directory."""
    root = tmp_path_factory.mktemp("runner-plugins")
    site = runner_site(root)
    project = root / "project"
    project.mkdir()
    (project / "cases.txt").write_text("adds ok\ncarries fail\nsorts ok\n")
    return project, site


def qbench_test(
    project: Path, site: Path, runner: str
) -> tuple[subprocess.CompletedProcess[str], TestReport]:
    """``qbench test --runner RUNNER --dir .qbench-RUNNER`` with the plugins of ``site``
    installed: the process and its stored report."""
    store = project / f".qbench-{runner}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench", "test", "--runner", runner, "--dir", str(store)],
        cwd=project,
        env=environment_with(site),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    [run] = sorted((store / "runs").iterdir())
    return done, TestReport.model_validate_json((run / "report.json").read_bytes())


def test_installed_runner_runs_and_its_results_are_stored(project: tuple[Path, Path]) -> None:
    """A working third-party runner: its three results stored, named by the runner, the
    failing one failing the run."""
    done, report = qbench_test(*project, "lines")
    assert done.returncode == 1, done.stderr
    assert [(r.nodeid, r.outcome, r.runner) for r in report.results] == [
        ("cases.txt::adds", "passed", "lines"),
        ("cases.txt::carries", "failed", "lines"),
        ("cases.txt::sorts", "passed", "lines"),
    ]
    assert (report.summary.passed, report.summary.failed, report.summary.errors) == (2, 1, 0)
    assert report.collection_errors == []


@pytest.mark.parametrize(
    ("runner", "said"),
    [
        ("lines-badparse", "crashed: unparsable report (RuntimeError: the parser is broken"),
        ("lines-badplan", "could not be planned: RuntimeError: the planner is broken"),
    ],
)
def test_a_runner_that_raises_is_crashed_in_the_stored_run(
    project: tuple[Path, Path], runner: str, said: str
) -> None:
    """A runner whose parser (or planner) raises: the run is stored, exit 1, its one
    problem a "crashed" error naming the exception; no result is invented."""
    done, report = qbench_test(*project, runner)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    [problem] = report.collection_errors
    assert problem.code == "runner-crashed", json.dumps(problem.model_dump())
    assert said in problem.message
    assert report.results == []
    assert report.summary.errors == 1 and report.run.exit_code == 1
