"""The history database setting: its names, the URL forms it takes, and URLs with passwords hidden.

Standard library only; both ``database`` (which index a command uses) and the ``postgres``
backend read it, so neither imports the other's module for these names.
"""

from __future__ import annotations

from urllib.parse import SplitResult
from urllib.parse import parse_qsl
from urllib.parse import urlencode
from urllib.parse import urlsplit

from pytest_qbench.core.errors import HistoryError


ENV_VAR = "QBENCH_DB"
"""The environment variable naming the history database."""
INI_NAME = "qbench_db"
"""The ini value naming the history database."""
LOCAL = "sqlite"
"""The setting's value that names the local index, ``<qbench dir>/index.sqlite``."""
PREFIXES = ("postgresql://", "postgres://")
"""How the URLs libpq reads begin."""
URL_HINT = "postgresql://USER@HOST:PORT/DBNAME"
_SECRET_PARAMS = ("password", "sslpassword")


def parse_db(value: str | None, source: str = "--qbench-db") -> str | None:
    """The PostgreSQL URL that ``value`` names; ``None`` for the local index (no value, or
    ``sqlite``). ``source`` names where the value came from, for the message.

    Raises:
        HistoryError: the value is neither ``sqlite`` nor a ``postgresql://`` URL.
    """
    text = (value or "").strip()
    if not text or text == LOCAL:
        return None
    if not text.startswith(PREFIXES):  # the rest is libpq's to check (hosts, query options)
        raise HistoryError(
            f"{source} is not a PostgreSQL URL, given: {redact(text)}; give {URL_HINT} (or "
            f"'{LOCAL}' for the local index)",
            slug="db-url",
        )
    return text


def redact(url: str) -> str:
    """``url`` with its password (in the user part or the query) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        netloc = _redact_netloc(parts)
    except ValueError:
        return url.split("://", 1)[0] + "://***" if "@" in url else url
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key in _SECRET_PARAMS for key, _ in query):
        shown = [(k, "***" if k in _SECRET_PARAMS else v) for k, v in query]
        parts = parts._replace(query=urlencode(shown, safe="*/:"))
    return parts._replace(netloc=netloc).geturl()


def _redact_netloc(parts: SplitResult) -> str:
    if "@" not in parts.netloc:
        return parts.netloc
    user, host = parts.netloc.rsplit("@", 1)
    if ":" in user:
        user = user.split(":", 1)[0] + ":***"
    return f"{user}@{host}"
