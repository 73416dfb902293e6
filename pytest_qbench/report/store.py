"""Files: the run directory, the crash-safe result stream, reading reports back (atomic writes
are `pytest_qbench.core.atomic`'s).

Layout of one run::

    <qbench-dir>/runs/<run_id>/
        results.jsonl   one JSON record per line, appended as the run goes (in batches, each
                        written at most ``BATCH_SECONDS`` after its first line)
        report.json     TestReport, written when the session ends (or by ``qbench render``)
        report.md       the Markdown report

A ``qbench check`` run (issue 13) has ``check.json`` (a ``CheckReport``) and each checker's raw
output (``ruff.lint.log``...) instead, and is kept out of the history index.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import struct
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from time import sleep
from typing import IO
from typing import TYPE_CHECKING
from typing import cast

from pytest_qbench.core import atomic
from pytest_qbench.core.clock import monotonic
from pytest_qbench.core.clock import utc_now
from pytest_qbench.core.numbers import TO_WHOLE
from pytest_qbench.core.numbers import WHOLE_MICROS
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import compact
from pytest_qbench.report.shapes import dumps
from pytest_qbench.report.shapes import expand
from pytest_qbench.report.shapes import made_iso


if TYPE_CHECKING:
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import StreamEndRecord
    from pytest_qbench.report.records import StreamStartRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


STREAM_NAME = "results.jsonl"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
RUNS_DIR = "runs"
CHECK_JSON = "check.json"
UNWRITTEN_NAME = "report-unwritten.txt"
"""Why a run's session end could not write its report.json (``note_unwritten``): its mark then
stays, so that every reader takes it for one whose reports were never written
(``killed_at_end``), and the report rebuilt from its stream names this instead."""
ORDER_NAME = "collected.txt"
"""The node ids of the tests a run is to run, in their order, one a line: written when
collection ends, removed when the run ends. A run that died mid-test (no end
record in its stream) died in the first of them without a result (``write_order``)."""
ORDER_CHUNK = 2000
PHASE_NAME = "phase"
"""The phase of the test going, as the run's last report left it, and the results made
(``PhaseMark``, ``MARK_SIZE`` bytes): written while the tests run, removed when the run ends,
so that a run that died mid-test is known to have died in that test's setup, call or teardown,
and which test that was though its last results never reached the stream."""
PHASES = ("setup", "call", "teardown", "teardown")
"""The phase going when the mark holds 0, 1, 2 or 3. As each phase's report is made
(``QBenchWorker.annotate``): after a setup, 1 (its call) when it passed, 3 when it failed (its
teardown goes next, and the setup's error is kept: ``SETUP_ERROR_NAME``), else 2 (it skipped or
xfailed: no call, its teardown goes next); after a call, 2; after a teardown, 0 (the next test's
setup). Three stores into memory a test, in branches taken anyway."""
SETUP_FAILED = 3
"""The mark's value in the teardown of a test whose setup failed."""
SETUP_ERROR_NAME = "setup-error.json"
"""The failure of the last setup that errored, and its test's node id (``PhaseMark.
keep_setup_error``): a run that dies in that test's teardown keeps its setup's error
(``died_setup_failure``). Written only after a setup error; removed when the run ends."""
RESULT_PREFIX = '{"kind":"result","result":'
RESULT = "TestResult"
"""The model of a result; its records are stored ``compact`` (fields at their default left out)
and read back through ``expand`` or the model."""


PASSING_FIELDS = (
    "nodeid",
    "test_name",
    "file",
    "line",
    "outcome",
    "duration",
    "durations",
    "started_at",
    "counted_as",
)
"""The fields of a passing test's stored result that has nothing else (no marker, output...)."""
MARKED_FIELDS = (*PASSING_FIELDS[:-1], "markers", PASSING_FIELDS[-1])
"""The fields of a passing test's stored result that has markers and nothing else: a
parametrized test's (``["parametrize"]``), nearly every test of some suites (packaging's)."""
os_write = os.write
"""``os.write`` as imported, the stream's and the phase mark's: a test that mocks ``os.write``
(a logger's, a pipe's, a pty's tests) while the stream's timer thread writes a batch neither
gets qbench's lines (lost, or its mock's calls changed) nor loses them. The other system calls
of the stream and the mark likewise (``os.open``...); a test injects faults through these."""
os_open = os.open
os_close = os.close
os_ftruncate = os.ftruncate
os_fstat = os.fstat
os_lseek = os.lseek
os_pread = os.pread
_PHASES = ("setup", "call", "teardown")
_encode_text = json.encoder.encode_basestring  # what the records' encoder writes a str with
_float_text = float.__repr__  # what it writes a float (or a float's subclass) with
_INF = float("inf")
_ONLY_PASSED = ["passed"]
MICRO_TIMES = '"duration":%.6g,"durations":{"setup":%.6g,"call":%.6g,"teardown":%.6g}'
"""A plain pass's four times in one ``%`` (issue 28), when each is a whole number of
microseconds below a second: ``%.6g`` of such a time is its shortest text, ``repr``'s (its
digits are at most six, in the same notation), without the search for the shortest digits that
costs ``repr`` twice as much."""


class LastTexts:
    """What ``passing_line`` wrote last, and its JSON text, for the next result: a stream
    writer's own (``StreamWriter.last``), never shared by two streams."""

    __slots__ = ("file", "markers")

    def __init__(self) -> None:
        self.file: tuple[object, str] = (object(), "")
        """The last file and its JSON text, as one pair (replaced whole): the tests of a file
        come one after another, and their results hold the one ``str`` pytest made for the
        file's path."""
        self.markers: tuple[list[str], str] = ([], "")
        """The last markers and their JSON text (with the field's name), as one pair: the tests
        of a parametrized function, one after another, have equal lists."""


def passing_line(
    stored: Record, kept: Written | None = None, last: LastTexts | None = None
) -> str | None:
    """The stream's line of a stored result that holds only the fields of a plain passing test
    (its id, place, times and pytest's word, in the model's order; its markers too, as a
    parametrized test's ``["parametrize"]``), written from a template:
    the same text as ``f"{RESULT_PREFIX}{dumps(stored)}}}"`` for a third of its price, since
    most tests of a run are such passes (issue 28). ``None`` for any other result, or a value
    the template does not write as the encoder does (a bool, an int time, a time that is not
    finite): the caller writes it with ``dumps``. A line made is kept in ``kept`` too, as the
    index reads it (``Written``); ``last``: the texts of the line before it (its writer's)."""
    if last is None:
        last = LastTexts()
    fields = tuple(stored)
    marked: str | None = ""
    if fields != PASSING_FIELDS:
        marked = _markers_text(stored["markers"], last) if fields == MARKED_FIELDS else None
        if marked is None:
            return None
    if stored["outcome"] != "passed" or stored["counted_as"] != _ONLY_PASSED:
        return None
    phases = stored["durations"]
    line = stored["line"]
    if type(phases) is not dict or tuple(phases) != _PHASES or type(line) is not int:
        return None
    duration = stored["duration"]
    setup, call, teardown = phases["setup"], phases["call"], phases["teardown"]
    file = stored["file"]
    last_file = last.file
    try:
        file_text = last_file[1]
        if file is not last_file[0]:  # the same object has the same text: encoded once a file
            file_text = _encode_text(file)
            last.file = (file, file_text)
        made = WHOLE_MICROS[0]
        if duration is made[0] and setup is made[1] and call is made[2] and teardown is made[3]:
            # the very floats `round_micros` made and found whole microseconds below a second
            times = MICRO_TIMES % made
        elif (
            type(duration) is float
            and type(setup) is float
            and type(call) is float
            and type(teardown) is float
            # each a whole number of microseconds below a second: 6 digits at most
            and 0.0 < duration < 1.0
            and (duration * 1e6 + TO_WHOLE - TO_WHOLE) / 1e6 == duration
            and 0.0 < setup < 1.0
            and (setup * 1e6 + TO_WHOLE - TO_WHOLE) / 1e6 == setup
            and 0.0 < call < 1.0
            and (call * 1e6 + TO_WHOLE - TO_WHOLE) / 1e6 == call
            and 0.0 < teardown < 1.0
            and (teardown * 1e6 + TO_WHOLE - TO_WHOLE) / 1e6 == teardown
        ):
            times = MICRO_TIMES % (duration, setup, call, teardown)
        elif not -_INF < duration + setup + call + teardown < _INF:  # json refuses nan and inf
            return None
        else:
            times = (
                f'"duration":{_float_text(duration)},"durations":{{"setup":{_float_text(setup)},'
                f'"call":{_float_text(call)},"teardown":{_float_text(teardown)}}}'
            )
        started = stored["started_at"]
        quote = '"'  # iso_epoch's text needs no escape
        if started is not made_iso[0]:
            started, quote = _encode_text(started), ""
        nodeid = stored["nodeid"]
        text = (
            f'{RESULT_PREFIX}{{"nodeid":{_encode_text(nodeid)},'
            f'"test_name":{_encode_text(stored["test_name"])},'
            f'"file":{file_text},"line":{line},"outcome":"passed",{times},'
            f'"started_at":{quote}{started}{quote},{marked}"counted_as":["passed"]}}}}'
        )
    except TypeError:  # not a str, not a float: the encoder says what it makes of it
        return None
    if kept is not None:  # a write that fails drops all that was kept
        kept.nodeids.append(nodeid)
        kept.rows += _pack_row(duration, setup, teardown, 1)
    return text


def _markers_text(markers: object, last: LastTexts) -> str | None:
    """``"markers":[...],`` as the encoder writes a list of marker names (``None``: not a list
    of ``str``, left to the encoder); the last list's text again when they are equal."""
    if type(markers) is not list:
        return None
    for name in markers:
        if type(name) is not str:
            return None
    known = last.markers
    if markers == known[0]:
        return known[1]
    text = f'"markers":[{",".join(map(_encode_text, markers))}],'
    last.markers = (list(markers), text)
    return text


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id: ``20261121T221500Z-3f9a1c``."""
    now = now or utc_now()
    return f"{now:%Y%m%dT%H%M%SZ}-{os.urandom(3).hex()}"  # secrets.token_hex, without importing it


GITIGNORE = "# Created by pytest-qbench: runs are artifacts, not sources.\n*\n"


def prepare_store(qbench_dir: Path) -> None:
    """Create the qbench directory, with a ``.gitignore`` that keeps it out of git (as pytest
    does for ``.pytest_cache``)."""
    qbench_dir.mkdir(parents=True, exist_ok=True)
    ignore = qbench_dir / ".gitignore"
    if not ignore.exists():
        atomic.write_text_atomic(ignore, GITIGNORE)


def run_dir(qbench_dir: Path, run_id: str) -> Path:
    """Where a run's files live."""
    return qbench_dir / RUNS_DIR / run_id


UNFINISHED_DIR = "unfinished"
"""The directory of the qbench directory that holds an empty file named after each run that
started and has not yet written its reports at its session's end (``mark_unfinished``): a run
that died leaves its mark, which the next run's session end finds without listing ``runs/``."""


def mark_unfinished(qbench_dir: Path, run_id: str) -> bool:
    """Mark ``run_id`` as started and not finished (``UNFINISHED_DIR``); whether it is marked.
    A mark that cannot be made is none (the history's commands still find a run that died).
    The mark holds who made it (``owner_line``), so that a run on a file system without locks
    is still known to be going by another run of the same machine (``mark_owner``)."""
    path = os.path.join(qbench_dir, UNFINISHED_DIR, run_id)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    for _attempt in range(2):
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            with suppress(OSError):
                os.mkdir(os.path.join(qbench_dir, UNFINISHED_DIR))
            continue
        except OSError:
            return False
        try:
            os.write(fd, owner_line().encode(errors="replace"))
        except OSError:  # an empty mark still marks the run (its owner is then not known)
            pass
        finally:
            os.close(fd)
        return True
    return False


def unmarked_note(qbench_dir: Path) -> str:
    """The note of a run that could not mark itself unfinished (``mark_unfinished``)."""
    where = os.path.join(qbench_dir, UNFINISHED_DIR)
    return (
        f"could not mark this run unfinished in {where} (a file in its place, or not writable): "
        "killed at its session's end, it would pass for a finished run; remove what is there, "
        "qbench makes the directory again"
    )


def owner_line(pid: int | None = None) -> str:
    """Who process ``pid`` (default: this one) is, as a mark holds it: ``<machine> <pid>
    <start>``, where the machine is the host's name, the kernel's boot id and the process's
    pid namespace (a container of its own has another), and the start is the process's start
    in clock ticks since boot (a pid used again later is another process). A part that cannot
    be read (not Linux) is ``-``."""
    pid = os.getpid() if pid is None else pid
    return f"{_machine()} {pid} {_process_start(pid) or '-'}\n"


@functools.cache
def _machine() -> str:
    """This process's machine (``owner_line``), read once."""
    host = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
    boot = namespace = "-"
    with suppress(OSError), open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as handle:
        boot = handle.read().strip() or "-"
    with suppress(OSError):
        namespace = os.readlink("/proc/self/ns/pid")
    return "|".join(part.replace(" ", "_") or "-" for part in (host, boot, namespace))


def _process_start(pid: int) -> str | None:
    """Process ``pid``'s start, in clock ticks since boot (``/proc/PID/stat``'s 22nd field);
    ``None`` when it cannot be read (no such process, not Linux) or the process is dead but
    not yet reaped (a zombie: killed, its parent not waiting for it), as it runs no more."""
    fields = _process_stat(pid)
    return None if fields is None or fields[0] in _DEAD_STATES else fields[19]


_DEAD_STATES = ("Z", "X")
"""``/proc/PID/stat`` states of a process that runs no more (zombie, dead), though it exists."""


def _process_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's ``)`` (the state first), ``None``
    when they cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return fields if len(fields) > 19 else None


def mark_owner(qbench_dir: Path, run_id: str) -> str:
    """Whether the process that marked ``run_id`` unfinished still runs: ``"alive"`` or
    ``"dead"`` when it is of this machine (host, boot and pid namespace), ``"elsewhere"`` when
    it is of another (a CI job sharing the directory, a container of its own), ``"unknown"``
    for a mark without its owner (written by an earlier qbench) or no mark."""
    try:
        with open(os.path.join(qbench_dir, UNFINISHED_DIR, run_id), encoding="utf-8") as handle:
            machine, pid, start = handle.read(4096).split()
        number = int(pid)
    except (OSError, ValueError):
        return "unknown"
    if machine != _machine():
        return "elsewhere"
    if start != "-":
        fields = _process_stat(number)
        if fields is not None:
            # a zombie exists (os.kill reaches it) but runs no more: its run died
            alive = fields[0] not in _DEAD_STATES and fields[19] == start
            return "alive" if alive else "dead"
        # unreadable: no such process, or /proc hides another user's (hidepid): os.kill tells
    if os.name == "nt":  # os.kill would end the process there
        return "unknown"
    try:
        os.kill(number, 0)
    except ProcessLookupError:
        return "dead"
    except OSError:  # another user's: it runs
        return "alive"
    return "alive"


def marked_at(qbench_dir: Path, run_id: str) -> int:
    """When ``run_id`` was marked unfinished (nanoseconds of the file system's clock, which a
    frozen-clock plugin does not move), for the order of runs that died; 0 when unknown."""
    try:
        return os.stat(os.path.join(qbench_dir, UNFINISHED_DIR, run_id)).st_mtime_ns
    except OSError:
        return 0


def unmark_unfinished(qbench_dir: Path, run_id: str) -> None:
    """Take ``run_id``'s mark away (its run finished, or it died and was indexed)."""
    with suppress(OSError):
        os.unlink(os.path.join(qbench_dir, UNFINISHED_DIR, run_id))


def killed_at_end(run_dir: Path, going: bool | None = None) -> bool:
    """Whether the run of ``run_dir`` (``<qbench dir>/runs/<id>``) was killed during its
    session's end: its stream has its end record, yet its mark (``mark_unfinished``) is still
    there, it has no ``report.json`` and it no longer runs. A run takes its mark away only once
    its reports are written, so such a run died while it indexed itself or wrote them: its end
    record is not the end it would have reported (its exit status was never delivered).
    ``going``: ``run_in_progress`` of it, when the caller asked already (asked once)."""
    return _died_marked(run_dir, stream_ended, going)


def note_unwritten(run_dir: Path, failure: str) -> None:
    """Keep beside the run's stream why its session end could not write its report.json
    (``failure``: the error), for the report rebuilt from the stream (``unwritten_reason``); a
    disk that refuses keeps nothing (the reason is then ``KILLED_AT_END``'s)."""
    text = (
        f"could not write {REPORT_JSON} at the run's end ({failure}): this report was rebuilt "
        f"from its {STREAM_NAME}, without what only the session's end adds (the failing tests' "
        "history)"
    )
    with suppress(OSError):
        atomic.write_text_atomic(run_dir / UNWRITTEN_NAME, " ".join(text.split()) + "\n")


def unwritten_reason(run_dir: Path) -> str | None:
    """The recording error ``note_unwritten`` kept for the run of ``run_dir``; ``None``."""
    try:
        with open(run_dir / UNWRITTEN_NAME, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096).strip() or None
    except OSError:
        return None


KILLED_AT_END = (
    "the run's process died during its session's end, after its tests (killed while it indexed "
    "the run or wrote its reports): its report.json was never written and pytest's exit status "
    "never reached the caller, so this report of its streamed results is not the run's verdict"
)
"""The recording error of a run rebuilt from the stream of a run ``killed_at_end``."""


def unrecorded(run_dir: Path, going: bool | None = None) -> bool:
    """Whether the run of ``run_dir`` died unrecorded: it claimed its directory and made its
    mark (``mark_unfinished``), but its stream does not begin with its start record (an error
    inside qbench as it wrote it), or there is no stream at all (its writer could not make the
    file: a bug as it opened it), it has no ``report.json`` and it no longer runs. Such a run
    is one that died (``UNRECORDED``), never a run to skip: the history would otherwise tell of
    the run before it as the last one. Like one ``killed_at_end``, it keeps its mark until its
    report.json is written (``qbench render``): without it, its stream is no run's.
    ``going``: as ``killed_at_end``'s."""
    return _died_marked(run_dir, lambda stream: not _starts(stream), going)


DIED_NAME = "died-at-end.txt"
"""How a run that never wrote its own report.json died (``note_died``): ``killed-at-end``
(``killed_at_end``) or ``unrecorded <ns>`` (``unrecorded``, with its start from its mark), kept
by ``qbench render`` as it writes the report.json of such a run from its stream. Its mark then
goes and its report.json exists, so that neither ``killed_at_end`` nor ``unrecorded`` can say
so again: a second render reads it from here (``died_at_end``, ``died_unrecorded``)."""


def note_died(run_dir: Path, going: bool | None = None) -> None:
    """Keep in ``run_dir`` how its run died, when it was ``killed_at_end`` or ``unrecorded``
    (``DIED_NAME``), before ``qbench render`` writes its report.json; nothing for another run.
    ``going``: as ``killed_at_end``'s.

    Raises:
        OSError: the note cannot be written (the render must not write a report.json that a
            second render would read as complete).
    """
    going = run_in_progress(run_dir) if going is None else going
    if killed_at_end(run_dir, going):
        text = "killed-at-end"
    elif unrecorded(run_dir, going):
        text = f"unrecorded {marked_at(run_dir.parent.parent, run_dir.name)}"
    else:
        return
    atomic.write_text_atomic(run_dir / DIED_NAME, text + "\n")


def _died_note(run_dir: Path) -> list[str]:
    """The words of ``run_dir``'s ``DIED_NAME`` note; none without one."""
    try:
        with open(run_dir / DIED_NAME, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096).split()
    except OSError:
        return []


def died_at_end(run_dir: Path) -> bool:
    """Whether the run of ``run_dir`` was killed during its session's end: ``killed_at_end``,
    or so noted by the ``qbench render`` that wrote its report.json (``note_died``)."""
    return killed_at_end(run_dir) or _died_note(run_dir)[:1] == ["killed-at-end"]


def died_unrecorded(run_dir: Path) -> int | None:
    """When the run of ``run_dir`` died ``unrecorded`` (now, or so noted by the ``qbench
    render`` that wrote its report.json: ``note_died``), when it was marked (nanoseconds;
    0: unknown, ``marked_at``); ``None`` for another run."""
    words = _died_note(run_dir)
    if words[:1] == ["unrecorded"]:
        return int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
    if unrecorded(run_dir):
        return marked_at(run_dir.parent.parent, run_dir.name)
    return None


def _died_marked(
    run_dir: Path, stream_says: Callable[[Path], bool], going: bool | None = None
) -> bool:
    """Whether the run of ``run_dir`` still has its mark, no ``report.json``, a stream of which
    ``stream_says`` so, and no longer runs (the cheaper looks first; ``going``: whether it
    runs, when known)."""
    return (
        os.path.exists(os.path.join(run_dir.parent.parent, UNFINISHED_DIR, run_dir.name))
        and not os.path.exists(run_dir / REPORT_JSON)
        and stream_says(run_dir / STREAM_NAME)
        and not (run_in_progress(run_dir) if going is None else going)
    )


def holds_stream(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run's stream to read: its ``results.jsonl``, or none of a run
    that died ``unrecorded`` (read as an empty stream: its tests are unknown)."""
    return (run_dir / STREAM_NAME).is_file() or died_unrecorded(run_dir) is not None


START_PREFIX = b'{"kind":"start",'
"""How a stream's start record begins, as the writer writes it (``shapes.dumps``)."""


def _starts(stream: Path) -> bool:
    """Whether ``stream`` begins with a start record (``False``: empty, missing, or
    unreadable)."""
    try:
        with stream.open("rb") as handle:
            return handle.read(len(START_PREFIX)) == START_PREFIX
    except OSError:
        return False


UNRECORDED = (
    "qbench could not record the run: its results stream has no start record, or was never "
    "made (an internal error of qbench, or a full disk, as the session started: the run's "
    "terminal said which), "
    "so its tests, its exit status and whether it finished are unknown; run the tests again "
    "for a verdict"
)
"""The recording error of a run ``unrecorded``: marked, with no start record in its stream (or
no stream)."""


def unfinished_runs(qbench_dir: Path) -> list[str]:
    """The run ids marked as not finished (``mark_unfinished``), sorted; none when there is no
    such directory. One listing of a directory that holds only the runs going or dead."""
    try:
        return sorted(os.listdir(os.path.join(qbench_dir, UNFINISHED_DIR)))
    except OSError:
        return []


def write_order(path: Path, nodeids: Sequence[str]) -> bool:
    """Write the node ids of the tests to run, in order, to ``path`` (``ORDER_NAME``): one a
    line, ``ORDER_CHUNK`` joined at a time (so that the text held at once stays small), to a
    temporary file renamed when whole. ``False``, and nothing written, when an id holds a line
    break (a collector's own name): the order could not be read back.

    Raises:
        OSError: the file cannot be written.
    """
    partial = path.with_name(path.name + ".tmp")
    try:
        with partial.open("w", encoding="utf-8", errors="replace", newline="\n") as handle:
            for start in range(0, len(nodeids), ORDER_CHUNK):
                ids = nodeids[start : start + ORDER_CHUNK]
                text = "\n".join(ids)
                if text.count("\n") != len(ids) - 1:
                    raise _LineBreakError
                handle.write(text + "\n")
    except _LineBreakError:
        partial.unlink()
        return False
    except OSError:
        with suppress(OSError):
            partial.unlink()
        raise
    os.replace(partial, path)
    return True


MARK_SIZE = 16
"""The phase mark's bytes: the phase (byte 0), then the number of results handed to the stream
(bytes 8 to 15, little-endian: ``PhaseMark.made``)."""


class PhaseMark:
    """The phase of the test going, kept in a small file mapped into memory (``PHASE_NAME``):
    each phase's end sets it without a system call (a store into a shared page, which the
    kernel keeps when the process is killed): about 1 k instructions a test in all. Beside it,
    the number of results the stream was handed (``made``): the stream's writes are batched
    (``BATCH_SECONDS``), so a run killed may have made results its stream never got; a reader
    then knows how many, and which test the run died in (``read_made``)."""

    def __init__(self, path: Path) -> None:
        """Create the file (0: a setup goes, no result made) and map it.

        Raises:
            OSError: the file cannot be made or mapped.
        """
        import mmap

        self.path = path
        fd = os_open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            os_write(fd, bytes(MARK_SIZE))
            self.map: mmap.mmap | None = mmap.mmap(fd, MARK_SIZE)
        finally:
            os_close(fd)  # the mapping keeps the file
        self._view = memoryview(self.map)
        self.made = self._view[8:].cast("Q")
        """The number of results handed to the stream (``StreamWriter.count_into``)."""

    def keep_setup_error(self, nodeid: str, failure: Mapping[str, object]) -> None:
        """Keep the failure of ``nodeid``'s setup, which errored, beside the mark
        (``SETUP_ERROR_NAME``): a death in its teardown then keeps the setup's error (the
        test's result is written when its teardown ends). Written in place, then cut to its
        length: a temporary file renamed, or ``O_TRUNC`` (which ext4 answers by writing the
        file's blocks out), took 100 to 200 us, this about 2 us. A file a death leaves half
        written, or with an earlier error's tail, is no JSON, and ``died_setup_failure`` reads
        no error from it.

        Raises:
            OSError: the file cannot be written.
        """
        data = json.dumps({"nodeid": nodeid, "failure": failure}).encode()
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os_open(self.path.with_name(SETUP_ERROR_NAME), flags, 0o644)
        try:
            os_write(fd, data)
            os_ftruncate(fd, len(data))
        finally:
            os_close(fd)

    def close(self) -> None:
        """Unmap the file and remove it, and a kept setup error (the run ended)."""
        if self.map is not None:
            self.made.release()
            self._view.release()
            self.map.close()
            self.map = None
        for path in (self.path, self.path.with_name(SETUP_ERROR_NAME)):
            with suppress(OSError):
                path.unlink()


def read_phase(path: Path) -> str | None:
    """The phase a run that died was in (``PHASE_NAME`` at ``path``): ``setup``, ``call`` or
    ``teardown``; ``None`` when it is not known (no such file: an earlier qbench, xdist)."""
    try:
        with path.open("rb") as handle:
            code = handle.read(1)
    except OSError:
        return None
    return PHASES[code[0]] if code and code[0] < len(PHASES) else None


def read_made(path: Path) -> int | None:
    """The number of results a run that died had handed to its stream (``PhaseMark.made``, at
    ``path``); ``None`` when not known (an earlier qbench's one-byte mark, no mark)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MARK_SIZE)
    except OSError:
        return None
    return int.from_bytes(data[8:], "little") if len(data) == MARK_SIZE else None


def died_setup_failure(path: Path, nodeid: str) -> dict[str, object] | None:
    """The failure of the setup of ``nodeid``, a test a run died in while in its teardown
    after that setup failed (the phase mark at ``path`` holds ``SETUP_FAILED``): kept beside
    the mark (``SETUP_ERROR_NAME``); ``None`` when it was not kept or is another test's."""
    try:
        with path.open("rb") as handle:
            if handle.read(1) != bytes((SETUP_FAILED,)):
                return None
        kept = json.loads(path.with_name(SETUP_ERROR_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("nodeid") != nodeid:
        return None
    failure = kept.get("failure")
    return failure if isinstance(failure, dict) else None


class _LineBreakError(Exception):
    """A node id holds a line break."""


def read_order(path: Path) -> Iterator[str]:
    """The node ids ``write_order`` wrote to ``path``, in order; nothing when there is no such
    file."""
    try:
        handle = path.open(encoding="utf-8", errors="replace", newline="\n")
    except OSError:
        return
    with handle:
        for line in handle:
            yield line[:-1] if line.endswith("\n") else line


END_PREFIX = b'{"kind":"end"'
"""How the stream's end record starts (``StreamWriter.write_end``)."""


def stream_ended(path: Path, block: int = 65536) -> bool:
    """Whether the stream at ``path`` ends with its end record (the session finished): its last
    line is read back from the file's end, a block at a time. ``False`` when it cannot be read,
    or when that line is torn (no line break after it, and not whole JSON: the process was
    killed as it wrote it)."""
    try:
        with path.open("rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            tail = b""
            while end > 0:
                start = max(0, end - block)
                handle.seek(start)
                tail = handle.read(end - start) + tail
                end = start
                line_start = tail.rfind(b"\n", 0, len(tail.rstrip(b"\n")))
                if line_start >= 0:
                    return _whole_end(tail[line_start + 1 :])
            return _whole_end(tail)
    except OSError:
        return False


def _whole_end(line: bytes) -> bool:
    """Whether the stream's last ``line`` is a whole end record: written with its line break,
    or whole JSON without one (a stream edited by hand)."""
    if not line.startswith(END_PREFIX):
        return False
    return line.endswith(b"\n") or _is_json_object(line.decode("utf-8", errors="replace"))


def _replaced(path: Path, fd: int) -> bool:
    """Whether ``path`` is gone, or is no longer the file (or directory) open as ``fd``."""
    try:
        now = os.stat(path)
    except OSError:
        return True
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino)


def is_check_run(path: Path) -> bool:
    """Whether a run directory holds a ``qbench check`` run rather than a test run (issue 13)."""
    return (path / CHECK_JSON).is_file()


class RunLock:
    """The live run's claim on its directory: the directory was made by this run (``mkdir``
    without ``exist_ok``, so two runs never share one), and it stays locked (``flock`` on the
    directory) while the run goes, so that retention never deletes a run in progress."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def claim(self) -> None:
        """Make the directory and lock it.

        Raises:
            FileExistsError: the directory exists: another run has this id.
            OSError: the directory cannot be made (a read-only or full disk).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.mkdir()
        self._lock()

    def vanished(self) -> bool:
        """Whether the directory was deleted (or replaced) since it was claimed."""
        return self._fd is not None and _replaced(self.path, self._fd)

    def reclaim(self) -> None:
        """Make the directory again (after it vanished) and lock the new one."""
        self.release()
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock()

    def forget(self) -> None:
        """In a child forked while the run goes: close this process's descriptor, leaving
        the lock to the run (``_IN_CHILD``)."""
        if self._fd is not None:
            with suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def release(self) -> None:
        """Unlock (closing the descriptor releases the lock)."""
        _HELD.discard(self)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # Windows: an open directory cannot be deleted there anyway
            return
        self._fd = os.open(self.path, os.O_RDONLY)
        _hold(self)
        # on a file system without locks, the claim by mkdir still holds
        with suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


_HELD: set[RunLock] = set()
"""The run locks this process holds. A child it forks (``os.fork``, multiprocessing's fork
start method) closes their descriptors at once (``_IN_CHILD``): the lock belongs to the
descriptor, which a forked child shares, so a child that outlived a run killed (a test's server
process) would keep its directory locked, the run going for every reader, as long as it runs."""


def _hold(lock: RunLock) -> None:
    _fork_hooks()
    _HELD.add(lock)


def run_in_progress(path: Path) -> bool:
    """Whether the run of ``path`` (its run directory, ``<qbench dir>/runs/<id>``) may still be
    going: the one rule of every reader (``qbench index``, retention, the readers of a stream,
    the runs that died indexed by the history's commands and the next run's session end), so
    that no run is going for one and died for another. It is going when its directory is
    locked (``RunLock``); or its mark (``mark_owner``) says its process, of this machine, still
    runs; or locks cannot tell (a file system without them, Windows) and its mark is another
    machine's (a CI job sharing the directory), which only that machine can tell. A run whose
    mark is gone (it ended) or was never made is going only while locked."""
    locked = lock_state(path)
    if locked:
        return True
    owner = mark_owner(path.parent.parent, path.name)
    return owner == "alive" or (locked is None and owner == "elsewhere")


def lock_state(path: Path) -> bool | None:
    """Whether a live run holds ``path`` (its run directory) locked; ``None`` where locks
    cannot tell (Windows, a file system without locks); ``False`` when it is not locked, or the
    directory cannot be opened."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # also releases a lock taken just now
    return False


BATCH_RECORDS = 64
"""A batched stream (``StreamWriter(path, batched=True)``, the plugin's) writes its pending
records once this many wait (issue 28): one ``write`` for 64 results instead of 64 (at 10 000
tests, 158 writes instead of 10 002); more saves little (docs/performance.md, "The stream's
writes batched")."""
BATCH_BYTES = 1 << 16
"""... or once they hold this many bytes (a few failing results with long output)."""
BATCH_SECONDS = 0.1
"""... or once the oldest of them has waited this long (seconds), by the writer's timer thread,
also while a test hangs: a process killed (``kill -9``, ``os._exit``, a crash, pytest-timeout's
thread method) loses at most the records of the last 0.1 s, 64 at most."""
process_id = os.getpid
"""``os.getpid`` as imported: a test that mocks ``os.getpid`` (a pid file's, a lock's tests) does
not make the run's process a forked child whose lines are dropped (``StreamWriter``,
``QBenchSession.end``)."""


class StreamWriter:
    """Appends records to ``results.jsonl``, one line each.

    Text that UTF-8 cannot hold (a lone surrogate: ``os.fsdecode``'s form of a byte that is not
    UTF-8, a test's ``"\\udcff"``) is written as ``?``, as pytest's capture does, never lost
    with the whole record. Lines go to an unbuffered descriptor opened for appending, whole
    lines in one ``os.write``: each record at once, or, ``batched`` (the plugin's stream, issue
    28), kept in memory until ``BATCH_RECORDS`` records or ``BATCH_BYTES`` bytes wait, or the
    oldest has waited ``BATCH_SECONDS`` (a daemon thread of the writer's, started with the first
    record that waits, writes them then, also while the main thread is blocked in a test), and
    always at ``flush``, the start and end records and ``close``. A process that dies mid-run
    leaves every record older than that on disk, and nothing half-written: the bound is
    ``BATCH_RECORDS`` records, ``BATCH_SECONDS`` seconds (as long as a thread can run: a C call
    that holds the GIL delays the timer). Before the process forks (``os.fork``,
    multiprocessing), the records waiting are written and the thread stops (so that Python
    3.12+ does not warn that a multi-threaded process forks); the next record starts it again.

    A write that fails (a full disk) raises ``OSError`` and never damages the next one: what it
    wrote of a line is cut off again, or, when that fails too, ended by a newline before the next
    write (readers skip the torn line); the records it did not write whole wait, written by the
    next write that succeeds, else handed back by ``close`` (``unwritten``). ``damaged`` then
    tells readers to check each line.
    """

    def __init__(self, path: Path, batched: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.damaged = False
        """A torn line may be in the file: read it with ``iter_result_json(check=True)``."""
        self._torn = False
        # read as well as write: a stream whose file was deleted is copied back from here
        self._fd: int | None = os_open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._end = os_lseek(self._fd, 0, os.SEEK_END)
        """The file's size as this writer's writes left it."""
        self._kept: Written | None = Written(path)
        """The results written so far, as the index reads them (``None``: not known any more,
        after a write that failed)."""
        self.written: Written | None = None
        """Set by ``close``: the results the file holds, when this writer alone wrote it."""
        self.unwritten: list[bytes] = []
        """Set by ``close``: the lines the disk never took (each with its line break)."""
        self.last = LastTexts()
        """The texts of the last passing line, for the next (``passing_line``)."""
        self.made = memoryview(bytearray(8)).cast("Q")
        """The number of results handed to this writer (``count_into``)."""
        self._pending: list[bytes] = []
        """Lines to write, in order, each with its line break."""
        self._buffer = bytearray(2 * BATCH_BYTES) if batched else None
        """Where a batch is put together to be written (``_joined``)."""
        self._size = 0
        """Their bytes."""
        self._added = 0
        """The bytes of the last line added."""
        self._limit = BATCH_RECORDS if batched else 1
        """Lines that wait before a write (raised after a write that failed: ``_refused``)."""
        self._batched = batched
        self._oldest = 0.0
        """When the first of the lines waiting was added (``time.monotonic``)."""
        self._lock = threading.Lock()
        """Held while the lines waiting or the file change (the timer thread writes too)."""
        self._due = threading.Condition(self._lock)
        """Wakes the timer thread when a line comes to wait, or when it is to stop."""
        self._timer: threading.Thread | None = None
        """The thread that writes the lines waiting ``BATCH_SECONDS`` (``_write_when_due``)."""
        self._pid = process_id()
        """The process that opened the stream: a child forked from it writes nothing."""

    def write_start(self, record: StreamStartRecord) -> None:
        """The run as it starts (a ``StreamStart`` record), written at once."""
        self._add(dumps(record))
        self.flush()

    def write_result(self, result: TestResultRecord) -> None:
        """One finished test (a ``TestResult`` record, written without its fields at their
        default)."""
        self.write_stored(compact(RESULT, result))

    def write_stored(self, stored: Record) -> None:
        """One finished test given as the stream stores it: ``compact(RESULT, result)``.

        What the index reads of it is kept in ``Written`` (a plain passing test's line: its
        node id and three times), or where its line starts."""
        self.made[0] += 1
        kept = self._kept
        line = passing_line(stored, kept, self.last)
        if line is None:
            text = f"{RESULT_PREFIX}{dumps(stored)}}}"
            at = self._add(text)
            if kept is not None:
                kept.keep(stored, at, self._added, text)
            return
        self._add(line)

    def count_into(self, made: memoryview) -> None:
        """Count the results handed to this writer in ``made`` from now on (a ``PhaseMark``'s,
        which a process killed leaves behind), starting from those so far."""
        made[0] = self.made[0]
        self.made = made

    def write_diagnostic(self, kind: str, diagnostic: DiagnosticRecord) -> None:
        """A collection error or a warning (a ``Diagnostic`` record)."""
        self._add(dumps({"kind": kind, "diagnostic": diagnostic}))

    def write_deselected(self, count: int) -> None:
        """Deselected tests."""
        self._add(dumps({"kind": "deselected", "count": count}))

    def write_end(self, record: StreamEndRecord) -> None:
        """The run as it ended (a ``StreamEnd`` record), written at once with every line
        waiting."""
        self._add(dumps(record))
        self.flush()

    def _add(self, text: str) -> int:
        """Add ``text`` as one line (a lone surrogate as ``?``), to be written; where it will
        start in the file. Writes the lines waiting when they are due.

        Raises:
            OSError: they were due, and the disk refused them (they wait on).
        """
        if self._fd is None:
            raise ValueError(f"result stream {self.path} is closed")
        text += "\n"
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate
            data = text.encode(errors="replace")
        with self._lock:
            pending = self._pending
            at = self._end + self._size
            if not pending and self._batched:  # the first to wait: the timer starts over
                self._oldest = monotonic()
                self._wake_timer()
            pending.append(data)
            self._added = size = len(data)
            self._size += size
            if len(pending) >= self._limit or self._size >= BATCH_BYTES:
                self._write_pending()
        return at

    def _wake_timer(self) -> None:
        """Have the timer thread write the lines waiting once due (started when there is
        none; when none can start, each line is written at once). Called with the lock held."""
        if self._timer is not None:
            self._due.notify()
            return
        timer = threading.Thread(target=self._write_when_due, name="qbench-stream", daemon=True)
        try:
            timer.start()
        except RuntimeError:  # no thread can start (a limit on threads): no batches
            self._batched = False
            self._limit = 1
            return
        self._timer = timer
        _WRITERS.add(self)
        _fork_hooks()

    def _write_when_due(self) -> None:
        """The timer thread: write the lines waiting once the oldest has waited
        ``BATCH_SECONDS``; end when the writer no longer holds this thread (``close``, a fork).
        A write the disk refuses is tried again ``BATCH_SECONDS`` later."""
        me = threading.current_thread()
        with self._due:
            while self._timer is me:
                if not self._pending:
                    self._due.wait()
                    continue
                wait = self._oldest + BATCH_SECONDS - monotonic()
                if wait > 0:
                    self._due.wait(wait)
                    continue
                try:
                    self._write_pending()
                except Exception:  # a full disk: noted by the main thread's next write if it
                    # fails too; never raised here (pytest would warn of a thread's exception)
                    self._due.wait(BATCH_SECONDS)

    def flush(self) -> None:
        """Write every line waiting (before the stream is read, or a phase of the run is marked
        elsewhere).

        Raises:
            OSError: the disk refused them (they wait on).
        """
        with self._lock:
            self._write_pending()

    def _write_pending(self) -> None:
        """Write the lines waiting, in one write (called with the lock held)."""
        pending = self._pending
        if not pending or self._fd is None:
            return
        if process_id() != self._pid:  # a test's forked child that went on with the session
            pending.clear()
            self._size = 0
            return
        data = self._joined(pending)
        done = 0
        try:
            while done < len(data):  # os.write may write less than asked
                written = os_write(self._fd, data[done:] if done else data)
                if written <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += written
        except OSError:
            self._kept = None  # the file's lines are read back
            self._refused(done, bytes(data))
            raise
        self._torn = False
        self._end += done
        pending.clear()
        self._size = 0
        self._limit = BATCH_RECORDS if self._batched else 1

    def _joined(self, pending: list[bytes]) -> bytes | memoryview:
        """The lines waiting as one buffer, after a line break that ends a torn line: a batch
        copied into the writer's own buffer when it fits, so that writing it makes no object of
        its size. The timer thread writes while a test runs, and a test that measures its
        memory with tracemalloc counts every thread's allocations (xmltodict's streaming test
        failed under qbench: `peak memory too high: 47106 bytes`, 32 KiB allowed)."""
        torn = self._torn
        buffer = self._buffer
        if buffer is None or self._size + torn > len(buffer) or (len(pending) == 1 and not torn):
            data = b"".join(pending) if len(pending) > 1 else pending[0]
            return b"\n" + data if torn else data
        at = 0
        if torn:
            buffer[0:1] = b"\n"
            at = 1
        for line in pending:
            buffer[at : at + len(line)] = line
            at += len(line)
        return memoryview(buffer)[:at]

    def _refused(self, done: int, data: bytes) -> None:
        """After a failed write of ``done`` bytes of ``data``: take them back off the file, or
        leave the line to be ended by the next write; the lines written whole wait no more. The
        next write is tried when twice as many lines wait (a full disk: not one try a record)."""
        pending = self._pending
        if done and not self._cut_back(done, data):
            self._end += done
            whole = data.rfind(b"\n", 0, done) + 1  # the lines written whole end there
            if self._torn and data.startswith(b"\n"):
                whole -= 1
            taken = 0
            while pending and whole >= len(pending[0]):
                whole -= len(pending[0])
                taken += 1
            del pending[:taken]
            self._size = sum(map(len, pending))
            self._torn = not data[:done].endswith(b"\n")
        self._limit = max(self._limit, 2 * len(pending))

    def _cut_back(self, done: int, data: bytes) -> bool:
        """After a failed write of ``done`` bytes of ``data``: take them back off the file
        (``True``), or leave them (a line cut off, to be ended by the next write)."""
        if data[:done].endswith(b"\n"):
            return False
        assert self._fd is not None
        try:
            os_ftruncate(self._fd, os_fstat(self._fd).st_size - done)
        except OSError:
            self.damaged = True
            return False
        return True

    def vanished(self) -> bool:
        """Whether the file was deleted (or replaced) while the stream was open."""
        return self._fd is not None and _replaced(self.path, self._fd)

    def restore(self) -> None:
        """Write what the stream holds back to its path (after the file or its directory was
        deleted), and go on appending there."""
        with self._lock:
            if self._fd is None:
                raise ValueError(f"result stream {self.path} is closed")
            self._write_pending()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = os_open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                offset = 0
                while chunk := os_pread(self._fd, 1 << 20, offset):
                    offset += len(chunk)
                    while chunk:
                        chunk = chunk[os_write(new, chunk) :]
            except BaseException:
                os_close(new)
                raise
            old, self._fd = self._fd, new
            os_close(old)

    def reopen(self) -> None:
        """Append to the file now at ``path`` (after ``repair_stream`` replaced it)."""
        new = os_open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        with self._lock:
            self._kept = None
            if self._fd is not None:
                os_close(self._fd)
            self._fd = new
            self._torn = self.damaged = False

    def close(self) -> None:
        """Write the lines waiting and close the file; ``written`` tells what it holds, when
        its size is what this writer wrote, ``unwritten`` the lines the disk refused."""
        self._stop_timer()
        with self._lock:
            if self._fd is None:
                return
            with suppress(OSError):
                self._write_pending()
            self.unwritten, self._pending = self._pending, []
            self._size = 0
            kept, self._kept = self._kept, None
            if kept is not None and not self.unwritten:
                with suppress(OSError):
                    kept.stat = _identity(os_fstat(self._fd))
                    if kept.stat[2] == self._end:
                        self.written = kept
            os_close(self._fd)
            self._fd = None

    def _stop_timer(self, forking: bool = False) -> None:
        """Write the lines waiting and end the timer thread (the next line waiting starts
        another): at ``close``, and before the process forks (``forking``: until the system no
        longer counts the thread, which Python 3.12's ``join`` does not wait for)."""
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is None:
                return
            with suppress(OSError):
                self._write_pending()
            self._due.notify()
        _WRITERS.discard(self)
        if timer is threading.current_thread():
            return
        threads = _os_threads() if forking and sys.version_info < (3, 13) else None
        timer.join()
        if threads is not None:
            deadline = monotonic() + 1.0
            while (_os_threads() or 0) >= threads and monotonic() < deadline:
                sleep(0.0002)

    def forget(self) -> None:
        """In a child forked while the stream is open: hold no line of the parent's (the parent
        writes them) and no lock another thread of the parent held."""
        self._pending = []
        self._size = 0
        self._timer = None
        self._lock = threading.Lock()
        self._due = threading.Condition(self._lock)


def _os_threads() -> int | None:
    """The threads of this process as the system counts them (``/proc/self/stat``), ``None``
    where it cannot tell."""
    fields = _process_stat(os.getpid())
    try:
        return None if fields is None else int(fields[17])
    except ValueError:
        return None


_WRITERS: set[StreamWriter] = set()
"""The batched stream writers of this process whose timer thread runs."""
_BEFORE_FORK = compile(
    "for writer in list(writers):\n    writer._stop_timer(True)", __name__, "exec"
)
"""Before a fork: each batched stream writes its lines waiting and stops its timer thread."""
_IN_CHILD = compile(
    "for lock in held:\n    lock.forget()\nheld.clear()\n"
    "for writer in writers:\n    writer.forget()\nwriters.clear()",
    __name__,
    "exec",
)
"""In a forked child: close the descriptors of the run locks the parent holds (the parent's
locks stay: only closing the last descriptor, or unlocking, releases one), and hold no line or
lock of the parent's streams."""


def wait_written(seconds: float = 60.0) -> bool:
    """Wait until every batched stream of this process has written the records that wait (its
    timer writes them ``BATCH_SECONDS`` after the first), ``seconds`` at most; whether they all
    were. For a test that ends its process on purpose (``os._exit``, a signal) after the
    ``BATCH_SECONDS`` a run killed keeps its results from (the stream is not written here)."""
    deadline = monotonic() + seconds
    while any(writer._pending for writer in list(_WRITERS)):
        if monotonic() > deadline:
            return False
        sleep(0.01)
    return True


@functools.cache
def _fork_hooks() -> None:
    """Register what each fork of this process does, once a process (a child inherits the
    registration), for the run locks (``_HELD``) and the batched streams (``_WRITERS``) alike:
    ``_BEFORE_FORK`` before it, so that the child holds none of the parent's lines and Python
    3.12+ finds one thread, and does not warn ("This process is multi-threaded, use of fork()
    may lead to deadlocks in the child"), which a user's suite may count or turn into an error;
    ``_IN_CHILD`` in the child. Code objects run by ``exec`` in a namespace of their own, not
    functions of this module: the interpreter keeps what is registered to its very end, and a
    function would keep the module's globals and all they reach through its last collections
    (+9.4 M instructions a run, measured by callgrind)."""
    if hasattr(os, "register_at_fork"):
        namespace = {"held": _HELD, "writers": _WRITERS}
        os.register_at_fork(
            before=functools.partial(exec, _BEFORE_FORK, namespace),
            after_in_child=functools.partial(exec, _IN_CHILD, namespace),
        )


class Written:
    """What a ``StreamWriter`` wrote of a run's results, so that the index need not read back
    the lines whose row it knows (issue 28): per result in order, the node id (as written: the
    decoded text of its line, but a lone surrogate's ``?``) and a ``ROW`` of the duration,
    setup and teardown seconds and the outcome's code (``KEPT_OUTCOMES``) of a result that did
    not fail, rerun or score; for any other, ``None`` and a ``ROW`` of the offset and size of
    its line in the file, a zero and 0. 8 bytes a result in ``nodeids`` (the node id is the test's
    own ``str``), 25 in ``rows``. For a plain failing result (failed or errored, no reruns,
    attempts or metrics, an ASCII line), the zero is the length of its line's head: the bytes
    before its failure's stack trace, which hold all the index reads of it, so that the rest of
    its line (its traceback, frames and output) is not read back (issue 28); nothing more is
    held.
    """

    __slots__ = ("nodeids", "path", "rows", "stat")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodeids: list[str | None] = []
        self.rows = bytearray()
        self.stat: tuple[int, ...] = ()
        """The file's device, inode, size and modification time when its writer closed it."""

    def keep(self, stored: Record, at: int, size: int, line: str = "") -> None:
        """Keep a result written otherwise than by ``passing_line`` (whose line of ``size``
        bytes starts at byte ``at``): its row's values when its line gives a row of those
        alone (the index reads any line that holds its reruns, flakiness, attempts or metrics
        whole), else where its line is (``line``: its text, for a failing line's head)."""
        code = KEPT_OUTCOMES.get(stored.get("outcome"))  # type: ignore[arg-type]
        if (
            code
            and "reruns" not in stored
            and "flaky" not in stored
            and "attempts" not in stored
            and "metric_results" not in stored
        ):
            nodeid, phases = stored.get("nodeid"), stored.get("durations", _NO_PHASES)
            if type(phases) is dict:
                seconds = stored.get("duration", 0.0)
                setup, teardown = phases.get("setup", 0.0), phases.get("teardown", 0.0)
                if (
                    type(nodeid) is str
                    and type(seconds) is float
                    and type(setup) is float
                    and type(teardown) is float
                ):
                    self.nodeids.append(nodeid)
                    self.rows += _pack_row(seconds, setup, teardown, code)
                    return
        self.nodeids.append(None)
        self.rows += _pack_row(at, size, _failing_head(stored, line) if line else 0.0, 0)

    def unchanged(self) -> bool:
        """Whether the file is still the one its writer closed."""
        try:
            return bool(self.stat) and _identity(os.stat(self.path)) == self.stat
        except OSError:
            return False


ROW = struct.Struct("<3dB")
"""A kept result's times (or its line's offset, size and a zero) and outcome code, packed: one
``pack`` a test, not the three conversions of an ``array("d")``'s items (issue 28)."""
_pack_row = ROW.pack
KEPT_OUTCOMES = {"passed": 1, "skipped": 2, "xfailed": 3, "xpassed": 4}
"""The outcomes whose row ``Written`` keeps, by code (0: a line to read)."""
_NO_PHASES: dict[str, float] = {}


_FAILING_OUTCOMES = frozenset(("failed", "error"))
FAILING_HEAD_END = ',"stack_trace":"'
"""Where a failing line's head ends: its failure's stack trace, after the fields the index
reads (a string value's quotes are escaped: only a key can hold it)."""


def _failing_head(stored: Record, line: str) -> float:
    """The length of a plain failing result's line up to its failure's stack trace (``Written``);
    0 for a line read back whole: another outcome, reruns, flaky, attempts or metrics, text
    that is not ASCII (its length in characters is then not in bytes), no stack trace."""
    if (
        stored.get("outcome") not in _FAILING_OUTCOMES
        or "reruns" in stored
        or "flaky" in stored
        or "attempts" in stored
        or "metric_results" in stored
        or not line.isascii()  # a flag of the string: no scan
    ):
        return 0.0
    return float(max(line.find(FAILING_HEAD_END), 0))


def _identity(found: os.stat_result) -> tuple[int, ...]:
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def iter_result_json(stream: Path, check: bool = False) -> Iterator[str]:
    """The raw JSON of every result in a stream, in order (no parsing: this is the fast path).
    Fields at their default are not in it: parse with ``read_result``, which restores them.

    With ``check``, each result is parsed, and a line that is not whole JSON (torn by a failed
    write) is skipped: for a stream whose writer reported ``damaged``.
    """
    # A torn last line may end inside a multi-byte character: it must not stop the reading.
    with stream.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith(RESULT_PREFIX) and line.endswith("}\n"):
                item = line[len(RESULT_PREFIX) : -2]
                if check and not _is_json_object(item):
                    continue
                yield item


def read_result(raw: str) -> TestResultRecord:
    """A result's JSON (from ``iter_result_json``) as a whole record: the fields left out at
    their default restored."""
    return cast("TestResultRecord", expand(RESULT, json.loads(raw)))


def repair_stream(stream: Path) -> int:
    """Rewrite a stream without the lines that are not whole JSON records (torn by a failed
    write); return how many were dropped. The file is replaced atomically."""
    kept: list[str] = []
    dropped = 0
    with stream.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.endswith("\n") and _is_json_object(line):
                kept.append(line)
            elif line.strip():
                dropped += 1
    if dropped:
        atomic.write_text_atomic(stream, "".join(kept))
    return dropped


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def write_report_json(
    path: Path | str,
    report: TestReportRecord,
    stream: Path | None,
    patches: Mapping[str, Record] | None = None,
    check: bool = False,
    results_json: Iterable[str] | None = None,
) -> None:
    """Write a ``TestReport`` record as JSON, each result ``compact``; a ``stream``'s results
    (compact already) are spliced in unparsed (parsed, and torn lines skipped, with ``check``:
    a stream whose writer was ``damaged``). ``results_json``: the compact JSON of
    ``report["results"]``, written as is instead of dumping them (a rebuild from the stream).

    Compact JSON of a list is its items' JSON joined by commas, so the file is exactly the
    report's JSON with the stream's results as ``results``, without holding them in memory.
    ``patches`` (node id to fields) amends failed and errored results of the stream, which are
    parsed for it: their ``history`` is known only when the run has ended. ``-`` is stdout
    (the JSON, then a newline).
    """
    if str(path) == "-":
        _write_report(sys.stdout, report, stream, patches, check, results_json)
        sys.stdout.write("\n")
        sys.stdout.flush()
        return
    with atomic.atomic_writer(Path(path)) as handle:
        _write_report(handle, report, stream, patches, check, results_json, copy_bytes=True)


def _write_report(
    handle: IO[str],
    report: TestReportRecord,
    stream: Path | None,
    patches: Mapping[str, Record] | None,
    check: bool,
    results_json: Iterable[str] | None = None,
    copy_bytes: bool = False,
) -> None:
    head = dumps({**report, "results": []})
    marker = '"results":[]'
    cut = head.index(marker) + len(marker) - 1
    handle.write(head[:cut])
    first = True
    raw = getattr(handle, "buffer", None) if copy_bytes and not check else None
    if stream is not None and raw is not None:  # a UTF-8 file of atomic_writer's
        first = _copy_or_loop(handle, raw, stream, patches or {})
    elif stream is not None:
        first = _text_results(handle, stream, patches, check)
    if results_json is None:
        results_json = (dumps(compact(RESULT, result)) for result in report["results"])
    for item in results_json:
        handle.write(item if first else "," + item)
        first = False
    handle.write(head[cut:])


def _text_results(
    handle: IO[str], stream: Path, patches: Mapping[str, Record] | None, check: bool
) -> bool:
    """The results of ``stream`` written to ``handle`` a line at a time (each result's JSON,
    commas between, ``patches`` applied); return whether no result was written."""
    first = True
    for item in iter_result_json(stream, check):
        if patches:
            item = patch_result_json(item, patches)
        handle.write(item if first else "," + item)
        first = False
    return first


def _copy_or_loop(
    handle: IO[str], raw: IO[bytes], stream: Path, patches: Mapping[str, Record]
) -> bool:
    """`_copy_results` into ``raw``, the byte buffer under ``handle``; where it raises (a bug
    in the fast path), what it wrote is taken back and `_text_results` writes the results, the
    same bytes, so the report loses nothing. A file that cannot be taken back (a pipe, a
    device) gets `_text_results` alone. Return whether no result was written."""
    handle.flush()  # what was written as text goes first
    if not raw.seekable():
        return _text_results(handle, stream, patches, False)
    start = raw.tell()
    try:
        return _copy_results(raw.write, stream, patches)
    except Exception:
        raw.seek(start)
        raw.truncate()
        return _text_results(handle, stream, patches, False)


_FAILING_MARKS = ('"outcome":"failed"', '"outcome":"error"')
_BLOCK = 1 << 16
"""Bytes of a stream read at once by ``stream_blocks``: what its reader holds, whatever the
run's size."""


def stream_blocks(stream: Path) -> Iterator[str]:
    """A stream's whole lines (each ended by a newline), a block of them at a time, read as
    ``iter_result_json`` reads them: a torn last line without its newline is left out.

    Only the text of one block is held: its bytes are decoded once, up to its last newline (a
    line its end cuts comes with the next block), and let go before the next block is read.
    """
    with stream.open("rb", buffering=0) as handle:
        rest = b""  # the start of a line the last block's end cut
        while True:
            data = handle.read(_BLOCK)
            if not data:
                return
            if rest:
                data, rest = rest + data, b""
            cut = data.rfind(b"\n") + 1
            if cut < len(data):
                rest = data[cut:]
            if cut:
                with memoryview(data) as whole:
                    text = _block_text(whole[:cut])
                data = b""
                yield text
                text = ""


def _block_text(data: bytes | memoryview) -> str:
    """A block's whole lines as ``iter_result_json`` reads them (UTF-8, ``replace``; universal
    newlines)."""
    text = str(data, "utf-8", "replace")
    if "\r" in text:  # as text mode reads it (a stream's own lines hold none)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _line_blocks(stream: Path) -> Iterator[tuple[bytes, int]]:
    """A stream's bytes, about ``_BLOCK`` of them at a time, and where the block's last whole
    line ends: the next block is read from there (``os.pread``), so a line the block's end
    cut is not copied. A torn last line without its newline is left out."""
    fd = os.open(stream, os.O_RDONLY)
    try:
        offset, size = 0, _BLOCK
        while data := os.pread(fd, size, offset):
            end = data.rfind(b"\n") + 1
            if not end:  # a line longer than the block, or a torn last line
                if len(data) < size:
                    return
                size *= 2
                continue
            yield data, end
            offset += end
            size = _BLOCK
            data = b""
    finally:
        os.close(fd)


_PREFIX_BYTES = RESULT_PREFIX.encode()
_BETWEEN = b"}\n" + _PREFIX_BYTES
"""Where one result's line ends and the next one's begins: a line holds no newline, so each
match is a boundary between two result lines."""
_FAILING_BYTES = tuple(mark.encode() for mark in _FAILING_MARKS)


def _copy_results(
    write: Callable[[bytes], object], stream: Path, patches: Mapping[str, Record]
) -> bool:
    """Write the results of ``stream`` to a UTF-8 file's ``write`` as ``_write_report``'s text
    loop writes them (each result's JSON, commas between, ``patches`` applied), byte for byte,
    without decoding a line: a block's stretch of result lines is its bytes less the first
    prefix and the last ``}\\n``, each boundary between two lines replaced by a comma (one
    ``replace``: 2.2 k instructions a line, against 9.8 k for the line by line loop's reading,
    decoding, checks and writes: issue 28). A failed or errored line (``patch_result_json``)
    is written alone; a block whose bytes are not valid UTF-8, hold a carriage return, or
    hold another line than a result's (the run's start and end, a warning) is read as the
    text loop reads it. Return whether no result was written."""
    first = True
    for data, end in _line_blocks(stream):
        if b"\r" in data or not (data.isascii() or _is_utf8(data[:end])):
            for line in _block_text(data[:end]).split("\n"):  # as the text loop reads it
                first = _write_line(write, line + "\n", patches, first)
            continue
        at = 0
        failed = error = -2  # where each failing mark is next (-1: none left; -2: not looked)
        while at < end:
            stop = end
            if patches:
                if failed != -1 and failed < at:
                    failed = data.find(_FAILING_BYTES[0], at, end)
                if error != -1 and error < at:
                    error = data.find(_FAILING_BYTES[1], at, end)
                mark = min(failed, error) if failed >= 0 and error >= 0 else max(failed, error)
                if mark >= 0:
                    stop = data.rfind(b"\n", at, mark) + 1 or at
            if stop > at:
                first = _write_stretch(write, data, at, stop, patches, first)
            if stop < end:  # the failing line, alone
                after = data.find(b"\n", stop) + 1
                if _write_failing(write, data, stop, after, patches, first):
                    first = False
                else:
                    line = data[stop:after].decode()
                    first = _write_line(write, line, patches, first, failing=True)
                stop = after
            at = stop
    return first


_NODEID_BYTES = b'{"nodeid":"'
_NODEID_END = b'","'
"""Where a result's node id ends: in a JSON string a quote is escaped, so only its closing
quote and the next field's key can hold these."""


def _write_failing(
    write: Callable[[bytes], object],
    data: bytes,
    start: int,
    end: int,
    patches: Mapping[str, Record],
    first: bool,
) -> bool:
    """The failing line ``data[start:end]`` (UTF-8, no carriage return, ``\\n`` ended) as
    ``_write_line`` writes it, without decoding it and encoding it again (about 25 k
    instructions a failing line of 4 kB: issue 28): its node id alone decoded, its patch's
    fields appended to its bytes (``_appended``). Whether it was written: ``False`` for a line
    ``_patch_failing`` would parse (a patched field there already, no node id first), written
    nowhere."""
    body = start + len(_PREFIX_BYTES)
    if not (
        data.startswith(_PREFIX_BYTES, start)
        and data.startswith(_NODEID_BYTES, body)
        and data.endswith(b"}}\n", start, end)
    ):
        return False
    close = data.find(_NODEID_END, body + len(_NODEID_BYTES), end)
    if close < 0:
        return False
    opening = data[body : close + 1].decode()
    nodeid, at = scanstring(opening, len(NODEID_OPENING))
    if at != len(opening):
        return False
    patch = patches.get(nodeid)
    added = b""
    if patch is not None:
        for key in patch:
            if data.find(f'"{key}":'.encode("utf-8", "replace"), body, end) >= 0:
                return False
        text = dumps(compact(RESULT, patch))
        if text != "{}":
            added = f",{text[1:]}".encode("utf-8", "replace")
    if not first:
        write(b",")
    if added:
        write(data[body : end - 3])
        write(added)
    else:
        write(data[body : end - 2])
    return True


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _write_line(
    write: Callable[[bytes], object],
    line: str,
    patches: Mapping[str, Record],
    first: bool,
    failing: bool = False,
) -> bool:
    """One line (``\\n`` ended), as the text loop writes it; whether no result was written.
    ``failing``: the line holds one of ``_FAILING_MARKS`` (not looked for again)."""
    if not (line.startswith(RESULT_PREFIX) and line.endswith("}\n")):
        return first
    item = line[len(RESULT_PREFIX) : -2]
    if failing:
        item = _patch_failing(item, patches)
    elif patches:
        item = patch_result_json(item, patches)
    write((item if first else "," + item).encode("utf-8", "replace"))  # as atomic_writer's file
    return False


def _write_stretch(
    write: Callable[[bytes], object],
    data: bytes,
    at: int,
    stop: int,
    patches: Mapping[str, Record],
    first: bool,
) -> bool:
    """The lines ``data[at:stop]`` (UTF-8, no carriage return, none failing when there are
    ``patches``), as the text loop writes them; whether no result was written."""
    prefix = _PREFIX_BYTES
    while at < stop and not data.startswith(prefix, at):  # not a result's line (the start)
        line_end = data.find(b"\n", at, stop)
        at = stop if line_end < 0 else line_end + 1
    while at < stop:  # the last line not a result's (the run's end): not written
        last = data.rfind(b"\n", at, stop - 1) + 1 or at
        if data.startswith(prefix, last) and data.endswith(b"}\n", last, stop):
            break
        stop = last
    if at >= stop:
        return first
    body = data[at + len(prefix) : stop - 2].replace(_BETWEEN, b",")
    if b"\n" not in body:  # each boundary was between two results' lines
        if not first:
            write(b",")  # not b"," + body: a copy of the lines (issue 28)
        write(body)
        return False
    for line in data[at:stop].decode().split("\n"):  # a warning between them: line by line
        first = _write_line(write, line + "\n", patches, first)
    return first


def patch_result_json(item: str, patches: Mapping[str, Record]) -> str:
    """A failed or errored result's JSON with its patch applied (field order kept); any other
    result's JSON as is, unparsed.

    A string value cannot hold ``"outcome":"failed"`` unescaped, so only results that failed
    (or that hold a failed subtest or attempt) are looked at. Their node id (the first field)
    is read alone; a patch of fields the line does not hold is appended to its text, as
    parsing it, adding the fields and dumping it again would write them (``dumps`` of a line
    ``dumps`` wrote gives it back as it was), without parsing the line (its traceback and
    frames: about 400 k instructions a failing line). Another patch is applied to the parsed
    line.
    """
    if _FAILING_MARKS[0] not in item and _FAILING_MARKS[1] not in item:  # no generator a line
        return item
    return _patch_failing(item, patches)


def _patch_failing(item: str, patches: Mapping[str, Record]) -> str:
    """``patch_result_json`` of a result's JSON that holds one of ``_FAILING_MARKS``."""
    if item.startswith(NODEID_OPENING) and item.endswith("}"):
        patch = patches.get(scanstring(item, len(NODEID_OPENING))[0])
        if patch is None:
            return item
        added = _appended(item, patch)
        if added is not None:
            return added
    result = json.loads(item)
    patch = patches.get(result["nodeid"])
    return item if patch is None else dumps(compact(RESULT, {**result, **patch}))


NODEID_OPENING = '{"nodeid":"'
"""How a stored result's JSON begins: its node id is the first field."""


def _appended(item: str, patch: Record) -> str | None:
    """``item`` with the fields of ``patch`` that ``compact`` keeps added at its end, as
    ``dumps(compact(RESULT, {**json.loads(item), **patch}))`` writes them; ``None`` when a
    field's key is in ``item`` already (the patch replaces or drops a value in place)."""
    for key in patch:
        if f'"{key}":' in item:
            return None
    text = dumps(compact(RESULT, patch))
    return item if text == "{}" else f"{item[:-1]},{text[1:]}"
