"""Records: plain JSON data shaped exactly like the models, built without importing pydantic.

The pytest plugin works on records, so that a run costs pytest no more memory than it must;
``report.json`` then holds exactly what ``TestReport.model_dump_json()`` would, except that each
test result is stored ``compact`` (its fields at their default left out; ``expand`` and the
model restore them), and a test checks that every report qbench writes is a fixed point of the
model; only the spelling of some floats differs (``1e-05`` where pydantic writes ``0.00001``),
not their value. The shapes come from
``shapes.json``, generated from ``models.py``: ``python -m pytest_qbench.report.shapes`` rewrites it,
and a test fails when it is stale. The same command rewrites ``records.py``, a ``TypedDict`` per
model and the overloads that type ``new`` (``new("GateResult", ...)`` is a ``GateResultRecord``),
so that mypy knows every record's keys.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Callable
from collections.abc import Mapping
from datetime import datetime
from datetime import timezone
from functools import cache
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import overload

from pytest_qbench.core.records import dataclass


REQUIRED = "<required>"
SHAPES_FILE = Path(__file__).with_name("shapes.json")
Record = dict[str, Any]


@cache
def _shapes() -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    return loaded


@dataclass(frozen=True)
class _Layout:
    """A model's fields, as ``new`` and ``expand`` use them."""

    template: dict[str, Any]
    """Every field in order, defaults filled in (required fields hold ``REQUIRED``)."""
    fresh: tuple[tuple[str, Callable[[], Any]], ...]
    """Fields whose default is a list or dict, and how to make a new one."""
    names: frozenset[str]
    required: frozenset[str]


@cache
def _layout(model: str) -> _Layout:
    fields = _shapes()[model]
    fresh: list[tuple[str, Callable[[], Any]]] = []
    for name, value in fields.items():
        if isinstance(value, (list, dict)):
            fresh.append((name, partial(copy.deepcopy, value) if value else type(value)))
    required = frozenset(name for name, value in fields.items() if value == REQUIRED)
    return _Layout(dict(fields), tuple(fresh), frozenset(fields), required)


def _new(model: str, /, **values: Any) -> Record:
    """A record of ``model`` (e.g. ``"TestResult"``): its defaults, updated with ``values``.

    Keys come out in the model's field order. An unknown field or a missing required one is a
    bug in qbench, and raises ``KeyError`` at once.
    """
    layout = _layout(model)
    given = values.keys()
    if not given <= layout.names:
        raise KeyError(f"{model} has no field(s) {sorted(given - layout.names)}")
    if not layout.required <= given:
        raise KeyError(f"{model} needs field(s) {sorted(layout.required - given)}")
    return expand(model, values)


@cache
def _defaults(model: str) -> dict[str, Any]:
    """The fields of ``model`` that have a default, with it (as JSON)."""
    return {name: value for name, value in _shapes()[model].items() if value != REQUIRED}


_NO_DEFAULT = object()


def compact(model: str, record: Mapping[str, Any]) -> Record:
    """``record`` without its fields that hold their default: what the files store.

    Only top-level fields are left out (a nested record is kept whole), and required fields are
    always kept. ``expand`` (and pydantic's ``model_validate``) restores the record. The record
    itself is left alone: in-process readers see every field.
    """
    defaults = _defaults(model)
    return {k: v for k, v in record.items() if v != defaults.get(k, _NO_DEFAULT)}


def expand(model: str, record: Mapping[str, Any]) -> Record:
    """A record read from a file, with the fields ``compact`` left out restored (list and dict
    defaults are fresh objects); the inverse of ``compact``. Unknown fields are kept as read."""
    layout = _layout(model)
    full = layout.template.copy()
    full.update(record)
    for name, make in layout.fresh:
        if name not in record:
            full[name] = make()
    return full


if TYPE_CHECKING:
    from pytest_qbench.report.records import ReportSummaryRecord
    from pytest_qbench.report.records import new as new  # typed overloads, generated
else:
    new = _new  # no wrapper: ``new`` is on the per-test hot path


@overload
def iso(moment: datetime) -> str: ...


@overload
def iso(moment: None) -> None: ...


def iso(moment: datetime | None) -> str | None:
    """A datetime as pydantic writes it: UTC, ``2026-11-21T22:15:00.123456Z`` (no fraction when
    the microseconds are 0)."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


_second_text: list[Any] = [None, ""]
"""The last whole second ``iso_epoch`` wrote, and its text up to the seconds' point."""
THREE_DIGITS = tuple(map("".join, itertools.product("0123456789", repeat=3)))
"""``"000"`` to ``"999"``, by their number: half a microsecond count's digits each (one
subscript, not a ``06d`` format, which costs three times the rest of ``iso_epoch``). Made in
C loops: 0.7 M instructions a run, 1.2 M as a generator of concatenations."""
made_iso: list[str] = [""]
"""The text ``iso_epoch`` made last: a stream line that holds this very object writes it
between quotes, unescaped (it is digits, ``-``, ``:``, ``T``, ``.`` and ``Z``)."""


def iso_epoch(seconds: float) -> str:
    """``iso(datetime.fromtimestamp(seconds, timezone.utc))``, the same text for a cheaper
    price (formatting an aware datetime costs three times building it, once per test): the
    microseconds rounded half to even as ``fromtimestamp`` rounds them, and the date and time of
    the last second seen kept."""
    if 0.0 <= seconds < 1e15:  # the whole seconds' floor is their truncation: no call
        whole = seconds // 1.0
        micros = round((seconds - whole) * 1e6)  # the fraction is exact, as modf's
    else:
        fraction, whole = math.modf(seconds)
        micros = round(fraction * 1e6)
        if micros < 0:  # before 1970
            whole -= 1.0
            micros += 1_000_000
    if micros >= 1_000_000:
        whole += 1.0
        micros -= 1_000_000
    cached = _second_text
    if cached[0] != whole:
        moment = datetime.fromtimestamp(whole, timezone.utc)
        cached[0], cached[1] = whole, moment.strftime("%Y-%m-%dT%H:%M:%S.")
    if micros:
        digits = THREE_DIGITS
        text = f"{cached[1]}{digits[micros // 1000]}{digits[micros % 1000]}Z"
    else:
        text = f"{cached[1][:-1]}Z"
    made_iso[0] = text
    return text


def _record_encoder() -> Callable[[object], str]:
    """One encoder for every record: ``json.dumps`` with options builds a new encoder per call,
    and ``JSONEncoder.encode`` still builds its C encoder per call (about a fifth of the cost
    of a result's line in ``results.jsonl``): the C encoder is made once here, with the same
    options. Records are plain data, so no check for circular references; without the C
    accelerator (PyPy), the encoder's own method."""
    options = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return options.encode
    try:
        encode = make(
            None,
            options.default,
            json.encoder.encode_basestring,
            None,
            ":",
            ",",
            False,
            False,
            False,
        )
    except TypeError:  # another signature in another Python
        return options.encode

    def encoded(record: object) -> str:
        return "".join(encode(record, 0))

    return encoded


_ENCODE = _record_encoder()


def dumps(record: Mapping[str, object]) -> str:
    """Compact JSON like pydantic's (UTF-8, no spaces; floats in Python's spelling)."""
    return _ENCODE(record)


def pass_rate(summary: ReportSummaryRecord) -> float | None:
    """``ReportSummary.pass_rate`` for a summary record (``None`` when no test ran)."""
    ran = summary["passed"] + summary["failed"] + summary["errors"]
    return round(100.0 * summary["passed"] / ran, 2) if ran and summary["total"] else None


def write_shapes() -> None:
    """Regenerate ``shapes.json`` and ``records.py`` from the models (needs pydantic)."""
    from pytest_qbench.report.models import field_shapes
    from pytest_qbench.report.records_gen import write_records

    SHAPES_FILE.write_text(json.dumps(field_shapes(), indent=1) + "\n", encoding="utf-8")
    write_records()


if __name__ == "__main__":
    write_shapes()
