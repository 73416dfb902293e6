"""Flaky or broken, through real pytest runs: a failure that repeats in consecutive runs is a
regression, not flaky; flaky needs evidence (a pass after rerun, both outcomes on one commit,
single-run failures between passes); outage runs are set aside; one verdict for the report,
``qbench diff``, ``qbench flaky`` and MCP's ``get_test_failure``; a flaky failure still fails
``qbench diff``."""

from __future__ import annotations

import importlib
import json
import multiprocessing.connection  # noqa: F401 - see below
from typing import Any

import pytest

from pytest_qbench.cli import main

from conftest import QBenchRun
from conftest import RunQBench


# multiprocessing.connection is imported here, before any in-process pytester run: a run that
# imported it first would drop it from sys.modules when it ends, the MCP client would import it
# again, and later tests pickling connections (concurrent index writers) would fail.

SUITE = """
    import pathlib

    import pytest

    def check(name):
        plan = dict(w.split("=") for w in pathlib.Path("plan.txt").read_text().split())
        assert plan.get(name, "pass") == "pass"

    def test_target():
        check("down")
        check("target")

    def test_stable():
        pass

    @pytest.mark.parametrize("i", range(12))
    def test_many(i):
        check("down")
"""
TARGET = "test_suite.py::test_target"


def run_plans(
    pytester: pytest.Pytester, run_qbench: RunQBench, plans: list[str], *, prefix: str = "r"
) -> list[QBenchRun]:
    """SUITE once per plan (``target=fail``, ``down=fail``...), run ids ``r1``, ``r2``..."""
    pytester.makepyfile(test_suite=SUITE)
    runs = []
    for number, plan in enumerate(plans, 1):
        pytester.path.joinpath("plan.txt").write_text(plan)
        run_id = f"{prefix}{number}"
        runs.append(run_qbench(f"--qbench-run-id={run_id}", run_dir=run_id))
    return runs


def verdict(run: QBenchRun) -> tuple[str, str]:
    """The status and summary of test_target's history in ``run``'s report."""
    history = run.by_name("test_target").history
    assert history is not None
    return history.status, history.summary


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``qbench ARGS`` in process: exit status, the ``--json`` output parsed, the text output."""
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    data = json.loads(capsys.readouterr().out)
    assert main([*args, "--dir", ".qbench"]) == status
    return status, data, capsys.readouterr().out


def mcp_history(pytester: pytest.Pytester, run_id: str) -> str | None:
    """The history line MCP's ``get_test_failure`` gives an assistant."""
    from mcp_helpers import mcp_call
    from mcp_helpers import structured

    answer = mcp_call(pytester.path, "get_test_failure", {"run_id": run_id, "test": TARGET})
    history: str | None = structured(answer)["history"]
    return history


def test_a_regression_that_comes_back_is_a_new_failure_not_flaky(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails in runs 3 and 4 (same failure), passes in 5 and 6, fails again in 7: the report,
    qbench diff (exit 1), qbench flaky and MCP all call it a regression that came back."""
    plans = ["", "", "target=fail", "target=fail", "", "", "target=fail"]
    runs = run_plans(pytester, run_qbench, plans)
    label, summary = verdict(runs[-1])
    assert (label, summary) == (
        "new failure",
        "new failure: passed in the previous run r6; failed the same way in run r4 before: "
        "a regression that came back",
    )
    status, diff, text = qbench(capsys, "diff")
    assert status == 1
    assert [c["nodeid"] for c in diff["new_failures"]] == [TARGET]
    assert diff["new_failures"][0]["history"] == summary
    assert diff["known_flaky"] == []
    assert f"New failures (1):\n  {TARGET}  AssertionError at test_suite.py:" in text
    assert "1 new failure, 0 fixed" in text
    status, flaky, text = qbench(capsys, "flaky")
    assert (status, flaky["tests"]) == (0, [])
    assert text.startswith("no flaky or broken test in the 7 runs indexed (50 asked)")
    _, history, text = qbench(capsys, "history", TARGET)
    assert (history["flaky"], history["verdict"]) == (
        False,
        "not flaky: failed in 2 consecutive runs (r3, r4) before",
    )
    assert "  verdict   not flaky: failed in 2 consecutive runs (r3, r4) before" in text
    assert mcp_history(pytester, "r7") == summary


def test_a_test_failing_the_same_way_run_after_run_is_broken_since_its_first_failure(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Passes, then fails twice the same way: report.md and MCP's get_test_failure both say
    "broken since run r2", the one label the run decided."""
    runs = run_plans(pytester, run_qbench, ["", "target=fail", "target=fail"])
    label, summary = verdict(runs[-1])
    assert (label, summary) == (
        "broken",
        "broken since run r2: failed 2 of the last 3 runs (same failure)",
    )
    assert f"History: {summary}" in runs[-1].markdown
    assert mcp_history(pytester, "r3") == summary


def test_a_test_alternating_with_the_same_failure_is_flaky_and_still_fails_diff(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pass, fail, pass, fail with the same failure: known flaky everywhere, with the evidence;
    qbench diff lists it apart and still exits 1 (qbench has no quarantine to excuse it)."""
    runs = run_plans(pytester, run_qbench, ["", "target=fail", "", "target=fail"])
    label, summary = verdict(runs[-1])
    assert (label, summary) == (
        "known flaky",
        "known flaky: failed 2 of the last 4 runs; "
        "failed alone in 2 of 4 runs between passes, the same failure each time (r2, r4)",
    )
    status, diff, text = qbench(capsys, "diff")
    assert status == 1
    assert diff["new_failures"] == []
    assert [(c["nodeid"], c["history"]) for c in diff["known_flaky"]] == [(TARGET, summary)]
    assert "Known flaky, failing again (they fail the comparison too) (1):" in text
    assert "0 new failures, 1 known flaky, 0 fixed" in text
    _, flaky, _ = qbench(capsys, "flaky")
    assert [(t["nodeid"], t["evidence"]) for t in flaky["tests"]] == [
        (TARGET, "failed alone in 2 of 4 runs between passes, the same failure each time (r2, r4)")
    ]
    _, history, text = qbench(capsys, "history", TARGET)
    assert history["flaky"] is True
    assert "  verdict   flaky: failed alone in 2 of 4 runs between passes, the same failure" in text
    assert mcp_history(pytester, "r4") == summary


def test_a_pass_and_a_fail_on_one_commit_is_flaky(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Passed on a commit in CI, then failed on the same commit: evidence, but one piece is not
    enough (a healthy test's one-off failure); the second commit that passes and fails makes it
    flaky (monitor same-commit). Failing again on the next commit is a failure repeating run
    after run: failing."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    pytester.makepyfile(test_suite=SUITE)
    verdicts = []
    for run_id, sha, plan in [
        ("c2", "2" * 40, ""),
        ("c2-again", "2" * 40, "target=fail"),
        ("c3", "3" * 40, ""),
        ("c3-again", "3" * 40, "target=fail"),
    ]:
        monkeypatch.setenv("GITHUB_SHA", sha)
        pytester.path.joinpath("plan.txt").write_text(plan)
        verdicts.append(run_qbench(f"--qbench-run-id={run_id}", run_dir=run_id))
    assert verdict(verdicts[1]) == ("new failure", "new failure: passed in the previous run c2")
    assert verdict(verdicts[3]) == (
        "known flaky",
        "known flaky: failed 2 of the last 4 runs; passed and failed on the same commit for 2 "
        f"commits, newest: passed in run c3 and failed in run c3-again on the same commit "
        f"{'3' * 12}",
    )
    _, flaky, _ = qbench(capsys, "flaky")
    assert [(t["monitor"], t["evidence_commits"]) for t in flaky["tests"]] == [
        ("same-commit", ["2" * 40, "3" * 40])
    ]
    monkeypatch.setenv("GITHUB_SHA", "4" * 40)
    other = run_qbench("--qbench-run-id=c4", run_dir="c4")
    assert verdict(other)[0] == "broken"  # fails in consecutive runs, the same way
    status, diff, _ = qbench(capsys, "diff", "c3", "c3-again")
    assert (status, [c["nodeid"] for c in diff["known_flaky"]]) == (1, [TARGET])


def test_outage_runs_do_not_make_healthy_tests_flaky(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs where most tests fail at once are set aside: the tests failing only then are not
    flaky, and a test failing alone after passing around two outages is a new failure."""
    plans = ["", "down=fail", "", "down=fail", "", "target=fail"]
    runs = run_plans(pytester, run_qbench, plans)
    assert verdict(runs[-1]) == ("new failure", "new failure: passed in the previous run r5")
    status, flaky, _ = qbench(capsys, "flaky")
    assert (status, flaky["tests"]) == (0, [])


def test_a_rule_that_cannot_decide_fails_closed(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the flaky rule raises, the failure is not excused: qbench diff counts it as new,
    names the error and exits 1; the run's report says the rule could not decide."""
    run_plans(pytester, run_qbench, ["", "target=fail", ""])

    def broken(*args: object) -> object:
        raise RuntimeError("rule broke")

    # the module sys.modules holds now (pytester's runs dropped the ones they imported), which
    # the next run and qbench diff use
    rule = importlib.import_module("pytest_qbench.history.flakiness")
    monkeypatch.setattr(rule, "classify", broken)
    pytester.path.joinpath("plan.txt").write_text("target=fail")
    label, summary = verdict(run_qbench("--qbench-run-id=r4", run_dir="r4"))
    assert label == "new failure"
    assert summary.endswith("; flaky or not undecided, internal error RuntimeError: rule broke")
    status, diff, text = qbench(capsys, "diff")
    assert status == 1
    assert [c["nodeid"] for c in diff["new_failures"]] == [TARGET]
    assert diff["known_flaky"] == []
    assert diff["undecided"] == [f"{TARGET}: RuntimeError: rule broke"]
    assert "Flaky or not undecided (internal error; counted as new) (1):" in text


def test_a_test_in_a_new_file_is_a_new_test(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs with the same command line (the run id aside) select the same paths: a file only
    the later run collected did not exist before, so its tests are new, and the tests of a
    deleted file are removed, not "not selected"."""
    pytester.makepyfile(test_a="def test_one(): pass\n")
    run_qbench("--qbench-run-id=f1", run_dir="f1")
    pytester.makepyfile(test_b="def test_brand_new(): pass\n")
    run_qbench("--qbench-run-id", "f2", run_dir="f2")
    status, diff, text = qbench(capsys, "diff", "f1", "f2")
    assert status == 0
    assert (diff["new_tests"], diff["not_selected_in_base"]) == (["test_b.py::test_brand_new"], [])
    assert diff["selection"]["same"] is True
    assert "New tests (1):\n  test_b.py::test_brand_new" in text
    assert "not selected" not in text and "did not select the same tests" not in text
    pytester.path.joinpath("test_b.py").unlink()
    run_qbench("--qbench-run-id=f3", run_dir="f3")
    _, back, _ = qbench(capsys, "diff", "f2", "f3")
    assert (back["removed_tests"], back["not_selected_in_head"]) == (
        ["test_b.py::test_brand_new"],
        [],
    )
    run_qbench("test_a.py", "--qbench-run-id=f4", run_dir="f4")
    pytester.makepyfile(test_c="def test_other(): pass\n")
    run_qbench("--qbench-run-id=f5", run_dir="f5")
    _, narrower, _ = qbench(capsys, "diff", "f4", "f5")  # f4 ran one file: it cannot tell
    assert (narrower["new_tests"], narrower["not_selected_in_base"]) == (
        [],
        ["test_c.py::test_other"],
    )


def test_the_monitors_settings_come_from_the_ini_file(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """ini qbench_flaky_monitors changes what the report's history calls flaky (here: evidence
    in 3 runs needed, so 2 single-run failures are not enough); a bad setting is a usage error
    naming the ini option, the key and the value."""
    pytester.makeini("[pytest]\nqbench_flaky_monitors = min_evidence=3, outage_share=0.6\n")
    runs = run_plans(pytester, run_qbench, ["", "target=fail", "", "target=fail"])
    assert verdict(runs[-1])[0] == "new failure"
    pytester.makeini("[pytest]\nqbench_flaky_monitors = min_evidence=0\n")
    bad = pytester.runpytest("-p", "qbench")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        [
            "*ini qbench_flaky_monitors monitor setting min_evidence must be a whole number of 1 or "
            "more, given: '0'; fix the ini value*"
        ]
    )


RERUN_SUITE = """
    import pathlib

    def test_target():
        first = pathlib.Path("attempted")
        if not first.exists():  # the first attempt of each run fails, the rerun passes
            first.write_text("x")
            if pathlib.Path("how.txt").read_text() == "timeout":
                raise TimeoutError("the service did not answer")
            raise KeyError("total")

    def test_stable():
        pass
"""


def test_pass_on_retry_needs_the_same_failure_passing_on_rerun(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs where the test passed on rerun after two different failures are one-off
    failures, no pattern (healthy); a third with the first failure again is flaky
    (pass-on-retry, the two runs with the same failure). The index keeps the failed attempt's
    fingerprint on the passing result."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_suite=RERUN_SUITE)
    flaky = []
    for run_id, how in [("r1", "timeout"), ("r2", "key"), ("r3", "timeout")]:
        pytester.path.joinpath("how.txt").write_text(how)
        pytester.path.joinpath("attempted").unlink(missing_ok=True)
        done = run_qbench(
            f"--qbench-run-id={run_id}", "-p", "pytest_rerunfailures", "--reruns=1", run_dir=run_id
        )
        assert done.by_name("test_target").flaky
        _, found, _ = qbench(capsys, "flaky", "--all")
        flaky.append({t["nodeid"]: (t["status"], t["evidence_runs"]) for t in found["tests"]})
    assert flaky[1][TARGET] == ("healthy", [])
    assert flaky[2][TARGET] == ("flaky", ["r1", "r3"])


MARKED_SUITE = """
    import pathlib

    def plan(name):
        return pathlib.Path("plan.txt").read_text().split().count(name)

    def test_flips():
        assert not plan("flips"), "the service did not answer"

    def test_breaks():
        assert not plan("breaks"), "total is wrong"

    def test_stable():
        pass
"""


def test_mcp_flaky_list_marks_quarantined_and_broken_tests(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``flaky_tests`` through a real MCP client: the flaky test first, marked quarantined with
    its reason; the broken test after it, its evidence naming the runs since it broke."""
    from mcp_helpers import mcp_call
    from mcp_helpers import structured

    pytester.makepyfile(test_suite=MARKED_SUITE)
    plans = ["", "flips", "", "flips breaks", "breaks", "breaks"]
    for number, plan in enumerate(plans, 1):
        pytester.path.joinpath("plan.txt").write_text(plan)
        run_qbench(f"--qbench-run-id=r{number}", run_dir=f"r{number}")
    assert (
        main(
            [
                *("quarantine", "add", "test_suite.py::test_flips"),
                *("--reason", "slow service", "--dir", str(pytester.path / ".qbench")),
            ]
        )
        == 0
    )
    answer = mcp_call(pytester.path, "flaky_tests", {})
    tests = structured(answer)["tests"]
    marks = [(t["nodeid"], t["broken"], t.get("quarantined")) for t in tests]
    assert marks == [
        ("test_suite.py::test_flips", False, "slow service"),
        ("test_suite.py::test_breaks", True, None),
    ]
    assert tests[1]["evidence"].startswith("broken: failed in 3 consecutive runs (r4, r5, r6)")
    text = answer.content[0].text
    assert "test_suite.py::test_flips: QUARANTINED (slow service), flaky" in text
    assert "test_suite.py::test_breaks: BROKEN, flaky" in text


def test_a_failure_that_passes_only_on_rerun_is_not_fixed(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test that failed in A and in B failed first and passed only on a rerun is flaky in
    B, not fixed: qbench diff (text and --json) and the PR comment list it apart, with its
    reruns, never under Fixed."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_suite=RERUN_SUITE)
    pytester.path.joinpath("how.txt").write_text("timeout")
    run_qbench("--qbench-run-id=a", run_dir="a")  # no reruns: it fails
    pytester.path.joinpath("attempted").unlink()
    rerun = ("-p", "pytest_rerunfailures", "--reruns=2")
    assert run_qbench("--qbench-run-id=b", *rerun, run_dir="b").by_name("test_target").flaky
    status, diff, text = qbench(capsys, "diff", "a", "b")
    assert (status, diff["fixed"], diff["new_failures"]) == (0, [], [])
    passed = diff["passed_after_reruns"]
    assert [(c["nodeid"], c["before"], c["after"], c["reruns"]) for c in passed] == [
        ("test_suite.py::test_target", "failed", "passed", 1)
    ]
    assert "Fixed" not in text
    assert "test_suite.py::test_target  failed -> passed after 1 rerun" in text
    assert "0 fixed, 1 passed only after reruns, 0 still failing" in text
    assert main(["pr-comment", "--dir", ".qbench", "b", "--base", "a"]) == 0
    comment = capsys.readouterr().out
    assert "#### Fixed" not in comment and "0 fixed" in comment.splitlines()[1]
    assert "#### Passed only after reruns, flaky (1)" in comment
    assert "- `test_suite.py::test_target` was failed, now passed after 1 rerun" in comment


def test_runs_that_differ_in_their_output_options_select_the_same_paths(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """Output options (``-v``, ``-rA``, ``--tb``, ``--qbench-md``) select no test: a file the
    later run of ``-vv -rA`` collected is new, as after a run of the same command line (tomli:
    a new test file after ``pytest -q`` was "not selected in A" under ``pytest -q -rA``)."""
    pytester.makepyfile(test_a="def test_one(): pass\n")
    run_qbench("-q", "--qbench-run-id=o1", run_dir="o1")
    pytester.makepyfile(test_b="def test_brand_new(): pass\n")
    md = f"--qbench-md={pytester.path / 'report.md'}"
    run_qbench("-vv", "-rA", "--tb", "short", md, "--qbench-run-id=o2", run_dir="o2")
    status, diff, text = qbench(capsys, "diff", "o1", "o2")
    assert status == 0
    assert (diff["new_tests"], diff["not_selected_in_base"]) == (["test_b.py::test_brand_new"], [])
    assert "did not select the same tests" not in text
    pytester.makepyfile(test_c="def test_other(): pass\n")
    run_qbench("-vk", "one or other", "--qbench-run-id=o3", run_dir="o3")  # -k still selects
    _, selected, _ = qbench(capsys, "diff", "o2", "o3")
    assert (selected["new_tests"], selected["not_selected_in_base"]) == (
        [],
        ["test_c.py::test_other"],
    )
