"""Failure fingerprints: the same failure recognised across runs.

A fingerprint is a short hash of the error type, the failing ``file:line`` (the frame in the
user's code) and the message with what changes from run to run taken out: numbers, memory
addresses, paths, ids. ``AssertionError`` at ``tests/test_x.py:12`` with ``assert 3 == 4`` and
with ``assert 5 == 4`` is the same failure; a ``KeyError`` there is another.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from pytest_qbench.core.text import strip_ansi


MAX_MESSAGE = 1000
"""Characters of the normalised message that count (long messages differ in their tails)."""

# Order matters: a path or an address would otherwise lose its digits to the number rule first.
# Each rule with the texts its every match holds and how many of them at least: a message
# holding fewer is left as it is without running the pattern (most messages have no address,
# path or id; an id holds four hyphens, a path two separators, where "assert -1 == x" or a
# "a/b" holds one).
_RULES: tuple[tuple[re.Pattern[str], str, tuple[str, ...], int], ...] = (
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<id>",
        ("-",),
        4,
    ),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>", ("0x",), 1),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+){2,}[\\/]?"), "<path>", ("/", "\\"), 2),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<hex>", (), 0),
    # [-+]?\d+ spelled so that a match starts with a set (a sign or a digit): sre then skips to
    # the next such character instead of trying the pattern at every one (the same matches;
    # about a third less a message: issue 28)
    (re.compile(r"[-+\d](?:(?<=[-+])\d+|(?<=\d)\d*)(?:[.,_]\d+)*(?:[eE][-+]?\d+)?"), "<n>", (), 0),
)


_ID, _ADDRESS, _PATH, _HEX, _NUMBER = (rule[0] for rule in _RULES)
_VERBOSE_TAIL = re.compile(r"\n[ \t]*(?:Full diff:|Use -v+ to get more diff)")
"""Where pytest's assertion explanation starts to depend on the verbosity (``-v``, or ``CI``
set): ``Use -v to get more diff`` without it, ``Full diff: ...`` with it. The message is cut
there, so that a failure in CI and the same one on a laptop are one failure."""


def normalise_message(message: str) -> str:
    """The message without what varies between runs of the same failure (``_RULES``, in their
    order, each run where the message holds what its every match holds: counted inline, not
    by a loop over the rules: issue 28)."""
    text = strip_ansi(message)
    if "diff" in text and (verbose := _VERBOSE_TAIL.search(text)):
        text = text[: verbose.start()]
    if text.count("-") >= 4:
        text = _ID.sub("<id>", text)
    if "0x" in text:
        text = _ADDRESS.sub("<addr>", text)
    if text.count("/") + text.count("\\") >= 2:
        text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("<n>", _HEX.sub("<hex>", text))
    # each run of whitespace one space, none at the ends: str.split's whitespace is re's \s
    return " ".join(text.split())[:MAX_MESSAGE]


def fingerprint(error_type: str, location: str, message: str) -> str:
    """A 16-hex-digit hash of the error type, the location and the normalised message."""
    key = "\0".join((error_type, location, normalise_message(message)))
    return hashlib.blake2b(key.encode("utf-8", "replace"), digest_size=8).hexdigest()


def failure_location(failure: Mapping[str, Any], test_file: str) -> str:
    """``file:line`` of the failing frame; the test's file when the frame is unknown."""
    file = failure.get("file") or test_file
    line = failure.get("line")
    return f"{file}:{line}" if line else str(file)


def fingerprint_of(result: Mapping[str, Any]) -> str | None:
    """The fingerprint of a result record's failure; ``None`` when it has none."""
    failure = result.get("failure")
    if not failure:
        return None
    return fingerprint(
        str(failure.get("error_type", "")),
        failure_location(failure, str(result.get("file", ""))),
        str(failure.get("error_message", "")),
    )


def diagnostic_fingerprint(tool: str, code: str | None, file: str | None, message: str) -> str:
    """A static checker's diagnostic across runs (issue 13.5): a 16-hex-digit hash of the tool,
    the code, the file and the message without numbers (``normalise_message``); not the line,
    so that code moved up or down keeps its diagnostics."""
    key = "\0".join((tool, code or "", (file or "").replace("\\", "/"), normalise_message(message)))
    return hashlib.blake2b(key.encode("utf-8", "replace"), digest_size=8).hexdigest()


def diagnostic_fingerprint_of(diagnostic: Mapping[str, Any]) -> str:
    """The fingerprint of a ``Diagnostic`` record."""
    return diagnostic_fingerprint(
        str(diagnostic.get("tool") or ""),
        diagnostic.get("code"),
        diagnostic.get("file"),
        str(diagnostic.get("message") or ""),
    )
