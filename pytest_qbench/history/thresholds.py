"""``qbench diff``'s thresholds, apart from the comparison: ``qbench``'s parser shows their
defaults without loading the history machinery (stdlib only)."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_qbench.history.json_config import JSON_CONFIG


@dataclass(frozen=True)
class Thresholds:
    """What counts as a change worth reporting."""

    __pydantic_config__ = JSON_CONFIG  # the --json output's model (history/json_models.py)

    slower_pct: float = 50.0
    """A test is slower when it took at least this many percent longer..."""
    slower_secs: float = 0.1
    """...and at least this many seconds longer (so tiny tests' noise is not a regression)."""
    metric_delta: float = 0.05
    """A metric score changed when it moved by at least this much (or passed or failed anew)."""
