"""core/atomic.py: new files follow the umask, which is read and never set (issue 10)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_qbench.core import atomic


HAS_PROC = atomic.PROC_STATUS.is_file()


@pytest.fixture
def umask() -> Iterator[int]:
    """The umask of this test process (set back as it was afterwards)."""
    set_umask = os.umask  # a test may patch os.umask before this fixture ends
    mask = set_umask(0o022)
    set_umask(mask)
    yield mask
    set_umask(mask)


def no_umask_call(mask: int) -> int:
    raise AssertionError("os.umask was called: it changes the umask of every thread")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(not HAS_PROC, reason="no /proc/self/status")
def test_a_write_never_sets_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    """issue 10: writing reads the umask from /proc and never calls os.umask."""
    monkeypatch.setattr(os, "umask", no_umask_call)
    atomic.write_text_atomic(tmp_path / "report.md", "text")
    with atomic.atomic_writer(tmp_path / "report.json") as handle:
        handle.write("{}")
    assert atomic.current_umask() == umask
    assert mode(tmp_path / "report.md") == mode(tmp_path / "report.json") == 0o666 & ~umask


@pytest.mark.skipif(not HAS_PROC, reason="no /proc/self/status")
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_file_modes_follow_the_umask(tmp_path: Path, umask: int, mask: int, expected: int) -> None:
    """issue 10: a written file has the mode any new file would have under the current umask."""
    os.umask(mask)
    atomic.write_text_atomic(tmp_path / "out.txt", "text")
    assert (atomic.current_umask(), mode(tmp_path / "out.txt")) == (mask, expected)


def test_without_proc_the_umask_of_import_time_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    """issue 10: with no /proc, the umask read once at import is used, and os.umask is not called."""
    monkeypatch.setattr(atomic, "PROC_STATUS", tmp_path / "no-proc" / "status")
    monkeypatch.setattr(os, "umask", no_umask_call)
    assert atomic.current_umask() == atomic._UMASK_AT_IMPORT == umask
    atomic.write_text_atomic(tmp_path / "out.txt", "text")
    assert mode(tmp_path / "out.txt") == 0o666 & ~umask
