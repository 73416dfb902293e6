"""Times in the index: UTC text of one fixed width, so that text order is time order."""

from __future__ import annotations

import re
from datetime import datetime
from datetime import timezone


_FRACTION = re.compile(r"\.(\d+)")


def to_index_time(value: str | datetime | None) -> str | None:
    """``2026-01-02T03:04:05.000000Z`` for an ISO text or a datetime (naive means UTC)."""
    if value is None:
        return None
    moment = parse_time(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """An ISO 8601 time as reports write it (``Z`` or an offset; any number of fraction digits).

    Raises:
        ValueError: it is not such a time.
    """
    text = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python 3.10's fromisoformat takes 3 or 6 fraction digits only.
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    return datetime.fromisoformat(text)


def from_index_time(text: str | None) -> datetime | None:
    """The datetime of an index time."""
    return None if text is None else parse_time(text)
