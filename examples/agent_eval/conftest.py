"""Judge metrics replay the verdicts committed in verdicts.json: offline, no model called.

``QBENCH_RECORD_VERDICTS=1 pytest`` records them again. A real project records with its LLM
judge; this example records with `keyword_judge`, a stand-in that needs no network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_qbench.evaluation import ReplayJudge
from pytest_qbench.evaluation import Verdict


VERDICTS = Path(__file__).with_name("verdicts.json")


def keyword_judge(metric_name, sample, prompt):
    """Relevance as the share of the question's words (4+ letters) the response repeats."""
    words = {w.strip("?.,").lower() for w in str(sample.input).split() if len(w) > 3}
    said = str(sample.response).lower()
    score = sum(w in said for w in words) / len(words) if words else 1.0
    return Verdict(round(0.5 + score / 2, 3), reason="keyword overlap", model="keyword-judge")


@pytest.fixture(scope="session")
def qbench_judge():
    if os.environ.get("QBENCH_RECORD_VERDICTS"):
        return ReplayJudge(VERDICTS, inner=keyword_judge, mode="record")
    return ReplayJudge(VERDICTS)
