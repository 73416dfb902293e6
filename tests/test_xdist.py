"""Under pytest-xdist the report equals the serial run's: same tests, outcomes and failures."""

from __future__ import annotations

import pytest

from conftest import ALL_OUTCOMES
from conftest import QBenchRun
from conftest import RunQBench
from conftest import assert_summary_matches_pytest


pytest.importorskip("xdist")

EXTRA = """
    import logging
    import pytest

    class Unsendable:
        def __repr__(self):
            return "<Unsendable>"

    def test_odd_property(record_property):
        record_property("obj", Unsendable())
        record_property("nested", {"a": [1, Unsendable()]})
        assert 0, "still a failure"

    def test_odd_log_record():
        logging.getLogger("odd").error("with extra", extra={"thing": Unsendable()})

    @pytest.mark.parametrize("n", range(6))
    def test_param(n):
        assert n % 3, f"n={n}"
"""


def comparable(run: QBenchRun) -> dict[str, tuple[object, ...]]:
    """What must be identical with and without xdist."""
    out: dict[str, tuple[object, ...]] = {}
    for r in run.report.results:
        f = r.failure
        out[r.nodeid] = (
            r.outcome,
            r.reason,
            f and (f.error_type, f.error_message, f.file, f.line, f.phase),
            tuple(r.user_properties),
        )
    return out


def run_both(
    pytester: pytest.Pytester, run_qbench: RunQBench, *xdist_args: str
) -> tuple[QBenchRun, QBenchRun]:
    serial = run_qbench(
        "--qbench-run-id=serial", "-p", "no:xdist", subprocess=True, run_dir="serial"
    )
    parallel = run_qbench(
        "--qbench-run-id=parallel", "-p", "xdist", *xdist_args, subprocess=True, run_dir="parallel"
    )
    return serial, parallel


@pytest.fixture(scope="module")
def serial_runs() -> dict[str, QBenchRun]:
    """The serial run of ``test_xdist_equals_serial``'s suite, made by the first of its cases
    that runs in this process: each case compares its xdist run with the same serial run."""
    return {}


@pytest.mark.xdist_group("test_xdist.equals_serial")  # one worker makes the serial run once
@pytest.mark.parametrize(
    "xdist_args", [["-n", "2"], ["-n", "auto"], ["-n", "2", "--dist", "loadfile"]]
)
def test_xdist_equals_serial(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    xdist_args: list[str],
    serial_runs: dict[str, QBenchRun],
) -> None:
    """Every outcome kind, failures, properties: identical with -n 2 (load and loadfile)."""
    pytester.makepyfile(test_outcomes=ALL_OUTCOMES, test_extra=EXTRA)
    if "serial" not in serial_runs:
        serial_runs["serial"] = run_qbench(
            "--qbench-run-id=serial", "-p", "no:xdist", subprocess=True, run_dir="serial"
        )
    serial = serial_runs["serial"]
    parallel = run_qbench(
        "--qbench-run-id=parallel", "-p", "xdist", *xdist_args, subprocess=True, run_dir="parallel"
    )
    assert_summary_matches_pytest(serial)
    assert_summary_matches_pytest(parallel)
    assert comparable(parallel) == comparable(serial)
    assert sorted(r.nodeid for r in parallel.report.results) == sorted(
        r.nodeid for r in serial.report.results
    )
    assert {r.worker for r in parallel.report.results} <= {"gw0", "gw1"}
    assert all(r.worker is None for r in serial.report.results)
    for result in parallel.report.results:
        if result.failure:
            assert "[gw" not in result.failure.stack_trace
    odd = parallel.by_name("test_odd_property")
    assert odd.user_properties == [("obj", "<Unsendable>"), ("nested", {"a": [1, "<Unsendable>"]})]
    # only the controller writes: exactly one run directory per run
    runs = pytester.path / ".qbench" / "runs"
    made_here = ["serial"] if serial.run_dir.parent == runs else []  # or by a case before
    assert sorted(p.name for p in runs.iterdir()) == ["parallel", *made_here]


def test_xdist_collection_errors(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Collection errors reach the controller's report once, as in the serial run."""
    pytester.makepyfile(
        test_ok="def test_a(): pass\ndef test_b(): pass",
        test_broken="import not_a_module_qbench_xdist",
    )
    args = ("--continue-on-collection-errors",)
    serial, parallel = run_both(pytester, run_qbench, "-n", "2", *args)
    assert_summary_matches_pytest(parallel)
    assert [e.file for e in parallel.report.collection_errors] == ["test_broken.py"]
    assert parallel.report.summary.errors == serial.report.summary.errors == 1


def test_xdist_worker_crash_is_a_failure(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A test that kills its worker is a failure in the report, as in pytest's line."""
    pytester.makepyfile(
        """
        import os
        def test_before(): pass
        def test_crash(): os._exit(3)
        def test_after(): pass
        """
    )
    run = run_qbench("-p", "xdist", "-n", "2", subprocess=True)
    assert_summary_matches_pytest(run)
    crash = run.by_name("test_crash")
    assert crash.outcome == "failed"
    assert crash.failure is not None and "crashed" in crash.failure.error_message
