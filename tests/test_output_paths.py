"""Output paths, the result stream and the run directory under hostile conditions (issues 11.1,
12.1-12.5): devices, FIFOs and symlinks as outputs, a full disk, unwritable or vanishing run
directories, two runs claiming one id."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from pytest_qbench.core import atomic


ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def leftovers(directory: Path) -> list[str]:
    """Temporary files an atomic write left behind."""
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# --- 12.1: the atomic writer replaces regular files only --------------------------------------


def test_atomic_write_through_symlink_keeps_link(tmp_path: Path) -> None:
    """(issue 12.1) A symlink output stays a link; its target gets the text, atomically."""
    target = tmp_path / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    atomic.write_text_atomic(link, "new\n")
    assert link.is_symlink()
    assert target.read_text() == "new\n"
    assert leftovers(target.parent) == [] and leftovers(tmp_path) == []


def test_atomic_write_through_dangling_symlink_creates_target(tmp_path: Path) -> None:
    """(issue 12.1) A symlink to a missing file: the target is created, the link kept."""
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    atomic.write_text_atomic(link, "{}")
    assert link.is_symlink()
    assert (tmp_path / "made.json").read_text() == "{}"


def test_atomic_write_to_fifo_writes_in_place(tmp_path: Path) -> None:
    """(issue 12.1) A FIFO output is written in place (a reader gets the text), not replaced."""
    fifo = tmp_path / "myfifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic.write_text_atomic(fifo, "digest\n")
    reader.join(timeout=10)
    assert got == [b"digest\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_atomic_write_to_link_to_dev_null_keeps_both(tmp_path: Path) -> None:
    """(issue 12.1) A symlink to /dev/null: the device is written in place, the link kept.

    (Never aim a test at /dev/null itself: a writer that replaces files would replace the
    machine's /dev/null when run as root.)"""
    link = tmp_path / "out.md"
    link.symlink_to("/dev/null")
    atomic.write_text_atomic(link, "x" * 100)
    assert link.is_symlink()
    assert stat.S_ISCHR(os.stat(link).st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_atomic_write_to_own_char_device_keeps_device(tmp_path: Path) -> None:
    """(issue 12.1) A character device made with mknod (a null device) is not replaced."""
    device = tmp_path / "mynull"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    atomic.write_text_atomic(device, "report")
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert leftovers(tmp_path) == []
