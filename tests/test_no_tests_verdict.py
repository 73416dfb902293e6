"""A run in which pytest ran no tests (exit status 5) is not green."""

from __future__ import annotations

import pytest


def test_a_run_that_ran_no_tests_is_not_green(pytester: pytest.Pytester) -> None:
    """``-m`` matching nothing: pytest says "229 deselected" and exits 5, which fails a CI job;
    the report said ✅. Now it is red, and says why in pytest's terms."""
    pytester.makepyfile(test_a="def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    result = pytester.runpytest("-p", "qbench", "-m", "nosuchmark", "--qbench-md=r.md")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    text = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert text.startswith("# ❌ Test report: 2 deselected")
    assert "pytest ran no tests (exit status 5" in text
