"""A test run through a plugin's runner (pytest-asyncio, anyio's plugin) keeps only the test's
frames in its failure, as pytest's own report does.

Found running anyio's suite: every async test's ``stack_trace`` and ``frames`` began with anyio's
``pytest_pyfunc_call``, ``run_test``, asyncio's ``run_until_complete``..., which pytest leaves
out (it cuts the traceback at the test function). The plugins call the test from their own
``pytest_pyfunc_call`` hook, as the conftest here does.
"""

from __future__ import annotations

import pytest

from conftest import RunQBench


RUNNER = """
    import pytest


    def run_through(function, kwargs):
        return function(**kwargs)


    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(pyfuncitem):
        names = pyfuncitem._fixtureinfo.argnames
        run_through(pyfuncitem.obj, {name: pyfuncitem.funcargs[name] for name in names})
        return True
"""

TESTS = """
    def check(value):
        assert value == 2, "value must be two"


    def test_runner():
        check(1)
"""


def test_runner_frames_left_out(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The first frame is the test function's, the innermost project frame stays file/line."""
    pytester.makeconftest(RUNNER)
    pytester.makepyfile(test_runner=TESTS)
    run = run_qbench()
    run.result.stdout.no_fnmatch_line("*run_through*")  # what pytest shows
    failure = run.by_name("test_runner").failure
    assert failure is not None
    assert [(f.path, f.function) for f in failure.frames] == [
        ("test_runner.py", "test_runner"),
        ("test_runner.py", "check"),
    ]
    assert failure.stack_trace.startswith("test_runner.py:6: in test_runner\n    check(1)\n")
    assert "conftest.py" not in failure.stack_trace
    assert (failure.file, failure.line) == ("test_runner.py", 2)
