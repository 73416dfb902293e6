"""At the end of a pytest run: index the run, then tell each failing test its history.

Called once by ``QBenchSession`` (records only: no pydantic in the pytest process).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from functools import cache
from functools import partial
from itertools import chain
from itertools import compress
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import TYPE_CHECKING
from typing import cast

from pytest_qbench.core.records import dataclass
from pytest_qbench.history.database import open_index
from pytest_qbench.history.files import died_marked
from pytest_qbench.history.indexer import Passed
from pytest_qbench.history.indexer import Passes
from pytest_qbench.history.indexer import Record
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.indexer import live_runs_in
from pytest_qbench.history.indexer import remove_run_dirs
from pytest_qbench.report import store


if TYPE_CHECKING:
    from pytest_qbench.history.backend import Index
    from pytest_qbench.history.flakiness import Monitors
    from pytest_qbench.report.records import TestHistoryRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord
    from pytest_qbench.report.store import Written


@dataclass(eq=False, repr=False)
class Recorded:
    """What indexing a finished run gives back."""

    histories: dict[str, TestHistoryRecord] = field(default_factory=dict)
    """``TestHistory`` records of the failed and errored tests, by node id."""
    problems: list[str] = field(default_factory=list)
    """Lines for the terminal: what retention removed, old run directories that could not be
    deleted."""
    removed: list[str] = field(default_factory=list)
    """Runs retention removed."""


def record_run(
    qbench_dir: Path,
    report: TestReportRecord,
    stream: Path | None,
    extra: Iterable[TestResultRecord],
    keep_runs: int,
    db: str | None = None,
    deselected: Sequence[str] = (),
    monitors: Monitors | None = None,
    quarantined: Mapping[str, bool] | None = None,
    written: Written | None = None,
) -> Recorded:
    """Index the run (the results of ``stream``, then ``extra``) in ``<qbench_dir>/index.sqlite``
    or the PostgreSQL database ``db`` (created when missing), apply retention, and return the
    history of each failing test. First, each static-check diagnostic of ``report`` gets its
    ``history`` (``new``, ``existing since <run>``) from the runs indexed before. Retention
    deletes the run directories of the runs it removes that are in ``qbench_dir`` (another
    machine's runs have theirs elsewhere). ``deselected``: the node ids the run deselected,
    which ``qbench diff`` tells from removed tests. ``quarantined``: the quarantined tests that
    failed, by node id, and whether their failure's fingerprint is known. The runs that died
    since (``files.died_marked``: marked unfinished, no longer going) are indexed first, named
    in ``problems``, so that this run's histories count them. ``written``: what this process
    wrote to ``stream`` (``StreamWriter.written``), so that its plain passing lines are not
    read back; a stream changed since is read whole.

    Raises:
        HistoryError: the index cannot be used (locked for too long, damaged, newer,
            unreachable).
    """
    died = died_marked(qbench_dir, str(report["run"]["run_id"]))
    index = open_index(qbench_dir, db, create=True)
    notes: list[str] = []
    try:
        if died:  # before this run: its histories count them
            notes += _index_died(qbench_dir, index, died)
        # most results come as Passed tuples, the others as records (index_items)
        records = partial(index_items, stream, cast("Iterable[Record]", extra))
        parts = None
        if written is not None and written.path == stream and written.unchanged():
            # its plain passing lines as written, not read back
            records = partial(iter, cast("Iterable[Record]", extra))
            parts = partial(written_parts, written)
        if report.get("diagnostics"):  # before the run is in the index
            from pytest_qbench.history.diagnostics import mark_diagnostics

            mark_diagnostics(index, cast("Record", report))
        done = index_run(
            index,
            cast("Record", report),
            records,
            keep_runs=keep_runs,
            deselected=deselected,
            live=live_runs_in(qbench_dir),
            parts=parts,
        )
        ci = report["environment"]["ci"]
        commit = ci["commit"] if ci else None
        histories: dict[str, TestHistoryRecord] = {}
        if done.failing:  # a green run imports none of the history's judging
            from pytest_qbench.history.failure_history import failing_histories

            histories = failing_histories(index, done, commit, monitors, quarantined)
    finally:
        index.close()
    notes += _remove_old_runs(qbench_dir, done.removed, keep_runs)
    return Recorded(histories, notes, done.removed)


def _index_died(qbench_dir: Path, index: Index, died: list[Path]) -> list[str]:
    """Index the runs that died (``files.index_died``), then take their marks away; the lines
    saying so. A run whose stream cannot be read is a line, its mark taken away (``qbench
    index`` or the history's commands can try it again). When indexing them fails otherwise
    (the index), it is a line, never this run's failure to index itself, and their marks stay:
    the next run indexes them."""
    from pytest_qbench.history.files import index_died
    from pytest_qbench.history.files import unmark_indexed

    notes: list[str] = []
    try:
        index_died(index, died, notes.append)
    except Exception as exc:  # this run is indexed all the same
        runs = ", ".join(run_dir.name for run_dir in died)
        notes.append(f"could not index the runs that died ({runs}): {type(exc).__name__}: {exc}")
        return notes
    unmark_indexed(qbench_dir, died)
    return notes


def _remove_old_runs(qbench_dir: Path, removed: list[str], keep_runs: int) -> list[str]:
    """Delete the run directories of the runs retention ``removed``; the lines saying so."""
    if not removed:
        return []
    from pytest_qbench.core.numbers import format_bytes
    from pytest_qbench.core.summary_words import plural
    from pytest_qbench.history.files import dir_size

    dirs_here = [store.run_dir(qbench_dir, run_id) for run_id in removed]
    sizes = {d: dir_size(d) for d in dirs_here if d.is_dir() and not d.is_symlink()}
    problems = remove_run_dirs(qbench_dir, removed)
    gone = [size for d, size in sizes.items() if not d.exists()]
    deleted, freed = len(gone), sum(gone)
    runs = plural(len(removed), "old run")
    dirs = f"{deleted} run director{'y' if deleted == 1 else 'ies'}"
    shown = ", ".join(removed[:5]) + (", ..." if len(removed) > 5 else "")
    note = (
        f"retention (qbench_keep_runs = {keep_runs}) removed {runs} from the index and deleted "
        f"{dirs} ({format_bytes(freed)}): {shown}"
    )
    return [note, *problems]


def forget_run(qbench_dir: Path, run_id: str, db: str | None = None) -> bool:
    """Take ``run_id`` out of the index again (its reports could not be written); return
    whether it was there.

    Raises:
        HistoryError: the index cannot be used.
    """
    from pytest_qbench.history.indexer import delete_run

    index = open_index(qbench_dir, db)
    try:
        return bool(index.write(partial(delete_run, run_id=run_id)))
    finally:
        index.close()


def set_recording_errors(qbench_dir: Path, run_id: str, count: int, db: str | None = None) -> None:
    """Set how many errors qbench had recording ``run_id`` (``RunMeta.recording_errors``) once
    it is indexed: an output that failed after the run was indexed makes its report incomplete,
    and the index says so too (`qbench show`, `qbench diff`, `qbench pr-comment`).

    Raises:
        HistoryError: the index cannot be used.
    """
    index = open_index(qbench_dir, db)
    try:
        index.write(
            lambda cursor: cursor.execute(
                "UPDATE runs SET recording_errors = ? WHERE run_id = ?", (count, run_id)
            )
        )
    finally:
        index.close()


_NODEID = store.NODEID_OPENING
_OUTCOME = ',"outcome":"'  # only a field's key can hold it: a string value's quotes are escaped
# A result that passed (or was skipped) as the stream writes it: its outcome, its duration and
# its durations object (setup, call, teardown, each there or not, in that order). A number's
# text is read by float(), as json reads it (NaN and Infinity too); any other text fails it.
# Compiled where first used (re's cache): a green run's session end compiles none of it.
_HEAD = (
    r',"outcome":"(passed|skipped|xfailed|xpassed|failed|error)","duration":([^,]+),"durations":\{'
    r'(?:"setup":([^,}]+)|)(?:,?"call":[^,}]+|)(?:,?"teardown":([^,}]+)|)\}'
)
# A line holding one of these after its durations needs all its fields (a failure, metrics,
# reruns), as does a failing outcome; a string value cannot hold them, as its quotes are escaped.
_NEEDS_ALL = ('"flaky":true', '"attempts":[{', '"metric_results":[{')
# The same fields of a whole line, when its node id, test name and file hold no quote (escaped
# or not: a string value's quotes are all escaped, so where a match ends each is whole), then
# the rest of the line; any other line is the second branch's. One findall of a block of
# lines matches each of them, in order, without a line of Python between. An optional field is
# `(?:X|)`, not `(?:X)?`: the same matches (X tried first, then nothing), as a branch instead
# of sre's repeat with its saved marks: 2.2 k instructions a line less (issue 28). Compiled
# where first used (re's cache): only a stream read without its writer's kept rows needs it
# (``index_items``: a run that died, read by the next), not every run's session end (issue 28).
_LINE = (
    re.escape(store.RESULT_PREFIX + _NODEID) + r'([^"]*)"(?:,"test_name":"[^"]*"|)'
    r'(?:,"file":"[^"]*"|)(?:,"line":\d+|),"outcome":"(passed|skipped|xfailed|xpassed)",'
    r'"duration":([^,\n]+),"durations":\{(?:"setup":([^,}\n]+)|)(?:,?"call":[^,}\n]+|)'
    r'(?:,?"teardown":([^,}\n]+)|)\}[^\n]*\}\n|([^\n]*)\n'
)


def index_items(stream: Path | None, extra: Iterable[Record]) -> Iterator[Record | Passed]:
    """What indexing needs of each result of a run's stream (then ``extra``), parsed cheaply.

    Most results only tell their node id, outcome and durations: they come as ``Passed``
    tuples, read by one match of the fields the stream writes in that order (their numbers
    read by ``float``, as ``json`` reads them), without parsing their line as JSON or making a
    record of it. Other lines are records: read in part as before when they passed (a node id
    with a quote, say), else (failing, rerun, scored, or written otherwise) parsed whole, with
    the fields the stream leaves out at their default restored.
    """
    blocks = () if stream is None else _stream_blocks(stream)
    return chain(chain.from_iterable(blocks), extra)


_WRITTEN_PART = 100
"""Results made at once by ``written_parts``."""


_OUTCOME_NAMES = {code: name for name, code in store.KEPT_OUTCOMES.items()}
_NOT_PASSED = re.compile(b"[^\x01]")
_KEPT = bytes(range(256)).translate(bytes([0] + [1] * 255))
"""``bytes.translate``'s table: 1 for a kept row's outcome code, 0 for a line to read."""


def written_parts(written: Written) -> Iterator[Passes | list[Record | Passed]]:
    """What indexing needs of each result of a stream its writer kept (``store.Written``), a
    part of ``_WRITTEN_PART`` results at a time: as ``Passes`` when the part's node ids are
    distinct (the rows its writer kept as columns, the other lines read back from the file
    where its writer says they start, a plain failing line's head alone), else as items,
    in order (``index_items``'s). A kept node id is as its line was written (a lone surrogate
    as ``?``)."""
    nodeids, rows, size = written.nodeids, memoryview(written.rows), store.ROW.size
    handle = None
    try:
        for start in range(0, len(nodeids), _WRITTEN_PART):
            part = nodeids[start : start + _WRITTEN_PART]
            block = rows[start * size : (start + len(part)) * size]
            seconds, setup, teardown, codes = zip(*store.ROW.iter_unpack(block), strict=True)
            flags = bytes(codes)
            passes = flags.count(1)
            if (  # the common part: every one passed
                passes == len(flags)
                and "".join(cast("list[str]", part)).isascii()
                and len(set(part)) == len(part)
            ):
                whole = cast("list[str]", part)
                yield Passes(whole, None, (seconds, setup, teardown), [], whole)
                continue
            others: list[Record] = []
            for found in _NOT_PASSED.finditer(flags) if passes < len(flags) else ():
                at = found.start()
                if not flags[at]:  # a line whose row it did not keep: read it back
                    if handle is None:
                        handle = os.open(written.path, os.O_RDONLY)
                    where, length, head = int(seconds[at]), int(setup[at]), int(teardown[at])
                    record = _head_at(handle, where, head) if head else None
                    others.append(record or _line_at(handle, where, length))
            kept = cast("list[str]", part)
            times: Sequence[Sequence[float]] = (seconds, setup, teardown)
            if others:
                select = flags.translate(_KEPT)
                kept = list(compress(kept, select))
                times = [tuple(compress(column, select)) for column in times]
                flags = bytes(compress(flags, select))
            if not "".join(kept).isascii():  # as its line was encoded
                kept = [
                    name if name.isascii() else name.encode("utf-8", "replace").decode("utf-8")
                    for name in kept
                ]
            every = kept
            if others:  # in the part's order
                taken, names = iter(others), iter(kept)
                every = [next(names) if code else next(taken)["nodeid"] for code in codes]
            if len(set(every)) == len(every):
                outcomes = None
                if flags.count(1) < len(flags):
                    outcomes = [_OUTCOME_NAMES[code] for code in flags]
                yield Passes(kept, outcomes, times, others, every)
                continue
            # a node id twice (--keep-duplicates): the results in their order, the last counts
            items: list[Record | Passed] = []
            taken, names = iter(others), iter(kept)
            for at, code in enumerate(codes):
                if code:
                    name = next(names)
                    items.append((name, _OUTCOME_NAMES[code], seconds[at], setup[at], teardown[at]))
                else:
                    items.append(next(taken))
            yield items
    finally:
        if handle is not None:
            os.close(handle)


def _line_at(fd: int, at: int, size: int) -> Record:
    """The result of the stream's line of ``size`` bytes at byte ``at`` (one ``pread``), read
    as ``_line_items`` reads it."""
    line = str(os.pread(fd, size, at), "utf-8", "replace")  # as stream_blocks reads it
    if not (line.startswith(store.RESULT_PREFIX) and line.endswith("}\n")):
        raise ValueError(f"no result of {size} bytes at byte {at} of the stream")
    return _light_record(line[len(store.RESULT_PREFIX) : -2])


def _head_at(fd: int, at: int, size: int) -> Record | None:
    """The record of a plain failing line (``store.Written``) from its head of ``size`` bytes
    at byte ``at`` (one ``pread``): its fields up to its failure's stack trace, read as
    ``_failing_record`` reads the whole line, without reading, decoding and searching the rest
    (its traceback, frames and output: about 95 k instructions a failing line of 4 kB: issue
    28); ``None`` when the head is not one (the line is then read whole)."""
    head = os.pread(fd, size, at)
    if not (head.startswith(_PREFIX_BYTES) and head.isascii()):
        return None
    raw = head[_PREFIX_SIZE:].decode() + store.FAILING_HEAD_END
    found = re.compile(_HEAD).match(raw, raw.find(_OUTCOME))
    if found is None or found.group(1) not in _FAILING:
        return None
    return _failing_record(raw, found)


_PREFIX_BYTES = store.RESULT_PREFIX.encode()
_PREFIX_SIZE = len(_PREFIX_BYTES)


_PART = 1 << 13
"""Characters of a block's lines matched by one ``findall`` (``pos`` and ``endpos``, no copy of
them): what the matches and the items made of them hold at once."""


def _stream_blocks(stream: Path) -> Iterator[list[Record | Passed]]:
    """The stream's results, a part of a block's lines at a time (``store.stream_blocks``)."""
    marks = _NEEDS_ALL
    for text in store.stream_blocks(stream):
        # a block holding a line that needs all its fields is read a line at a time
        read = _line_items if any(mark in text for mark in marks) else _part_items
        start, end = 0, len(text)
        while start < end:
            stop = text.rfind("\n", start, start + _PART) + 1
            if stop <= start:  # a line longer than a part
                stop = text.find("\n", start) + 1
            yield read(text, start, stop)
            start = stop
        text = ""  # let go of the block before the next is read


def _part_items(text: str, start: int, end: int) -> list[Record | Passed]:
    """The results of ``text[start:end]`` (whole lines), by one ``findall``."""
    items: list[Record | Passed] = []
    add = items.append
    prefix, skip = store.RESULT_PREFIX, len(store.RESULT_PREFIX)
    try:
        lines = re.compile(_LINE).findall(text, start, end)  # re's cache: compiled once
        for nodeid, outcome, seconds, setup, teardown, other in lines:
            if outcome:
                add(
                    (
                        _decoded(nodeid) if "\\" in nodeid else nodeid,
                        outcome,
                        float(seconds),
                        float(setup) if setup else None,
                        float(teardown) if teardown else None,
                    )
                )
            elif other.startswith(prefix) and other.endswith("}"):
                add(_light_record(other[skip:-1]))
    except ValueError:  # a number float() cannot read: not a line this stream wrote
        return _line_items(text, start, end)
    return items


def _line_items(text: str, start: int, end: int) -> list[Record | Passed]:
    """The results of ``text[start:end]`` one line at a time (a passing line holding one of
    ``_NEEDS_ALL`` after its durations is parsed whole)."""
    prefix, skip = store.RESULT_PREFIX, len(store.RESULT_PREFIX)
    lines = text[start:end].split("\n")
    return [
        _light_record(line[skip:-1])
        for line in lines
        if line.startswith(prefix) and line.endswith("}")
    ]


def _decoded(text: str) -> str:
    """A JSON string's text (between its quotes), its escapes decoded."""
    return str(scanstring(text + '"', 0)[0])


def _light_record(raw: str) -> Record:
    # the test's name, file and line are not parsed: most of a passing line
    head = re.compile(_HEAD).match(raw, raw.find(_OUTCOME))
    if head is not None and head.group(1) in _FAILING:
        return _failing_record(raw, head) or _whole_record(raw)
    if (
        head is None
        or not raw.startswith(_NODEID)
        or raw.find(_NEEDS_ALL[0], head.end()) >= 0
        or raw.find(_NEEDS_ALL[1], head.end()) >= 0
        or raw.find(_NEEDS_ALL[2], head.end()) >= 0
    ):
        return _whole_record(raw)
    outcome, duration, setup, teardown = head.groups()
    phases = {}
    try:
        if setup is not None:
            phases["setup"] = float(setup)
        if teardown is not None:
            phases["teardown"] = float(teardown)
        seconds = float(duration)
    except ValueError:  # not a number: not a line this stream wrote
        return _whole_record(raw)
    return {
        "nodeid": scanstring(raw, len(_NODEID))[0],
        "outcome": outcome,
        "duration": seconds,
        "durations": phases,
    }


# A JSON string's text between its quotes as the stream writes one (no control character; a
# backslash and the character after it: scanstring checks the escape where there is one),
# unrolled (a run of plain characters at a time, not a branch a character).
_TEXT = r'([^"\\\x00-\x1f]*(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*)'
# The fields of a plain failing line before its outcome, and after its durations up to its
# failure's stack trace, in the order the stream writes them (``_failing_fields``'s).
_FAILING_BEFORE = (
    f'{re.escape(_NODEID)}{_TEXT}","test_name":"{_TEXT}","file":"{_TEXT}"'
    r'(?:,"line":-?[0-9]+|)'
)
_FAILING_AFTER = (
    f'(?:,"started_at":"{_TEXT}"|),"failure":\\{{"error_type":"{_TEXT}","error_message":"'
    f'{_TEXT}","phase":"{_TEXT}",(?:"file":null|"file":"{_TEXT}"),"line":(?:null|(-?[0-9]+)),'
    '"stack_trace":"'
)


FIELD_BY_FIELD = 256
"""Failing lines a process reads field by field (``_failing_fields``) before it compiles the
two matches (``_failing_patterns``): their compilation costs about 5.8 M instructions, which
the matches (about 20 k instructions less a line) pay back only after some 290 failing lines;
most runs have fewer. Both readers make the same record of a line."""
_failing_lines = [0]
"""The failing lines read field by field so far (``FIELD_BY_FIELD``)."""


@cache
def _failing_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``_FAILING_BEFORE`` and ``_FAILING_AFTER`` compiled (once ``FIELD_BY_FIELD`` failing
    lines were read without them)."""
    return re.compile(_FAILING_BEFORE), re.compile(_FAILING_AFTER)


def _failing_record(raw: str, head: re.Match[str]) -> Record | None:
    """``_failing_fields``'s record of a failing line, its fields found by two matches
    (``_FAILING_BEFORE`` and ``_FAILING_AFTER``) instead of a call or two a field (issue 28),
    a text decoded where it holds a backslash (the name, start and phase checked, as
    ``_failing_fields`` checks them); a line they do not match is read by ``_failing_fields``.
    """
    if '"reruns":' in raw or _NEEDS_ALL[0] in raw or _NEEDS_ALL[1] in raw or _NEEDS_ALL[2] in raw:
        return None
    if _failing_lines[0] < FIELD_BY_FIELD:
        _failing_lines[0] += 1
        return _failing_fields(raw, head)
    before_pattern, after_pattern = _failing_patterns()
    before = before_pattern.fullmatch(raw, 0, head.start())
    after = after_pattern.match(raw, head.end())
    if before is None or after is None:
        return _failing_fields(raw, head)
    nodeid, name, file = before.groups()
    started, error_type, message, phase, where, number = after.groups()
    try:
        if "\\" in nodeid:
            nodeid = _decoded(nodeid)
        if "\\" in file:
            file = _decoded(file)
        if "\\" in error_type:
            error_type = _decoded(error_type)
        if "\\" in message:
            message = _decoded(message)
        if where is not None and "\\" in where:
            where = _decoded(where)
        for checked in (name, phase, started or ""):  # read by _failing_fields, not kept
            if "\\" in checked:
                _decoded(checked)
        return _failing_made(head, nodeid, file, (error_type, message, where, number))
    except ValueError:  # an escape JSON does not have, or no number
        return None


def _failing_made(
    head: re.Match[str], nodeid: str, file: str, failure: tuple[str, str, str | None, str | None]
) -> Record:
    """A failing line's record from its fields' text (``failure``: the error type, message,
    file and line, ``None`` for none); its numbers read by ``float`` and ``int``.

    Raises:
        ValueError: a number's text is not one.
    """
    outcome, duration, setup, teardown = head.groups()
    phases = {}
    if setup is not None:
        phases["setup"] = float(setup)
    if teardown is not None:
        phases["teardown"] = float(teardown)
    error_type, message, where, line = failure
    return {
        "nodeid": nodeid,
        "file": file,
        "outcome": outcome,
        "duration": float(duration),
        "durations": phases,
        "failure": {
            "error_type": error_type,
            "error_message": message,
            "file": where,
            "line": None if line is None else int(line),
        },
    }


def _failing_fields(raw: str, head: re.Match[str]) -> Record | None:
    """A failing line's record as the index reads it (node id, file, outcome, durations, the
    failure's type, message, file and line), read where the stream writes them, without
    parsing its traceback, frames and output (``json.loads`` of a failing line: about 180 k
    instructions); ``None`` for a line written otherwise (rerun, flaky, scored, fields in
    another order), to be parsed whole. ``head``: its outcome and durations (``_HEAD``).

    A failure is a nested record, written whole, its fields in the model's order.
    """
    if (
        '"reruns":' in raw
        or _NEEDS_ALL[0] in raw
        or _NEEDS_ALL[1] in raw
        or _NEEDS_ALL[2] in raw
        or not raw.startswith(_NODEID)
    ):
        return None
    try:
        nodeid, at = scanstring(raw, len(_NODEID))
        file, at = _string(raw, _FILE, _string(raw, _TEST_NAME, at)[1])
        if at != head.start() and not _is_number(raw[at : head.start()], ',"line":'):
            return None  # a field between the file and the outcome: not the stream's
        at = head.end()
        if raw.startswith(_STARTED, at):
            at = _string(raw, _STARTED, at)[1]
        error_type, at = _string(raw, _FAILURE, at)
        message, at = _string(raw, _MESSAGE, at)
        at = _string(raw, _PHASE, at)[1]
        where: str | None = None
        if raw.startswith(_NO_FILE, at):
            at += len(_NO_FILE)
        else:
            where, at = _string(raw, _FILE, at)
        end = raw.find(_TRACE, at)
        if end < 0 or not (raw[at:end] == _NO_LINE or _is_number(raw[at:end], _NO_LINE[:-4])):
            return None
        number = raw[at + len(_NO_LINE) - 4 : end]
        line = None if number == "null" else number
        return _failing_made(head, nodeid, file, (error_type, message, where, line))
    except ValueError:  # fields in another order, or no JSON string or number: parsed whole
        return None


def _is_number(text: str, key: str) -> bool:
    """Whether ``text`` is the field ``key`` holding an integer, as JSON writes one."""
    digits = text[len(key) :].removeprefix("-")
    return text.startswith(key) and digits.isascii() and digits.isdigit()


def _string(raw: str, key: str, at: int) -> tuple[str, int]:
    """The string value of the field ``key`` (its text up to the value's opening quote) that
    starts at ``at``, and where it ends.

    Raises:
        ValueError: another field starts there, or the value is no JSON string.
    """
    if not raw.startswith(key, at):
        raise ValueError(key)
    found, end = scanstring(raw, at + len(key))
    return str(found), int(end)


_TEST_NAME = ',"test_name":"'
_FILE = ',"file":"'
_STARTED = ',"started_at":"'
_FAILURE = ',"failure":{"error_type":"'
_MESSAGE = ',"error_message":"'
_PHASE = ',"phase":"'
_NO_FILE = ',"file":null'
_NO_LINE = ',"line":null'
_TRACE = ',"stack_trace":"'
_FAILING = frozenset(("failed", "error"))


def _whole_record(raw: str) -> Record:
    return cast("Record", store.read_result(raw))
