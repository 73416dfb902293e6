"""The ids of ``--qbench-repeat`` runs (no imports: the plugin loads it at startup)."""

from __future__ import annotations


def repeat_id(index: int) -> str:
    """The id of run ``index`` (1-based) under ``--qbench-repeat``: ``repeat-2``."""
    return f"repeat-{index}"


def repeated_test_id(nodeid: str, index: int) -> str:
    """The node id of a repeated test without its repeat id: ``t.py::f[a-repeat-2]`` gives
    ``t.py::f[a]``, ``t.py::f[repeat-2]`` gives ``t.py::f``."""
    own = repeat_id(index)
    if nodeid.endswith(f"[{own}]"):
        return nodeid[: -len(own) - 2]
    if nodeid.endswith(f"-{own}]"):
        return nodeid[: -len(own) - 2] + "]"
    return nodeid


__all__ = ["repeat_id", "repeated_test_id"]
