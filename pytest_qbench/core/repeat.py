"""The ids of ``--qbench-repeat`` runs (no imports: the plugin loads it at startup)."""

from __future__ import annotations


REPEAT_FIXTURE = "qbench_repeat"
"""The fixture that numbers the runs of a repeated test."""


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


def repeat_index(item: object) -> int | None:
    """Which repetition a pytest item is under ``--qbench-repeat`` (``None`` when not repeated):
    a case-file item's ``repeat``, else its ``qbench_repeat`` parameter."""
    index = getattr(item, "repeat", None)
    if index is None:
        callspec = getattr(item, "callspec", None)
        index = callspec.params.get(REPEAT_FIXTURE) if callspec is not None else None
    return index if isinstance(index, int) else None


__all__ = ["REPEAT_FIXTURE", "repeat_id", "repeat_index", "repeated_test_id"]
