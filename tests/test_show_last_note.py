"""``qbench show last`` after a run that ran no test (a usage error, a ``-m`` matching
nothing): such a run is never indexed, so ``last`` is the run before it, and show printed that
run, `exit code 0`, with no word that pytest's last run was another (trial11, parse). It still
shows the last indexed run, and says on stderr which run was left out and why."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main

from conftest import RunQBench


def test_show_last_says_a_later_run_ran_no_test(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r1", run_dir="r1")
    empty = run_qbench("--qbench-run-id=r2", "--strict-markers", "-m", "nosuch", run_dir="r2")
    assert empty.result.ret == 4
    qbench_dir = str(pytester.path / ".qbench")
    capsys.readouterr()
    assert main(["show", "--dir", qbench_dir, "last"]) == 0
    captured = capsys.readouterr()
    assert "r1" in captured.out
    assert "note: the last run, r2, ran no tests (pytest's exit status 4" in captured.err
    assert main(["show", "--dir", qbench_dir, "r1"]) == 0
    assert "note:" not in capsys.readouterr().err
