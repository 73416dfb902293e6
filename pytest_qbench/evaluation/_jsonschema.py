"""A documented subset of JSON Schema draft 2020-12, enough to check an agent's JSON output.

Supported: ``type``, ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``prefixItems``, ``minItems``, ``maxItems``,
``uniqueItems``, ``minLength``, ``maxLength``, ``pattern``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``anyOf``, ``allOf``, ``oneOf``, ``not``, ``$ref``
to a local JSON pointer (``#``, ``#/$defs/name``), ``$defs`` and boolean schemas. Annotations
are ignored, among them ``format`` (an annotation by default in 2020-12). Any other keyword is a
`SchemaError` naming it: a check the schema asks for is never silently skipped.

``pattern`` uses Python's ``re.search``, which agrees with ECMA-262 on common patterns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any


MAX_DEPTH = 200
"""The deepest nesting of schemas (and $ref hops) followed before giving up."""

ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentMediaType",
        "contentEncoding",
        # OpenAPI's, emitted by pydantic next to oneOf, which does the checking.
        "discriminator",
    }
)

TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


class SchemaError(Exception):
    """The schema is malformed, uses an unsupported keyword, or has a dangling ``$ref``."""


Schema = dict[str, Any] | bool
Check = Callable[["_Validator", Any, Any, dict[str, Any], str], "str | None"]


def validate(instance: Any, schema: Schema) -> str | None:
    """The first way ``instance`` breaks ``schema``, e.g. ``"$.items[2]: expected string, got
    integer"``, or ``None`` when it conforms. `SchemaError` when the schema cannot be used."""
    check_schema(schema)
    return _Validator(schema).first_error(instance, schema, "$")


def check_schema(schema: Any, where: str = "#", root: Any = None) -> None:
    """Raise `SchemaError` for anything in ``schema`` this subset cannot check."""
    root = schema if root is None else root
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object or a boolean")
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        shape = _SHAPES.get(key)
        if shape is None:
            raise SchemaError(
                f"unsupported keyword {key!r} at {where}; supported: {', '.join(sorted(_SHAPES))}"
            )
        shape(value, f"{where}/{key}", root)


def _one(value: Any, where: str, root: Any) -> None:
    check_schema(value, where, root)


def _named(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, dict):
        raise SchemaError(f"{where}: expected an object of schemas")
    for name, sub in value.items():
        check_schema(sub, f"{where}/{name}", root)


def _listed(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, list) or not value:
        raise SchemaError(f"{where}: expected a non-empty array of schemas")
    for i, sub in enumerate(value):
        check_schema(sub, f"{where}/{i}", root)


def _type(value: Any, where: str, root: Any) -> None:
    names = value if isinstance(value, list) else [value]
    if not names or any(name not in TYPES for name in names):
        raise SchemaError(f"{where}: expected one of {', '.join(TYPES)} (or a list of them)")


def _array(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, list):
        raise SchemaError(f"{where}: expected an array")


def _strings(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SchemaError(f"{where}: expected an array of strings")


def _count(value: Any, where: str, root: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"{where}: expected a non-negative integer")


def _number(value: Any, where: str, root: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SchemaError(f"{where}: expected a number")


def _boolean(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, bool):
        raise SchemaError(f"{where}: expected true or false")


def _pattern(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, str):
        raise SchemaError(f"{where}: expected a string")
    try:
        re.compile(value)
    except re.error as exc:
        raise SchemaError(f"{where}: invalid pattern {value!r}: {exc}") from None


def _ref(value: Any, where: str, root: Any) -> None:
    if not isinstance(value, str) or not value.startswith("#"):
        raise SchemaError(
            f"{where}: only local references (#, #/$defs/name) are supported, given: {value!r}"
        )
    resolve(root, value)


def _anything(value: Any, where: str, root: Any) -> None:
    return None


_SHAPES: dict[str, Callable[[Any, str, Any], None]] = {
    "type": _type,
    "enum": _array,
    "const": _anything,
    "properties": _named,
    "required": _strings,
    "additionalProperties": _one,
    "items": _one,
    "prefixItems": _listed,
    "minItems": _count,
    "maxItems": _count,
    "uniqueItems": _boolean,
    "minLength": _count,
    "maxLength": _count,
    "pattern": _pattern,
    "minimum": _number,
    "maximum": _number,
    "exclusiveMinimum": _number,
    "exclusiveMaximum": _number,
    "anyOf": _listed,
    "allOf": _listed,
    "oneOf": _listed,
    "not": _one,
    "$ref": _ref,
    "$defs": _named,
    "definitions": _named,
}


def resolve(root: Any, ref: str) -> Any:
    """The schema a local ``$ref`` (a JSON pointer after ``#``) points to."""
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise SchemaError(f"$ref {ref!r} points to nothing")
    return node


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``integer`` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    actual = json_type(value)
    if name == "number":
        return actual in ("integer", "number")
    if name == "integer" and actual == "number":
        return float(value).is_integer()
    return actual == name


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but true != 1."""
    kind_a, kind_b = json_type(a), json_type(b)
    numbers = ("integer", "number")
    if kind_a in numbers and kind_b in numbers:
        return bool(a == b)
    if kind_a != kind_b:
        return False
    if kind_a == "array":
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if kind_a == "object":
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _preview(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


class _Validator:
    def __init__(self, root: Schema) -> None:
        self.root = root
        self.depth = 0

    def first_error(self, instance: Any, schema: Any, path: str) -> str | None:
        """The first problem of ``instance`` against ``schema`` (a subschema of the root)."""
        if schema is True:
            return None
        if schema is False:
            return f"{path}: no value is allowed here"
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise SchemaError(f"more than {MAX_DEPTH} nested schemas (a $ref cycle?)")
            for key, value in schema.items():
                check = _CHECKS.get(key)
                error = check(self, instance, value, schema, path) if check else None
                if error:
                    return error
            return None
        finally:
            self.depth -= 1

    def valid(self, instance: Any, schema: Any, path: str) -> bool:
        return self.first_error(instance, schema, path) is None


def _check_type(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    names = value if isinstance(value, list) else [value]
    if any(_is_type(instance, name) for name in names):
        return None
    return f"{path}: expected {' or '.join(names)}, got {json_type(instance)}"


def _check_enum(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if any(json_equal(instance, option) for option in value):
        return None
    return f"{path}: {_preview(instance)} is not one of {_preview(value)}"


def _check_const(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    return (
        None
        if json_equal(instance, value)
        else f"{path}: expected {_preview(value)}, got {_preview(instance)}"
    )


def _check_properties(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if not isinstance(instance, dict):
        return None
    for name, sub in value.items():
        if name in instance and (error := v.first_error(instance[name], sub, _child(path, name))):
            return error
    return None


def _check_required(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if not isinstance(instance, dict):
        return None
    missing = [name for name in value if name not in instance]
    return f"{path}: missing required property {missing[0]!r}" if missing else None


def _check_additional(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if not isinstance(instance, dict):
        return None
    declared = schema.get("properties", {})
    for name in instance:
        if name in declared:
            continue
        if value is False:
            return f"{path}: unexpected property {name!r}"
        if error := v.first_error(instance[name], value, _child(path, name)):
            return error
    return None


def _check_items(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if json_type(instance) != "array":
        return None
    start = len(schema.get("prefixItems", []))
    for i in range(start, len(instance)):
        if value is False:
            return f"{path}: at most {start} items allowed, got {len(instance)}"
        if error := v.first_error(instance[i], value, _child(path, i)):
            return error
    return None


def _check_prefix_items(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if json_type(instance) != "array":
        return None
    for i, (item, sub) in enumerate(zip(instance, value, strict=False)):
        if error := v.first_error(item, sub, _child(path, i)):
            return error
    return None


def _check_unique(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if not value or json_type(instance) != "array":
        return None
    for i, item in enumerate(instance):
        for j in range(i):
            if json_equal(instance[j], item):
                return f"{path}: items {j} and {i} are equal; uniqueItems"
    return None


def _bound(kind: str, keyword: str, word: str, fits: Callable[[float, float], bool]) -> Check:
    """A check that ``len(instance)`` (or the number itself) fits a bound."""

    def check(
        v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
    ) -> str | None:
        if json_type(instance) not in (("integer", "number") if kind == "number" else (kind,)):
            return None
        measure = instance if kind == "number" else len(instance)
        if fits(measure, value):
            return None
        noun = {"array": " items", "string": " characters", "number": ""}[kind]
        return f"{path}: {measure!r}{noun}, {word} {value!r} ({keyword})"

    return check


def _check_pattern(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    if not isinstance(instance, str) or re.search(value, instance):
        return None
    return f"{path}: {_preview(instance)} does not match pattern {value!r}"


def _check_any_of(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    errors = [v.first_error(instance, sub, path) for sub in value]
    if any(error is None for error in errors):
        return None
    return f"{path}: matches none of anyOf (first: {errors[0]})"


def _check_all_of(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    return next((e for sub in value if (e := v.first_error(instance, sub, path))), None)


def _check_one_of(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    matched = sum(v.valid(instance, sub, path) for sub in value)
    return (
        None
        if matched == 1
        else f"{path}: matches {matched} of oneOf's schemas, expected exactly 1"
    )


def _check_not(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    return f"{path}: must not match the 'not' schema" if v.valid(instance, value, path) else None


def _check_ref(
    v: _Validator, instance: Any, value: Any, schema: dict[str, Any], path: str
) -> str | None:
    return v.first_error(instance, resolve(v.root, value), path)


_CHECKS: dict[str, Check] = {
    "type": _check_type,
    "enum": _check_enum,
    "const": _check_const,
    "properties": _check_properties,
    "required": _check_required,
    "additionalProperties": _check_additional,
    "items": _check_items,
    "prefixItems": _check_prefix_items,
    "uniqueItems": _check_unique,
    "minItems": _bound("array", "minItems", "fewer than", lambda n, b: n >= b),
    "maxItems": _bound("array", "maxItems", "more than", lambda n, b: n <= b),
    "minLength": _bound("string", "minLength", "fewer than", lambda n, b: n >= b),
    "maxLength": _bound("string", "maxLength", "more than", lambda n, b: n <= b),
    "minimum": _bound("number", "minimum", "less than", lambda n, b: n >= b),
    "maximum": _bound("number", "maximum", "greater than", lambda n, b: n <= b),
    "exclusiveMinimum": _bound(
        "number", "exclusiveMinimum", "not greater than", lambda n, b: n > b
    ),
    "exclusiveMaximum": _bound("number", "exclusiveMaximum", "not less than", lambda n, b: n < b),
    "pattern": _check_pattern,
    "anyOf": _check_any_of,
    "allOf": _check_all_of,
    "oneOf": _check_one_of,
    "not": _check_not,
    "$ref": _check_ref,
}
