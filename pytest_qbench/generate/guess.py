"""A conservative guess of the type of an unannotated parameter, from (in order) its default
value, its name and how the function's body uses it. The guess feeds the template values and
the Hypothesis strategies; every guess is said in the generated test (a comment) and in the
output, so that a reviewer knows which inputs were assumed rather than declared.

Rules (the first that applies wins):

- default: the type of a literal default (``1`` -> int, ``'x'`` -> str, ...; ``None`` says
  nothing);
- name: ``text``, ``string``, ``s``, ``word``, ``name``, ``html``, ``line``, ``title``,
  ``label``, ``prefix``, ``suffix``, ``sep``, ``noun`` and ``*_string``, ``*_str``, ``*_text``,
  ``*_name``, ``*_word``, ``*_noun`` -> str; ``n``, ``num``, ``number``, ``count``, ``size``,
  ``index``, ``width``, ``length``, ``nbytes`` and ``*_int``, ``*_count``, ``*_num``,
  ``*_size``, ``*_index`` -> int; ``bytestring``, ``*_bytes`` -> bytes; ``flag``, ``*_flag``,
  ``is_*``, ``has_*`` -> bool; ``int_list``, ``*_ints`` -> list[int]; ``args``, ``items``,
  ``words``, ``lines``, ``*_list``, ``*_items``, ``*_iterable`` -> list[str];
- use: a str method called on it (``x.split(``, ``x.lower(``, ``x.strip(``, ...) -> str;
  ``x.decode(`` -> bytes; ``range(x)`` -> int.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


STR_NAMES = frozenset(
    [
        "text",
        "string",
        "s",
        "word",
        "name",
        "html",
        "line",
        "title",
        "label",
        "prefix",
        "suffix",
        "sep",
        "noun",
    ]
)
INT_NAMES = frozenset(["n", "num", "number", "count", "size", "index", "width", "length", "nbytes"])
LIST_STR_NAMES = frozenset(["args", "items", "words", "lines"])
SUFFIXES = (
    (re.compile(r"_(string|str|text|name|word|noun)$"), "str"),
    (re.compile(r"_(int|count|num|size|index)$"), "int"),
    (re.compile(r"(^bytestring$|_bytes$)"), "bytes"),
    (re.compile(r"(^flag$|_flag$|^is_|^has_)"), "bool"),
    (re.compile(r"(^int_list$|_ints$)"), "list[int]"),
    (re.compile(r"_(list|items|iterable)$"), "list[str]"),
)
STR_METHODS = frozenset(
    [
        "split",
        "rsplit",
        "splitlines",
        "lower",
        "upper",
        "strip",
        "lstrip",
        "rstrip",
        "startswith",
        "endswith",
        "replace",
        "encode",
        "casefold",
        "capitalize",
        "isdigit",
        "isalpha",
        "isspace",
    ]
)
LITERAL_TYPES = (bool, int, float, str, bytes)


@dataclass(frozen=True)
class Guess:
    """A guessed type of one parameter, and what it was guessed from."""

    name: str
    type: str
    """Source text of the type: ``str``, ``list[int]``, ..."""
    source: str
    """``default``, ``name`` or ``use``."""

    def text(self) -> str:
        """``text: str``."""
        return f"{self.name}: {self.type}"


def guess_types(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Guess]:
    """The guessed types of the unannotated parameters of ``node`` (``self``/``cls`` and those
    no rule fits are left out)."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    pairs = [*zip(positional, defaults, strict=True)]
    pairs += zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    guesses: dict[str, Guess] = {}
    for index, (arg, default) in enumerate(pairs):
        if arg.annotation is not None or (index == 0 and arg.arg in {"self", "cls"}):
            continue
        found = guess_type(arg.arg, default, node)
        if found is not None:
            guesses[arg.arg] = found
    return guesses


def guess_type(
    name: str, default: ast.expr | None, node: ast.FunctionDef | ast.AsyncFunctionDef
) -> Guess | None:
    """The guess for parameter ``name`` (default, then name, then use), or ``None``."""
    for source, found in (
        ("default", from_default(default)),
        ("name", from_name(name)),
        ("use", from_use(name, node)),
    ):
        if found is not None:
            return Guess(name, found, source)
    return None


def from_default(default: ast.expr | None) -> str | None:
    """The type of a literal default value."""
    if not isinstance(default, ast.Constant):
        return None
    value = default.value
    return next((t.__name__ for t in LITERAL_TYPES if type(value) is t), None)


def from_name(name: str) -> str | None:
    """The type a parameter's name suggests."""
    lowered = name.lower()
    if lowered in STR_NAMES:
        return "str"
    if lowered in INT_NAMES:
        return "int"
    if lowered in LIST_STR_NAMES:
        return "list[str]"
    return next((kind for pattern, kind in SUFFIXES if pattern.search(lowered)), None)


def from_use(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The type the body's use of ``name`` suggests: a str method, ``.decode``, ``range``."""
    for child in ast.walk(node):
        if not isinstance(child, ast.Call):
            continue
        func = child.func
        if isinstance(func, ast.Attribute) and _is(func.value, name):
            if func.attr == "decode":
                return "bytes"
            if func.attr in STR_METHODS:
                return "str"
        ranged = isinstance(func, ast.Name) and func.id == "range"
        if ranged and any(_is(a, name) for a in child.args):
            return "int"
    return None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def comment(guesses: list[Guess]) -> str:
    """The comment a generated test carries: ``# argument types guessed from names: text: str``
    (``from names``, ``from defaults``, ``from use`` or a mix)."""
    sources = sorted({g.source + "s" if g.source != "use" else "use" for g in guesses})
    return f"# argument types guessed from {', '.join(sources)}: " + ", ".join(
        g.text() for g in guesses
    )
