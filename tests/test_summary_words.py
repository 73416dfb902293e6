"""pytest's summary words live in one place (``core/summary_words.py``) and agree with a real
pytest run's closing line: the report's headline, the HTML headline, ``qbench render``,
``qbench runs`` and the MCP answers say ``1 error``/``2 errors``, ``1 warning``/``2 warnings``,
in pytest's order (issue 19.13)."""

from __future__ import annotations

import re

import pytest

from pytest_qbench.cli import counts_line
from pytest_qbench.cli import main
from pytest_qbench.core.summary_words import pluralize
from pytest_qbench.core.summary_words import summary_text
from pytest_qbench.mcp.text import counts_text
from pytest_qbench.report.html.headline import summary_parts

from conftest import RunQBench


ONE_OF_EACH = """
    import warnings
    import pytest

    @pytest.fixture
    def broken():
        raise RuntimeError("setup")

    def test_ok():
        warnings.warn(UserWarning("w1"))

    def test_error(broken):
        pass
"""
TWO_OF_EACH = """
    import warnings
    import pytest

    @pytest.fixture
    def broken():
        raise RuntimeError("setup")

    def test_ok():
        warnings.warn(UserWarning("w1"))
        warnings.warn(DeprecationWarning("w2"))

    def test_error(broken):
        pass

    def test_error_too(broken):
        pass

    def test_fail():
        assert 0

    def test_skip():
        pytest.skip("no")

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        assert 0

    @pytest.mark.xfail(reason="fixed")
    def test_xpass():
        pass

    def test_deselected():
        pass
"""
SUBTESTS_AND_RERUNS = """
    import pytest

    COUNT = {"n": 0}

    def test_sub(subtests):
        for i in range(2):
            with subtests.test(i=i):
                pass

    def test_flaky():
        COUNT["n"] += 1
        assert COUNT["n"] > 1

    def test_ok():
        pass
"""


def closing_line(result: pytest.RunResult) -> str:
    """pytest's own closing line, without the duration: ``1 passed, 1 error``."""
    for line in reversed(result.stdout.lines):
        found = re.fullmatch(r"=+ (.*) in [\d.]+s(?: \([^)]*\))? =+", line)
        if found:
            return found.group(1)
    raise AssertionError(result.stdout.str())


@pytest.mark.parametrize(
    ("source", "args", "expected"),
    [
        (ONE_OF_EACH, [], "1 passed, 1 warning, 1 error"),
        (
            TWO_OF_EACH,
            ["--deselect=test_closing_line_words.py::test_deselected"],
            "1 failed, 1 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 2 warnings, "
            "2 errors",
        ),
        pytest.param(
            SUBTESTS_AND_RERUNS,
            ["-p", "rerunfailures", "--reruns=1", "-v"],  # -v: pytest shows subtests
            "3 passed, 2 subtests passed, 1 rerun",
            marks=pytest.mark.skipif(not hasattr(pytest, "SubtestReport"), reason="pytest 9"),
        ),
    ],
    ids=["one-of-each", "two-of-each", "subtests-and-reruns"],
)
def test_closing_line_words(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    args: list[str],
    expected: str,
) -> None:
    """Every qbench text that repeats pytest's counts says them as pytest's closing line does."""
    if "rerunfailures" in args:
        pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_closing_line_words=source)
    pytester.makeini("[pytest]\nfilterwarnings =\n    default\n")  # not this suite's "error"
    run = run_qbench(*args)
    line = closing_line(run.result)
    assert line == expected
    summary = run.report.summary.model_dump()
    assert summary_text(summary) == line
    assert ", ".join(summary_parts(summary)) == line  # the HTML headline
    assert f" Test report: {line} in " in run.markdown.splitlines()[0]
    # the texts that show only some of the counts use pytest's words for those
    shown = [part for part in line.split(", ") if "warning" not in part]
    assert counts_text(summary).startswith(", ".join(shown) + " in ")  # the MCP answers
    outcomes = [p for p in shown if "subtests" not in p and "deselected" not in p]
    assert counts_line(run.report) == f"{run.report.summary.total} tests: {', '.join(outcomes)}"
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert main(["runs"]) == 0
    # the index's counts: subtests and deselected tests too, as the MCP answers
    assert f"tests: {', '.join(shown)}  " in capsys.readouterr().out  # qbench runs


@pytest.mark.runs_pytest
@pytest.mark.parametrize(
    ("count", "key", "text"),
    [
        (1, "error", "1 error"),
        (2, "error", "2 errors"),
        (0, "error", "0 errors"),
        (1, "warnings", "1 warning"),
        (3, "warnings", "3 warnings"),
        (1, "test", "1 test"),
        (2, "test", "2 tests"),
        (2, "passed", "2 passed"),
        (2, "subtests passed", "2 subtests passed"),
        (2, "rerun", "2 rerun"),
    ],
)
def test_pluralize_follows_pytest(count: int, key: str, text: str) -> None:
    """pytest pluralises error, warning and test only."""
    from _pytest.terminal import pluralize as pytests_pluralize

    assert pluralize(count, key) == "%d %s" % pytests_pluralize(count, key)  # noqa: UP031
    assert pluralize(count, key) == text


def test_flaky_listing_counts_flips_in_english() -> None:
    """``qbench flaky --min-flips 1`` says "flipped 1 time", not "flipped 1 times"."""
    from pytest_qbench.history.text import flaky_lines

    (one,) = flaky_lines([], runs=5, min_flips=1)
    assert "flipped 1 time or more" in one
    (two,) = flaky_lines([], runs=5, min_flips=2)
    assert "flipped 2 times or more" in two
