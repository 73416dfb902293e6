"""A pytest plugin of the acceptance runs (``-p pytest_qbench.generate._shuffle``): the tests
in a random order, seeded by ``QBENCH_SHUFFLE_SEED`` (so a failure can be replayed). It imports
no pytest: the hook needs none."""

from __future__ import annotations

import os
import random
from typing import Any


SEED = "QBENCH_SHUFFLE_SEED"


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """Shuffle the collected tests in place."""
    random.Random(os.environ.get(SEED, "0")).shuffle(items)
