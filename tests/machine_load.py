"""Safety-net timeouts scaled to the machine's load, so that a verdict never depends on it."""

from __future__ import annotations

import os


def scaled(seconds: float) -> float:
    """``seconds`` on an idle machine, times the machine's load per core when it is busier."""
    load = os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, "getloadavg") else 1.0
    return float(round(seconds * max(1.0, load)))
