"""pytest stopping on its own error mid-run (plugin/internal_error.py): a test that closes
``sys.stdout`` under ``-s`` breaks the terminal reporter, pytest says ``INTERNALERROR`` or
dies with a traceback at its summary; the report keeps what ran, says why it is not whole,
and is never green; pytest's exit status is its own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_qbench.report.verdict import run_green
from pytest_qbench.report.verdict import verdict_of


OUTPUTS = ("-s", "-p", "qbench", "--qbench-json=r.json", "--qbench-md=r.md")
CLOSES_IN_A_TEST = """
import sys

def test_ok():
    pass

def test_closes():
    sys.stdout.close()

def test_after():
    pass
"""
CLOSES_AT_THE_END = """
import sys
import pytest

@pytest.fixture(scope="session")
def closer():
    yield
    sys.stdout.close()

def test_ok(closer):
    pass

def test_ok_too():
    pass
"""


def _run(pytester: pytest.Pytester, source: str) -> tuple[int, dict[str, Any]]:
    """pytest's exit status without qbench, checked against the one with it, and the report."""
    pytester.makepyfile(source)
    plain = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result = pytester.runpytest_subprocess(*OUTPUTS, "-p", "no:cacheprovider")
    assert result.ret == plain.ret
    # qbench's notes at pytest_unconfigure, to the closed stream, raise no error of their own
    assert "in pytest_unconfigure" not in result.stderr.str()
    return result.ret, json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))


def test_a_test_closing_stdout_keeps_the_results_so_far(pytester: pytest.Pytester) -> None:
    """The terminal reporter raises as it writes the closing test's letter (INTERNALERROR):
    before, the report held the tests before it only (or said "no tests ran") and did not say
    why; now it holds the closing test too (pytest counted it), is interrupted, and names
    pytest's error."""
    _, data = _run(pytester, CLOSES_IN_A_TEST)
    outcomes = {r["nodeid"]: r["outcome"] for r in data["results"]}
    assert outcomes == {
        "test_a_test_closing_stdout_keeps_the_results_so_far.py::test_ok": "passed",
        "test_a_test_closing_stdout_keeps_the_results_so_far.py::test_closes": "passed",
    }
    # pytest's exit status is 1, not its session's 3: its summary raises on the closed stream
    assert data["run"]["interrupted"] and data["run"]["exit_code"] is None
    assert not run_green(data)
    reason = verdict_of(data).reasons[0]
    assert reason.kind == "interrupted"
    assert reason.text.startswith(
        "the run did not finish: pytest stopped the run with an internal error "
        "(INTERNALERROR> ValueError: I/O operation on closed file.) as it logged a report of "
    )
    assert "no tests ran" not in (pytester.path / "r.md").read_text(encoding="utf-8")


def test_the_first_test_closing_stdout_is_not_no_tests_ran(pytester: pytest.Pytester) -> None:
    """The first test closes it: before, the report said "no tests ran"."""
    _, data = _run(pytester, "import sys\n\ndef test_closes():\n    sys.stdout.close()\n")
    assert [r["outcome"] for r in data["results"]] == ["passed"]
    assert not run_green(data)
    headline = (pytester.path / "r.md").read_text(encoding="utf-8").splitlines()[0]
    assert headline.startswith("# ❌ Test report: 1 passed in ")


def test_stdout_closed_at_the_session_end_is_not_green(pytester: pytest.Pytester) -> None:
    """A session fixture's teardown closes it: every test passed, and pytest dies with a
    traceback as it writes its summary (exit status 1). Before, the report was green with exit
    status 0; now it is incomplete, the exit status unknown, and says why."""
    ret, data = _run(pytester, CLOSES_AT_THE_END)
    assert ret == 1
    assert data["summary"]["passed"] == 2 and data["run"]["exit_code"] is None
    assert not run_green(data)
    [error] = data["run"]["recording_errors"]
    assert "the terminal's stream broke before pytest's summary (ValueError" in error


def test_the_note_names_the_first_error_of_a_chain() -> None:
    """A warning made an error by ``filterwarnings = error`` is raised over the real error
    (pluggy's ``PluggyTeardownRaisedWarning`` over pytest-benchmark's ``TypeError``, on
    wcwidth's suite): before, the note said only the warning's last line ("For more
    information see ..."); now the warning's first line and the error under it. An xdist
    worker's internal error arrives as its traceback's text: its last line is named."""
    from pytest_qbench.plugin.internal_error import internal_error_text

    try:
        try:
            raise TypeError("unexpected type for `benchmark`")
        except TypeError:
            raise RuntimeWarning("A plugin raised.\nFor more information see https://x") from None
    except RuntimeWarning as exc:
        exc.__suppress_context__ = False
        text = internal_error_text(exc, None, ["t.py::test_b"])
    assert text == (
        "pytest stopped the run with an internal error (INTERNALERROR> RuntimeWarning: A plugin "
        "raised., raised over TypeError: unexpected type for `benchmark`); t.py::test_b had not "
        "finished (no result)"
    )
    worker = AssertionError(
        "Traceback (most recent call last):\n  File x\n    raise ValueError\nValueError: boom\n"
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n  File y\nRuntimeError: then this\nassert False"
    )
    assert "(INTERNALERROR> ValueError: boom)" in internal_error_text(worker, None, [])
    text = str(worker.args[0]).replace("\n", "\n  ").replace("  assert False", "assert False")
    rewritten = AssertionError(text)  # as pytest's rewriting of xdist's assertion leaves it
    assert "(INTERNALERROR> ValueError: boom)" in internal_error_text(rewritten, None, [])
