"""A Node tool's command-line words, as a script gives them (``eslint src --max-warnings 0``,
``prettier --check src --no-semi``), sorted for qbench's own run of the tool: the paths, the
options carried as written, those left out, those the caller reads itself, and those refused
(qbench runs a tool as written or not at all)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field


SHELL = re.compile(r"[$`]")
"""A word the shell would expand (``$DIRS``, ``$(pwd)``): qbench runs no shell."""


@dataclass(frozen=True)
class Grammar:
    """Which options of a tool qbench knows, by their names (``--config``; ``--config=X``
    too)."""

    values: frozenset[str] = frozenset()
    """Carried as written, with the value after them."""
    flags: frozenset[str] = frozenset()
    """Carried as written, taking no value."""
    dropped: frozenset[str] = frozenset()
    """Left out, taking no value (they change how the tool prints, not what it finds)."""
    dropped_values: frozenset[str] = frozenset()
    """Left out, with the value after them."""
    read: frozenset[str] = frozenset()
    """Given back with their value (eslint's ``--max-warnings``), not carried."""
    marks: frozenset[str] = frozenset()
    """Given back as present (prettier's ``--check``), not carried, taking no value."""


@dataclass
class Sorted:
    """A command's words sorted by a `Grammar`."""

    paths: list[str] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Options not known, without their value, and words the shell expands."""
    read: dict[str, str] = field(default_factory=dict)
    marks: set[str] = field(default_factory=set)


def sort_words(words: list[str], grammar: Grammar) -> Sorted:
    """``words`` sorted by ``grammar``: the words that are no option are paths."""
    found = Sorted()
    valued = grammar.values | grammar.dropped_values | grammar.read
    number = 0
    while number < len(words):
        word = words[number]
        number += 1
        name, equals, value = word.partition("=")
        if name in valued and not equals:
            if number >= len(words):
                found.refused.append(word)
                continue
            value, number = words[number], number + 1
        if SHELL.search(word) or SHELL.search(value):
            found.refused.append(word if word.startswith("-") or not equals else value)
        elif not word.startswith("-"):
            found.paths.append(word)
        elif name in grammar.read:
            found.read[name] = value
        elif name in grammar.marks:
            found.marks.add(name)
        elif name in grammar.values:
            found.carried += [name, value]
        elif name in grammar.flags:
            found.carried.append(word)
        elif name not in grammar.dropped and name not in grammar.dropped_values:
            found.refused.append(word)
    return found


def warnings_limit(found: Sorted, option: str = "--max-warnings") -> int | None:
    """The warnings limit ``option`` gives (eslint's and oxlint's ``--max-warnings N``),
    carried into ``found.carried`` as ``option N``; ``None`` without it; a value that is no
    number is refused (in ``found.refused``)."""
    if option not in found.read:
        return None
    try:
        limit = int(found.read[option])
    except ValueError:
        found.refused.append(f"{option} {found.read[option]}")
        return None
    found.carried += [option, str(limit)]
    return limit
