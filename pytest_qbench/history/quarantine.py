"""The quarantine: tests whose failure does not fail the run unless it is a new failure.

Stored in the history index (table ``quarantine``, shared through a PostgreSQL history
database), or, when ``qbench_quarantine_file`` names one, in a plain-text file of the
repository that teams review: one node id a line, ``#`` starts a comment, and a comment after a
node id (``NODEID  # why``) is its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Protocol

from pytest_qbench.core.timefmt import to_index_time
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import examine
from pytest_qbench.history.queries import sequences_of


FILE_INI = "qbench_quarantine_file"
"""The ini option naming the quarantine file (relative to the configuration file's folder)."""
_COMMENT = " #"


@dataclass(frozen=True)
class Quarantined:
    """One quarantined test."""

    nodeid: str
    reason: str = ""
    added_at: str = ""
    """An index time; empty for the file's entries."""


class QuarantineStore(Protocol):
    """Where the quarantine is kept."""

    def add(self, nodeid: str, reason: str) -> bool:
        """Quarantine ``nodeid`` (its reason replaced when it already is); whether it is new."""

    def remove(self, nodeid: str) -> bool:
        """Release ``nodeid``; whether it was quarantined."""

    def entries(self) -> list[Quarantined]:
        """The quarantined tests, by node id."""


class IndexQuarantine:
    """The quarantine in the history index."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def add(self, nodeid: str, reason: str) -> bool:
        known = {entry.nodeid for entry in self.entries()}
        now = to_index_time(datetime.now(timezone.utc)) or ""
        self.index.write(lambda cursor: cursor.execute(sql.QUARANTINE_ADD, (nodeid, reason, now)))
        return nodeid not in known

    def remove(self, nodeid: str) -> bool:
        known = {entry.nodeid for entry in self.entries()}
        self.index.write(lambda cursor: cursor.execute(sql.QUARANTINE_REMOVE, (nodeid,)))
        return nodeid in known

    def entries(self) -> list[Quarantined]:
        def work(cursor: Cursor) -> list[Quarantined]:
            cursor.execute(sql.QUARANTINE_LIST)
            return [Quarantined(str(n), str(r), str(a)) for n, r, a in cursor.fetchall()]

        return self.index.read(work)


class FileQuarantine:
    """The quarantine in a reviewed text file; its comments and order are kept."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _lines(self) -> list[str]:
        if not self.path.is_file():
            return []
        return self.path.read_text(encoding="utf-8").splitlines()

    def add(self, nodeid: str, reason: str) -> bool:
        line = f"{nodeid}{_COMMENT} {reason}" if reason else nodeid
        lines = self._lines()
        found = [i for i, text in enumerate(lines) if _is(text, nodeid)]
        if found:
            lines[found[0]] = line
        else:
            lines.append(line)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return not found

    def remove(self, nodeid: str) -> bool:
        lines = self._lines()
        kept = [text for text in lines if not _is(text, nodeid)]
        if len(kept) == len(lines):
            return False
        self.path.write_text("".join(f"{text}\n" for text in kept), encoding="utf-8")
        return True

    def entries(self) -> list[Quarantined]:
        found = (_entry(text) for text in self._lines())
        return sorted((entry for entry in found if entry), key=lambda entry: entry.nodeid)


def _is(text: str, nodeid: str) -> bool:
    entry = _entry(text)
    return entry is not None and entry.nodeid == nodeid


def _entry(text: str) -> Quarantined | None:
    """The entry of one line of the file; ``None`` for a blank or comment line."""
    text = text.strip()
    if not text or text.startswith("#"):
        return None
    nodeid, _, reason = text.partition(_COMMENT)
    return Quarantined(nodeid.strip(), reason.strip())


def file_path(folder: Path, value: str) -> Path:
    """The quarantine file ``value`` names, relative to ``folder`` (the configuration file's)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else folder / path


def failed_before_with(
    index: Index, nodeid: str, fingerprint: str, before_run: str | None = None
) -> bool:
    """Whether ``nodeid`` failed with ``fingerprint`` in a run indexed in ``index`` (started
    before the run ``before_run``, when given: the run being judged is indexed already)."""

    def work(cursor: Cursor) -> bool:
        if before_run is None:
            cursor.execute(sql.FAILED_BEFORE_WITH, (nodeid, fingerprint))
        else:
            cursor.execute(sql.FAILED_BEFORE_RUN_WITH, (nodeid, fingerprint, before_run))
        return cursor.fetchone() is not None

    return index.read(work)


def flaky_among(
    index: Index, nodeids: Sequence[str], monitors: Monitors = DEFAULT_MONITORS
) -> dict[str, str]:
    """Which of ``nodeids`` (a run's failures) the flaky monitors call flaky in ``index``, and
    why (never a broken one): ``--qbench-quarantine=auto`` judged at the end of the run, on the
    tests that failed only, so its cost follows the failures, not the suite."""
    found = {}
    for nodeid, results in sequences_of(index, nodeids, monitors.window).items():
        assessment = examine(results, monitors)
        if assessment.status == "flaky":
            found[nodeid] = f"flaky: {assessment.reason}"
    return found


def quarantined_tests(index: Index | None, file: Path | None) -> dict[str, str]:
    """The tests the user quarantined and why: those listed in ``file``, else in ``index``
    (``--qbench-quarantine=auto`` adds the failures the monitors call flaky: `flaky_among`)."""
    store: QuarantineStore | None = FileQuarantine(file) if file is not None else None
    if store is None and index is not None:
        store = IndexQuarantine(index)
    return {e.nodeid: e.reason or "no reason given" for e in (store.entries() if store else [])}


__all__ = [
    "FILE_INI",
    "FileQuarantine",
    "IndexQuarantine",
    "QuarantineStore",
    "Quarantined",
    "failed_before_with",
    "file_path",
    "flaky_among",
    "quarantined_tests",
]
