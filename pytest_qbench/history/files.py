"""Finding the qbench directory, reading run directories for ``qbench index``, and indexing
the runs that died (the history's commands, the MCP server's and the next run's session end)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.errors import ReportFormatError
from pytest_qbench.core.gc_pause import paused_gc
from pytest_qbench.core.records import dataclass
from pytest_qbench.history import sql
from pytest_qbench.report import store
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from pytest_qbench.history.backend import Index
    from pytest_qbench.history.indexer import Indexed
    from pytest_qbench.history.indexer import Record


QBENCH_DIR = ".qbench"


def find_qbench_dir(given: Path | None, start: Path | None = None) -> Path:
    """``--dir`` when given; else the ``.qbench`` directory in ``start`` (the working directory)
    or its nearest parent holding one.

    Raises:
        HistoryError: ``--dir`` is not a directory, or no ``.qbench`` was found.
    """
    if given is not None:
        if not given.is_dir():
            raise HistoryError(
                f"--dir {given} is not a directory; give the qbench directory (.qbench, or "
                "what --qbench-dir named)",
                slug="no-qbench-dir",
            )
        return given
    here = (start or Path.cwd()).resolve()
    blocked = None
    for folder in (here, *here.parents):
        found = folder / QBENCH_DIR
        if found.is_dir():
            return found
        if blocked is None and found.exists():  # a file: pytest refuses it too (--qbench-dir)
            blocked = found
    if blocked is not None:
        raise HistoryError(
            f"{blocked} is a file, not a qbench directory; move it away (pytest then makes "
            "the directory), or give --dir DIR",
            slug="no-qbench-dir",
        )
    raise HistoryError(
        f"no {QBENCH_DIR} directory in {here} or its parents; run pytest with qbench first, "
        "or give --dir DIR",
        slug="no-qbench-dir",
    )


@dataclass
class LoadedRun:
    """A run read for indexing."""

    source: Path
    report: Record
    note: str | None = None


def run_sources(qbench_dir: Path, given: Iterable[Path], indexed: Sequence[str] = ()) -> list[Path]:
    """The run directories or report files given; without any, every run directory of the
    store that holds a report or a stream, oldest first in the index's one order
    (``runref.in_run_order``): the runs of ``indexed`` (the index's run ids, oldest first) as
    they were indexed before, the others by the start their streams recorded (never by their
    names: a run id is not an order)."""
    listed = list(given)
    if listed:
        return listed
    runs = qbench_dir / store.RUNS_DIR
    if not runs.is_dir():
        return []
    from pytest_qbench.report.runref import in_run_order

    return in_run_order(
        (
            d
            for d in runs.iterdir()
            if (d / store.REPORT_JSON).is_file() or (d / store.STREAM_NAME).is_file()
        ),
        indexed,
    )


def index_order(qbench_dir: Path | None, db: str | None) -> list[str]:
    """The ids of the runs in the history index (``db``, else ``qbench_dir``'s), oldest first
    in its one order (``queries.runs_in_order``); none when there is no index.

    Raises:
        HistoryError: the index exists and cannot be read.
    """
    from pytest_qbench.history.database import existing_index
    from pytest_qbench.history.queries import runs_in_order

    index = existing_index(qbench_dir, db)
    if index is None:
        return []
    try:
        return runs_in_order(index)
    finally:
        index.close()


def died_runs(qbench_dir: Path | None) -> list[Path]:
    """The run directories of the store whose run died (killed, ``os._exit``): a stream without
    its end record, no ``report.json``, and no run holding the directory; oldest first by the
    start their streams recorded (``runref.in_run_order``; never by their names: a run id is
    not an order), the order they are indexed in. Such a run never indexed itself, so the
    history's commands index it before they answer (``qbench runs``). A run that finished but
    could not write its report.json keeps its mark (``store.note_unwritten``), as one killed
    during its session's end (``store.killed_at_end``): it is one of them. So is one that wrote
    its report.json but could not index itself (an error of the index, or of qbench's, as it
    ended): it keeps its mark (``_unindexed``), and is indexed from its report.json."""
    if qbench_dir is None or not (runs := qbench_dir / store.RUNS_DIR).is_dir():
        return []
    marked = set(store.unfinished_runs(qbench_dir))
    died = [d for d in runs.iterdir() if _unindexed(d, marked) or _died(d)]
    if len(died) < 2:  # nothing to order: no start read
        return died
    from pytest_qbench.report.runref import in_run_order

    return in_run_order(died, ())


def _unindexed(run_dir: Path, marked: set[str]) -> bool:
    """Whether the run of ``run_dir`` wrote its report.json but could not index itself: it
    kept its mark (``marked``: the marks) and no longer runs."""
    return (
        run_dir.name in marked
        and (run_dir / store.REPORT_JSON).exists()
        and not store.run_in_progress(run_dir)
    )


def _died(run_dir: Path) -> bool:
    stream = run_dir / store.STREAM_NAME
    try:
        written = stream.stat().st_size > 0  # empty: killed before the start record, no run
    except OSError:  # none: no run's, unless marked (its writer failed, store.unrecorded)
        written = False
    if not written:  # unless marked: its start record failed, it died unrecorded
        return store.unrecorded(run_dir)
    return (
        not (run_dir / store.REPORT_JSON).exists()
        and not store.run_in_progress(run_dir)
        and (not store.stream_ended(stream) or store.killed_at_end(run_dir, going=False))
    )


def _marked_died(run_dir: Path) -> bool:
    """``_died`` of a run marked unfinished that no longer runs: its mark says it never wrote
    its reports, or never indexed itself, so it is one to index whatever its stream holds
    (killed at its session's end, ``store.killed_at_end``; an empty stream or none, its start
    record or its writer failed, ``store.unrecorded``) or whether it has its report.json
    (``_unindexed``); its stream's end is not read, nor is whether it runs asked again
    (``died_marked`` asked). A directory gone is no run's. A run whose mark stays until
    ``qbench render`` (killed at its end) costs each later run's session end this and one row
    of the index."""
    return run_dir.is_dir()


def died_marked(qbench_dir: Path, own: str) -> list[Path]:
    """The run directories of the runs that died among those marked unfinished
    (``store.mark_unfinished``), but ``own`` (the run asking), in the order they were marked;
    the marks of every other run that is no longer going and did not die (it finished without
    taking its mark away, or is gone) are taken away. The marks of the runs that died stay
    until they are indexed (``unmark_indexed``): a run that dies or fails to index them leaves
    them to the next. A run that finished has taken its own mark away, so the one listing is of
    a directory that is mostly empty, not of ``runs/``."""
    died = []
    for run_id in store.unfinished_runs(qbench_dir):
        run_dir = store.run_dir(qbench_dir, run_id)
        if run_id == own or store.run_in_progress(run_dir):
            continue
        if _marked_died(run_dir):
            died.append(run_dir)
        else:
            store.unmark_unfinished(qbench_dir, run_id)
    # marked in the order they started (the file system's clock, not the runs' own), so that
    # the index holds them in that order
    return sorted(died, key=lambda d: (store.marked_at(qbench_dir, d.name), d.name))


def unmark_indexed(qbench_dir: Path, died: Sequence[Path]) -> None:
    """Take away the marks of the runs that died, once they are indexed (or could not be read:
    ``index_died`` said so, and ``qbench index`` can try again)."""
    for run_dir in died:
        # a run killed at its session's end keeps its mark until its report.json is written
        # (``qbench render``), so that its rebuilt report still says it is incomplete, and
        # `qbench index`, the history's commands and an older qbench read it so
        # (one that died unrecorded, store.unrecorded, too: its mark says its stream is a run's)
        going = store.run_in_progress(run_dir)  # asked once
        if not (going or store.killed_at_end(run_dir, going) or store.unrecorded(run_dir, going)):
            store.unmark_unfinished(qbench_dir, run_dir.name)


def open_seeing_died(qbench_dir: Path | None, db: str | None, say: Callable[[str], None]) -> Index:
    """The history index (``open_index``: ``db``, else ``qbench_dir``'s), with the runs that
    died in ``qbench_dir`` (``died_runs``) indexed first, each named through ``say``: what
    the history's commands and the MCP server's history tools answer from, so that a run
    killed mid-test is their last run, as the next pytest run's history counts it.

    Raises:
        HistoryError: the index cannot be opened, or a run that died cannot be indexed into it.
    """
    from pytest_qbench.history.database import open_index

    died = died_runs(qbench_dir)
    try:
        index = open_index(qbench_dir, db, create=bool(died))
    except HistoryError as exc:
        if not died or exc.slug not in ("index-read-only", "index-io"):
            raise
        # a store this user may not write: answer from the index as it is, read-only
        index = open_index(qbench_dir, db)
        names = ", ".join(run_dir.name for run_dir in died)
        say(f"the runs that died ({names}) are not in the index: {exc}")
        return index
    try:
        index_died(index, died, say)
    except BaseException:
        index.close()
        raise
    return index


def index_died(index: Index, died: Sequence[Path], say: Callable[[str], None]) -> list[str]:
    """Index the runs that died (``died_runs``, ``died_marked``) and are not in the index yet,
    each named through ``say``: they could not index themselves, and a history without them
    tells of the run before as the last one. A run killed during its session's end after it
    indexed itself (``store.killed_at_end``) is in the index as complete: it is indexed again,
    incomplete, once. The ids of the runs indexed."""
    if not died:
        return []
    incomplete = _incomplete_runs(index, [d.name for d in died])
    fresh = [source for source in died if source.name not in incomplete]
    indexed, _skipped = index_sources(index, fresh, strict=False, say=say)
    return [done.run_id for _source, done in indexed]


def _incomplete_runs(index: Index, run_ids: Sequence[str]) -> set[str]:
    """Those of ``run_ids`` the index holds with recording errors (as incomplete): the rows of
    these runs only, whatever the index holds besides (it read every run's id, 50 queries for
    50 runs killed at their end, at each later run's session end)."""

    def incomplete(cursor: Any) -> set[str]:
        found: set[str] = set()
        for batch in sql.batches(run_ids):
            cursor.execute(
                "SELECT run_id FROM runs WHERE recording_errors <> 0 "
                f"AND run_id IN ({sql.marks(len(batch))})",
                batch,
            )
            found.update(str(row[0]) for row in cursor.fetchall())
        return found

    return index.read(incomplete)


def index_sources(
    index: Index, sources: Sequence[Path], *, strict: bool, say: Callable[[str], None]
) -> tuple[list[tuple[Path, Indexed]], int]:
    """Index each source (``load_run``), one transaction each, with what indexing did; a run
    still going, a collection (``--collect-only``) or a copy of a run indexed from another
    source is left out, said through ``say``. A source that cannot be read is an error when
    ``strict`` (it was named), else it is skipped with a message. Also the number skipped.

    Raises:
        QBenchError: ``strict``, and a source cannot be read.
    """
    from functools import partial

    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.history.indexer import index_run

    indexed, skipped = [], 0
    holders: dict[str, Path] = {}
    for source in sources:
        if store.run_in_progress(source):  # its run indexes it when it ends
            say(f"skipped {source}: its run is still going (it is indexed when it ends)")
            skipped += 1 if strict else 0
            continue
        try:
            loaded = load_run(source)
        except QBenchError as exc:
            if strict:
                raise
            say(f"skipped {source}: {exc}")
            skipped += 1
            continue
        if loaded.note:
            say(loaded.note)
        if loaded.report["run"].get("collect_only"):  # a collection, not a run of the tests
            say(f"skipped {source}: a --collect-only run ran no tests")
            continue
        twin = _twin_of(source, str(loaded.report["run"]["run_id"]), holders)
        if twin is not None:
            say(
                f"skipped {source}: it holds run {loaded.report['run']['run_id']}, as "
                f"{twin} does (a copied run directory?); give the copy a run id of its own, or "
                "remove it"
            )
            skipped += 1
            continue
        indexed.append(
            (source, index_run(index, loaded.report, partial(results_of, loaded.report)))
        )
    return indexed, skipped


def _twin_of(source: Path, run_id: str, holders: dict[str, Path]) -> Path | None:
    """Another source holding the same run as ``source``, so that one never silently replaces
    the other in the index: one indexed earlier in this pass, or, for a run directory named
    otherwise than its run (a copy), the directory beside it that is named after the run."""
    if run_id in holders:
        return holders[run_id]
    namesake = source.parent / run_id
    if source.is_dir() and source.name != run_id and namesake.is_dir():
        return namesake
    holders[run_id] = source
    return None


def results_of(report: Record) -> list[Record]:
    """A loaded report's results, for ``index_run``."""
    results: list[Record] = report["results"]
    return results


def load_run(source: Path) -> LoadedRun:
    """A run directory's ``report.json`` (else its ``results.jsonl``), or a report file.

    Raises:
        ReportFormatError: nothing readable there, or not a qbench report.
    """
    if source.is_dir():
        report_file = source / store.REPORT_JSON
        if report_file.is_file():
            try:
                return LoadedRun(source, read_report_record(report_file))
            except ReportFormatError as exc:
                if exc.slug != "report-invalid" or not (source / store.STREAM_NAME).is_file():
                    raise
                raise ReportFormatError(  # damaged (a disk fault, a hand's edit): the stream is not
                    f"{exc}; 'qbench render {source}' rebuilds it from its {store.STREAM_NAME}",
                    slug="report-invalid",
                ) from None
        if store.holds_stream(source):
            return _from_stream(source)
        raise ReportFormatError(
            f"{source} holds neither {store.REPORT_JSON} nor {store.STREAM_NAME}: not a run "
            "directory",
            slug="not-a-run",
        )
    return LoadedRun(source, read_report_record(source))


def _from_stream(source: Path) -> LoadedRun:
    from pytest_qbench.report import readers

    contents = readers.read_stream(source / store.STREAM_NAME)
    report = readers.report_from_stream(contents).model_dump(mode="json")
    note = (
        f"{source} has no {store.REPORT_JSON}: indexed from {store.STREAM_NAME}; "
        f"'qbench render {source}' writes its reports"
    )
    return LoadedRun(source, report, note)


def read_report_record(path: Path) -> Record:
    """A ``report.json`` as plain data, with the fields the index reads checked by the models:
    ``meta.schema_version``, ``run`` (`RunMeta`), ``summary`` (`ReportSummary`) and each
    result's ``nodeid`` and ``outcome`` (not whole `TestResult` models: a large report loads in
    a fraction of the time).

    Raises:
        ReportFormatError: unreadable, not JSON, another schema version, or a field invalid.
    """
    try:
        with path.open("rb") as handle:
            text = handle.read()
        with paused_gc():
            data = json.loads(text)
    except OSError as exc:
        raise ReportFormatError(
            f"cannot read report {path}: {exc.strerror}", slug="report-read"
        ) from None
    except ValueError as exc:  # also UnicodeDecodeError
        raise ReportFormatError(
            f"{path} is not a qbench report: {exc}", slug="report-invalid"
        ) from None
    except RecursionError:
        raise _invalid(path, "(top level): JSON nested too deep") from None
    _refuse_other_version(data, path)
    from pydantic import ValidationError

    from pytest_qbench.report.readers import first_error

    try:
        # JSON's strict mode: a count is a JSON integer (not true, nor "5"), a time a string.
        _indexed_report().validate_json(text, strict=True)
    except ValidationError as exc:
        raise _invalid(path, first_error(exc)) from None
    return dict(data)


def _refuse_other_version(data: Any, path: Path) -> None:
    # The models' schema version, without importing pydantic (shapes.json is made from them).
    schema_version = new("ReportMeta", qbench_version="", created_at="")["schema_version"]
    meta = data.get("meta") if isinstance(data, dict) else None
    version = meta.get("schema_version", schema_version) if isinstance(meta, dict) else None
    if version != schema_version and isinstance(version, int):
        raise ReportFormatError(
            f"{path} has schema_version {version}; this qbench reads {schema_version}. "
            "Upgrade qbench.",
            slug="schema-version",
        )


@functools.cache
def _indexed_report() -> TypeAdapter[Any]:
    """The validator of the parts of a report the index reads (built once, when first used)."""
    from pydantic import TypeAdapter
    from typing_extensions import TypedDict

    from pytest_qbench.core.types import Outcome
    from pytest_qbench.report.models import ReportSummary
    from pytest_qbench.report.models import RunMeta

    class IndexedMeta(TypedDict):
        schema_version: int

    class IndexedResult(TypedDict):
        nodeid: str
        outcome: Outcome

    class IndexedReport(TypedDict):
        meta: IndexedMeta
        run: RunMeta
        summary: ReportSummary
        results: list[IndexedResult]

    return TypeAdapter(IndexedReport)


def _invalid(path: Path, detail: str) -> ReportFormatError:
    return ReportFormatError(f"{path} is not a qbench report: {detail}", slug="report-invalid")


# --- disk use of the run store -------------------------------------------------------------


@dataclass(frozen=True)  # core.records': made without compiling its methods (4 M at import)
class StoreUsage:
    """What a qbench directory takes on disk."""

    path: Path
    total: int
    """Bytes of every file in it (the index included)."""
    run_dirs: int
    """Run directories in ``runs/``."""
    coverage: int
    """Bytes of the runs' coverage data files (``.coverage*``, ``*.db``)."""


def store_usage(qbench_dir: Path) -> StoreUsage:
    """The size of ``qbench_dir``, its run directories and their coverage data."""
    runs = qbench_dir / store.RUNS_DIR
    run_dirs = sum(1 for d in runs.iterdir() if d.is_dir()) if runs.is_dir() else 0
    coverage = sum(
        size
        for path, size in _files(runs)
        if path.name.startswith(".coverage") or path.suffix == ".db"
    )
    return StoreUsage(qbench_dir, dir_size(qbench_dir), run_dirs, coverage)


def dir_size(path: Path) -> int:
    """Bytes of the files under ``path`` (symbolic links not followed; 0 when it is missing)."""
    return sum(size for _path, size in _files(path))


def _files(root: Path) -> Iterator[tuple[Path, int]]:
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            with contextlib.suppress(OSError):  # deleted meanwhile
                yield path, path.lstat().st_size
