"""``qbench pr-comment`` and ``qbench diff`` on a CI job whose pytest recorded no run: a
plugin's ``pytest_configure`` raised (INTERNALERROR, exit status 3, as pytest-asyncio's
deprecation warning under click's ``filterwarnings = error``) before the session started, so
no run directory was written and the last indexed run is an older commit's. pr-comment posted
`:white_check_mark: 0 new failures` about it (trial11, parse). With no run named, a last run of
another commit than the CI job's is refused, naming both; naming the run still works, and a
run of the job's own commit is commented on as before."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main
from pytest_qbench.history.pr_comment import MARKER

from conftest import RunQBench


def test_a_last_run_of_another_commit_is_not_commented_on(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REF_NAME", "feature")
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    for run_id in ("r0", "r1"):
        monkeypatch.setenv("GITHUB_SHA", "c1c1c1c1c1c1c1c1")
        run_qbench(f"--qbench-run-id={run_id}", run_dir=run_id)
    monkeypatch.setenv("GITHUB_SHA", "c2c2c2c2c2c2c2c2")
    pytester.makeconftest("def pytest_configure(config):\n    raise RuntimeError('broke')\n")
    assert pytester.runpytest("-p", "qbench", "--qbench-run-id=r2").ret == 3
    assert not (pytester.path / ".qbench" / "runs" / "r2").exists()
    qbench_dir = str(pytester.path / ".qbench")
    capsys.readouterr()
    assert main(["pr-comment", "--dir", qbench_dir]) != 0
    captured = capsys.readouterr()
    assert MARKER not in captured.out
    assert (
        "the last indexed run, r1, is of commit c1c1c1c1c1c1, and this CI job is at commit "
        "c2c2c2c2c2c2: no run of this commit was recorded"
    ) in captured.err
    assert main(["diff", "--dir", qbench_dir]) != 0
    assert "no run of this commit was recorded" in capsys.readouterr().err
    # the run named: commented on, as asked
    assert main(["pr-comment", "--dir", qbench_dir, "r1"]) == 0
    assert "run `r1`" in capsys.readouterr().out
    # on the runs' own commit: as before
    monkeypatch.setenv("GITHUB_SHA", "c1c1c1c1c1c1c1c1")
    assert main(["pr-comment", "--dir", qbench_dir]) == 0
    assert main(["diff", "--dir", qbench_dir]) == 0
