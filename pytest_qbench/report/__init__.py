"""The report library: models, records, aggregation, rendering, readers, merging. Never imports pytest."""

from __future__ import annotations
