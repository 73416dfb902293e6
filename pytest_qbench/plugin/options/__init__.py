"""The ``--qbench-*`` options and ini values: declared (``declare``), parsed (``values``), the agent ones (``agent``), and checked into ``Settings`` before any test runs (``settings``)."""

from __future__ import annotations
