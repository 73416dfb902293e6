"""The benchmarks' estimated cycles (``callgrind_cost.py --cache-sim``, issue 28): valgrind's
cycle estimate of a run's events, the prediction at a suite's size with pytest's failure
summary added, and the misses by C function read from ``callgrind_annotate``'s table."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest


sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

callgrind_cost = importlib.import_module("callgrind_cost")  # from the directory put first above
callgrind_functions = importlib.import_module("callgrind_functions")


def test_estimated_cycles_weigh_each_level_of_miss() -> None:
    """Instructions, plus 10 for each first-level miss (instruction fetch, data read, data
    write) and 100 for each last-level one; the data accesses themselves cost nothing more."""
    events = {"Ir": 1000, "Dr": 400, "Dw": 300, "I1mr": 1, "D1mr": 2, "D1mw": 3}
    events |= {"ILmr": 4, "DLmr": 5, "DLmw": 6}
    assert callgrind_cost.estimated_cycles(events) == 1000 + 10 * 6 + 100 * 15
    assert callgrind_cost.estimated_cycles({"Ir": 7}) == 7


def test_the_prediction_adds_the_failure_summary_the_line_leaves_out() -> None:
    """At the line's own sizes the prediction is the line; at 10 000 tests it adds pytest's
    failure summary visits (tests squared over ten) beyond the line's, at a visit's cost."""
    counts = {
        100: {"Ir": 1_000_000, "D1mr": 10, "D1mw": 0, "I1mr": 0, "ILmr": 0, "DLmr": 1, "DLmw": 0},
        400: {"Ir": 2_500_000, "D1mr": 40, "D1mw": 0, "I1mr": 0, "ILmr": 0, "DLmr": 4, "DLmw": 0},
    }
    lines = callgrind_cost.fit(counts, 100, 400)
    assert lines["Ir"] == {"slope": 5000.0, "fixed": 500_000.0}
    assert callgrind_cost.predicted(lines, "Ir", 100, 400, 400) == pytest.approx(2_500_000)
    # visits 1 000 and 16 000 on the line, 10 000 000 at 10 000 tests, the line's 496 000
    beyond = 10_000_000 - (1_000 + 9_900 * 50)
    want = 500_000 + 5000 * 10_000 + beyond * callgrind_cost.SUMMARY_VISIT["Ir"]
    assert callgrind_cost.predicted(lines, "Ir", 100, 400, 10_000) == pytest.approx(want)
    visit = callgrind_cost.estimated_cycles(callgrind_cost.SUMMARY_VISIT)
    line = lines["Cest"]["fixed"] + lines["Cest"]["slope"] * 10_000
    got = callgrind_cost.predicted(lines, "Cest", 100, 400, 10_000)
    assert got == pytest.approx(line + beyond * visit)


ANNOTATED = """\
--------------------------------------------------------------------------------
Ir                   I1mr               D1mr             file:function
--------------------------------------------------------------------------------
1,000,000 (100.0%)   2,000 (100.0%)      300 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                   I1mr               D1mr             file:function
--------------------------------------------------------------------------------
  600,000 (60.00%)   1,500 (75.00%)      200 (66.67%)  /src/ceval.c:_PyEval_EvalFrameDefault'2 [/lib/libpython3.11.so]
  100,000 (10.00%)       0                 .           /src/ceval.c:_PyEval_EvalFrameDefault [/lib/libpython3.11.so]
    5,000 ( 0.50%)       .                 .           /src/sliceobject.c:slice_dealloc [/lib/libpython3.11.so]
"""


def test_functions_are_read_with_every_event_zeros_kept() -> None:
    """Each function's events from the annotated table, recursion levels folded, a zero
    (``0`` or ``.``) kept as 0: a function whose misses are all zero still gets its estimated
    cycles (they were left out, and its instructions with them)."""
    counts = callgrind_functions.parse_functions(ANNOTATED, ["Ir", "I1mr", "D1mr"])
    assert set(counts) == {"_PyEval_EvalFrameDefault", "slice_dealloc"}
    assert dict(counts["_PyEval_EvalFrameDefault"]) == {"Ir": 700_000, "I1mr": 1500, "D1mr": 200}
    assert dict(counts["slice_dealloc"]) == {"Ir": 5000, "I1mr": 0, "D1mr": 0}


def test_batch_seconds_lengthen_the_stream_timer_of_qbench_runs_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> None:
    """``--batch-seconds S`` (measuring only): each qbench configuration's run under valgrind
    loads a plugin that sets the stream's batch timer to ``S`` (under valgrind the 0.1 s timer
    cuts nearly every batch to a result or two); plain pytest's run is left as it is."""
    runs: list[tuple[list[str], dict[str, str]]] = []

    def run(argv: list[str], **kwargs: object) -> object:
        runs.append((argv, kwargs["env"]))  # type: ignore[arg-type]
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(callgrind_cost.subprocess, "run", run)
    monkeypatch.setattr(callgrind_cost, "read_totals", lambda profile: {"Ir": 1})
    suite = tmp_path / "suite"
    suite.mkdir()
    for config in callgrind_cost.CONFIGS:
        if config.name in ("plain", "qbench"):
            out = tmp_path / config.name
            callgrind_cost.instructions("python", config, suite, out, batch_seconds=30.0)
    (plain, plain_env), (qbench, qbench_env) = runs
    plugin = callgrind_cost.BATCH_PLUGIN
    assert plugin not in plain and "QBENCH_BENCH_BATCH_SECONDS" not in plain_env
    assert qbench[-3:] == ["-p", plugin, "tests"]
    assert qbench_env["QBENCH_BENCH_BATCH_SECONDS"] == "30.0"
    plugin_dir = tmp_path / "batch-seconds-plugin"
    assert str(plugin_dir) in qbench_env["PYTHONPATH"].split(":")
    # the plugin, loaded by a real run, sets the timer qbench's stream reads
    pytester.makepyfile(
        test_timer="""
        def test_timer():
            from pytest_qbench.report import store
            assert store.BATCH_SECONDS == 30.0
        """
    )
    monkeypatch.setenv("QBENCH_BENCH_BATCH_SECONDS", "30.0")
    monkeypatch.setenv("PYTHONPATH", qbench_env["PYTHONPATH"])
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", plugin)
    result.assert_outcomes(passed=1)
