"""Agent tests in Python: the qbench fixture, the marker, and the cases of agent.yaml."""

from __future__ import annotations

import pytest

from pytest_qbench import qbench_cases
from support_agent import answer


@pytest.mark.qbench(
    metrics=["exact_match", {"metric": "token_f1", "threshold": 0.6}, "rouge_l"],
    ground_truth="We are open Monday to Friday, 9am to 5pm CET.",
    expected_tools=["get_hours"],
)
def test_opening_hours(qbench):
    result = answer("What are your opening hours?")
    qbench.record(result["response"], input="opening hours?", tool_calls=result["tool_calls"])


def test_cost_budget(qbench):
    result = answer("When are you open?")
    qbench.record(result["response"], tokens=result["tokens"], cost=result["tokens"] * 0.00002)
    qbench.check("cost_budget", budget=0.001, threshold=1)


@pytest.mark.parametrize("case", qbench_cases("agent.yaml"))
def test_cases_in_python(case, qbench):
    result = answer(case.input, case.read_files())
    qbench.record(result["response"], input=case.input, tool_calls=result["tool_calls"])
