"""A pass rate never reads 100.0% while a test failed (found on pyparsing: 1 failure in 2 000)."""

from __future__ import annotations

import pytest

from pytest_qbench.core.summary_words import rate_text


pytest_plugins = ["pytester"]


def test_one_failure_in_two_thousand_is_not_a_hundred_percent(pytester: pytest.Pytester) -> None:
    """pytest says ``1 failed, 2000 passed``: report.md, summary.md and the HTML page gave
    ``pass rate 100.0%`` (99.95 rounded) beside the failure; now ``99.9%``."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(2000))
        def test_many(n):
            pass

        def test_one():
            assert False
        """
    )
    result = pytester.runpytest(
        "-p", "qbench", "-p", "no:randomly", "--qbench-md=report.md", "--qbench-html=report.html"
    )
    result.assert_outcomes(passed=2000, failed=1)
    markdown = (pytester.path / "report.md").read_text(encoding="utf-8")
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "pass rate **99.9%**" in markdown and "100.0%" not in markdown
    assert "pass rate <strong>99.9%</strong>" in page


@pytest.mark.parametrize(
    ("percent", "shown"),
    [
        (100.0, "100.0%"),
        (99.96, "99.9%"),
        (99.94, "99.9%"),
        (50.0, "50.0%"),
        (0.04, "0.1%"),
        (0.0, "0.0%"),
    ],
)
def test_rate_text(percent: float, shown: str) -> None:
    assert rate_text(percent) == shown
