"""`qbench_cases`: the cases of an ``agent.yaml`` file as ``pytest.param`` values.

The file is read and checked by `pytest_qbench.evaluation.cases` (no pytest there); this module
turns its cases into parameters carrying their ``@pytest.mark.qbench`` marker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.evaluation.cases import load_agent_file


def qbench_cases(path: str | Path) -> list[Any]:
    """The cases of a case file as ``pytest.param`` values for ``@pytest.mark.parametrize``.

    Each param is an `AgentCase` with the case's name as id, marked with the case's
    ``@pytest.mark.qbench`` (its metrics, ``ground_truth`` and ``expected_tools``), so a test
    only runs the agent and records the response::

        @pytest.mark.parametrize("case", qbench_cases("agent.yaml"))
        def test_agent(case, qbench):
            qbench.record(my_agent(case.input, case.read_files()), input=case.input)

    A relative ``path`` is resolved from the directory of the file that calls this function.

    Raises:
        AgentFileError: the file is invalid (pytest shows it as the module's collection error).
    """
    resolved = Path(path)
    if not resolved.is_absolute():
        caller = sys._getframe(1).f_globals.get("__file__")
        base = Path(caller).parent if caller else Path.cwd()
        resolved = base / resolved
    suite = load_agent_file(resolved, str(path))
    return [
        pytest.param(case, id=case.name, marks=pytest.mark.qbench(**case.marker_kwargs()))
        for case in suite.cases
    ]


__all__ = ["qbench_cases"]
