"""Agent evaluation inside pytest, on top of ``pytest_qbench.evaluation``.

- ``hooks``: which tests use agent evaluation, and the hooks that gate them (light: loaded at
  startup);
- ``state``: one test's recorded sample and metric results, and the facts sent on its report;
- ``fixture``: `QBench`, the ``qbench`` fixture's object; ``cases``: `qbench_cases`;
- ``items``: ``agent.yaml`` case files collected as pytest items.
"""

from __future__ import annotations
