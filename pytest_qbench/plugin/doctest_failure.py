"""A failed doctest as pytest shows it: the failing example's file and line, its source, and
what it raised or printed instead of what the docstring expected.

doctest's own exceptions (``DocTestFailure``, ``UnexpectedException``, and pytest's
``MultipleDoctestFailures`` under ``--doctest-continue-on-failure``) say only ``<DocTest name
from path:line (3 examples)>``, and their traceback runs through doctest.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_qbench.core.records import dataclass


@dataclass(frozen=True)
class DoctestFailure:
    """The first failing example of a doctest."""

    file: str
    """The doctest's file, relative to the rootdir when inside it."""
    line: int | None
    """The example's first line (1-based), as pytest prints it; ``None`` when doctest does not
    know where the docstring is."""
    name: str
    """pytest's name of the item: ``[doctest] pkg.mod.func``."""
    source: str
    """The example's source, without its ``>>>`` prompt."""
    exception: BaseException
    """What to show: the exception the example raised, or doctest's ``DocTestFailure``."""
    difference: str
    """doctest's ``Expected: ... Got: ...`` (``DocTestFailure``); empty when it raised."""
    others: tuple[str, ...] = ()
    """Under ``--doctest-continue-on-failure``, the doctest's later failing examples, each
    ``file:line: >>> source``, as pytest shows each of them after the first."""


def doctest_failure(exc: BaseException, rootpath: Path) -> DoctestFailure | None:
    """The first failing example behind ``exc``; ``None`` when ``exc`` is not a doctest's."""
    others: tuple[str, ...] = ()
    if type(exc).__name__ == "MultipleDoctestFailures":
        failures = getattr(exc, "failures", None)
        if isinstance(failures, list | tuple) and failures:
            exc = failures[0]
            others = tuple(_example_at(later, rootpath) for later in failures[1:])
    if type(exc).__module__ != "doctest":
        return None
    test, example = getattr(exc, "test", None), getattr(exc, "example", None)
    if test is None or example is None:
        return None
    lineno = None if test.lineno is None else test.lineno + example.lineno + 1
    raised = getattr(exc, "exc_info", None)
    shown = raised[1] if isinstance(raised, tuple) and len(raised) == 3 else exc
    difference = ""
    if shown is exc:
        checker = sys.modules["doctest"].OutputChecker()  # loaded: it raised ``exc``
        difference = checker.output_difference(example, str(getattr(exc, "got", "")), 0)
    return DoctestFailure(
        file=_relative(str(test.filename or test.name), rootpath),
        line=lineno,
        name=f"[doctest] {test.name}",
        source=str(example.source).strip(),
        exception=shown,
        difference=difference.strip(),
        others=others,
    )


def _example_at(exc: object, rootpath: Path) -> str:
    """``file:line: >>> source`` of one failing example (a ``DocTestFailure`` or
    ``UnexpectedException``)."""
    test, example = getattr(exc, "test", None), getattr(exc, "example", None)
    if test is None or example is None:
        return str(exc)
    where = _relative(str(test.filename or test.name), rootpath)
    if test.lineno is not None:
        where = f"{where}:{test.lineno + example.lineno + 1}"
    return f"{where}: >>> {str(example.source).strip()}"


def _relative(filename: str, rootpath: Path) -> str:
    """``filename`` relative to the rootdir when inside it, as the frames' paths are."""
    path = Path(filename)
    try:
        return path.relative_to(rootpath).as_posix()
    except ValueError:
        return path.as_posix()
