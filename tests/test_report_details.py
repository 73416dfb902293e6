"""What report.md, the digest and get_test_failure show of a run's details: a long message
once, no slowest list of 0.00s rows, known values or "none given" in every cell, a collect-only
run as a collection kept out of history (issue 11.13)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.mcp.failure import failure_detail

from conftest import RunQBench


LONG_MESSAGE = """
    import pytest

    def test_long():
        assert [1, 2, 3, 4] == [1, 2, 3, 5], "lists differ"

    @pytest.mark.xfail
    def test_known():
        assert False

    def test_quick():
        pass
"""


def test_long_message_shown_once(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A long assertion message is shown once in report.md, the digest and get_test_failure,
    not again at the end of the traceback (issue 11.13)."""
    pytester.makepyfile(test_details=LONG_MESSAGE)
    run = run_qbench("--qbench-digest", "digest.json")
    explanation = "At index 3 diff: 4 != 5"
    failure = run.by_name("test_long").failure
    assert failure is not None and explanation in failure.error_message
    assert explanation in failure.stack_trace  # the stored trace stays whole
    assert run.markdown.count(explanation) == 1
    assert "E   AssertionError: (message shown above)" in run.markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    [shown] = digest["failures"]
    assert explanation in shown["error_message"] and explanation not in shown["stack_trace"]
    assert "assert [1, 2, 3, 4] == [1, 2, 3, 5]" in shown["stack_trace"]  # the source line
    detail = failure_detail(run.report, "test_long", 100_000)
    assert explanation in detail.error_message and explanation not in detail.stack_trace


def test_no_empty_cells_and_no_zero_slowest(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An xfail without a reason says "none given"; tests too quick to time leave no 0.00s
    "Slowest tests" rows (issue 11.13)."""
    pytester.makepyfile(test_details=LONG_MESSAGE)
    run = run_qbench()
    assert "| `test_details.py::test_known` | xfailed | none given |" in run.markdown
    assert "0.00s" not in run.markdown
    slowest = run.markdown.split("## Slowest tests")[-1] if "## Slowest" in run.markdown else ""
    # Which tests pass pytest's 0.005 s --durations threshold depends on the machine's load: the
    # list must hold exactly those that did, by their recorded durations.
    listed = {r.test_name for r in run.report.results if f"`{r.nodeid}`" in slowest}
    assert listed == {r.test_name for r in run.report.results if r.duration >= 0.005}


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """``qbench ARGS --json --dir .qbench`` in process, its parsed output."""
    capsys.readouterr()
    main([*args, "--json", "--dir", ".qbench"])
    return json.loads(capsys.readouterr().out)


def test_collect_only_is_a_collection_kept_out_of_history(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pytest --co -p qbench`` writes a collection, not a run where "no tests ran", and is
    kept out of the history index, ``qbench index`` and ``qbench diff`` (issue 11.13)."""
    pytester.makepyfile(test_details="def test_one(): pass\ndef test_two(): pass\n")
    run_qbench("--qbench-run-id=r1", run_dir="r1")
    co = run_qbench(
        "--co", "-q", "-k", "not two", "--qbench-run-id=r2", "--qbench-digest=d.json", run_dir="r2"
    )
    co.result.stdout.fnmatch_lines(["1/2 tests collected (1 deselected)*"])
    assert co.report.run.collect_only is True and co.report.run.collected == 1
    assert "# ✅ Collection: 1/2 tests collected (1 deselected) in " in co.markdown
    assert "no tests ran" not in co.markdown and "pass rate" not in co.markdown
    digest = json.loads((pytester.path / "d.json").read_text(encoding="utf-8"))
    assert digest["next_steps"] == ["Collected 1 test without running them (--collect-only)"]
    run_qbench("--qbench-run-id=r3", run_dir="r3")
    assert [r["run_id"] for r in qbench_json(capsys, "runs")["runs"]] == ["r3", "r1"]
    capsys.readouterr()
    assert main(["index", "--dir", ".qbench"]) == 0  # a rebuild from the run directories
    assert "skipped .qbench/runs/r2: a --collect-only run ran no tests" in capsys.readouterr().err
    assert [r["run_id"] for r in qbench_json(capsys, "runs")["runs"]] == ["r3", "r1"]
    diff = qbench_json(capsys, "diff", "last~1", "last")
    assert (diff["base"]["run_id"], diff["head"]["run_id"]) == ("r1", "r3")


UNENCODABLE = r"""
    import sys
    import pytest

    @pytest.mark.parametrize("where", ["message", "output"])
    def test_junk(where, record_property):
        record_property("raw", "prop \udcff")
        sys.stdout.buffer.write(b"\x00\xff\xfe bytes\n")
        print("lone \ud800 surrogate")
        assert where == "none", "bad \udcff byte"

    def test_fine():
        pass
"""


def test_lone_surrogates_are_replaced_not_fatal(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Text that is not encodable as UTF-8 (a lone surrogate, as ``os.fsdecode`` makes from a
    bad byte) in a message, the output or a property is written as ``?`` (as pytest's capture does): every result and
    both reports are written, no internal error (found running tenacity's suite)."""
    pytester.makepyfile(test_junk=UNENCODABLE)
    run = run_qbench("--qbench-capture=all")
    run.result.assert_outcomes(failed=2, passed=1)
    assert "internal error" not in run.result.stdout.str()
    assert [r.outcome for r in run.report.results] == ["failed", "failed", "passed"]
    failure = run.by_name("test_junk[message]").failure
    assert failure is not None and "bad ? byte" in failure.error_message
    captured = run.by_name("test_junk[output]").captured
    assert captured is not None and "lone ? surrogate" in captured.stdout
    assert "bad ? byte" in run.markdown


PLUGIN_BUG = """
    def pytest_runtest_logreport(report):
        if report.when == "teardown" and report.nodeid.endswith("test_b"):
            raise RuntimeError("a plugin's bug")
"""


def test_internal_error_is_a_next_step_beside_the_failures(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A run that pytest ended with an internal error (a crashed xdist worker, a plugin's bug)
    after some tests failed: the digest's next steps say first that the results are incomplete,
    not only "fix these failures" (found on tenacity, whose xdist worker crashed). The run is
    interrupted (``plugin/internal_error.py``): its step names pytest's error and the test it
    stopped at, and that test_c never ran."""
    pytester.makeconftest(PLUGIN_BUG)
    pytester.makepyfile(
        test_x="def test_a():\n    assert 1 == 2\n\ndef test_b():\n    pass\n\ndef test_c():\n    pass\n"
    )
    run = run_qbench("--qbench-digest", "digest.json")
    assert run.result.ret == 3
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False and len(digest["failures"]) == 1
    assert digest["next_steps"] == [
        "Fix the assertion at test_x.py:2 (test_x.py::test_a)",
        "The run did not finish: pytest stopped the run with an internal error (INTERNALERROR> "
        "RuntimeError: a plugin's bug) as it logged a report of test_x.py::test_b (in this "
        "report; the test's phases after it never ran); this report holds the tests that ran: "
        "run the tests again for complete results",
    ]


QUALIFIED = """
    import shop_errors

    def test_short():
        raise shop_errors.Refused("out of stock")

    def test_long():
        try:
            raise KeyError("sku-1")
        except KeyError as exc:
            raise shop_errors.Refused("basket refused:\\n" + "line of detail\\n" * 20) from exc
"""


def test_exceptions_named_in_the_trace_as_pytest_names_them(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The traceback's ``E   `` line names an exception of a module as pytest (and Python) do,
    module first (natsort's ``locale.Error``: it read ``E   Error: unsupported locale setting``);
    ``error_type`` stays the class's name, and a long message is still shown once."""
    pytester.makepyfile(shop_errors="class Refused(Exception):\n    pass\n")
    pytester.makepyfile(test_named=QUALIFIED)
    run = run_qbench()
    run.result.stdout.fnmatch_lines(["E * shop_errors.Refused: out of stock"])  # pytest's words
    short = run.by_name("test_short").failure
    assert short is not None and short.error_type == "Refused"
    assert short.stack_trace.endswith("\nE   shop_errors.Refused: out of stock")
    long = run.by_name("test_long").failure
    assert long is not None and long.error_type == "Refused"
    assert long.stack_trace.startswith("E   KeyError: 'sku-1'")  # a builtin keeps its name
    assert "\nE   shop_errors.Refused: basket refused:\nE   line of detail\n" in long.stack_trace
    assert "E   line of detail" not in run.markdown  # shown once, above the traceback
    assert "E   shop_errors.Refused: (message shown above)" in run.markdown
