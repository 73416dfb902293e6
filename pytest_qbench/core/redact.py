"""Keeping secrets out of what qbench writes: the values of secret-looking environment
variables and the passwords of URLs, in every form they are written in (escaped, ``repr``,
bytes, JSON). Every layer uses it: the report, the plugin, the history, the MCP server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any


SECRET_WORDS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "auth",
    "cookie",
    "private",
    "dsn",
)
"""A name holding one of these, in any case, names a secret."""
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
URL_PASSWORD = r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:)(?P<password>[^\s/@]+)(?=@)"
"""The password of a URL (``postgresql://user:PASSWORD@host/db``); compiled, by ``re``'s cache,
only for a text that holds ``://`` (every run reads the environment and its command line)."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name suggests its value is a secret."""
    if name.isascii():  # every name, in practice: no pattern to compile
        lowered = name.lower()
        return any(word in lowered for word in SECRET_WORDS)
    return re.search("|".join(SECRET_WORDS), name, re.IGNORECASE) is not None  # Unicode's cases


def secret_values(environ: Mapping[str, str]) -> set[str]:
    """The secrets of an environment: secret-looking variables' values and URLs' passwords."""
    values = {
        value
        for name, value in environ.items()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH
    }
    values.update(  # QBENCH_DB, DATABASE_URL, ...: a URL's password is secret, whatever the name
        found["password"]
        for value in environ.values()
        if "://" in value
        for found in re.finditer(URL_PASSWORD, value)
        if len(found["password"]) >= MIN_SECRET_LENGTH
    )
    return values


CURRENT_TEST_VARIABLE = "PYTEST_CURRENT_TEST"
"""Set by pytest for every phase of every test: a change of it alone is no new secret."""
_CURRENT_TEST_BYTES = CURRENT_TEST_VARIABLE.encode()  # its name in os.environ's data (POSIX)
_CURRENT_TEST_KEYS = (_CURRENT_TEST_BYTES, CURRENT_TEST_VARIABLE)  # POSIX's, Windows' (str)
_ABSENT = object()


def environment_snapshot(environ: Mapping[str, str]) -> dict[Any, Any]:
    """A copy of ``environ`` to compare with a later one, without ``PYTEST_CURRENT_TEST``.

    ``os.environ`` is copied from its underlying dict (no decoding of every name and value), so
    taking and comparing a snapshot costs microseconds.
    """
    data = getattr(environ, "_data", None)
    snapshot: dict[Any, Any] = data.copy() if isinstance(data, dict) else dict(environ)
    snapshot.pop(CURRENT_TEST_VARIABLE, None)
    snapshot.pop(_CURRENT_TEST_BYTES, None)
    return snapshot


def written_forms(secret: str) -> set[str]:
    """The ways a secret appears in text: as is, escaped as pytest writes it in a test id
    (``unicode_escape``), in a ``repr`` of the string or of its UTF-8 bytes, in JSON, and each
    line of a multi-line secret."""
    plain = secret.isascii() and secret.isprintable() and "\\" not in secret
    forms = {
        secret,
        # printable ASCII without a backslash escapes to itself (no codec to import: 0.8 M)
        secret if plain else secret.encode("unicode_escape").decode("ascii"),
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogateescape"))[2:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    }
    forms.update(line for line in secret.splitlines() if len(line) >= MIN_SECRET_LENGTH)
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor:
    """Replaces the values of secret-looking environment variables wherever they appear in text,
    in every form they are written in (escaped, ``repr``, bytes, JSON)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.known: frozenset[str] = frozenset()
        """The secret values this redactor replaces (not their written forms): replaced by
        `learn`, never changed, so handed out as is; an attribute, not a property, since the
        plugin reads it after each test's call (issue 28: a call fewer a test)."""
        self._secrets: list[str] = []
        self.active = False
        """Whether any secret is known (else redacting returns every text as it is)."""
        self._snapshot: dict[Any, Any] = environment_snapshot(environ)
        self.learn(secret_values(environ))

    def learn(self, values: Iterable[str]) -> bool:
        """Redact ``values`` from now on too; return whether any was new."""
        new_values = set(values) - self.known
        if not new_values:
            return False
        self.known = self.known | new_values
        forms = set(self._secrets)
        for value in new_values:
            forms |= written_forms(value)
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(forms, key=len, reverse=True)
        self.active = bool(self._secrets)
        return True

    def refresh(self, environ: Mapping[str, str]) -> bool:
        """Learn the secrets set since the last look (``monkeypatch.setenv`` in a test); cheap
        when nothing changed. Return whether a new secret was found.

        Runs after test phases (the plugin's ``QBenchWorker.annotate``): a comparison of the
        environment with the one of the last look (a few microseconds; ``os.environ``'s data
        compared as it is, no copy) tells whether anything but ``PYTEST_CURRENT_TEST``, which
        pytest sets for every phase, changed; only then is every variable looked at again.
        """
        data = getattr(environ, "_data", None)
        if isinstance(data, dict):
            # os.environ compared as it is, no copy: the snapshot takes pytest's variable's
            # value of now (a copy of os.environ, whose variable pytest deletes and sets at each
            # phase, is made entry by entry: about 8 k instructions a look; issue 28)
            seen = self._snapshot
            value = data.get(_CURRENT_TEST_BYTES, _ABSENT)
            if value is not _ABSENT:  # POSIX's, as a test runs (the one form then)
                seen[_CURRENT_TEST_BYTES] = value
            else:
                for key in _CURRENT_TEST_KEYS:
                    value = data.get(key, _ABSENT)
                    if value is _ABSENT:
                        seen.pop(key, None)
                    else:
                        seen[key] = value
            if data == seen:
                return False
        elif environment_snapshot(environ) == self._snapshot:
            return False
        self._snapshot = environment_snapshot(environ)
        return self.learn(secret_values(environ))

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret value replaced by ``[redacted]``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def data(self, value: Any) -> Any:
        """Redact every string inside JSON data (lists, dicts, pairs)."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value

    def argv(self, args: Iterable[str]) -> list[str]:
        """Redact a command line, including ``--token=value`` style arguments and the passwords
        of URLs (``--qbench-db=postgresql://user:PASSWORD@host/db``)."""
        redacted = [self(arg) for arg in args]
        head = rf"\g<head>{REDACTED}"
        return [re.sub(URL_PASSWORD, head, arg) if "://" in arg else arg for arg in redacted]


__all__ = [
    "CURRENT_TEST_VARIABLE",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "SECRET_WORDS",
    "URL_PASSWORD",
    "Redactor",
    "environment_snapshot",
    "is_secret_name",
    "secret_values",
    "written_forms",
]
