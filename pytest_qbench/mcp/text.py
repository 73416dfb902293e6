"""The text each tool returns next to its structured result: what a person or a model reads.

Many clients hand the model only this text, so it says what matters, most important first, in
a few lines per item. ``fit_lines`` keeps it within a character budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_qbench.core.markdown import died_duration
from pytest_qbench.core.summary_words import summary_text


def fit_lines(blocks: Iterable[str], limit: int, more: str = "") -> str:
    """Blocks joined by newlines while they fit in ``limit`` characters; then ``more`` with
    the number left out (``{n}`` in it), if any were."""
    listed = list(blocks)
    kept: list[str] = []
    used = 0
    for block in listed:
        if used + len(block) + 1 > limit - len(more) - 8:
            left = len(listed) - len(kept)
            return "\n".join([*kept, more.format(n=left)] if more else kept)
        kept.append(block)
        used += len(block) + 1
    return "\n".join(kept)


def bound_bytes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, with a marker where it was cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    marker = f"\n[... cut to {limit} bytes]"
    return data[: limit - len(marker.encode())].decode(errors="ignore") + marker


COUNTED = (
    "failed",
    "passed",
    "skipped",
    "deselected",
    "xfailed",
    "xpassed",
    "errors",
    "subtests_passed",
    "subtests_skipped",
    "reruns",
)
"""The counts of an answer's first line, in pytest's words and order (`summary_words`)."""


def counts_text(summary: Mapping[str, Any], *, died: bool = False) -> str:
    """``3 failed, 10 passed, 1 error in 2.31s``: pytest's closing line (with the runners'
    other words: ``1 failed, 23 passed, 1 todo``); the duration of a run that ``died``
    (``died_unseen``) as the lower bound it is (``died_duration``)."""
    took = ""
    if "duration" in summary:
        took = f"{summary['duration']:.2f}s"
        took = f" in {died_duration(took) if died else took}"
    other = summary.get("other")
    return f"{summary_text(summary, COUNTED, other if isinstance(other, dict) else None)}{took}"


def cut_lines(lines: Sequence[str], limit: int) -> str:
    """``lines`` joined, cut to ``limit`` characters with a marker where they were cut."""
    text = "\n".join(lines)
    return text if len(text) <= limit else f"{text[: limit - 40]}\n[... cut to {limit} characters]"
