"""Choice types shared by options, models and tests, defined once (standard library only)."""

from __future__ import annotations

from typing import Literal


Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
"""A test's final outcome, in pytest's words."""

OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
"""Every outcome, in report order."""
