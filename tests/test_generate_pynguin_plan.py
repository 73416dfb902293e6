"""Pynguin's share of the generation budget (issue 14 fix): search and mutation times clipped so
that they, its start-up and a margin fit in the wall time it is given."""

from __future__ import annotations

from pytest_qbench.generate.pynguin import MARGIN
from pytest_qbench.generate.pynguin import STARTUP_SECONDS
from pytest_qbench.generate.pynguin import plan_pynguin


def test_a_large_window_gives_pynguin_what_was_asked() -> None:
    plan = plan_pynguin(60, 300)
    assert plan is not None
    assert (plan.search, plan.mutation, plan.wall) == (60, 60, 300)


def test_a_small_window_is_split_and_fits() -> None:
    plan = plan_pynguin(60, 30)
    assert plan is not None
    assert plan.search + plan.mutation + STARTUP_SECONDS <= 30 * (1 - MARGIN)
    assert plan.search >= plan.mutation >= 1


def test_too_little_time_is_no_plan() -> None:
    assert plan_pynguin(60, STARTUP_SECONDS) is None
    assert plan_pynguin(60, -5) is None
