"""``qbench test``'s exit status agrees with pytest's: a pytest run that a plugin, a hook or a
gate failed with every test passing fails ``qbench test`` too (it said 0), and a run where no
test ran exits 5, pytest's "no tests collected" (it said 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from child_pytest import child_env

from pytest_qbench.report.models import TestReport


pytestmark = pytest.mark.runs_pytest


def qbench_test(project: Path) -> tuple[subprocess.CompletedProcess[str], TestReport]:
    """``qbench test --runner pytest`` in ``project``: the process and its stored report. The
    process is real (its exit status is the subject); its pytest loads qbench alone (``qbench
    test`` names it with ``-p qbench``), not every installed plugin (``child_env``)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench", "test", "--runner", "pytest"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=child_env(),
    )
    [run] = sorted((project / ".qbench" / "runs").iterdir())
    return done, TestReport.model_validate_json((run / "report.json").read_bytes())


@pytest.mark.parametrize(
    "conftest",
    [
        "def pytest_sessionfinish(session):\n    session.exitstatus = 1\n",
        "def pytest_terminal_summary(terminalreporter):\n    raise RuntimeError('boom')\n",
    ],
    ids=["a-plugin-fails-the-session", "a-hook-raises-at-the-end"],
)
def test_pytest_failing_with_every_test_passed_fails_the_run(tmp_path: Path, conftest: str) -> None:
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    (tmp_path / "conftest.py").write_text(conftest)
    done, report = qbench_test(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [r.outcome for r in report.results] == ["passed"]
    [problem] = report.collection_errors
    assert problem.code == "runner-crashed"
    assert "pytest exited 1 with no failed test" in problem.message
    assert report.run.exit_code == 1
    assert "ERROR pytest: pytest exited 1 with no failed test" in done.stdout


def test_no_test_ran_exits_5_as_pytest(tmp_path: Path) -> None:
    (tmp_path / "test_none.py").write_text("VALUE = 1\n")
    done, report = qbench_test(tmp_path)
    assert done.returncode == 5, done.stdout + done.stderr
    assert report.run.exit_code == 5 and report.results == []
    assert "no tests ran" in done.stderr
