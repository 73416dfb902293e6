"""The coverage total as each text prints it (``coverage.view.total_text``): coverage.py's
total, with the lines and the branches it counts, and a pull request comment that does not
subtract a total of lines alone from one of lines and branches."""

from __future__ import annotations

from pytest_qbench.history.pr_comment import Coverage
from pytest_qbench.history.pr_comment import _coverage_lines
from pytest_qbench.report.coverage.view import total_text


LINES = {"percentage": 88.88888, "lines_covered": 8, "lines_total": 9, "branches_total": None}
BRANCHES = {**LINES, "percentage": 76.923, "branches_covered": 2, "branches_total": 4}


def test_the_total_says_what_it_counts() -> None:
    assert total_text(LINES) == "88.89% (8/9 lines)"
    assert total_text(BRANCHES) == "76.92% (8/9 lines, 2/4 branches)"
    assert total_text({**LINES, "percentage": 99.996}) == "99.99% (8/9 lines)"  # as coverage.py


def test_the_pr_comment_compares_like_with_like() -> None:
    """Before, the comment said ``**Coverage**: 76.92% (-11.97 points)`` for a run measuring
    branches against a base measuring lines: a drop that was the measure's, not the tests'."""
    head = total_text(BRANCHES)
    unlike = Coverage(head=76.923, base=88.89, head_text=head, same_measure=False)
    assert _coverage_lines(unlike)[-1] == (
        f"**Coverage**: {head} (not compared with the base run's: one of them measured "
        "branches too)"
    )
    alike = Coverage(head=76.923, base=70.0, head_text=head)
    assert _coverage_lines(alike)[-1] == f"**Coverage**: {head} (+6.92 points)"
    assert _coverage_lines(Coverage(head=99.996))[-1] == "**Coverage**: 99.99%"
