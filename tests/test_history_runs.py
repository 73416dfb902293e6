"""History through real pytest runs: each run indexed, failing tests carry their history in
report.json and report.md, retention, a broken index, a crashed run indexed later (issue 5)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import Any

import pytest

from pytest_qbench.cli import main

from conftest import QBenchRun
from conftest import RunQBench


SUITE = """
    import pathlib
    import time

    def plan():
        return dict(word.split("=") for word in pathlib.Path("plan.txt").read_text().split())

    def test_flaky():
        assert plan()["flaky"] == "pass", "flaky failed at 0x%x" % id(object())

    def test_new():
        assert plan()["new"] == "pass"

    def test_fixed():
        assert plan()["fixed"] == "pass"

    def test_slow():
        time.sleep(float(plan()["sleep"]))

    def test_stable():
        pass
"""
PLANS = {
    "r1": "flaky=fail new=pass fixed=fail sleep=0",
    "r2": "flaky=pass new=pass fixed=fail sleep=0",
    "r3": "flaky=fail new=fail fixed=pass sleep=0.3",
}


def run_plan(
    pytester: pytest.Pytester, run_qbench: RunQBench, run_id: str, *args: str
) -> QBenchRun:
    """One run of SUITE with the plan of ``run_id``."""
    pytester.path.joinpath("plan.txt").write_text(PLANS[run_id])
    return run_qbench(f"--qbench-run-id={run_id}", *args, run_dir=run_id)


@pytest.fixture
def three_runs(pytester: pytest.Pytester, run_qbench: RunQBench) -> list[QBenchRun]:
    """SUITE run three times: test_flaky fails, passes, fails; test_new fails in the third;
    test_fixed passes in the third; test_slow takes 0.3s more in the third."""
    pytester.makepyfile(test_suite=SUITE)
    return [run_plan(pytester, run_qbench, run_id) for run_id in PLANS]


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json`` in process: exit status and parsed output."""
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    return status, json.loads(capsys.readouterr().out)


def test_failing_tests_carry_their_history(three_runs: list[QBenchRun]) -> None:
    """Run 3: the test that failed, passed, failed is known flaky; the test that passed before
    is a new failure naming that run; a passing test has no history."""
    first, second, third = three_runs
    new_failure = first.by_name("test_fixed").history
    assert new_failure is not None
    assert new_failure.summary == "new failure: first run of this test"
    fixed = second.by_name("test_fixed").history
    assert fixed is not None
    assert fixed.status == "broken"
    assert fixed.summary == "broken since run r1: failed 2 of the last 2 runs (same failure)"
    flaky = third.by_name("test_flaky").history
    assert flaky is not None
    assert (flaky.status, flaky.flips, flaky.flaky_indicator) == ("known flaky", 2, 1.0)
    assert (flaky.runs, flaky.failed, flaky.last_passed_run) == (2, 1, "r2")
    assert flaky.same_failure_runs == 1  # the message's address differs, the failure does not
    new = third.by_name("test_new").history
    assert new is not None
    assert (new.status, new.summary) == (
        "new failure",
        "new failure: passed in the previous run r2",
    )
    assert third.by_name("test_fixed").history is None
    assert third.by_name("test_stable").history is None


def test_the_markdown_shows_the_history_line(three_runs: list[QBenchRun]) -> None:
    """Each failure block of report.md has its history in one line."""
    markdown = three_runs[2].markdown
    assert (
        "History: known flaky: failed 2 of the last 3 runs; failed alone in 2 of 3 runs between "
        "passes, the same failure each time (r1, r3)" in markdown
    )
    assert "History: new failure: passed in the previous run r2" in markdown


def test_qbench_flaky_finds_the_flipping_test(
    three_runs: list[QBenchRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """A test that fails in runs 1 and 3 and passes in 2 is flaky (indicator 1, 2 flips); the
    test failing twice then passing (fixed) and the one failing after passes (a new failure)
    are not flaky, even with --min-flips 1."""
    status, data = qbench_json(capsys, "flaky")
    assert status == 0
    assert [t["nodeid"] for t in data["tests"]] == ["test_suite.py::test_flaky"]
    (flaky,) = data["tests"]
    assert {k: flaky[k] for k in ("results", "failed_runs", "flips", "score")} == {
        "results": 3,
        "failed_runs": 2,
        "flips": 2,
        "score": 0.6667,
    }
    assert (flaky["flaky_indicator"], flaky["trend"]) == (1.0, "Stable")
    assert flaky["last_failure"]["error_type"] == "AssertionError"
    assert flaky["last_failure"]["location"] == "test_suite.py:8"
    assert flaky["evidence"] == (
        "failed alone in 2 of 3 runs between passes, the same failure each time (r1, r3)"
    )
    assert (flaky["status"], flaky["monitor"], flaky["evidence_runs"]) == (
        "flaky",
        "failure-rate",
        ["r1", "r3"],
    )
    _, once = qbench_json(capsys, "flaky", "--min-flips", "1")
    assert [t["nodeid"] for t in once["tests"]] == ["test_suite.py::test_flaky"]


def test_qbench_diff_of_the_last_two_runs(
    three_runs: list[QBenchRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """New failures, the known flaky one apart, the fixed test, the slower test; exit status 1
    for the new failure."""
    third = three_runs[2].by_name("test_slow")
    assert third.duration >= 0.3  # the sleep, measured
    # The diff reads the durations from the index: the sleeps' own (0.3 s in r3, none before),
    # so that what counts as slower does not depend on how long a loaded machine took to run
    # the other tests (a stall of 0.1 s, --slower-secs's default, makes any of them slower).
    with sqlite3.connect(".qbench/index.sqlite") as db:  # qbench_json's --dir
        db.execute(
            "UPDATE results SET duration = CASE WHEN run_ref = (SELECT id FROM runs WHERE "
            "run_id = 'r3') AND test_ref = (SELECT id FROM tests WHERE nodeid = ?) "
            "THEN 0.3 ELSE 0.0 END",
            ("test_suite.py::test_slow",),
        )
    db.close()
    status, diff = qbench_json(capsys, "diff")
    assert status == 1
    assert (diff["base"]["run_id"], diff["head"]["run_id"]) == ("r2", "r3")
    assert [c["nodeid"] for c in diff["new_failures"]] == ["test_suite.py::test_new"]
    assert diff["new_failures"][0]["failure"]["message"] == "assert 'fail' == 'pass'"
    assert [c["nodeid"] for c in diff["known_flaky"]] == ["test_suite.py::test_flaky"]
    assert [(c["nodeid"], c["before"], c["after"]) for c in diff["fixed"]] == [
        ("test_suite.py::test_fixed", "failed", "passed")
    ]
    assert diff["still_failing"] == []
    (slower,) = diff["slower"]
    assert slower["nodeid"] == "test_suite.py::test_slow"
    assert (slower["before"], slower["after"]) == (0.0, 0.3)
    _, quiet = qbench_json(capsys, "diff", "--slower-secs", "5")
    assert quiet["slower"] == []
    status, back = qbench_json(capsys, "diff", "r1", "r2")
    assert status == 0
    assert [c["nodeid"] for c in back["fixed"]] == ["test_suite.py::test_flaky"]
    assert [(c["nodeid"], c["same_failure"]) for c in back["still_failing"]] == [
        ("test_suite.py::test_fixed", True)
    ]


def test_qbench_diff_calls_a_known_flaky_failure_what_the_report_does(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.5) A known flaky test failing again is listed apart from the new failures with
    its report's history line, and still fails the comparison: exit status 1."""
    pytester.makepyfile(test_suite=SUITE)
    plans = ["flaky=fail", "flaky=pass", "flaky=fail"]
    runs = []
    for number, plan in enumerate(plans, 1):
        pytester.path.joinpath("plan.txt").write_text(f"{plan} new=pass fixed=pass sleep=0")
        runs.append(run_qbench(f"--qbench-run-id=k{number}", run_dir=f"k{number}"))
    history = runs[2].by_name("test_flaky").history
    assert history is not None and history.status == "known flaky"
    status, diff = qbench_json(capsys, "diff")
    assert status == 1
    assert diff["new_failures"] == []
    (again,) = diff["known_flaky"]
    assert (again["nodeid"], again["before"], again["after"]) == (
        "test_suite.py::test_flaky",
        "passed",
        "failed",
    )
    assert again["history"] == history.summary
    assert again["failure"]["error_type"] == "AssertionError"
    capsys.readouterr()
    assert main(["diff", "--dir", ".qbench"]) == 1
    text = capsys.readouterr().out
    assert "New failures" not in text
    assert (
        "Known flaky, failing again (they fail the comparison too) (1):\n"
        f"  test_suite.py::test_flaky  {history.summary}" in text
    )
    assert "0 new failures, 1 known flaky, 0 fixed" in text


def test_qbench_diff_compares_like_with_like(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.4) Tests deselected by -k, or in files a run did not collect, are not removed
    (nor new): diff says the selections differ and counts removed tests only among those the
    newer run collected from the same files and did not deselect."""
    pipes = "def test_pipe_one(): pass\ndef test_pipe_two(): pass\ndef test_pipe_old(): pass\n"
    pytester.makepyfile(
        test_a=pipes + "def test_other(): pass\n",
        test_b="def test_b1(): pass\ndef test_b2(): pass\n",
    )
    run_qbench("--qbench-run-id=full", run_dir="full")
    pytester.makepyfile(
        test_a=pipes.replace("def test_pipe_old(): pass\n", "") + "def test_other(): pass\n"
    )
    run_qbench("-k", "pipe", "--qbench-run-id=pipe", run_dir="pipe")
    status, diff = qbench_json(capsys, "diff", "full", "pipe")
    assert status == 0
    assert diff["removed_tests"] == ["test_a.py::test_pipe_old"]
    assert diff["not_selected_in_head"] == [
        "test_a.py::test_other",
        "test_b.py::test_b1",
        "test_b.py::test_b2",
    ]
    assert diff["selection"] == {
        "same": False,
        "base": {"ran": 6, "deselected": 0, "files": 2, "deselected_known": True},
        "head": {"ran": 2, "deselected": 3, "files": 2, "deselected_known": True},
    }
    capsys.readouterr()
    assert main(["diff", "full", "pipe", "--dir", ".qbench"]) == 0
    text = capsys.readouterr().out
    assert "The runs did not select the same tests" in text
    assert "  B  ran 2 tests of 2 files, deselected 3" in text
    assert "3 tests of A not selected in B (deselected, in files B did not collect" in text
    assert "1 removed test, 3 not selected in B," in text
    run_qbench("test_b.py", "--qbench-run-id=onefile", run_dir="onefile")
    _, back = qbench_json(capsys, "diff", "pipe", "onefile")
    assert (back["new_tests"], back["removed_tests"]) == ([], [])
    assert back["not_selected_in_base"] == ["test_b.py::test_b1", "test_b.py::test_b2"]
    assert back["not_selected_in_head"] == ["test_a.py::test_pipe_one", "test_a.py::test_pipe_two"]
    run_qbench("--qbench-run-id=again", run_dir="again")
    _, same = qbench_json(capsys, "diff", "full", "again")
    assert same["selection"]["same"] is True
    assert same["removed_tests"] == ["test_a.py::test_pipe_old"] and same["new_tests"] == []


def test_qbench_diff_a_warnings_filter_is_no_node_id(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-W error::DeprecationWarning`` (and ``-o filterwarnings=error::...``) holds ``::`` but
    selects no test: two such runs selected the same tests, and a test gone from the second is
    removed, where diff said the runs did not select the same tests and counted it nowhere."""
    pytester.makepyfile(test_a="def test_kept(): pass\ndef test_gone(): pass\n")
    warn = ("-W", "error::DeprecationWarning", "-o", "filterwarnings=error::UserWarning")
    run_qbench(*warn, "--qbench-run-id=one", run_dir="one")
    pytester.makepyfile(test_a="def test_kept(): pass\n")
    run_qbench(*warn, "--qbench-run-id=two", run_dir="two")
    _, diff = qbench_json(capsys, "diff", "one", "two")
    assert diff["selection"]["same"] is True
    assert diff["removed_tests"] == ["test_a.py::test_gone"]
    assert diff["not_selected_in_head"] == []


def test_qbench_diff_names_a_last_failed_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """--lf drops the tests that passed before while pytest collects, without reporting them
    deselected: with -k deselecting another test, the diff must still not call the dropped
    tests removed, and its note names --lf."""
    pytester.makepyfile(
        test_a="def test_ok(): pass\ndef test_bad(): assert 0\n"
        "def test_bad2(): assert 0\ndef test_ok2(): pass\n",
        test_b="def test_b(): pass\n",
    )
    run_qbench("--qbench-run-id=full", run_dir="full")
    lf = run_qbench("--lf", "-k", "bad2", "--qbench-run-id=lf", run_dir="lf")
    lf.result.assert_outcomes(failed=1, deselected=1)
    status, diff = qbench_json(capsys, "diff", "full", "lf")
    assert status == 0
    assert diff["removed_tests"] == []
    assert diff["not_selected_in_head"] == [
        "test_a.py::test_bad",
        "test_a.py::test_ok",
        "test_a.py::test_ok2",
        "test_b.py::test_b",
    ]
    assert diff["selection"]["head"]["deselected_known"] is False
    capsys.readouterr()
    main(["diff", "full", "lf", "--dir", ".qbench"])
    text = capsys.readouterr().out
    assert "  B  ran 1 test of 1 file, deselected 1 (run with --lf: pytest ran only" in text
    # the counts in pytest's words, deselected tests too, as its closing line has them
    assert "head  lf  " in text and "  1 test: 1 failed, 1 deselected\n" in text
    capsys.readouterr()
    main(["show", "lf", "--dir", ".qbench"])
    assert "tests     1: 1 failed, 1 deselected\n" in capsys.readouterr().out


def test_qbench_diff_under_xdist_does_not_guess_what_k_left_out(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.4) Under pytest-xdist pytest counts no deselected tests; a -k run's missing
    tests are then not selected, not removed, and the diff says the selection is not recorded."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_a="def test_pipe(): pass\ndef test_other(): pass\n")
    for run_id, args in (("x1", ()), ("x2", ("-k", "pipe"))):
        pytester.runpytest_subprocess(
            "-p", "qbench", "-p", "xdist", "-n", "2", f"--qbench-run-id={run_id}", *args
        )
    status, diff = qbench_json(capsys, "diff", "x1", "x2")
    assert status == 0
    assert (diff["removed_tests"], diff["not_selected_in_head"]) == ([], ["test_a.py::test_other"])
    assert diff["selection"]["head"]["deselected_known"] is False
    capsys.readouterr()
    main(["diff", "x1", "x2", "--dir", ".qbench"])
    assert "(which tests it left out is not recorded: -k, -m or node ids" in capsys.readouterr().out


def test_qbench_history_of_one_test(
    three_runs: list[QBenchRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """Azure's ExecutionSummary names, and every result oldest first."""
    status, data = qbench_json(capsys, "history", "test_suite.py::test_flaky")
    assert status == 0
    assert (data["totalRuns"], data["passedRuns"], data["failedRuns"]) == (3, 1, 2)
    assert data["flakyIndicator"] == 1.0
    assert data["lastRunDate"] == three_runs[2].report.run.started_at.isoformat().replace(
        "+00:00", "Z"
    )
    assert data["averageExecutionTime"] >= 0
    assert [r["outcome"] for r in data["results"]] == ["failed", "passed", "failed"]
    capsys.readouterr()
    assert main(["history", "test_suite.py::test_flaky", "--dir", ".qbench"]) == 0
    assert "outcomes  F.F  (oldest first)" in capsys.readouterr().out


def test_qbench_history_names_the_xfailed_passes(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """An expected failure counts among a test's passes (Azure's passedRuns), but pytest says
    xfailed, not passed: the runs line says how many of the passes were xfailed or xpassed."""
    pytester.makepyfile(
        test_x="import pytest\n@pytest.mark.xfail(reason='bug 12')\ndef test_known(): assert 0\n"
    )
    run_qbench("--qbench-run-id=r1", run_dir="r1").result.assert_outcomes(xfailed=1)
    run_qbench("--runxfail", "--qbench-run-id=r2", run_dir="r2")
    capsys.readouterr()
    assert main(["history", "test_x.py::test_known", "--dir", ".qbench"]) == 0
    assert "  runs      2: 1 passed (1 xfailed), 1 failed, 0 skipped\n" in capsys.readouterr().out


def test_qbench_diff_exit_status_through_the_command(
    three_runs: list[QBenchRun], pytester: pytest.Pytester
) -> None:
    """The console command exits 1 on new failures, 0 without; CI can gate on it."""

    def qbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_qbench", *args],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            check=False,
        )

    new = qbench("diff")
    assert new.returncode == 1, new.stderr
    assert "New failures (1):" in new.stdout
    assert "1 new failure, 1 known flaky, 1 fixed, 0 still failing" in new.stdout
    assert qbench("diff", "last~2", "last~1").returncode == 0
    missing = qbench("diff", "r1", "nope")
    assert missing.returncode == 1
    assert "qbench: error: no run 'nope' in" in missing.stderr


def test_keep_runs_deletes_old_run_directories(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """--qbench-keep-runs=2: after four runs, two run directories and two indexed runs."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    for n in range(4):
        run_qbench("--qbench-keep-runs=2", f"--qbench-run-id=k{n}", run_dir=f"k{n}")
    runs = pytester.path / ".qbench" / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["k2", "k3"]


def test_retention_says_what_it_removed(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """(issue 11.12) The run whose retention removes old runs says so in the terminal: how many,
    which, and the run directories deleted with their size."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    first = run_qbench("--qbench-keep-runs=1", "--qbench-run-id=r1", run_dir="r1")
    assert "qbench: retention" not in first.result.stdout.str()
    second = run_qbench("--qbench-keep-runs=1", "--qbench-run-id=r2", run_dir="r2")
    second.result.stdout.fnmatch_lines(
        [
            "qbench: retention (qbench_keep_runs = 1) removed 1 old run from the index and "
            "deleted 1 run directory (* KiB): r1"
        ]
    )
    assert second.result.ret == 0


def test_runs_says_the_size_of_the_store_and_gc_removes_old_runs(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.12) qbench runs ends with the size of .qbench (coverage data apart); qbench gc
    --keep N / --older-than AGE removes old runs and their directories, --dry-run nothing."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    for n in range(3):
        run_qbench(f"--qbench-run-id=g{n}", run_dir=f"g{n}")
    (pytester.path / ".qbench/runs/g0/coverage.db").write_bytes(b"x" * 300_000)
    _, listed = qbench_json(capsys, "runs")
    store = listed["store"]
    assert store["run_dirs"] == 3 and store["coverage_bytes"] == 300_000
    assert store["bytes"] > 300_000
    capsys.readouterr()
    assert main(["runs", "--dir", ".qbench"]) == 0
    assert "in 3 run directories (coverage data 293.0 KiB); 'qbench gc" in capsys.readouterr().out
    status, dry = qbench_json(capsys, "gc", "--keep", "1", "--dry-run")
    assert (status, dry["removed"], dry["dry_run"]) == (0, ["g0", "g1"], True)
    assert dry["freed_bytes"] > 300_000
    assert sorted(p.name for p in (pytester.path / ".qbench/runs").iterdir()) == ["g0", "g1", "g2"]
    status, done = qbench_json(capsys, "gc", "--keep", "2")
    assert (status, done["removed"], done["store"]["run_dirs"]) == (0, ["g0"], 2)
    assert done["freed_bytes"] > 300_000
    capsys.readouterr()
    with pytest.raises(SystemExit):  # an age of 0 would be every run: refused, nothing removed
        main(["gc", "--older-than", "0s", "--dir", ".qbench"])
    assert "must be more than 0 (an age of 0 is every run)" in capsys.readouterr().err
    assert main(["gc", "--keep", "1", "--dir", ".qbench"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("qbench: removed 1 run") and out.splitlines()[0].endswith("): g1")
    assert [p.name for p in (pytester.path / ".qbench/runs").iterdir()] == ["g2"]
    assert [run["run_id"] for run in qbench_json(capsys, "runs")[1]["runs"]] == ["g2"]
    capsys.readouterr()
    assert main(["gc", "--dir", ".qbench"]) == 1
    assert "qbench gc needs --keep N, --older-than AGE or both" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["gc", "--older-than", "a month"])
    assert "must be a number and a unit, s, m, h, d or w" in capsys.readouterr().err


def test_keep_runs_from_the_ini_file(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """ini qbench_keep_runs = 1 keeps the last run only; 0 would keep all."""
    pytester.makeini("[pytest]\nqbench_keep_runs = 1\n")
    pytester.makepyfile(test_one="def test_ok(): pass")
    run_qbench("--qbench-run-id=a", run_dir="a")
    run_qbench("--qbench-run-id=b", run_dir="b")
    assert [p.name for p in (pytester.path / ".qbench" / "runs").iterdir()] == ["b"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qbench-keep-runs=-1"], "*--qbench-keep-runs: must not be negative, given: -1*"),
        (["-o", "qbench_keep_runs=many"], "*ini qbench_keep_runs must be a whole number*"),
    ],
)
def test_a_bad_keep_runs_value_is_refused(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    """A negative or non-numeric value is a usage error before any test runs."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    result = pytester.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_broken_index_costs_the_history_only(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An index that cannot be opened: the reports are written without history, a warning says
    why, and pytest's exit status is unchanged."""
    pytester.makepyfile(test_one="def test_bad(): assert 0")
    (pytester.path / ".qbench").mkdir()
    (pytester.path / ".qbench" / "index.sqlite").write_bytes(b"garbage" * 1000)
    run = run_qbench()
    assert run.result.ret == 1
    assert run.by_name("test_bad").history is None
    (warning,) = [w for w in run.report.warnings if w.code == "history"]
    assert "run not indexed, so no history in its reports" in warning.message
    assert "delete it and run 'qbench index'" in warning.message
    run.result.stdout.fnmatch_lines(["qbench: run not indexed*"])


def test_a_crashed_run_is_indexed_from_its_stream(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed mid-way has no report.json and is not indexed; qbench index reads its
    results.jsonl, and the run shows as interrupted."""
    pytester.makepyfile(
        test_crash="""
        import os

        def test_a():
            assert 0

        def test_b():
            __import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(3)
        """
    )
    pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=crashed")
    run_dir = pytester.path / ".qbench" / "runs" / "crashed"
    assert not (run_dir / "report.json").exists()
    assert main(["index", str(run_dir)]) == 0
    captured = capsys.readouterr()
    assert "has no report.json: indexed from results.jsonl" in captured.err
    assert "indexed crashed: 2 results" in captured.out  # test_b, the one it died in, failed
    status, shown = qbench_json(capsys, "show", "crashed")
    assert status == 0
    assert shown["interrupted"] is True
    assert [f["nodeid"] for f in shown["failures"]] == [
        "test_crash.py::test_a",
        "test_crash.py::test_b",
    ]


@pytest.mark.parametrize(
    "die",
    [
        "__import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(1)",
        "__import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)",
    ],
    ids=["os_exit", "sigkill"],
)
def test_a_run_that_dies_mid_test_names_it_in_the_history(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    die: str,
) -> None:
    """A run whose process dies in a test (pytest-timeout's thread method calls os._exit, the
    out-of-memory killer sends SIGKILL) is listed by the next `qbench runs` before the run it
    followed, interrupted, with the test it died in failed and named (`ProcessDied`); `qbench
    diff` against the run before fails. Before, the history did not know the run: `qbench
    show last` showed the green run before it, and the test that hung was in no run."""
    pytester.makepyfile(
        test_die=f"""
        import os, signal

        def test_a():
            pass

        def test_b():
            if os.environ.get("QBENCH_TEST_DIE"):
                {die}

        def test_c():
            pass
        """
    )
    pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=r1")
    assert not (pytester.path / ".qbench/runs/r1/collected.txt").exists()  # removed at the end
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    assert pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=r2").ret != 0
    assert not (pytester.path / ".qbench/runs/r2/report.json").exists()
    _, listed = qbench_json(capsys, "runs")
    assert [(r["run_id"], r["interrupted"]) for r in listed["runs"]] == [
        ("r2", True),
        ("r1", False),
    ]
    _, shown = qbench_json(capsys, "show", "last")
    assert shown["run_id"] == "r2"
    assert (shown["summary"]["passed"], shown["summary"]["failed"]) == (1, 1)
    (failure,) = shown["failures"]
    assert failure["nodeid"] == "test_die.py::test_b"
    assert failure["error_type"] == "ProcessDied"
    assert main(["diff", "r1", "r2", "--dir", ".qbench"]) == 1
    assert "test_die.py::test_b  ProcessDied" in capsys.readouterr().out


def test_render_indexes_the_crashed_run_it_rebuilds(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.16) qbench render RUN_DIR rebuilds a crashed run's reports and indexes the run,
    so that qbench runs lists it without qbench index; outside a run store it says why not."""
    pytester.makepyfile(
        test_crash="def test_a():\n    assert 0\n\ndef test_b():\n    import os; __import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(3)\n"
    )
    pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=crashed")
    run_dir = pytester.path / ".qbench" / "runs" / "crashed"
    assert not (run_dir / "report.json").exists()
    capsys.readouterr()
    assert main(["render", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "qbench: rebuilt interrupted run crashed" in out
    assert "qbench: indexed crashed in " in out and "index.sqlite: 'qbench runs' lists it" in out
    _, listed = qbench_json(capsys, "runs")
    assert [(r["run_id"], r["interrupted"]) for r in listed["runs"]] == [("crashed", True)]
    elsewhere = pytester.path / "artifact"
    run_dir.rename(elsewhere)
    assert main(["render", str(elsewhere)]) == 0
    assert "is not in a run store (<qbench dir>/runs/<id>), so not indexed" in (
        capsys.readouterr().out
    )


def test_history_under_xdist(pytester: pytest.Pytester) -> None:
    """Under pytest-xdist the controller indexes the run once, and the history is the same."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x="def test_bad(): assert 0\n\ndef test_ok(): pass")
    for run_id in ("x1", "x2"):
        pytester.runpytest_subprocess(
            "-p", "qbench", "-p", "xdist", "-n", "2", f"--qbench-run-id={run_id}"
        )
    data = json.loads((pytester.path / ".qbench/runs/x2/report.json").read_text())
    (bad,) = [r for r in data["results"] if r["nodeid"] == "test_x.py::test_bad"]
    assert bad["history"]["summary"] == (
        "broken since run x1: failed 2 of the last 2 runs (same failure)"
    )


def test_a_run_without_tests_is_not_indexed(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """--collect-only (or a -k matching nothing) writes its reports but adds no run to the
    history, so that `qbench diff` does not compare against an empty run."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    run_qbench("--collect-only", "--qbench-run-id=c", run_dir="c")
    run_qbench("-k", "nothing", "--qbench-run-id=k", run_dir="k")
    assert not (pytester.path / ".qbench" / "index.sqlite").exists()


def test_setup_only_and_setup_plan_runs_are_no_runs_of_the_tests(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """--setup-only and --setup-plan run no test (pytest: "no tests ran"): qbench writes no
    report that calls each test passed, and indexes nothing a diff would call fixed."""
    pytester.makepyfile(
        test_one="import pytest\n@pytest.fixture\ndef f(): pass\ndef test_bad(f): assert 0\n"
    )
    run_qbench("--qbench-run-id=r1", run_dir="r1").result.assert_outcomes(failed=1)
    for option in ("--setup-only", "--setup-plan"):
        result = pytester.runpytest("-p", "qbench", option, "--qbench-run-id=s")
        assert result.ret == 0 and result.parseoutcomes() == {}  # no tests ran
        assert not (pytester.path / ".qbench" / "runs" / "s").exists()
        result.stderr.fnmatch_lines([f"qbench: {option} runs no test: no report written"])
    assert [r["run_id"] for r in qbench_json(capsys, "runs")[1]["runs"]] == ["r1"]


def test_qbench_diff_after_x_or_maxfail_calls_no_test_removed_or_new(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """-x, --maxfail and --sw stop the run at a failure: the tests after it were collected but
    not run, so a diff with a whole run must call them neither removed nor new (--sw's
    deselected tests recorded or not); a --maxfail that was not reached ran every test, and a
    test missing from it is removed."""
    pytester.makepyfile(
        test_a="def test_ok(): pass\ndef test_bad(): assert 0\n"
        "def test_bad2(): assert 0\ndef test_after(): pass\n"
    )
    run_qbench("--qbench-run-id=full", run_dir="full")
    run_qbench("-x", "--qbench-run-id=x", run_dir="x").result.assert_outcomes(failed=1, passed=1)
    run_qbench("--maxfail", "2", "--qbench-run-id=m2", run_dir="m2")
    for base, head in (("full", "x"), ("full", "m2")):
        status, diff = qbench_json(capsys, "diff", base, head)
        assert status == 0
        assert diff["removed_tests"] == [] and diff["not_selected_in_head"] != []
        assert diff["selection"]["head"]["deselected_known"] is False
        _, back = qbench_json(capsys, "diff", head, base)
        assert back["new_tests"] == [] and back["not_selected_in_base"] != []
    capsys.readouterr()
    main(["diff", "full", "x", "--dir", ".qbench"])
    assert "(stopped at its failures by -x, --maxfail or --sw: the tests" in capsys.readouterr().out
    run_qbench("--sw", "--qbench-run-id=sw1", run_dir="sw1")
    sw2 = run_qbench("--sw", "--qbench-run-id=sw2", run_dir="sw2")  # test_ok deselected
    sw2.result.assert_outcomes(failed=1, deselected=1)
    _, stepwise = qbench_json(capsys, "diff", "full", "sw2")
    assert stepwise["removed_tests"] == []
    pytester.makepyfile(test_a="def test_ok(): pass\ndef test_bad(): assert 0\n")
    run_qbench("--maxfail=2", "--qbench-run-id=m2short", run_dir="m2short")
    _, short = qbench_json(capsys, "diff", "full", "m2short")
    assert short["removed_tests"] == ["test_a.py::test_after", "test_a.py::test_bad2"]


def test_qbench_diff_sees_the_stop_and_lf_wherever_they_were_given(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """-x in the ini file's addopts, --maxfail and --lf in PYTEST_ADDOPTS: the report records
    what pytest settled (not only the command line), so a diff with a whole run calls the tests
    the stopped or --lf run did not reach neither removed nor new."""
    pytester.makepyfile(
        test_a="def test_ok(): pass\ndef test_bad(): assert 0\n"
        "def test_bad2(): assert 0\ndef test_after(): pass\n"
    )
    full = run_qbench("--qbench-run-id=full", run_dir="full")
    assert (full.report.run.max_failures, full.report.run.last_failed) == (0, False)
    ini_file = pytester.makeini("[pytest]\naddopts = -x\n")
    ini = run_qbench("--qbench-run-id=ini", run_dir="ini")
    ini.result.assert_outcomes(failed=1, passed=1)
    assert ini.report.run.max_failures == 1
    ini_file.unlink()
    monkeypatch.setenv("PYTEST_ADDOPTS", "--maxfail=2")
    env = run_qbench("--qbench-run-id=env", run_dir="env")
    env.result.assert_outcomes(failed=2, passed=1)
    assert env.report.run.max_failures == 2
    monkeypatch.setenv("PYTEST_ADDOPTS", "--sw")
    assert run_qbench("--qbench-run-id=sw", run_dir="sw").report.run.max_failures == 1
    monkeypatch.setenv("PYTEST_ADDOPTS", "--lf")
    lf = run_qbench("--qbench-run-id=lf", run_dir="lf")
    lf.result.assert_outcomes(failed=2)
    assert lf.report.run.last_failed is True
    monkeypatch.delenv("PYTEST_ADDOPTS")
    for head in ("ini", "env", "lf"):
        status, diff = qbench_json(capsys, "diff", "full", head)
        assert status == 0, head
        assert diff["removed_tests"] == [] and diff["not_selected_in_head"] != [], head
        _, back = qbench_json(capsys, "diff", head, "full")
        assert back["new_tests"] == [] and back["not_selected_in_base"] != [], head
    capsys.readouterr()
    main(["pr-comment", "ini", "--base", "full", "--dir", ".qbench"])
    assert (
        "> 2 tests of run `full` did not run here (it stopped at its failures: -x, --maxfail "
        "or --sw): not counted as removed, nor as passing." in capsys.readouterr().out
    )


def test_qbench_diff_fails_when_the_later_run_did_not_finish(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stopped by a test raising KeyboardInterrupt or calling pytest.exit (pytest exits 2
    or the status given) has no result for the tests it did not reach: a diff with a whole run
    calls them neither removed nor passing, fails (fail closed) and says why; the pull-request
    comment is red and says so (it was green: "282 removed tests", exit 0, on simplejson)."""
    pytester.makepyfile(
        test_a="def test_first(): pass\ndef test_stop(): pass\n",
        test_b="def test_one(): pass\ndef test_two(): pass\n",
    )
    run_qbench("--qbench-run-id=full", run_dir="full")
    stops = {
        "ki": "def test_stop(): raise KeyboardInterrupt\n",
        "ex": "import pytest\ndef test_stop(): pytest.exit('database gone', returncode=3)\n",
    }
    for run_id, stop in stops.items():
        pytester.makepyfile(test_a=f"def test_first(): pass\n{stop}")
        run = run_qbench(f"--qbench-run-id={run_id}", run_dir=run_id, subprocess=True)
        assert run.result.ret in (2, 3) and run.report.run.interrupted
        status, diff = qbench_json(capsys, "diff", "full", run_id)
        assert status == 1, run_id
        assert diff["removed_tests"] == [] and diff["new_failures"] == []
        assert "test_b.py::test_one" in diff["not_selected_in_head"]
        assert diff["head_incomplete"].startswith("the run was interrupted")
        _, whole = qbench_json(capsys, "diff", run_id, "full")
        assert whole["head_incomplete"] is None and whole["new_tests"] == []
    capsys.readouterr()
    assert main(["pr-comment", "ki", "--base", "full", "--dir", ".qbench"]) == 0
    assert "### :x: qbench: the run did not finish, 0 new failures" in capsys.readouterr().out
    # `qbench runs` says so beside the counts, which alone read as a whole green run
    assert main(["runs", "--dir", ".qbench"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert "1 passed (interrupted)" in rows["ki"] and "(interrupted)" not in rows["full"]
