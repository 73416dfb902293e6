"""Agent evaluation inside pytest: the ``qbench`` fixture, the marker's hooks, case-file items, options."""

from __future__ import annotations
