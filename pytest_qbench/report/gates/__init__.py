"""The gates: metric-mean and baseline verdicts (``verdicts``), their statistics (``stats``) and their wording (``text``). Pure functions on records."""

from __future__ import annotations
