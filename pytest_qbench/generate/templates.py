"""Template tests, derived from the AST: calls with representative values (from annotations and
defaults) and with the boundary values of the function's own simple comparisons
(``x < 0``, ``n >= 90``, ``s == "x"``, ``not x``, ``x is None``). The child probes each call; a
call becomes a test only for what it showed: an equality with the value it returned (when that
value reads back as a literal), a ``pytest.raises`` for an exception the function raises
itself, or a plain call for any other return value."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from pytest_qbench.generate.functions import Function
from pytest_qbench.generate.guess import Guess
from pytest_qbench.generate.guess import comment
from pytest_qbench.generate.guess import guess_types


MAX_CALLS = 8
"""Calls probed per function."""
SIMPLE = {
    "int": "1",
    "float": "1.0",
    "str": "'a'",
    "bool": "True",
    "bytes": "b'a'",
    "list": "[]",
    "dict": "{}",
    "tuple": "()",
    "set": "set()",
    "frozenset": "frozenset()",
    "None": "None",
}
FALSY = {"int": "0", "float": "0.0", "str": "''", "bytes": "b''", "list": "[]", "dict": "{}"}
"""The falsy value of a type, for ``not x`` and ``if x``."""
SECTIONS = frozenset(
    {
        "Args",
        "Arguments",
        "Parameters",
        "Returns",
        "Yields",
        "Examples",
        "Example",
        "Notes",
        "Note",
        "See Also",
        "Warns",
        "Warnings",
        "Attributes",
        "References",
        "Todo",
    }
)
"""Docstring section headings: the end of a ``Raises`` section."""
SINGLETONS = frozenset({"None", "True", "False"})
"""Values a test compares with ``is``, never ``==`` (pycodestyle's E711 and E712)."""
GUESSED = {"list[str]": "['a']", "list[int]": "[1]"}
"""Values of the guessed types that are not in ``SIMPLE`` (generate/guess.py)."""


@dataclass(frozen=True)
class Call:
    """One call to probe: keyword arguments as source text."""

    function: Function
    args: dict[str, str]
    init: dict[str, str] | None
    """The class's constructor arguments, for a method."""
    label: str
    guessed: tuple[Guess, ...] = ()
    """The types guessed for unannotated arguments of the call (generate/guess.py)."""

    def args_text(self) -> str:
        """``a=1, b='x'``."""
        return ", ".join(f"{k}={v}" for k, v in self.args.items())

    def init_text(self) -> str | None:
        """The constructor's arguments, or ``None``."""
        return None if self.init is None else ", ".join(f"{k}={v}" for k, v in self.init.items())


class NoValue(Exception):
    """No representative value can be justified for a parameter; the message says which."""


def template_calls(function: Function) -> list[Call]:
    """The calls to probe for ``function``; `NoValue` when a required argument has none."""
    init = None
    guessed: list[Guess] = []
    if function.is_method and function.init is not None:
        init = representative_args(function.init)
        guessed += _used(function.init, init)
    elif function.is_method:
        init = {}
    base = representative_args(function.node)
    guessed += _used(function.node, base)
    calls = [Call(function, base, init, "call", tuple(guessed))]
    for name, value in boundary_values(function.node):
        if name in base or name in _params(function.node):
            args = {**base, name: value}
            if args != base and all(args != c.args for c in calls):
                label = f"{name}_{slug(value)}"
                calls.append(Call(function, args, init, label, tuple(guessed)))
    return calls[:MAX_CALLS]


def _used(node: ast.FunctionDef | ast.AsyncFunctionDef, args: dict[str, str]) -> list[Guess]:
    """The guesses behind the values of ``args``."""
    return [g for name, g in guess_types(node).items() if name in args]


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]


def representative_args(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Keyword arguments for every required parameter (``self``/``cls`` skipped); those with a
    default are left out, so the default is used."""
    arguments = node.args
    if arguments.posonlyargs:
        raise NoValue(f"positional-only parameters of {node.name} are not templated")
    positional = arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    required = [a for a, d in zip(positional, defaults, strict=True) if d is None]
    required += [
        a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is None
    ]
    guesses = guess_types(node)
    values: dict[str, str] = {}
    for index, arg in enumerate(required):
        if index == 0 and arg.arg in {"self", "cls"}:
            continue
        values[arg.arg] = value_for(arg, guesses.get(arg.arg))
    return values


def value_for(arg: ast.arg, guess: Guess | None = None) -> str:
    """A representative value of ``arg``'s annotation, or of its guessed type when it has none;
    `NoValue` names the argument."""
    if arg.annotation is None and guess is not None:
        return GUESSED.get(guess.type) or SIMPLE[guess.type]
    if arg.annotation is None:
        raise NoValue(f"argument `{arg.arg}` has no annotation and no default")
    text = ast.unparse(arg.annotation).replace("typing.", "")
    base = re.split(r"[\[|]", text)[0].strip()
    if "None" in [part.strip() for part in text.split("|")] or base == "Optional":
        return "None"
    generic = {
        "List": "list",
        "Dict": "dict",
        "Tuple": "tuple",
        "Set": "set",
        "Sequence": "list",
        "Mapping": "dict",
        "Iterable": "list",
    }
    base = generic.get(base, base)
    if base in SIMPLE:
        return SIMPLE[base]
    raise NoValue(f"strategies could not be inferred for argument `{arg.arg}: {text}`")


def boundary_values(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str]]:
    """``(parameter, value)`` at the edges of the function's simple comparisons of a parameter
    with a constant, and the falsy value of a parameter tested for truth."""
    params = {a.arg: a for a in [*node.args.args, *node.args.kwonlyargs]}
    guesses = guess_types(node)
    found: list[tuple[str, str]] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Compare) and len(child.ops) == 1:
            found += _compare_edges(child, params)
        elif isinstance(child, ast.If | ast.While | ast.IfExp | ast.Assert):
            found += _truth_edges(child.test, params, guesses)
    return list(dict.fromkeys(found))


def _compare_edges(node: ast.Compare, params: dict[str, ast.arg]) -> list[tuple[str, str]]:
    left, right = node.left, node.comparators[0]
    if not (isinstance(left, ast.Name) and left.id in params):
        return []
    if isinstance(node.ops[0], ast.Is | ast.IsNot) and _constant(right) == "None":
        return [(left.id, "None")]
    value = _constant(right)
    if value is None:
        return []
    try:
        number = ast.literal_eval(value)
    except ValueError:
        return []
    if isinstance(number, bool) or not isinstance(number, int | float):
        return [(left.id, value)] if isinstance(number, str) else []
    step = 1 if isinstance(number, int) else 0.5
    return [(left.id, repr(number - step)), (left.id, repr(number)), (left.id, repr(number + step))]


def _constant(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant):
        return repr(node.value)
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    operand = node.operand if isinstance(node, ast.UnaryOp) else None
    if negative and isinstance(operand, ast.Constant) and isinstance(operand.value, int | float):
        return repr(-operand.value)
    return None


def _truth_edges(
    test: ast.expr, params: dict[str, ast.arg], guesses: dict[str, Guess]
) -> list[tuple[str, str]]:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name) and test.id in params:
        annotation = params[test.id].annotation
        guess = guesses.get(test.id)
        text = ast.unparse(annotation) if annotation is not None else ""
        text = guess.type if guess is not None and annotation is None else text
        falsy = FALSY.get(re.split(r"[\[|]", text)[0].strip())
        return [(test.id, falsy)] if falsy else []
    return []


def raised_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The exception classes the function raises by name (``raise ValueError(...)``)."""
    names: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Raise) and child.exc is not None:
            exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
            if isinstance(exc, ast.Name):
                names.append(exc.id)
            elif isinstance(exc, ast.Attribute) and isinstance(exc.value, ast.Name):
                names.append(f"{exc.value.id}.{exc.attr}")
    return list(dict.fromkeys(names))


def declared_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The exceptions the function declares: those it raises by name, and those its docstring's
    ``Raises`` section (Google or NumPy style) or ``:raises X:`` fields name. An input it
    rejects with one of them is an invalid input, not a bug."""
    doc = ast.get_docstring(node) or ""
    names = raised_names(node) + re.findall(r":raises?\s+([A-Za-z_][\w.]*)", doc)
    lines = doc.splitlines()
    for index, line in enumerate(lines):
        if line.strip() in ("Raises:", "Raises"):
            names += _raises_section(lines[index + 1 :], len(line) - len(line.lstrip()))
    return list(dict.fromkeys(names))


def _raises_section(lines: list[str], heading: int) -> list[str]:
    """The class names of a ``Raises`` section's entries (``ValueError: why`` or NumPy's
    ``ValueError`` then an indented line), up to the next section."""
    names: list[str] = []
    entry: int | None = None
    for index, line in enumerate(lines):
        text = line.strip()
        if not text or set(text) == {"-"}:
            continue
        indent = len(line) - len(line.lstrip())
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if indent < heading or text.rstrip(":") in SECTIONS or set(following or "x") == {"-"}:
            break
        entry = indent if entry is None else entry
        found = re.match(r"([A-Za-z_][\w.]*)\s*(:|$)", text)
        if indent == entry and found and found.group(1).split(".")[-1][:1].isupper():
            names.append(found.group(1))
    return names


def slug(value: str) -> str:
    """A test-name-safe form of a value's source: ``-1`` -> ``minus_1``."""
    text = value.replace("-", "minus_").replace(".", "_")
    text = re.sub(r"\W+", "_", text).strip("_").lower()
    return text[:30] or "empty"


def test_source(call: Call, module: str, outcome: dict[str, object]) -> tuple[str, list[str]]:
    """The test function for a probed call, and the imports it needs; ``ValueError`` when the
    outcome justifies no test (an exception the function does not raise itself)."""
    function = call.function
    name = f"test_{function.qualname.replace('.', '_').lower()}_{call.label}"
    if call.init is not None:
        target = f"{module}.{function.class_name}({call.init_text()}).{function.name}"
    else:
        target = f"{module}.{function.qualname}"
    expression = f"{target}({call.args_text()})"
    imports = [f"import {module}"]
    if "raised" in outcome:
        raised = str(outcome["raised"])
        if raised not in {name.rsplit(".", 1)[-1] for name in declared_names(function.node)}:
            raise ValueError(
                f"the call {expression} raised {raised}, which it neither raises nor declares"
            )
        imports.append("import pytest")
        qualified = raised if outcome.get("module") == "builtins" else f"{module}.{raised}"
        body = f"    with pytest.raises({qualified}):\n        {expression}\n"
    elif outcome.get("literal"):
        returned = str(outcome["returned"])
        compare = "is" if returned in SINGLETONS else "=="
        body = f"    assert {expression} {compare} {returned}\n"
    else:
        body = f"    {expression}  # returned {str(outcome.get('returned'))[:60]!s}: check it\n"
    if call.guessed:
        body = f"    {comment(list(call.guessed))}\n{body}"
    return f"def {name}() -> None:\n{body}", imports
