"""Small text statistics: the low-coverage module of the `qbench generate` example."""

from __future__ import annotations


def word_count(text: str) -> int:
    """Words separated by white space."""
    return len(text.split())


def percent(part: int, whole: int) -> float:
    """``part`` as a percentage of ``whole``, rounded to 1 decimal."""
    if whole <= 0:
        raise ValueError("whole must be positive")
    if part > whole:
        return 100.0
    return round(100 * part / whole, 1)


def median(values: list[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of nothing")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def encode_pairs(pairs: dict[str, str]) -> str:
    """``{"a": "1"}`` -> ``"a=1"``, pairs joined by ``;``."""
    return ";".join(f"{key}={value}" for key, value in pairs.items())


def decode_pairs(text: str) -> dict[str, str]:
    """The inverse of encode_pairs (or so it claims: keys holding ``=`` or ``;`` break it)."""
    if not text:
        return {}
    return dict(item.split("=", 1) for item in text.split(";"))


class Histogram:
    """Counts of words."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, word: str) -> int:
        """Count ``word`` once more; its count."""
        if not word:
            raise ValueError("empty word")
        self.counts[word] = self.counts.get(word, 0) + 1
        return self.counts[word]


async def fetch_words(client: object, url: str) -> list[str]:
    """Download a page and split it into words (needs the network)."""
    page = await client.get(url)  # type: ignore[attr-defined]
    return str(page).split()
