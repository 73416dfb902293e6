"""Attachments: safe names and places for the files tests attach, and carrying them into a
merged report.

A test's files go to ``<run dir>/attachments/<test dir>/<file name>``. Everything a test gives
is untrusted: the name keeps no path separator, control character or leading dot, and the file
name on disk is plain ASCII (``[A-Za-z0-9._-]``), so no name can leave its directory, and never a
Windows device name (``CON``, ``NUL.txt``). The test
directory is a slug of the node id plus a hash of it, so two node ids never share one.
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
import unicodedata
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.atomic import write_bytes_atomic


if TYPE_CHECKING:
    from pytest_qbench.report.models import TestReport


ATTACHMENTS_DIR = "attachments"
MAX_NAME = 120
"""Characters kept of an attachment's name."""
MAX_FILE_NAME = 100
"""Characters of a file name on disk (most file systems allow 255 bytes)."""
MAX_SLUG = 60
"""Characters of the node id kept in a test's directory name."""
HASH_CHARS = 12
UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
WINDOWS_DEVICE = re.compile(r"^(?:CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])$", re.IGNORECASE)
"""Names Windows reserves for devices, whatever the extension."""
TEXT_TYPES = frozenset({"application/json", "application/xml", "application/x-ndjson"})
DEFAULT_BINARY = "application/octet-stream"
DEFAULT_TEXT = "text/plain"
MIME = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)
CHUNK = 1 << 20


def clean_name(name: str, fallback: str) -> str:
    """An attachment's name as the report shows it: no control characters, no path separators
    (``/`` and ``\\`` become ``_``), no leading dots or spaces, at most `MAX_NAME` characters;
    ``fallback`` when nothing is left."""
    kept = "".join("_" if ch in "/\\" else ch for ch in name if not _is_control(ch))
    kept = kept.strip().lstrip(". ")[:MAX_NAME].strip()
    return kept or fallback


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def file_name(name: str) -> str:
    """A file name for ``name`` that is safe on every file system: ASCII letters, digits, ``.``,
    ``_`` and ``-``, starting with a letter, digit or ``_``, the extension kept when it is short."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not 0 < len(ext) <= 10:
        stem, ext = name, ""
    safe_stem = UNSAFE_FILE_CHARS.sub("_", stem).lstrip("._-")
    safe_ext = UNSAFE_FILE_CHARS.sub("", ext)
    safe_stem = safe_stem[: MAX_FILE_NAME - len(safe_ext) - 1] or "attachment"
    return not_a_device(f"{safe_stem}.{safe_ext}" if safe_ext else safe_stem)


def not_a_device(name: str) -> str:
    """``name``, with ``_`` after its first part when that is a Windows device name (``CON``,
    ``aux``, ``NUL.txt``, ``com1.tar.gz``: any case, any extension), which Windows would open
    as the device: ``CON_``, ``NUL_.txt``."""
    first, dot, rest = name.partition(".")
    if WINDOWS_DEVICE.match(first):
        return f"{first}_{dot}{rest}"
    return name


def unique_file_name(name: str, taken: set[str]) -> str:
    """``name``, or ``stem-2.ext``, ``stem-3.ext``... the first not in ``taken`` (which it joins)."""
    candidate = name
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    number = 1
    while candidate.lower() in taken:  # case-insensitive file systems
        number += 1
        suffix = f"-{number}"
        candidate = f"{stem[: MAX_FILE_NAME - len(suffix) - len(ext) - 1]}{suffix}"
        candidate += f".{ext}" if ext else ""
    taken.add(candidate.lower())
    return candidate


def dir_for_test(nodeid: str) -> str:
    """The directory of a test's attachments: a readable slug of its node id and a hash of it
    (``test_shop.py__test_cart_2-3_-1a2b3c4d5e6f``), unique per node id."""
    digest = hashlib.sha256(nodeid.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    slug = UNSAFE_FILE_CHARS.sub("_", nodeid.replace("::", "__")).strip("._-")[:MAX_SLUG]
    return not_a_device(f"{slug}-{digest}") if slug else f"test-{digest}"


def guess_mime(name: str, is_text: bool) -> str:
    """The media type of ``name`` from its extension; else ``text/plain`` for text and
    ``application/octet-stream`` for bytes."""
    guessed, _encoding = mimetypes.guess_type(name, strict=False)
    return guessed or (DEFAULT_TEXT if is_text else DEFAULT_BINARY)


def is_text_type(mime: str) -> bool:
    """Whether ``mime`` is text a page shows as such: ``text/*``, JSON, XML, NDJSON."""
    return mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml"))


def is_mime(value: str) -> bool:
    """Whether ``value`` looks like a media type (``type/subtype``)."""
    return bool(MIME.match(value))


def read_chunks(path: Path) -> Iterator[bytes]:
    """The file at ``path``, by chunks of 1 MiB."""
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


class BoundedChunks:
    """The first ``limit`` bytes of the file at ``path``, by chunks of at most 1 MiB; ``cut``
    tells, once iterated, whether the file held more.

    A file's size when it is attached does not bound what a copy reads: it may grow meanwhile,
    and a file of ``/proc`` says 0 bytes and holds gigabytes (``/proc/self/pagemap``).
    """

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        self.cut = False

    def __iter__(self) -> Iterator[bytes]:
        left = self.limit
        with self.path.open("rb") as handle:
            while chunk := handle.read(min(CHUNK, left + 1)):
                if len(chunk) > left:  # one byte past the limit: the file holds more
                    self.cut = True
                    if left:
                        yield chunk[:left]
                    return
                left -= len(chunk)
                yield chunk


def carry_attachments(sources: Sequence[tuple[TestReport, Path]], out_dir: Path) -> list[str]:
    """Copy the attachments of merged ``sources`` below ``out_dir``, and point their records there.

    Each source is a report and its run directory (where its attachment paths start). A file
    goes to ``out_dir/attachments/<source run id>/<its path below attachments/>``: run ids are
    distinct in a merge, so two shards never write the same file. An attachment whose file is
    missing (or is not inside its run directory) keeps its record, with ``path`` ``None`` and a
    note. Returns what went wrong, one line each. Call it on the sources before merging them.
    """
    problems: list[str] = []
    for report, run_dir in sources:
        prefix = file_name(report.run.run_id)
        for result in report.results:
            for attachment in result.attachments:
                if attachment.path is None:
                    continue
                rest = attachment.path.split("/", 1)[1]
                new_path = f"{ATTACHMENTS_DIR}/{prefix}/{rest}"
                source = run_dir / attachment.path
                if not _inside(source, run_dir):
                    attachment.path, attachment.note = None, "missing when merged"
                    problems.append(f"{source}: not found in {run_dir}, not copied")
                    continue
                target = out_dir / new_path
                if source.resolve() != target.resolve():
                    write_bytes_atomic(target, read_chunks(source))
                attachment.path = new_path
    return problems


def _inside(path: Path, run_dir: Path) -> bool:
    """Whether ``path`` is a regular file inside ``run_dir`` (its links followed)."""
    try:
        resolved = path.resolve(strict=True)
        return resolved.is_file() and resolved.is_relative_to(run_dir.resolve())
    except OSError:
        return False


__all__ = [
    "ATTACHMENTS_DIR",
    "BoundedChunks",
    "carry_attachments",
    "clean_name",
    "dir_for_test",
    "file_name",
    "guess_mime",
    "is_mime",
    "is_text_type",
    "read_chunks",
    "unique_file_name",
]
