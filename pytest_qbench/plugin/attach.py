"""Attachments where the test runs: `Attacher` stores what ``qbench.attach`` and the
``pytest_qbench_attachments`` hook give, and `AttachBudget` holds the run to its total cap where
the reports arrive.

The test's process (the only one, or an xdist worker) writes each file into the run directory
and keeps an ``Attachment`` record in ``item.stash``; the records travel on the test's reports
(plain JSON, so through xdist) to the process that writes the report. A file over
``qbench_attach_max_size``, or one that would take the run over ``qbench_attach_max_total``, is
not stored: its record says why, and a `QBenchWarning` says so (once per process).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

import pytest

from pytest_qbench.core.atomic import write_bytes_atomic
from pytest_qbench.core.errors import AttachmentError
from pytest_qbench.core.limits import AttachLimits
from pytest_qbench.core.numbers import format_bytes
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import AttachmentRecord


T = TypeVar("T")


class QBenchWarning(pytest.PytestWarning):
    """A warning from pytest-qbench about what a test asked of it."""


attacher_key = pytest.StashKey["Attacher"]()
"""The process's `Attacher`, while qbench writes a report."""
records_key = pytest.StashKey[list["AttachmentRecord"]]()
"""A test's attachment records, in the order attached."""
sent_key = pytest.StashKey[int]()
"""How many of them already travel on an earlier report of the test."""
teardown_key = pytest.StashKey[tuple[pytest.TestReport, list["AttachmentRecord"]]]()
"""The test's last teardown report and the records it carried (see `records_for_report`)."""
ended_key = pytest.StashKey[bool]()
"""Set once the test's teardown report is made (until a rerun sets it up again): an attachment
then would be listed in no report."""
opened_key = pytest.StashKey[list[bool]]()
"""In the config's stash: a list that is not empty once `reopen` opened a test of the run
(`opened_list`)."""


def opened_list(config: pytest.Config) -> list[bool]:
    """The run's list that `reopen` fills at the first test it opens for attachments (the
    ``qbench`` fixture's setup, which also keeps an agent's state, or the attachments hook):
    while it is empty, no test of the run can attach or hold an agent's state, so the plugin
    neither closes each test at its teardown nor looks for an agent's state (two calls of
    pytest's ``Stash`` a test; issue 28). Made by the first caller, one for the config."""
    opened = config.stash.get(opened_key, None)
    if opened is None:
        opened = config.stash[opened_key] = []
    return opened


class Attacher:
    """Stores attachments in one run directory, within the caps."""

    def __init__(
        self, run_dir: Path, limits: AttachLimits, redact: Callable[[str], str] = str
    ) -> None:
        self.run_dir = run_dir
        self.limits = limits
        self.redact = redact
        """Replaces secrets: in the test's id (its directory), names and texts stored."""
        self.used = 0
        """Bytes this process stored."""
        self.records = 0
        """Attachment records made in this process (0: no report has any to carry)."""
        self.warned = False
        self.taken: dict[str, set[str]] = {}
        """File names used so far, by test directory."""

    def attach(
        self, item: pytest.Item, data: Any, name: str | None = None, mime: str | None = None
    ) -> Path | None:
        """Store ``data`` (bytes, text, or a file's path) for ``item``; return where it went, or
        ``None`` when a cap refused it (the record says why)."""
        __tracebackhide__ = True
        # imported by the first attachment: most runs attach nothing (mimetypes is costly)
        from pytest_qbench.report.attachments import ATTACHMENTS_DIR
        from pytest_qbench.report.attachments import BoundedChunks
        from pytest_qbench.report.attachments import clean_name
        from pytest_qbench.report.attachments import dir_for_test
        from pytest_qbench.report.attachments import file_name
        from pytest_qbench.report.attachments import is_text_type
        from pytest_qbench.report.attachments import unique_file_name

        if item.stash.get(ended_key, False):
            raise AttachmentError(
                f"qbench.attach: {item.nodeid} has ended and its report is made, so the "
                "attachment would be listed in no report; attach while the test runs (in the "
                "test or its fixtures' teardown; join a thread that attaches before the test "
                "returns, and keep no test's qbench fixture for a later one)",
                slug="attach-ended",
            )
        records = item.stash.setdefault(records_key, [])
        given, is_text, size, source = _read_data(data)
        nodeid = self.redact(item.nodeid)
        raw_name = self.redact(_check_name(name, given))
        shown = clean_name(raw_name, f"attachment-{len(records) + 1}")
        record = new("Attachment", name=shown, mime=_check_mime(mime, shown, is_text), size=size)
        records.append(record)
        self.records += 1
        refusal = self.refusal(size)
        if refusal is not None:
            record["note"] = refusal
            self.warn_once(f"{nodeid}: attachment {shown!r} not stored: {refusal}")
            return None
        test_dir = dir_for_test(nodeid)
        taken = self.taken.setdefault(test_dir, set())
        relative = f"{ATTACHMENTS_DIR}/{test_dir}/{unique_file_name(file_name(shown), taken)}"
        target = self.run_dir / relative
        bounded = BoundedChunks(source, self.room()) if source is not None else None
        chunks: Iterable[bytes] = bounded or [given_bytes(data)]
        if is_text_type(record["mime"]):  # what a text holds is shown: its secrets go
            chunks = [self.redact_bytes(b"".join(chunks))]
        cap_note = self.cut_note(size)  # before this file counts
        try:
            record["size"] = write_bytes_atomic(target, chunks)
        except OSError as exc:
            record["note"] = f"not stored: {exc.strerror or exc}"
            self.warn_once(f"{nodeid}: attachment {shown!r} {record['note']}")
            return None
        self.used += record["size"]
        record["path"] = relative
        if bounded is not None and bounded.cut:
            record["note"] = cap_note
            self.warn_once(f"{nodeid}: attachment {shown!r} {cap_note}")
        return target

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` (UTF-8, undecodable bytes kept) with its secrets replaced."""
        text = data.decode("utf-8", "surrogateescape")
        redacted = self.redact(text)
        return data if redacted == text else redacted.encode("utf-8", "surrogateescape")

    def room(self) -> int:
        """Bytes the next attachment may take: the smaller of the two caps."""
        return min(self.limits.max_size, self.limits.max_total - self.used)

    def cut_note(self, size: int) -> str:
        """The note of a file of ``size`` bytes (when attached) of which only `room` is copied."""
        limits = self.limits
        if limits.max_size <= limits.max_total - self.used:
            cap = f"qbench_attach_max_size ({format_bytes(limits.max_size)})"
        else:
            cap = f"qbench_attach_max_total ({format_bytes(limits.max_total)})"
        return (
            f"truncated at {cap}: the file held more than its size when attached "
            f"({format_bytes(size)})"
        )

    def refusal(self, size: int) -> str | None:
        """Why an attachment of ``size`` bytes is not stored; ``None`` when it is."""
        limits = self.limits
        if size > limits.max_size:
            return f"{format_bytes(size)} over qbench_attach_max_size ({format_bytes(limits.max_size)})"
        if self.used + size > limits.max_total:
            return over_total(limits.max_total)
        return None

    def warn_once(self, message: str) -> None:
        """A `QBenchWarning`, the first time only in this process."""
        if not self.warned:
            self.warned = True
            warnings.warn(
                QBenchWarning(
                    f"{message} (further attachments not stored are noted in the report only); "
                    "raise the cap in the ini file if you need them"
                ),
                stacklevel=5,
            )


def _read_data(data: Any) -> tuple[str, bool, int, Path | None]:
    """The name the data suggests, whether it is text, its size, and the file to copy."""
    __tracebackhide__ = True
    if isinstance(data, (bytes, bytearray, memoryview)):
        return "", False, memoryview(data).nbytes, None
    if isinstance(data, str):
        return "", True, len(data.encode("utf-8", "surrogateescape")), None
    if isinstance(data, os.PathLike):
        path = Path(os.fspath(data))
        try:
            if not path.is_file():
                raise AttachmentError(
                    f"qbench.attach: no file at {path}; give an existing file's path, or the "
                    "data itself as bytes or str",
                    slug="attach-data",
                )
            return path.name, False, path.stat().st_size, path
        except OSError as exc:
            raise AttachmentError(
                f"qbench.attach: cannot read {path}: {exc.strerror or exc}", slug="attach-data"
            ) from None
    raise AttachmentError(
        f"qbench.attach takes bytes, str (text) or a pathlib.Path, given: {type(data).__name__}; "
        "pass the data as bytes or str, or the file's pathlib.Path",
        slug="attach-data",
    )


def given_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    """The bytes to store for data given in memory (text as UTF-8)."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogateescape")
    return bytes(data)


def _check_name(name: object, default: str) -> str:
    __tracebackhide__ = True
    if name is None:
        return default
    if not isinstance(name, str):
        raise AttachmentError(
            f"qbench.attach: name must be a str, given: {type(name).__name__}; e.g. "
            "name='screenshot.png'",
            slug="attach-data",
        )
    return name


def _check_mime(mime: object, name: str, is_text: bool) -> str:
    __tracebackhide__ = True
    from pytest_qbench.report.attachments import guess_mime
    from pytest_qbench.report.attachments import is_mime

    if mime is None:
        return guess_mime(name, is_text)
    if not isinstance(mime, str) or not is_mime(mime):
        raise AttachmentError(
            f"qbench.attach: mime must be a media type such as 'image/png', given: {mime!r}; "
            "or leave it out to guess it from the name",
            slug="attach-data",
        )
    return mime.lower()


def over_total(max_total: int) -> str:
    """The note of an attachment beyond the run's total cap."""
    return f"the run's attachments reached qbench_attach_max_total ({format_bytes(max_total)})"


def attach(item: pytest.Item, data: Any, name: str | None, mime: str | None) -> Path | None:
    """``qbench.attach``: store ``data`` for ``item`` when qbench writes a report in this run
    (else check the arguments and return ``None``)."""
    __tracebackhide__ = True
    attacher = item.config.stash.get(attacher_key, None)
    if attacher is not None:
        return attacher.attach(item, data, name, mime)
    _read_data(data)
    _check_mime(mime, _check_name(name, "attachment"), False)
    return None


def stashed(stash: pytest.Stash, key: pytest.StashKey[T]) -> T | None:
    """``stash.get(key, None)`` without the ``KeyError`` that ``Stash.get`` raises and catches
    for a missing key: the case of nearly every test, several times per test."""
    if key in stash:
        return stash[key]
    return None


def take_new_records(item: pytest.Item) -> list[AttachmentRecord]:
    """The test's attachment records not yet sent on one of its reports."""
    records = stashed(item.stash, records_key)
    if not records:
        return []
    sent = item.stash.get(sent_key, 0)
    item.stash[sent_key] = len(records)
    return records[sent:]


def records_for_report(item: pytest.Item, report: pytest.TestReport) -> list[AttachmentRecord]:
    """The attachment records ``report`` carries: those not yet sent, and at a rerun's setup
    those of the previous attempt's teardown when that report was never logged.

    pytest-rerunfailures before 16.7 stops at the failed call of an attempt it reruns: the
    attempt's teardown report is made (its attachments taken) but never logged, and lacks the
    ``rerun`` attribute the plugin sets on every report it handles; its records go with the next
    attempt's setup instead of being lost.
    """
    records = take_new_records(item)
    if report.when == "setup":
        previous = stashed(item.stash, teardown_key)
        if previous is not None:
            del item.stash[teardown_key]
            teardown, carried = previous
            if not hasattr(teardown, "rerun"):
                records = carried + records
    elif report.when == "teardown":
        close(item)
        if records:
            item.stash[teardown_key] = (report, records)
    return records


def close(item: pytest.Item) -> None:
    """The test's teardown report is made: attaching to ``item`` now is an error."""
    item.stash[ended_key] = True


def reopen(item: pytest.Item) -> None:
    """Let ``item`` attach again: an attempt of it runs (the first, or a rerun). Called where
    an attachment can come from, within the attempt: the ``qbench`` fixture's setup (set up
    anew for each attempt) and the teardown's ``pytest_qbench_attachments`` call; a kept
    fixture or a thread that attaches later still finds the test ended."""
    item.stash[ended_key] = False
    opened = opened_list(item.config)
    if not opened:
        opened.append(True)


def attach_from_hook(item: pytest.Item, attacher: Attacher) -> None:
    """Store what the ``pytest_qbench_attachments`` implementations return for ``item``; a bad
    element is a `QBenchWarning`, never an error of the test."""
    hook = item.config.hook.pytest_qbench_attachments
    if not hook.get_hookimpls():
        return
    reopen(item)  # this attempt's teardown report is being made: an earlier one's ended it
    for returned in hook(item=item):
        for element in returned or ():
            try:
                attach_element(item, attacher, element)
            except AttachmentError as exc:
                warnings.warn(QBenchWarning(f"pytest_qbench_attachments: {exc}"), stacklevel=2)


def attach_element(item: pytest.Item, attacher: Attacher, element: Any) -> None:
    """One element a hook returned: the data itself, or ``{"data", "name", "mime"}``."""
    if isinstance(element, dict):
        unknown = set(element) - {"data", "name", "mime"}
        if unknown or "data" not in element:
            raise AttachmentError(
                f"an attachment as a dict takes the keys data, name and mime, given: "
                f"{sorted(map(str, element))}",
                slug="attach-data",
            )
        attacher.attach(item, element["data"], element.get("name"), element.get("mime"))
    else:
        attacher.attach(item, element)


class AttachBudget:
    """Holds the run to ``qbench_attach_max_total`` where results arrive: under xdist each
    worker knows only its own files, so the files that take the run over are removed here."""

    def __init__(self, max_total: int) -> None:
        self.max_total = max_total
        self.used = 0
        self.refused = 0

    def admit(self, run_dir: Path, records: Iterable[AttachmentRecord]) -> None:
        """Count each stored attachment; remove those beyond the cap (from ``run_dir``) and say
        so in their record."""
        for record in records:
            path = record["path"]
            if path is None:
                continue
            if self.used + record["size"] <= self.max_total:
                self.used += record["size"]
                continue
            (run_dir / path).unlink(missing_ok=True)
            record["path"], record["note"] = None, over_total(self.max_total)
            self.refused += 1


__all__ = [
    "AttachBudget",
    "Attacher",
    "QBenchWarning",
    "attach",
    "attach_from_hook",
    "attacher_key",
    "opened_list",
    "reopen",
    "stashed",
    "take_new_records",
]
