"""``--qbench-quarantine``, through real pytest runs: a quarantined test's known failure does not
fail the run (exit 0, one line naming it, report.md's "Quarantined" section); a new failure
(fingerprint never seen for that test) or a failure that is not quarantined does; ``auto``
quarantines what the flaky monitors call flaky, never a broken test; a bad value is refused."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main

from conftest import QBenchRun
from conftest import RunQBench


SUITE = """
    import pathlib

    def plan(name):
        for word in pathlib.Path("plan.txt").read_text().split():
            key, _, value = word.partition("=")
            if key == name:
                return value
        return "pass"

    def test_target():
        how = plan("target")
        if how == "old":
            raise TimeoutError("the service did not answer")
        if how == "new":
            raise KeyError("total")

    def test_other():
        assert plan("other") == "pass"

    def test_stable():
        pass
"""
TARGET = "test_suite.py::test_target"


def run(
    pytester: pytest.Pytester, run_qbench: RunQBench, run_id: str, plan: str, *args: str
) -> QBenchRun:
    pytester.makepyfile(test_suite=SUITE)
    pytester.path.joinpath("plan.txt").write_text(plan)
    return run_qbench(f"--qbench-run-id={run_id}", *args, run_dir=run_id)


def history(pytester: pytest.Pytester, run_qbench: RunQBench, *plans: str) -> None:
    """Runs ``h1``, ``h2``... without the quarantine, one per plan."""
    for number, plan in enumerate(plans, 1):
        run(pytester, run_qbench, f"h{number}", plan)


def quarantine(pytester: pytest.Pytester, nodeid: str) -> None:
    assert (
        main(
            [
                "quarantine",
                "add",
                nodeid,
                "--reason",
                "slow service",
                "--dir",
                str(pytester.path / ".qbench"),
            ]
        )
        == 0
    )


def lines(done: QBenchRun) -> list[str]:
    return [line for line in done.result.outlines if line.startswith("qbench: quarantine:")]


def test_a_quarantined_known_failure_does_not_fail_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    assert done.result.ret == 0
    done.result.assert_outcomes(failed=1, passed=2)
    assert lines(done)[0].startswith(
        f"qbench: quarantine: {TARGET} failed and is quarantined (slow service); a known failure"
    )
    assert "every failure is a quarantined test's known failure: exit status 0" in lines(done)[-1]
    assert done.report.run.exit_code == 0
    assert (
        "## Quarantined" in done.markdown and f"{TARGET} failed and is quarantined" in done.markdown
    )
    without = run(pytester, run_qbench, "r2", "target=old")  # off: pytest's own status
    assert without.result.ret == 1 and lines(without) == []


def test_a_new_failure_of_a_quarantined_test_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=new", "--qbench-quarantine=on")
    assert done.result.ret == 1
    assert "but with a NEW failure" in lines(done)[0]
    assert "1 quarantined test(s) failed in a new way: the run fails" in lines(done)[-1]
    assert done.report.run.exit_code == 1


def test_a_failure_beside_a_quarantined_one_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old other=fail", "--qbench-quarantine=on")
    assert done.result.ret == 1
    assert "a known failure" in lines(done)[0]
    assert "1 failure(s) not quarantined: the run fails" in lines(done)[-1]


def test_a_quarantine_without_history_keeps_the_run_failed(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    quarantine(pytester, TARGET)  # the failure was never seen: it is new
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    assert done.result.ret == 1 and "NEW failure" in lines(done)[0]


def test_auto_quarantines_a_flaky_test(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    history(pytester, run_qbench, "", "target=old", "", "target=old", "")
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=auto")
    assert done.result.ret == 0
    assert f"{TARGET} failed and is quarantined (flaky: " in lines(done)[0]


def test_auto_never_quarantines_a_broken_test(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "", "target=old", "target=old")
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=auto")
    assert done.result.ret == 1
    assert lines(done) == ["qbench: quarantine: 1 failure(s) not quarantined: the run fails"]


def test_a_bad_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nqbench = true\nqbench_quarantine = sometimes\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "qbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini qbench_quarantine must be off, on or auto, given: 'sometimes'*"]
    )


def test_a_run_stopped_early_stays_failed(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on", "-x")
    assert done.result.ret == 1
    assert lines(done)[-1] == (
        "qbench: quarantine: the run stopped early: the quarantine does not change its status"
    )


def test_the_quarantine_file_of_the_repository(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    pytester.makeini("[pytest]\nqbench_quarantine = on\nqbench_quarantine_file = quarantine.txt\n")
    pytester.path.joinpath("quarantine.txt").write_text(f"# reviewed\n{TARGET}  # ticket 7\n")
    done = run(pytester, run_qbench, "r1", "target=old")
    assert done.result.ret == 0
    assert f"{TARGET} failed and is quarantined (ticket 7); a known failure" in lines(done)[0]


def test_a_quarantined_known_failure_is_labelled_everywhere(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """report.md and MCP's run_test_workflow call a quarantined test's known failure
    quarantined, and tell an assistant not to fix it; a new failure is labelled NEW."""
    from test_history_flaky import mcp_call
    from test_mcp_server import structured

    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    label = done.by_name("test_target").history
    assert label is not None and label.status == "quarantined"
    assert label.summary.startswith(
        "quarantined (known failure: a quarantined flaky test's usual failure, not a bug to fix)"
    )
    assert f"History: {label.summary}" in done.markdown
    pytester.makeini("[pytest]\nqbench_quarantine = on\n")
    answer = mcp_call(pytester, "run_test_workflow", {})
    failures = structured(answer)["failures"]
    assert [(f["test_name"], f["history"][:26]) for f in failures] == [
        (TARGET, "quarantined (known failure")
    ]
    assert f"Do not fix {TARGET}: a quarantined flaky test's known failure" in " ".join(
        structured(answer)["next_steps"]
    )
    assert "History: quarantined (known failure" in answer.content[0].text
    pytester.path.joinpath("plan.txt").write_text("target=new")
    failures = structured(mcp_call(pytester, "run_test_workflow", {}))["failures"]
    assert failures[0]["history"].startswith("quarantined (NEW failure")
