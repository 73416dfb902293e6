"""A new history index is a copy of a kept empty one: the same file, without SQLite creating
its tables again (a run's fixed cost in a fresh run store)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.history import sqlite as backend
from pytest_qbench.history.sqlite import SQLiteIndex


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "qbench"


def new_index(path: Path) -> tuple[Any, ...]:
    """Create the index at ``path``; its schema, meta rows and journal mode."""
    path.parent.mkdir(parents=True)
    SQLiteIndex(path, create=True).close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return (
            conn.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall(),
            conn.execute("SELECT * FROM meta").fetchall(),
            conn.execute("PRAGMA journal_mode").fetchall(),
            conn.execute("PRAGMA integrity_check").fetchall(),
        )


def test_a_new_index_is_a_copy_of_the_kept_empty_one(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = new_index(tmp_path / "a" / "index.sqlite")
    assert [p.name for p in cache.iterdir()] == [backend._kept_empty().name]

    def no_create(*args: Any) -> None:
        raise AssertionError("the tables were created again")

    monkeypatch.setattr(backend, "build_schema", no_create)
    assert new_index(tmp_path / "b" / "index.sqlite") == created
    assert created[2:] == ([("wal",)], [("ok",)])
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["index.sqlite"]


def test_a_damaged_kept_copy_is_not_used(cache: Path, tmp_path: Path) -> None:
    created = new_index(tmp_path / "a" / "index.sqlite")
    kept = backend._kept_empty()
    data = bytearray(kept.read_bytes())
    data[5000] ^= 0xFF
    kept.write_bytes(bytes(data))
    assert new_index(tmp_path / "b" / "index.sqlite") == created  # created, not copied
    assert kept.read_bytes() != bytes(data)  # and kept whole again
    assert new_index(tmp_path / "c" / "index.sqlite") == created


def test_an_index_made_meanwhile_is_not_replaced(cache: Path, tmp_path: Path) -> None:
    new_index(tmp_path / "a" / "index.sqlite")
    path = tmp_path / "b" / "index.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"another process's index")
    assert backend._copy_kept_empty(path) is False
    assert path.read_bytes() == b"another process's index"
    assert sorted(p.name for p in path.parent.iterdir()) == ["index.sqlite"]
