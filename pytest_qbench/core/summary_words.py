"""pytest's summary words, in one place: the closing line's words, their order and their plurals.

pytest's closing line (``1 failed, 2 passed, 1 warning, 2 errors in 0.12s``) counts each kind of
report under a key (``failed``, ``error``, ``warnings``...), in a fixed order, and pluralises
only ``error``, ``warning`` and ``test`` (``_pytest.terminal.pluralize``); the other words are
the same for any count. Every qbench text that repeats pytest's counts (the report's headline,
``qbench render``, ``qbench runs``, the MCP server's answers) words them here, and reading
pytest's own counts back (`FIELD_OF_KEY`) uses the same table.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping


SUMMARY_KEYS: tuple[tuple[str, str], ...] = (
    ("failed", "failed"),
    ("passed", "passed"),
    ("skipped", "skipped"),
    ("deselected", "deselected"),
    ("xfailed", "xfailed"),
    ("xpassed", "xpassed"),
    ("warnings", "warnings"),
    ("errors", "error"),
    ("subtests_passed", "subtests passed"),
    ("subtests_skipped", "subtests skipped"),
    ("reruns", "rerun"),
)
"""(``ReportSummary`` field, pytest's key) in the order of pytest's closing line: its known
types first, then pytest-rerunfailures' ``rerun``, which pytest puts after them."""
FIELD_OF_KEY = {key: field for field, key in SUMMARY_KEYS}
"""pytest's key (``error``, ``warnings``, ``subtests passed``...) -> the ``ReportSummary`` field."""
OUTCOME_FIELDS = ("failed", "passed", "skipped", "xfailed", "xpassed", "errors")
"""The ``ReportSummary`` fields of the tests' outcomes (without warnings, deselected, subtests
and reruns), for a text that shows only what the tests did."""
SUBTEST_FIELDS = ("subtests_passed", "subtests_skipped")
"""The ``ReportSummary`` fields of the subtests pytest's closing line counts apart (pytest 9
counts a failed subtest in ``failed``, and a skipped one in ``skipped``; pytest-subtests says
``subtests skipped``)."""
PLURALISED = frozenset({"error", "warnings", "test"})
"""The only keys pytest pluralises; ``warnings`` is its key for ``1 warning``."""
NO_TESTS_RAN = "no tests ran"
"""pytest's closing line when nothing counts."""


def pluralize(count: int, key: str) -> str:
    """``count`` and pytest's word for ``key``: ``1 error``, ``2 errors``, ``1 warning``,
    ``2 warnings``, ``1 test``; ``3 failed``, ``2 subtests passed`` (other words never change)."""
    if key not in PLURALISED:
        return f"{count} {key}"
    noun = key.replace("warnings", "warning")
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def collected_text(collected: int, deselected: int = 0) -> str:
    """pytest's ``--collect-only`` closing line without its errors and duration: ``1 test
    collected``, ``3 tests collected``, ``1/3 tests collected (2 deselected)``, ``no tests
    collected``, ``no tests collected (3 deselected)`` (``_pytest.terminal``'s words)."""
    if not collected:
        return "no tests collected" + (f" ({deselected} deselected)" if deselected else "")
    if deselected:
        total = collected + deselected
        return f"{collected}/{total} tests collected ({deselected} deselected)"
    return f"{pluralize(collected, 'test')} collected"


def rate_text(percent: float) -> str:
    """``97.5%``: a pass rate with one decimal, never ``100.0%`` short of 100 (one failure in
    2 000 is ``99.9%``) nor ``0.0%`` above 0, as coverage.py shows its totals."""
    if 99.9 < percent < 100.0:
        percent = 99.9
    elif 0.0 < percent < 0.1:
        percent = 0.1
    return f"{percent:.1f}%"


def failed_subtests(count: int) -> str:
    """``1 failed subtest``, ``2 failed subtests``: pytest 9's words for a test's failed
    subtests (``contains 2 failed subtests``), which its closing line counts in ``failed``."""
    return plural(count, "failed subtest")


def plural(count: int, noun: str) -> str:
    """``1 time``, ``2 times``: an English noun that is not one of pytest's words."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary_parts(
    counts: Mapping[str, object],
    fields: Iterable[str] | None = None,
    other: Mapping[str, int] | None = None,
) -> list[str]:
    """``["1 failed", "10 passed", "2 warnings"]``: the counts that are not zero, in pytest's
    words and order. ``counts`` is keyed by ``ReportSummary`` field (a missing one is 0);
    ``fields`` keeps only those; ``other`` (other plugins' words) comes last, as pytest puts it."""
    shown = None if fields is None else set(fields)
    parts = [
        pluralize(count, key)
        for field, key in SUMMARY_KEYS
        if (shown is None or field in shown) and (count := _count(counts.get(field)))
    ]
    parts.extend(pluralize(n, word) for word, n in (other or {}).items() if n)
    return parts


def summary_text(
    counts: Mapping[str, object],
    fields: Iterable[str] | None = None,
    other: Mapping[str, int] | None = None,
) -> str:
    """pytest's closing line without its duration: ``1 failed, 2 passed``, or ``no tests ran``."""
    return ", ".join(summary_parts(counts, fields, other)) or NO_TESTS_RAN


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = [
    "FIELD_OF_KEY",
    "NO_TESTS_RAN",
    "OUTCOME_FIELDS",
    "SUBTEST_FIELDS",
    "SUMMARY_KEYS",
    "collected_text",
    "failed_subtests",
    "plural",
    "pluralize",
    "rate_text",
    "summary_parts",
    "summary_text",
]
