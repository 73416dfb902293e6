"""Numbers given on a command line and shown to people, one rule each: the ``type=`` parsers of
the plugin's options, the ``qbench`` commands and the MCP server's options (they raise
``argparse.ArgumentTypeError``, which argparse and pytest show as ``<option>: <message>``),
and byte sizes in words; a time rounded to the microsecond as results store it. Beside them
`parse_output`, `parse_name` and `parse_path`: an output path, a name or a path an option must
not leave blank."""

from __future__ import annotations

import argparse
import math
from pathlib import Path


def parse_whole(
    value: str,
    *,
    minimum: int = 0,
    maximum: int | None = None,
    what: str = "a whole number",
    example: str | None = None,
    unit: str = "",
) -> int:
    """A whole number from ``minimum`` to ``maximum`` (no upper bound when ``None``).

    Raises:
        argparse.ArgumentTypeError: not a whole number (``must be {what}``), or out of range.
    """
    hint = f"; e.g. {example}" if example else ""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, given: {value!r}{hint}") from None
    if maximum is not None and not minimum <= number <= maximum:
        raise argparse.ArgumentTypeError(
            f"must be from {minimum} to {maximum}{unit}, given: {value}"
        )
    if number < minimum:
        raise argparse.ArgumentTypeError(
            f"must not be negative, given: {value}; use 0 or more"
            if minimum == 0
            else f"must be a whole number of {minimum} or more, given: {value}"
        )
    return number


def parse_cap(value: str) -> int:
    """A non-negative character count (``type=`` for argparse)."""
    return parse_whole(value, what="a whole number of characters", example="20000")


def parse_count(value: str) -> int:
    """A non-negative number of items (``type=`` for argparse)."""
    return parse_whole(value, example="50")


def parse_finite(value: str, *, minimum: float, above: bool, what: str, example: str) -> float:
    """A finite number of ``minimum`` or more (more than it when ``above``): NaN and infinity
    are refused, since no timeout or threshold means them.

    Raises:
        argparse.ArgumentTypeError: saying it must be ``what``, with an ``example``.
    """
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and (number > minimum if above else number >= minimum)):
        raise argparse.ArgumentTypeError(f"must be {what}, given: {value!r}; e.g. {example}")
    return number


def parse_seconds(value: str) -> float:
    """A number of seconds, more than 0 and finite (``type=`` for argparse)."""
    return parse_finite(
        value, minimum=0, above=True, what="a number of seconds more than 0", example="300"
    )


def parse_output(value: str) -> str:
    """An output path, ``-`` for stdout (``type=`` for argparse): a blank one is refused, since
    it was read as stdout, or as the current directory."""
    if not value.strip():
        raise argparse.ArgumentTypeError(
            f"must be a file path ('-' for stdout), given: {value!r}; e.g. report.json"
        )
    return value


def parse_name(value: str) -> str:
    """A name (a node id, a tool's name) that must not be blank (``type=`` for argparse)."""
    if not value.strip():
        raise argparse.ArgumentTypeError(f"must not be empty, given: {value!r}")
    return value


def parse_path(value: str) -> Path:
    """A file or directory path (``type=`` for argparse): a blank one, which ``Path`` reads as
    the working directory, is refused."""
    return Path(parse_name(value))


BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(count: int) -> str:
    """``512 B``, ``12.3 KiB``, ``4.0 MiB``, ``1.2 GiB``: a size as people read it."""
    size = float(count)
    for unit in BYTE_UNITS[:-1]:
        if abs(size) < 1024:
            return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} {BYTE_UNITS[-1]}"


TO_WHOLE = 6755399441055744.0
"""1.5 * 2**52: ``x + TO_WHOLE - TO_WHOLE`` is ``x`` rounded to a whole number (half to even, as
``round`` does) for ``abs(x) < 2**51``, in two float additions that CPython runs without a call
(the sum's last place is 1, so the addition rounds ``x`` to a whole number; the subtraction is
exact)."""


def round_micro(seconds: float) -> float:
    """``round(seconds, 6)``, the same value (and type) for every input, for about half of its
    instructions on a float (issue 28: a result's four times; ``round`` writes the decimal
    digits, formats them with ``printf`` and reads them back with ``strtod``).

    ``y`` is ``seconds * 1e6`` within half a unit in its last place, far less than 0.001 below
    1e12, so when it is not within 0.001 of a half (``whole`` is ``y`` to the nearest whole
    number) the exact value rounds to ``whole`` too: the nearest whole number of microseconds,
    never a tie, which is the decimal ``round`` reads back; the division, correctly rounded,
    gives the double nearest it as ``strtod`` does. Anything else (a tie or near one, zero, a
    negative time, an ``int``, not finite, huge) is ``round``'s."""
    if type(seconds) is float:
        y = seconds * 1e6
        whole = y + TO_WHOLE - TO_WHOLE
        if -0.499 < y - whole < 0.499 and 0.0 < y < 1e12:
            return whole / 1e6
    return round(seconds, 6)


WHOLE_MICROS: list[tuple[float, float, float, float]] = [(-1.0, -1.0, -1.0, -1.0)]
"""The four times `round_micros` returned last when each is a whole number of microseconds
above 0 and below a second: a stream line whose four times are these very objects writes them
with one ``%.6g`` each without checking them again (``report.store.passing_line``)."""


def round_micros(
    duration: float, setup: float, call: float, teardown: float
) -> tuple[float, float, float, float]:
    """`round_micro` of a result's four times in one call (issue 28: a test's times, four calls
    before). Four floats each nearer than 0.499 to a whole number of microseconds from 1 to
    999 999 (nearly every test's) are that number's double, as `round_micro` makes them (its
    shortcut's condition holds), and the tuple is kept in `WHOLE_MICROS`; any other time goes
    through `round_micro`."""
    if (
        type(duration) is float
        and type(setup) is float
        and type(call) is float
        and type(teardown) is float
    ):
        y0, y1, y2, y3 = duration * 1e6, setup * 1e6, call * 1e6, teardown * 1e6
        w0 = y0 + TO_WHOLE - TO_WHOLE
        w1 = y1 + TO_WHOLE - TO_WHOLE
        w2 = y2 + TO_WHOLE - TO_WHOLE
        w3 = y3 + TO_WHOLE - TO_WHOLE
        if (
            -0.499 < y0 - w0 < 0.499
            and -0.499 < y1 - w1 < 0.499
            and -0.499 < y2 - w2 < 0.499
            and -0.499 < y3 - w3 < 0.499
            and 0.0 < w0 < 1e6
            and 0.0 < w1 < 1e6
            and 0.0 < w2 < 1e6
            and 0.0 < w3 < 1e6
        ):
            rounded = (w0 / 1e6, w1 / 1e6, w2 / 1e6, w3 / 1e6)
            WHOLE_MICROS[0] = rounded
            return rounded
    return round_micro(duration), round_micro(setup), round_micro(call), round_micro(teardown)


__all__ = [
    "TO_WHOLE",
    "WHOLE_MICROS",
    "format_bytes",
    "parse_cap",
    "parse_count",
    "parse_finite",
    "parse_seconds",
    "parse_whole",
    "round_micro",
    "round_micros",
]
