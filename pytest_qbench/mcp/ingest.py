"""``ingest_tests``: what fills the catalog (pytest's collection, and test-case exports in JSON),
its result model (``IngestReport``) and its text. The catalog itself is imported when the tool
is first called.

An export is a JSON list of cases (or an object holding one under ``tests``, ``testCases``,
``cases``, ``items`` or ``data``). A case needs a key and a title; it may have a priority, tags,
platforms, a folder, a description and steps (each an action with an optional expected result).
Common spellings of other tools are read too (``jiraKey``, ``name``, ``labels``,
``folderStructure``, ``expectedResult``...); other fields are ignored. A case that breaks a rule
is rejected with the reason, and the others are taken.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pydantic import Field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import bound_text
from pytest_qbench.core.text import error_line as text_error_line
from pytest_qbench.mcp.command import COLLECTION_DUMP
from pytest_qbench.mcp.command import plan_collection
from pytest_qbench.mcp.paths import inside_root
from pytest_qbench.mcp.paths import inside_root_file
from pytest_qbench.mcp.paths import open_regular
from pytest_qbench.mcp.runs import output_tail
from pytest_qbench.mcp.service import remove_staging
from pytest_qbench.mcp.text import fit_lines
from pytest_qbench.report.models import QBenchModel


if TYPE_CHECKING:
    from pytest_qbench.mcp.catalog import CaseRecord
    from pytest_qbench.mcp.catalog import Catalog
    from pytest_qbench.mcp.process import PytestProcess
    from pytest_qbench.mcp.service import RunService


class Rejection(QBenchModel):
    """A record that was not taken into the catalog, or only partly."""

    record: str
    """Which record: its key, node id or position in the file."""
    reason: str
    """Why."""


class IngestReport(QBenchModel):
    """What an ingest did to the catalog."""

    source: str
    """``pytest`` or ``json:<file>``."""
    added: int = 0
    """New records."""
    updated: int = 0
    """Records that changed."""
    unchanged: int = 0
    """Records as they were."""
    removed: int = 0
    """Records of this source that are gone."""
    rejected: list[Rejection] = Field(default_factory=list)
    """Records refused or taken in part, with reasons (bounded)."""
    rejected_total: int = 0
    """Rejections in all."""
    collection_errors: list[str] = Field(default_factory=list)
    """pytest collection errors (their files' tests were kept as they were)."""
    catalog_size: int = 0
    """Records in the catalog afterwards."""
    embedded: int = 0
    """Records given vectors now: new or changed ones (0 without the ``[search]`` extra)."""
    duration: float = 0.0
    """Seconds."""


MAX_FILE_BYTES = 20_000_000
MAX_KEY = 200
MAX_TITLE = 500
MAX_DESCRIPTION = 5000
MAX_STEP = 2000
MAX_STEPS = 200
LIST_KEYS = ("tests", "testCases", "test_cases", "cases", "items", "data")
KEY_FIELDS = ("key", "jiraKey", "jira_key", "testCaseKey", "testCaseId", "uid", "id")
TITLE_FIELDS = ("title", "name", "summary")
DESCRIPTION_FIELDS = ("description", "objective", "summary", "precondition")
FOLDER_FIELDS = ("folder", "folderStructure", "folder_structure", "folderPath")
TAG_FIELDS = ("tags", "labels")
ACTION_FIELDS = ("action", "step", "description", "name")
EXPECTED_FIELDS = (
    "expected",
    "expectedResult",
    "expected_result",
    "expectedResults",
    "expected_results",
)
IGNORED_MARKERS = frozenset({"qbench_case", "parametrize", "usefixtures", "filterwarnings"})


class RecordError(ValueError):
    """A case breaks a rule; the message is the reason."""


def read_export(path: Path, source: str) -> tuple[list[CaseRecord], list[Rejection]]:
    """The cases of an export file, and the rejected ones with reasons.

    Raises:
        ToolFailure: the file is not a regular file, too big, not JSON, or holds no list of
            cases.
    """
    try:
        with open_regular(path, "source") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ToolFailure(f"{path.name} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ToolFailure(f"{path.name} is larger than {MAX_FILE_BYTES} bytes; split the export")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ToolFailure(f"{path.name} is not JSON: {exc}") from None
    cases, rejected, seen = [], [], set()
    for position, item in enumerate(_case_list(data, path.name), start=1):
        try:
            record = export_case(item, source)
            if record.uid.lower() in seen:
                raise RecordError(f"duplicate key {record.uid!r} in the file")
        except RecordError as exc:
            rejected.append(Rejection(record=_label(item, position), reason=str(exc)))
            continue
        seen.add(record.uid.lower())
        cases.append(record)
    return cases, rejected


def _case_list(data: Any, name: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return list(data[key])
    raise ToolFailure(
        f"{name} holds no list of test cases: give a JSON list, or an object with the list "
        f"under one of {', '.join(LIST_KEYS)}"
    )


def _label(item: Any, position: int) -> str:
    if isinstance(item, dict):
        for name in KEY_FIELDS:
            if isinstance(item.get(name), str | int):
                return f"#{position} ({item[name]})"
    return f"#{position}"


def export_case(item: Any, source: str) -> CaseRecord:
    """One case of an export.

    Raises:
        RecordError: not an object, no key or title, a field of the wrong type, too long.
    """
    if not isinstance(item, dict):
        raise RecordError(f"not an object but {type(item).__name__}")
    key = _text(item, KEY_FIELDS, "key", MAX_KEY)
    if not key:
        raise RecordError(f"no key: give one of {', '.join(KEY_FIELDS)}")
    title = _text(item, TITLE_FIELDS, "title", MAX_TITLE)
    if not title:
        raise RecordError(f"no title: give one of {', '.join(TITLE_FIELDS)}")
    title_field = next(name for name in TITLE_FIELDS if item.get(name))
    description = _text(
        item, tuple(f for f in DESCRIPTION_FIELDS if f != title_field), "description", None
    )
    from pytest_qbench.mcp.catalog import CaseRecord

    return CaseRecord(
        uid=key,
        source=source,
        key=key,
        title=title,
        priority=_text(item, ("priority",), "priority", MAX_KEY),
        folder=_folder(item),
        description=bound_text(description, MAX_DESCRIPTION) if description else None,
        tags=_texts(item, TAG_FIELDS, "tags"),
        platforms=_texts(item, ("platforms", "platform"), "platforms"),
        steps=_steps(item.get("steps")),
    )


def _first(item: dict[str, Any], names: Iterable[str]) -> Any:
    for name in names:
        value = item.get(name)
        if value is not None and value != "":
            return value
    return None


def _text(item: dict[str, Any], names: tuple[str, ...], what: str, limit: int | None) -> str | None:
    value = _first(item, names)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise RecordError(f"{what} must be text, given {type(value).__name__}")
    value = value.strip()
    if limit is not None and len(value) > limit:
        raise RecordError(f"{what} is longer than {limit} characters")
    return value or None


def _texts(item: dict[str, Any], names: tuple[str, ...], what: str) -> list[str]:
    value = _first(item, names)
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(f"{what} must be a list of strings or a comma-separated string")
    return [v.strip() for v in value if v.strip()]


def _folder(item: dict[str, Any]) -> str | None:
    value = _first(item, FOLDER_FIELDS)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "/".join(v.strip("/") for v in value)
    if value is not None and not isinstance(value, str):
        raise RecordError("folder must be a string or a list of strings")
    return value or None


def _steps(raw: Any) -> list[tuple[str, str | None]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RecordError("steps must be a list")
    if len(raw) > MAX_STEPS:
        raise RecordError(f"more than {MAX_STEPS} steps")
    return [_step(step, index) for index, step in enumerate(raw, start=1)]


def _step(step: Any, index: int) -> tuple[str, str | None]:
    if isinstance(step, str):
        return bound_text(step, MAX_STEP), None
    if isinstance(step, list) and len(step) == 2 and isinstance(step[0], str):
        return bound_text(step[0], MAX_STEP), _expected(step[1], index)
    if isinstance(step, dict):
        action = _first(step, ACTION_FIELDS)
        if isinstance(action, str) and action.strip():
            return bound_text(action.strip(), MAX_STEP), _expected(
                _first(step, EXPECTED_FIELDS), index
            )
    raise RecordError(
        f"step {index} must be a string, an [action, expected] pair, or an object with an "
        "action (and an expected result)"
    )


def _expected(value: Any, index: int) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(value)
    if not isinstance(value, str):
        raise RecordError(f"step {index}: the expected result must be text or a list of texts")
    return bound_text(value, MAX_STEP)


def collected_cases(dump: Path) -> tuple[list[CaseRecord], list[Rejection], list[dict[str, str]]]:
    """The tests of a collection dump (``plugin/collect_dump.py``), tests whose ``qbench_case`` is
    malformed (taken without its fields), and the collection errors."""
    from pytest_qbench.report.casemeta import CaseMarkerError
    from pytest_qbench.report.casemeta import build_metadata

    cases, rejected, errors = [], [], []
    for line in _lines(dump):
        if "error" in line:
            errors.append(line["error"])
            continue
        try:
            metadata: Mapping[str, Any] | None = build_metadata(
                line.get("case"), line.get("doc"), "case_args" in line
            )
        except CaseMarkerError as exc:
            rejected.append(
                Rejection(record=line["nodeid"], reason=f"{exc}; indexed without its case fields")
            )
            metadata = {"description": line.get("doc")}
        cases.append(pytest_case(line, metadata or {}))
    return cases, rejected, errors


def pytest_case(line: dict[str, Any], metadata: Mapping[str, Any]) -> CaseRecord:
    """A collected test as a catalog record."""
    from pytest_qbench.mcp.catalog import CaseRecord

    return CaseRecord(
        uid=line["nodeid"],
        source="pytest",
        key=metadata.get("key"),
        title=metadata.get("title"),
        priority=metadata.get("priority"),
        path=line["path"],
        line=line["line"],
        folder=metadata.get("folder"),
        nodeid=line["nodeid"],
        description=metadata.get("description"),
        tags=list(metadata.get("tags") or []),
        platforms=list(metadata.get("platforms") or []),
        markers=[m for m in line.get("markers", []) if m not in IGNORED_MARKERS],
        steps=[(s["action"], s["expected"]) for s in metadata.get("steps") or []],
    )


def _lines(dump: Path) -> Iterator[dict[str, Any]]:
    with dump.open(encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                yield json.loads(raw)


def error_line(error: dict[str, str]) -> str:
    """A collection error, one line: where, and what went wrong (`core.text.error_line`)."""
    return f"{error['nodeid'] or '?'}: {text_error_line(error['message'])}"


def ingest_file(tools: RunService, source: str) -> IngestReport:
    """Import a JSON export (a file, or every ``.json`` file of a directory)."""
    started = time.monotonic()
    if not source.strip():  # not the project root's .json files
        raise ToolFailure(
            "source is empty; leave it out to collect the project's tests ('pytest'), or give "
            "a JSON export file or directory inside the project"
        )
    relative = inside_root(tools.config.root, source, "source")
    path = tools.config.root / relative
    found = sorted(path.glob("*.json")) if path.is_dir() else [path]
    files = [inside_root_file(tools.config.root, f, "source") for f in found]
    if not files:
        raise ToolFailure(f"source {source!r} is a directory without .json files")
    reports = [_ingest_one(tools, f) for f in files]
    return _combine(reports, relative, time.monotonic() - started)


def _ingest_one(tools: RunService, path: Path) -> IngestReport:
    label = f"json:{path.relative_to(tools.config.root).as_posix()}"
    cases, rejected = read_export(path, label)
    return _replace(tools, label, cases, rejected)


def _replace(
    tools: RunService,
    source: str,
    cases: list[CaseRecord],
    rejected: list[Rejection],
    keep: Sequence[str] = (),
) -> IngestReport:
    """Make the catalog's cases of ``source`` exactly ``cases``; the report of it."""
    from pytest_qbench.mcp.shared_catalog import open_project_catalog

    with open_project_catalog(tools.config, create=True) as catalog:
        counts = catalog.replace_source(source, cases, keep)
        size = catalog.size()
        embedded = _embed(catalog)
    return IngestReport(
        source=source,
        added=counts.added,
        updated=counts.updated,
        unchanged=counts.unchanged,
        removed=counts.removed,
        rejected=rejected[:MAX_REJECTIONS],
        rejected_total=len(rejected),
        catalog_size=size,
        embedded=embedded,
    )


def _embed(catalog: Catalog) -> int:
    """Give the cases without a vector one, with the ``[search]`` extra; how many.

    Raises:
        ToolFailure: the model failed (the catalog's cases are stored; search stays BM25 for
            the cases without a vector).
    """
    from pytest_qbench.mcp import vectors
    from pytest_qbench.mcp.embed import embedder

    try:
        engine = embedder()
        return vectors.embed_missing(catalog, engine) if engine else 0
    except Exception as exc:  # the model is third-party code: any failure is reported
        raise ToolFailure(
            f"the catalog was updated, but embedding its cases failed ({type(exc).__name__}: "
            f"{exc}); search ranks them by BM25 only; reinstall pytest-qbench[search] and "
            "call ingest_tests again"
        ) from None


def start_collection(tools: RunService, timeout: float | None = None) -> PytestProcess:
    """Start ``pytest --collect-only`` with the catalog's collection plugin.

    Raises:
        ToolFailure: a run is going on.
    """
    return tools.start(plan_collection(tools.config, timeout))


def finish_collection(tools: RunService, process: PytestProcess) -> IngestReport:
    """Replace the catalog's pytest tests with what the collection found.

    Raises:
        ToolFailure: pytest refused to collect, or was stopped.
    """
    try:
        code = process.finish()
        dump = process.plan.staging / COLLECTION_DUMP
        if process.stopped_by or code not in (0, 2, 5) or not dump.is_file():
            raise ToolFailure(_collection_failure(process, code))
        cases, rejected, errors = collected_cases(dump)
        # a file that failed to collect keeps its tests in the catalog as they were
        keep = [e["nodeid"] for e in errors if e["nodeid"]]
        report = _replace(tools, "pytest", cases, rejected, keep)
    finally:
        tools.release(process)
        remove_staging(process.plan.staging)
    return report.model_copy(
        update={
            "collection_errors": [error_line(e) for e in errors[:20]],
            "duration": round(process.elapsed(), 3),
        }
    )


MAX_REJECTIONS = 50
"""Rejections listed in an ingest report (all are counted)."""


def _collection_failure(process: PytestProcess, code: int) -> str:
    staging = process.plan.staging
    if process.stopped_by == "timeout":
        reason = f"collecting took longer than {process.plan.timeout:g}s and was stopped"
    else:
        reason = f"pytest --collect-only exited with status {code}"
    tails = [
        f"--- end of pytest's {name} ---\n{tail}"
        for name in ("stderr", "stdout")
        if (tail := output_tail(staging / f"{name}.txt"))
    ]
    return "\n".join(
        [
            f"{reason}; the catalog was not changed.",
            "What to do: fix what pytest reports below (a conftest.py, the configuration), "
            "then call ingest_tests again.",
            *tails,
        ]
    )


def _combine(reports: list[IngestReport], source: str, took: float) -> IngestReport:
    if len(reports) == 1:
        return reports[0].model_copy(update={"duration": round(took, 3)})
    rejected = [r for report in reports for r in report.rejected]
    return IngestReport(
        source=f"json:{source}",
        added=sum(r.added for r in reports),
        updated=sum(r.updated for r in reports),
        unchanged=sum(r.unchanged for r in reports),
        removed=sum(r.removed for r in reports),
        rejected=rejected[:MAX_REJECTIONS],
        rejected_total=sum(r.rejected_total for r in reports),
        catalog_size=reports[-1].catalog_size,
        embedded=sum(r.embedded for r in reports),
        duration=round(took, 3),
    )


def ingest_text(report: IngestReport, limit: int) -> str:
    """The counts, then the rejections."""
    lines = [
        f"Ingested {report.source}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed, {report.rejected_total} "
        f"rejected; catalog: {report.catalog_size} test cases, {report.embedded} embedded "
        f"now ({report.duration:.1f}s)"
    ]
    lines += [f"Collection error: {error}" for error in report.collection_errors]
    lines += [f"Rejected {r.record}: {r.reason}" for r in report.rejected]
    return fit_lines(lines, limit, "... {n} more")
