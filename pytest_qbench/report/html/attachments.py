"""A result's attachments on the page: small images, texts and JSON embedded, the rest linked.

An attachment record is ``{"name", "path", "mime", "size"}``, ``path`` POSIX and relative to the
run directory. Its file is embedded when the renderer knows the run directory, the path stays
inside it, the type is an image, text or JSON and it fits the caps; otherwise the page links to
it, relative to the page (a link only from a path checked here: never a scheme, never absolute),
unless a browser would run it (HTML, SVG, XML, no extension): then its path is shown, unlinked.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from pytest_qbench.report.attachments import is_text_type


EMBED_EACH = 256 * 1024
"""Bytes: a larger attachment is linked, not embedded."""
EMBED_TOTAL = 5 * 1024 * 1024
"""Bytes embedded in one page at most; the attachments after that are linked."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"})
ACTIVE_SUFFIXES = frozenset(
    {".htm", ".html", ".shtml", ".xht", ".xhtml", ".svg", ".svgz", ".xml", ".xsl", ".xslt"}
    | {".mht", ".mhtml", ".js", ".mjs"}
)
"""Extensions of files a browser renders, running their scripts."""


@dataclass
class AttachmentBudget:
    """Bytes left to embed in this page."""

    left: int = EMBED_TOTAL

    def take(self, size: int) -> bool:
        """Spend ``size`` bytes if they fit the per-file and the page's caps."""
        if size > EMBED_EACH or size > self.left:
            return False
        self.left -= size
        return True


def attachment_entry(
    record: Mapping[str, Any] | Any,
    run_dir: Path | None,
    link_base: Path | None,
    budget: AttachmentBudget,
) -> dict[str, Any]:
    """``name``, ``mime``, ``size`` and one of ``img`` (a data: URI), ``text``, ``href`` or
    ``stored`` (where a file a browser would run is, relative to the page: shown, not linked);
    and ``note`` when the record has one (why the file was not stored, or was cut)."""
    if not isinstance(record, Mapping):
        return {"name": str(record), "mime": "", "size": 0}
    name, mime = str(record.get("name") or ""), str(record.get("mime") or "")
    size = record.get("size")
    entry: dict[str, Any] = {
        "name": name,
        "mime": mime,
        "size": size if isinstance(size, int) else 0,
    }
    note = record.get("note")
    if isinstance(note, str) and note:
        entry["note"] = note
    relative = safe_relative(record.get("path"))
    if relative is None or run_dir is None:
        return entry
    target = run_dir / relative
    if not _inside(target, run_dir):  # a symbolic link out of the run directory
        return entry
    embedded = _embedded(target, mime, budget)
    if embedded:
        entry.update(embedded)
        return entry
    base = link_base if link_base is not None else run_dir
    if is_active(relative.name, mime):
        shown = relative_path(target, base)
        if shown is not None:
            entry["stored"] = shown
        return entry
    href = relative_href(target, base)
    if href is not None:
        entry["href"] = href
    return entry


def is_active(file_name: str, mime: str) -> bool:
    """Whether a browser opening the file (a ``file:`` URL) could run its scripts: HTML, SVG or
    XML by its extension or its media type, or no extension at all (the browser then sniffs the
    content, and ``<html><script>`` is HTML). Chromium ignores ``download`` on ``file:`` links
    and navigates to them, so such a file is never linked."""
    suffix = PurePosixPath(file_name).suffix.lower()
    return (
        not suffix
        or suffix in ACTIVE_SUFFIXES
        or any(word in mime.lower() for word in ("html", "svg", "xml", "javascript"))
    )


def safe_relative(path: object) -> PurePosixPath | None:
    """``path`` when it is a relative POSIX path that stays below its base; else ``None``."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or ":" in pure.parts[0]:
        return None
    return pure


def relative_href(target: Path, base: Path) -> str | None:
    """A percent-encoded relative URL from ``base`` to ``target`` (no scheme can appear)."""
    relative = relative_path(target, base)
    return None if relative is None else quote(relative, safe="/")


def relative_path(target: Path, base: Path) -> str | None:
    """The POSIX path of ``target`` relative to ``base``; ``None`` across Windows drives."""
    try:
        return Path(os.path.relpath(target, base)).as_posix()
    except ValueError:  # another drive on Windows
        return None


def _inside(target: Path, run_dir: Path) -> bool:
    try:
        return target.resolve().is_relative_to(run_dir.resolve())
    except (OSError, RuntimeError):
        return False


def _embedded(target: Path, mime: str, budget: AttachmentBudget) -> dict[str, str] | None:
    kind = "img" if mime in IMAGE_TYPES else "text" if is_text_type(mime) else None
    if kind is None:
        return None
    try:
        size = target.stat().st_size
        if not target.is_file() or not budget.take(size):
            return None
        raw = target.read_bytes()
    except OSError:
        return None
    if kind == "img":
        return {"img": f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"}
    return {"text": raw.decode("utf-8", errors="replace")}
