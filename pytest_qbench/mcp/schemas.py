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
