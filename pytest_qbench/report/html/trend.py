"""The trend of the last runs, as the HTML report draws it: plain data, filled by whoever can
read the history index (the plugin, ``qbench render``), so that ``report/`` need not."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field


@dataclass(frozen=True)
class TrendRun:
    """One earlier (or this) run: its counts and wall time."""

    run_id: str
    started_at: str
    """ISO 8601 text (UTC)."""
    total: int
    passed: int
    failed: int
    """Failed and errored tests."""
    duration: float
    """Seconds."""

    @property
    def pass_rate(self) -> float | None:
        """Passed over passed and failed, in percent; ``None`` when none of them ran."""
        ran = self.passed + self.failed
        return 100.0 * self.passed / ran if ran else None


@dataclass(frozen=True)
class FlakyTest:
    """A test whose outcome flipped over the runs looked at."""

    nodeid: str
    flips: int


@dataclass(frozen=True)
class Trend:
    """The last runs, oldest first, and the flaky tests among them, flakiest first."""

    runs: list[TrendRun] = field(default_factory=list)
    flaky: list[FlakyTest] = field(default_factory=list)

    @property
    def drawable(self) -> bool:
        """Whether there are runs enough (two) for a line."""
        return len(self.runs) >= 2
