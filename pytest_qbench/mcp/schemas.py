"""Short output schemas: what ``list_tools`` sends for each result model.

pydantic's JSON Schema of a model is written for validators and editors: a title on every
property, defaults, ``anyOf`` for every optional value, each nested model's docstring beside the
field that holds it. An assistant pays for every byte of it in each conversation, so the schema a
tool publishes is cut down (`compact_schema`), keeping every property, type, enum and required
list, so that a result still validates against it:

- no ``title`` and no ``default`` (input schemas keep their defaults: `compact_input`);
- ``X | None`` is ``"type": [X, "null"]``;
- descriptions once: a nested model (in ``$defs``) loses its own docstring, which the field that
  holds it already describes, and its ``additionalProperties``; a description of three words or
  fewer (``Passed tests.``, ``The run.``), which the property's name already says, is dropped;
  the others keep their first paragraph, without reST markup, and a description repeated in
  the same schema (a field two nested models share) is kept the first time only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


TRIVIAL_WORDS = 3
"""A description of this many words or fewer restates the property's name."""


def compact_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The short output schema of ``model`` (see the module docstring)."""
    schema: dict[str, Any] = _compact(model.model_json_schema())
    for definition in schema.get("$defs", {}).values():
        definition.pop("description", None)
        definition.pop("additionalProperties", None)
        _drop_trivial(definition)
    _drop_trivial(schema)
    _drop_repeated(schema, set())
    return schema


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without titles, its optional values as type lists; defaults and
    descriptions kept (they tell the assistant what leaving an argument out means); no
    argument but those listed (``additionalProperties: false``: the server refuses others)."""
    compacted: dict[str, Any] = _compact(schema, drop=("title",))
    compacted["additionalProperties"] = False
    return compacted


def unknown_arguments(
    tool: str, schema: dict[str, Any], arguments: dict[str, Any], scope: str = ""
) -> str | None:
    """The refusal of the arguments ``schema`` does not list, naming the accepted ones (and
    ``scope``, what the tool does and does not do); ``None`` when every one is known."""
    accepted = list(schema.get("properties", {}))
    unknown = [name for name in arguments if name not in accepted]
    if not unknown:
        return None
    given = ", ".join(repr(name[:100]) for name in unknown[:10])
    takes = f"accepts only: {', '.join(accepted)}" if accepted else "takes no arguments"
    note = f"; {scope}" if scope else ""
    return f"{tool} does not know the argument(s) {given}; it {takes}{note}"


JSON_TYPES = {
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
    "null": "null",
}
"""How a refusal names each JSON type a value should have had."""


def mistyped_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The refusal of the first argument whose JSON type ``schema`` does not allow (``"yes"``
    for a boolean, ``true`` for a number, ``"3"`` for a whole number: the SDK's validation
    would read them as ``True``, ``1.0`` and ``3``), naming it, its type and the value;
    ``None`` when every argument has its type."""
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        expected = properties.get(name)
        if expected is None or _has_type(value, expected):
            continue
        words = [word for word in _type_words(expected) if word != "null"]
        wanted = " or ".join(dict.fromkeys(words)) or "another value"
        shown = repr(value)[:100]
        return (
            f"{tool}: {name} must be {wanted}, given: {shown} (a JSON {_json_type(value)}); "
            f"send {wanted}, or leave {name} out"
        )
    return None


def _has_type(value: Any, schema: dict[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(_has_type(value, option) for option in schema["anyOf"])
    types = schema.get("type")
    if types is None:  # an enum or a reference: the SDK's validation decides
        return True
    for name in [types] if isinstance(types, str) else types:
        if name == "array" and isinstance(value, list):
            items = schema.get("items", {})
            return all(_has_type(item, items) for item in value)
        if _json_type(value) == name or (name == "number" and _json_type(value) == "integer"):
            return True
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_words(schema: dict[str, Any]) -> list[str]:
    if "anyOf" in schema:
        return [word for option in schema["anyOf"] for word in _type_words(option)]
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types or [])
    words = []
    for name in names:
        if name == "array" and schema.get("items", {}).get("type") == "string":
            words.append("a list of strings")
        else:
            words.append(JSON_TYPES.get(name, name))
    return words


def _compact(node: Any, drop: tuple[str, ...] = ("title", "default")) -> Any:
    if isinstance(node, list):
        return [_compact(item, drop) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop:
            continue
        if key in ("properties", "$defs"):  # names, not schema keywords
            out[key] = {name: _compact(sub, drop) for name, sub in value.items()}
        else:
            out[key] = _compact(value, drop)
    _nullable_type(out)
    if isinstance(out.get("description"), str):
        out["description"] = _first_paragraph(out["description"])
    return out


def _nullable_type(node: dict[str, Any]) -> None:
    """``anyOf: [{type: X}, {type: null}]`` becomes ``type: [X, null]``."""
    options = node.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and {"type": "null"} in options):
        return
    [other] = [option for option in options if option != {"type": "null"}]
    if set(other) == {"type"} and isinstance(other["type"], str):
        del node["anyOf"]
        node["type"] = [other["type"], "null"]


def _drop_repeated(node: Any, seen: set[str]) -> None:
    """Keep the first of identical descriptions (the same field in two nested models)."""
    if isinstance(node, list):
        for item in node:
            _drop_repeated(item, seen)
    elif isinstance(node, dict):
        description = node.get("description")
        if isinstance(description, str):
            if description in seen:
                del node["description"]
            seen.add(description)
        for value in node.values():
            _drop_repeated(value, seen)


def _first_paragraph(text: str) -> str:
    return " ".join(text.replace("``", "").split("\n\n")[0].split())


def _drop_trivial(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        description = prop.get("description")
        if isinstance(description, str) and len(description.split()) <= TRIVIAL_WORDS:
            del prop["description"]
