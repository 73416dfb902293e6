"""Which index a run or a command uses: ``<qbench dir>/index.sqlite`` (the default), or a
PostgreSQL database that several machines share (``qbench_db = postgresql://...``).

Where the setting comes from, the first one given wins:

1. the command line: ``--qbench-db`` (pytest), ``--db`` (the ``qbench`` history commands);
2. the environment variable ``QBENCH_DB`` (per machine or CI job, where a password can be a
   secret);
3. ``qbench_db`` in the pytest configuration file (the one pytest itself would read).

The value ``sqlite`` names the local index, so that one machine can opt out of a shared
database the configuration file names. Standard library only: psycopg is imported by
``postgres.py``, and only when a URL is used.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.history import INDEX_NAME
from pytest_qbench.history.backend import Index
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.history.dburl import INI_NAME
from pytest_qbench.history.dburl import parse_db


def configured_db(given: str | None, start: Path) -> str | None:
    """The history database of a ``qbench`` command: ``given`` (``--db``), else ``QBENCH_DB``,
    else ``qbench_db`` of the pytest configuration file found from ``start``.

    Raises:
        HistoryError: the value is neither ``sqlite`` nor a PostgreSQL URL.
    """
    if given:
        source, value = "--db", given
    elif os.environ.get(ENV_VAR):
        source, value = f"${ENV_VAR}", os.environ[ENV_VAR]
    else:
        found = ini_value(start, INI_NAME)
        if found is None:
            return None
        source, value = f"{INI_NAME} in {found[0]}", found[1]
    url = parse_db(value, source)
    if url is not None:
        require_psycopg(source)
    return url


def open_index(
    qbench_dir: Path | None, db: str | None, *, create: bool = False, wait: float | None = None
) -> Index:
    """The index ``db`` names (a PostgreSQL URL), else ``<qbench_dir>/index.sqlite``; ``wait``:
    seconds a busy index is waited for (default: the backend's).

    Raises:
        HistoryError: the index cannot be opened (see ``SQLiteIndex`` and ``PostgresIndex``).
    """
    if db is not None:
        require_psycopg()
        from pytest_qbench.history.postgres import PostgresIndex

        if wait is not None:
            return PostgresIndex(db, create=create, wait=wait)
        return PostgresIndex(db, create=create)
    from pytest_qbench.history.sqlite import SQLiteIndex

    if qbench_dir is None:  # callers find the directory first when there is no URL
        raise HistoryError("no qbench directory and no history database", slug="no-qbench-dir")
    if wait is not None:
        return SQLiteIndex(qbench_dir / INDEX_NAME, create=create, wait=wait)
    return SQLiteIndex(qbench_dir / INDEX_NAME, create=create)


def existing_index(qbench_dir: Path | None, db: str | None) -> Index | None:
    """``open_index`` of an index that exists; ``None`` when there is no URL and no
    ``index.sqlite`` (it is never created here)."""
    if db is None and (qbench_dir is None or not (qbench_dir / INDEX_NAME).is_file()):
        return None
    return open_index(qbench_dir, db)


def require_psycopg(source: str = "the history database") -> None:
    """Import psycopg, which a PostgreSQL database needs; ``source`` names the setting.

    Raises:
        HistoryError: psycopg is not installed (or cannot load libpq); one line naming the extra.
    """
    try:
        importlib.import_module("psycopg")
    except ImportError as exc:
        from pytest_qbench.core.install import install_extra

        raise HistoryError(
            f"{source} is a PostgreSQL URL, which needs psycopg ({exc}); "
            f"install it: {install_extra('postgres')}",
            slug="postgres-missing",
        ) from None


# --- the pytest configuration file, found as pytest finds it ------------------------------------


def ini_value(start: Path, name: str) -> tuple[Path, str] | None:
    """``name`` in the pytest configuration file that pytest started in ``start`` would read
    (the first directory, from ``start`` up, holding one), with that file; ``None`` when there
    is no such file or it lacks the value."""
    for folder in (start.resolve(), *start.resolve().parents):
        for file_name, loader in _LOADERS.items():
            path = folder / file_name
            if not path.is_file():
                continue
            try:
                section = loader(path)
            except (OSError, ValueError) as exc:  # pytest would refuse the file too
                raise HistoryError(f"cannot read {path}: {exc}", slug="db-url") from None
            if section is not None:
                value = section.get(name)
                return (path, str(value)) if value not in (None, "") else None
    return None


def _ini_section(path: Path, section: str, always: bool = False) -> dict[str, Any] | None:
    import iniconfig  # pytest's own INI parser, so values read the same

    try:
        parsed = iniconfig.IniConfig(str(path))
    except iniconfig.ParseError as exc:
        raise ValueError(str(exc)) from None
    if section in parsed:
        return dict(parsed[section].items())
    return {} if always else None


def _toml(path: Path) -> dict[str, Any]:
    # tomllib from Python 3.11; before, tomli, which pytest itself requires there
    toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    document: dict[str, Any] = toml.loads(path.read_text(encoding="utf-8"))
    return document


def _pyproject(path: Path) -> dict[str, Any] | None:
    tool = _toml(path).get("tool", {}).get("pytest")
    if not isinstance(tool, dict):
        return None
    options = tool.get("ini_options")
    return options if isinstance(options, dict) else tool


def _pytest_toml(path: Path) -> dict[str, Any]:
    table = _toml(path).get("pytest")
    return table if isinstance(table, dict) else {}


_LOADERS: dict[str, Callable[[Path], dict[str, Any] | None]] = {
    "pytest.toml": _pytest_toml,
    ".pytest.toml": _pytest_toml,
    "pytest.ini": partial(_ini_section, section="pytest", always=True),
    ".pytest.ini": partial(_ini_section, section="pytest", always=True),
    "pyproject.toml": _pyproject,
    "tox.ini": partial(_ini_section, section="pytest"),
    "setup.cfg": partial(_ini_section, section="tool:pytest"),
}
"""pytest's configuration files in its order of precedence, each with the reader of its pytest
section (``None``: the file has none, and does not count)."""
