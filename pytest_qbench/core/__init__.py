"""The base layer, standard library only: what every other layer may use.

- ``errors``: the ``QBenchError`` tree;
- ``text``: bounding and cleaning text; ``markdown``: escaping untrusted text for Markdown;
- ``limits``: `Limits`, the caps on the text kept per test;
- ``types``: choice types shared by options, models and tests;
- ``repeat``: the ids of ``--qbench-repeat`` runs; ``stats``: per-metric score statistics;
- ``atomic``: writing a file so that a half-written one never exists.
"""

from __future__ import annotations
