"""A failed doctest is reported at its failing example, with what it raised or printed.

Found running more-itertools' suite with ``--doctest-modules``: every doctest failure was
``UnexpectedException`` or ``DocTestFailure`` with the message ``<DocTest name from path:139
(3 examples)>``, a trace through doctest.py and the docstring's first line, where pytest says
``test_more.py:143`` and ``TypeError: 'IterOnlyRange' object is not subscriptable``.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import RunQBench
from conftest import assert_summary_matches_pytest


MODULE = '''
    def parse(text):
        """Parse a number.

        >>> parse("1")
        1
        >>> parse("2")
        3
        """
        return int(text)


    def double(value):
        """Double it.

        >>> double(2)
        4
        >>> double(None)
        0
        """
        return helper(value)


    def helper(value):
        return value * 2
'''

TEXT = """\
Text doctest
============

>>> 1 + 1
3
"""


def test_doctest_failures_at_their_example(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The file and line are pytest's (the failing example's), the type and message are what
    the example raised or the difference doctest prints, and the trace starts at the example."""
    pytester.makepyfile(arith=MODULE)
    pytester.makefile(".txt", guide=TEXT)
    run = run_qbench("--doctest-modules", "--doctest-glob=*.txt", "--qbench-digest=digest.json")
    assert_summary_matches_pytest(run)
    said = dict(re.findall(r"^\S*?(\w+\.(?:py|txt):\d+): (\w+)$", run.result.stdout.str(), re.M))
    assert said == {
        "arith.py:6": "DocTestFailure",
        "arith.py:17": "UnexpectedException",
        "guide.txt:4": "DocTestFailure",
    }

    parse = run.by_name("arith.parse").failure
    assert parse is not None
    assert (parse.file, parse.line, parse.error_type) == ("arith.py", 6, "DocTestFailure")
    assert parse.error_message == "Expected:\n    3\nGot:\n    2"
    assert parse.stack_trace.startswith('arith.py:6: in [doctest] arith.parse\n    >>> parse("2")')

    double = run.by_name("arith.double").failure
    assert double is not None
    assert (double.file, double.line, double.error_type) == ("arith.py", 17, "TypeError")
    assert "unsupported operand" in double.error_message
    assert double.stack_trace.startswith(
        "arith.py:17: in [doctest] arith.double\n    >>> double(None)"
    )
    assert "arith.py:24: in helper" in double.stack_trace
    assert "doctest.py" not in double.stack_trace

    guide = run.by_name("guide.txt").failure
    assert guide is not None
    assert (guide.file, guide.line, guide.error_type) == ("guide.txt", 4, "DocTestFailure")
    assert guide.error_message == "Expected:\n    3\nGot:\n    2"

    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    located = {(f["file"], f["line"], f["error_type"]) for f in digest["failures"]}
    assert (
        "Fix the doctest example at arith.py:6: its output is not the one the docstring expects "
        "(arith.py::arith.parse)" in digest["next_steps"]
    )
    assert located == {
        ("arith.py", 6, "DocTestFailure"),
        ("arith.py", 17, "TypeError"),
        ("guide.txt", 4, "DocTestFailure"),
    }


def test_one_line_texts_say_what_the_doctest_expected_and_got(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """doctest's message starts with the heading ``Expected:``: the one-line texts (``qbench
    show``, ``diff`` and the flaky list from the index, the HTML page's row) fold what follows
    into the line, rather than say only ``Expected:``."""
    from pytest_qbench.cli import main
    from pytest_qbench.report.html.data import row_message

    pytester.makefile(".txt", guide=TEXT)
    run = run_qbench("--doctest-glob=*.txt", "--qbench-run-id=doc")
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert main(["show", "doc"]) == 0
    shown = capsys.readouterr().out
    assert "guide.txt  DocTestFailure at guide.txt:4: Expected: 3 Got: 2\n" in shown, shown
    result = run.report.results[0].model_dump(mode="json")
    assert row_message(result) == "DocTestFailure: Expected: 3 Got: 2"  # type: ignore[arg-type]


CONTINUED = '''
    def f():
        """
        >>> 1 + 1
        3
        >>> print("a")
        b
        >>> raise ValueError("boom")
        >>> 2
        2
        """
'''


def test_continue_on_failure_lists_the_later_failing_examples(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Under ``--doctest-continue-on-failure`` pytest shows each failing example of a doctest;
    the failure is the first one's, and its trace now lists the others (file, line, source),
    where it said nothing of them (found comparing pytest's failures with qbench's, fourteenth
    round)."""
    pytester.makepyfile(mod=CONTINUED)
    run = run_qbench("--doctest-modules", "--doctest-continue-on-failure")
    assert_summary_matches_pytest(run)
    run.result.stdout.fnmatch_lines(["*mod.py:3: DocTestFailure", "*mod.py:5: DocTestFailure"])
    failure = run.by_name("mod.f").failure
    assert failure is not None
    assert (failure.file, failure.line, failure.error_type) == ("mod.py", 3, "DocTestFailure")
    assert failure.stack_trace.endswith(
        "\n\n+ 2 more failing examples:\n"
        '  mod.py:5: >>> print("a")\n'
        '  mod.py:7: >>> raise ValueError("boom")'
    ), failure.stack_trace
