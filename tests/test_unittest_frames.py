"""A unittest ``TestCase``'s failure leaves out unittest's own frames, as pytest's does.

Found running more-itertools' suite: every ``assertEqual`` failure's trace began with
unittest/case.py's ``testPartExecutor``, ``subTest``, ``assertEqual``, ``assertListEqual``...
frames, which pytest hides (unittest marks its modules with ``__unittest``).
"""

from __future__ import annotations

import pytest

from conftest import RunQBench


def test_unittest_frames_left_out(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The trace and the frames hold the test's lines only; file and line are the assert's."""
    pytester.makepyfile(
        test_lists="""
        import unittest

        class TestLists(unittest.TestCase):
            def test_equal(self):
                self.assertEqual([1, 2], [1, 3])
        """
    )
    run = run_qbench()
    failure = run.by_name("test_equal").failure
    assert failure is not None
    assert (failure.error_type, failure.file, failure.line) == (
        "AssertionError",
        "test_lists.py",
        5,
    )
    assert [(f.path, f.function) for f in failure.frames] == [("test_lists.py", "test_equal")]
    assert "case.py" not in failure.stack_trace
    assert failure.stack_trace.startswith("test_lists.py:5: in test_equal\n")
