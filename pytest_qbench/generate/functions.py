"""The functions and methods of a module, read from its AST (never imported): line spans,
signature, first lines and a cyclomatic complexity.

Complexity is McCabe's cyclomatic number as radon counts it (a test checks that both agree on
every function of this package): 1, plus 1 for each ``if``/``elif``, conditional expression,
``assert`` (whatever its condition), ``except`` handler and each extra operand of a boolean
``and``/``or``; 1 for each ``for``/``async for``/``while`` and 1 more for its ``else``; 1 for a
``try``'s ``else``; 1 for each ``for`` of a comprehension and each of its ``if`` clauses; 1 for
each ``match`` case but a catch-all (``case _``, ``case name``). Only the body counts (not
decorators or defaults); nested functions and classes count in their own right, not in the
enclosing one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path


BRANCHES = (ast.If, ast.IfExp, ast.Assert)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
TRIES: tuple[type[ast.Try], ...] = tuple(
    getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name)
)
"""``try`` statements (``try``/``except*``, Python 3.11+, has a node of its own)."""
CONTEXT_LINES = 6


@dataclass
class Function:
    """A function or method of the target."""

    qualname: str
    """``name`` or ``Class.name``."""
    name: str
    class_name: str | None
    file: Path
    line: int
    end_line: int
    body_start: int
    """The first line of the body (docstring excluded): what a call must reach."""
    is_async: bool
    signature: str
    context: str
    complexity: int
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(repr=False)
    init: ast.FunctionDef | None = field(default=None, repr=False)
    """Its class's ``__init__``, for methods."""
    uncovered: list[int] = field(default_factory=list)

    @property
    def is_method(self) -> bool:
        """Whether it is defined in a class body."""
        return self.class_name is not None

    @property
    def is_private(self) -> bool:
        """``_name`` (dunders excepted)."""
        return self.name.startswith("_") and not self.name.startswith("__")

    def lines_in(self, missing: set[int]) -> list[int]:
        """The lines of ``missing`` in its span (``line`` to ``end_line``), sorted."""
        return sorted(n for n in missing if self.line <= n <= self.end_line)


def read_functions(path: Path) -> list[Function]:
    """Every top-level function and every method of a top-level class, in file order."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    lines = source.splitlines()
    found: list[Function] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(describe(node, None, None, path, lines))
        elif isinstance(node, ast.ClassDef):
            init = next(
                (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
                None,
            )
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append(describe(item, node.name, init, path, lines))
    return found


def describe(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    class_name: str | None,
    init: ast.FunctionDef | None,
    path: Path,
    lines: list[str],
) -> Function:
    """A `Function` of ``node``."""
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = node.end_lineno or node.lineno
    body = node.body
    first = body[1] if len(body) > 1 and _is_docstring(body[0]) else body[0]
    qualname = f"{class_name}.{node.name}" if class_name else node.name
    return Function(
        qualname=qualname,
        name=node.name,
        class_name=class_name,
        file=path,
        line=node.lineno,
        end_line=end,
        body_start=first.lineno,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        signature=signature_text(node),
        context="\n".join(lines[start - 1 : min(end, start - 1 + CONTEXT_LINES)]),
        complexity=complexity(node),
        node=node,
        init=init,
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def signature_text(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``async def f(a: int, b=2) -> str``."""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def complexity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe's cyclomatic complexity of ``node``, as radon counts it (the module docstring)."""
    return 1 + sum(_decisions(child) for child in _own_nodes(node))


def _decisions(node: ast.AST) -> int:
    """The decision points ``node`` adds itself (its children count on their own)."""
    if isinstance(node, BRANCHES):
        return 1
    if isinstance(node, LOOPS):
        return 1 + bool(node.orelse)
    if isinstance(node, TRIES):
        return len(node.handlers) + bool(node.orelse)
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    if isinstance(node, ast.Match):
        return sum(not _catch_all(case.pattern) for case in node.cases)
    return 0


def _catch_all(pattern: ast.pattern) -> bool:
    """``case _`` or ``case name``: a case that matches anything decides nothing."""
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None


def _own_nodes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of ``node``'s body, not descending into nested functions or classes, nor into
    an ``assert``."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(child)
        if not isinstance(child, ast.Assert):  # one decision, whatever its condition
            stack.extend(ast.iter_child_nodes(child))
    return found


def attach_uncovered(functions: list[Function], missing: set[int]) -> None:
    """Set each function's uncovered lines: the missing statements of its span (nested
    functions included; for a class's methods, only their own span)."""
    for function in functions:
        function.uncovered = function.lines_in(missing)
