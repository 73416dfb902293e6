"""Coverage in the report: coverage.py data into ``CoverageReport`` records (``data``) and how they are shown (``view``)."""

from __future__ import annotations
