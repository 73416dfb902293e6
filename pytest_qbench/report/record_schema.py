"""Validate JSON by a model's own rules into records (plain JSON data), without model instances.

``Model.model_validate_json(text).model_dump(mode="json")`` builds every nested model and then
takes it apart again: for a report of 50 000 results that is about 2 s each way. The validator
made here runs the very same pydantic-core schema (field types, constraints, ``extra="forbid"``,
``allow_inf_nan=False``, defaults, discriminated unions), with each plain model turned into a
``TypedDict`` of the same fields, so that what comes out is already the dump:

- a model with validators, computed fields or serializers of its own (``ReportSummary``,
  ``MetricStats``) is validated as a model, by its untouched schema, and dumped at once;
- datetimes become their JSON text as ``model_dump(mode="json")`` writes it, tuples lists;
- a default that is a model (``PhaseDurations()``) becomes its dump.

``tests/test_record_schema.py`` checks that the records equal the models' dumps, and that what one
refuses the other refuses too. On refusal, callers validate with the model again to say why in
the model's own words.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from functools import partial
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaValidator
from pydantic_core import to_jsonable_python


_MODEL_REF = ":model"
"""Suffix of the schema references of the untouched copies that kept models validate with."""
_FUNCTIONS = ("function-after", "function-before", "function-wrap", "function-plain")

Schema = dict[str, Any]


@cache
def record_validator(model: type[BaseModel]) -> SchemaValidator:
    """A validator of ``model``'s JSON (or Python data) that returns its JSON-mode dump."""
    return SchemaValidator(_records(model.__pydantic_core_schema__))  # type: ignore[arg-type]


def _records(schema: Schema) -> Schema:
    if schema["type"] != "definitions":
        transformed: Schema = _transform(schema)
        return transformed
    return {
        "type": "definitions",
        "schema": _transform(schema["schema"]),
        "definitions": [*_transform(schema["definitions"]), *_untouched(schema["definitions"])],
    }


def _dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json")


def _after(function: Callable[[Any], Any], schema: Schema) -> Schema:
    return {
        "type": "function-after",
        "function": {"type": "no-info", "function": function},
        "schema": schema,
    }


def _keeps_model(node: Schema) -> bool:
    """Whether ``node`` validates a model that has logic of its own (then it stays a model)."""
    while node.get("type") in _FUNCTIONS:
        node = node["schema"]
    if node.get("type") != "model":
        return False
    found = node["cls"].__pydantic_decorators__
    return bool(
        found.model_validators
        or found.computed_fields
        or found.field_validators
        or found.model_serializers
        or found.field_serializers
    )


def _untouched(node: Any) -> Any:
    """``node`` as the model defines it, its references renamed to the untouched copies."""
    if isinstance(node, list):
        return [_untouched(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _untouched(value) for key, value in node.items()}
    if isinstance(out.get("ref"), str):
        out["ref"] += _MODEL_REF
    if out.get("type") == "definition-ref":
        out["schema_ref"] += _MODEL_REF
    return out


def _transform(node: Any) -> Any:
    if isinstance(node, list):
        return [_transform(item) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if _keeps_model(node):
        kept = _after(_dump, _untouched(node))
        if "ref" in node:
            kept["ref"] = node["ref"]
        return kept
    if kind == "model":
        return _typed_dict(node)
    out = {key: _transform(value) for key, value in node.items()}
    if kind == "default":
        factory = node.get("default_factory")
        if isinstance(node.get("default"), BaseModel):
            out["default"] = _dump(node["default"])
        elif isinstance(factory, type) and issubclass(factory, BaseModel):
            out["default_factory"] = _copies(_dump(factory()))
    if kind in ("datetime", "tuple"):
        return _after(to_jsonable_python, out)
    return out


def _copies(dumped: Any) -> Callable[[], Any]:
    """Fresh copies of a default model's dump: dumped once, as building the model for each
    result would cost what the records save (a flat dict is copied cheaply)."""
    nested = not isinstance(dumped, dict) or any(
        isinstance(value, (dict, list)) for value in dumped.values()
    )
    return partial(copy.deepcopy, dumped) if nested else dumped.copy


def _typed_dict(node: Schema) -> Schema:
    fields = {}
    for name, field in node["schema"]["fields"].items():
        converted = {key: _transform(value) for key, value in field.items() if key != "type"}
        converted["type"] = "typed-dict-field"
        converted["required"] = field["schema"].get("type") != "default"
        fields[name] = converted
    config = node.get("config") or {}
    out: Schema = {
        "type": "typed-dict",
        "fields": fields,
        "extra_behavior": node["schema"].get("extra_behavior")
        or config.get("extra_fields_behavior", "ignore"),
        "config": config,
    }
    if "ref" in node:
        out["ref"] = node["ref"]
    return out
