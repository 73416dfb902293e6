"""The base layer: standard library only (errors, text, limits, statistics, atomic writes, redaction)."""

from __future__ import annotations
