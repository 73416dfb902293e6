"""Checking a JSON value against a JSON Schema, with the `jsonschema` package.

The package is imported only when a schema is checked (the ``json_schema`` metric), so a run
that never checks one neither pays for it nor needs it installed. The draft is the one the
schema's ``$schema`` names, 2020-12 when it names none; ``format`` stays an annotation, as
2020-12 says by default. References resolve inside the schema only: nothing is fetched.
"""

from __future__ import annotations

from typing import Any

from pytest_qbench.core.install import install_extra
from pytest_qbench.core.text import bound_text


EXTRA = "jsonschema"
"""The extra of pytest-qbench that installs the `jsonschema` package."""

MESSAGE_LIMIT = 500
"""The longest problem reported: jsonschema's messages quote the offending value whole."""


class SchemaError(Exception):
    """The schema cannot be used: malformed, a dangling ``$ref``, or `jsonschema` is missing."""


Schema = dict[str, Any] | bool


def validate(instance: Any, schema: Schema) -> str | None:
    """The most relevant way ``instance`` breaks ``schema``, as ``"<JSON path>: <problem>"``
    (``"$.items[2]: 3 is not of type 'string'"``), or ``None`` when it conforms.

    Raises:
        SchemaError: the schema is invalid or cannot be resolved, or jsonschema is not installed.
    """
    try:
        import jsonschema
        import referencing.exceptions
    except ImportError as exc:
        raise SchemaError(
            f"the jsonschema package is not installed ({exc}); install it: {install_extra(EXTRA)}"
        ) from None
    # jsonschema's type stubs leave out boolean schemas, which the package itself accepts.
    checked: Any = schema
    cls = jsonschema.validators.validator_for(checked, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(checked)
        error = jsonschema.exceptions.best_match(cls(checked).iter_errors(instance))
    except jsonschema.exceptions.SchemaError as exc:
        raise SchemaError(f"invalid schema at {_pointer(exc.path)}: {exc.message}") from None
    except referencing.exceptions.Unresolvable as exc:
        ref = f"#{exc.ref}" if str(exc.ref).startswith("/") else str(exc.ref)
        raise SchemaError(f"$ref {ref!r} cannot be resolved inside the schema") from None
    except RecursionError:
        raise SchemaError("the schema's references never reach a value to check") from None
    if error is None:
        return None
    return bound_text(f"{error.json_path}: {error.message}", MESSAGE_LIMIT, keep="head")


def _pointer(path: Any) -> str:
    """The JSON pointer (``#/properties/a``) of a place in the schema."""
    return "#" + "".join(f"/{part}" for part in path)
