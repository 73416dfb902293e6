"""Functions never run with generated inputs: those that shell out, kill processes, delete files
or write to a path taken from an argument, read from the AST (the function's own body, and the
functions of its module it calls, transitively). A test that calls one with random values would
do that for real in the project each time the suite runs; such a function goes to
needs_llm_review with the call named."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from pytest_qbench.generate.functions import Function


REMOVING = frozenset({"rmtree", "unlink", "rmdir", "removedirs"})
"""Deleting, whatever object the call is on (``shutil.rmtree``, ``Path.unlink``)."""
OS_CALLS = {
    "remove": "deletes files",
    "system": "runs a shell command",
    "popen": "runs a shell command",
    "kill": "kills processes",
    "killpg": "kills processes",
}
"""Calls of ``os`` (``os.remove``, ``os.system``...) and what they do."""
WRITE_MODES = frozenset("wax+")
WRITING = frozenset({"write_text", "write_bytes", "touch", "mkdir"})
"""Methods of a path that write to it."""
MOVING = frozenset({"copy", "copy2", "copyfile", "copytree", "move", "rename", "replace"})
"""Calls of ``shutil`` and ``os`` that write to their second argument."""
REASON = "not run with generated inputs: it calls {call} ({what}); test it by hand"


def hazard(function: Function, module: list[Function]) -> str | None:
    """Why ``function`` must not be run with generated inputs (the first dangerous call found
    in it or in a function of ``module`` it calls), or ``None``."""
    by_name = {(f.class_name, f.name): f for f in module}
    seen: set[tuple[str | None, str]] = set()
    todo = [function]
    if function.init is not None:
        todo.append(_init_of(function, function.init))
    while todo:
        current = todo.pop()
        key = (current.class_name, current.name)
        if key in seen:
            continue
        seen.add(key)
        found = _dangerous_call(current.node)
        if found is not None:
            call, what = found
            via = "" if current is function else f" through {current.qualname}"
            return REASON.format(call=call + via, what=what)
        todo += [by_name[k] for k in _callees(current) if k in by_name and k not in seen]
    return None


def _init_of(method: Function, init: ast.FunctionDef) -> Function:
    """``method``'s class's ``__init__`` as a function of that class."""
    return Function(
        qualname=f"{method.class_name}.__init__",
        name="__init__",
        class_name=method.class_name,
        file=method.file,
        line=init.lineno,
        end_line=init.end_lineno or init.lineno,
        body_start=init.lineno,
        is_async=False,
        signature="",
        context="",
        complexity=1,
        node=init,
    )


def _callees(function: Function) -> Iterable[tuple[str | None, str]]:
    """The module's functions (``name(...)``) and the class's methods (``self.name(...)``)
    that ``function`` calls."""
    for node in ast.walk(function.node):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                yield (None, node.func.id)
            elif (
                isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("self", "cls")
            ):
                yield (function.class_name, node.func.attr)


def _dangerous_call(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str] | None:
    tainted = _from_arguments(node)
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            found = _judge_call(call, tainted)
            if found is not None:
                return found
    return None


def _judge_call(call: ast.Call, tainted: set[str]) -> tuple[str, str] | None:
    name = _dotted(call.func)
    last = name.rsplit(".", 1)[-1]
    owner = name.rsplit(".", 1)[0] if "." in name else ""
    if last in REMOVING:
        return name, "deletes files"
    if owner == "os" and last in OS_CALLS:
        return name, OS_CALLS[last]
    if any(
        k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in call.keywords
    ):
        return f"{name}(shell=True)", "runs a shell command"
    if name == "open" and call.args and _uses(call.args[0], tainted) and _writes(call):
        return name, "writes to a path from an argument"
    if owner in ("shutil", "os") and last in MOVING and _uses_any(call.args[1:2], tainted):
        return name, "writes to a path from an argument"
    if isinstance(call.func, ast.Attribute) and (
        (last in WRITING and _uses(call.func.value, tainted))
        or (last == "open" and _uses(call.func.value, tainted) and _writes(call, 0))
    ):
        return name, "writes to a path from an argument"
    return None


def _writes(call: ast.Call, position: int = 1) -> bool:
    """Whether an ``open`` call's mode (``position``-th argument or ``mode=``) writes."""
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(WRITE_MODES & set(mode.value))
    return True  # a mode computed at run time may write


def _from_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The argument names, and the local names assigned from them (``p = join(BASE, sub)``)."""
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    tainted = {a.arg for a in every} - {"self", "cls"}
    changed = True
    while changed:
        changed = False
        for item in ast.walk(node):
            value, targets = _assignment(item)
            if value is None or not _uses(value, tainted):
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in tainted:
                        tainted.add(name.id)
                        changed = True
    return tainted


def _assignment(node: ast.AST) -> tuple[ast.expr | None, list[ast.expr]]:
    if isinstance(node, ast.Assign):
        return node.value, list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
        return node.value, [node.target]
    if isinstance(node, ast.For | ast.AsyncFor):
        return node.iter, [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return node.context_expr, [node.optional_vars]
    return None, []


def _uses_any(nodes: list[ast.expr], names: set[str]) -> bool:
    return any(_uses(node, names) for node in nodes)


def _uses(node: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _dotted(node: ast.expr) -> str:
    """``os.path.join`` for that attribute chain, ``Path(...).unlink`` through a call, ``?``
    for any other expression."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func)}(...)"
    return "?"


def calls_any(source: str, names: set[str]) -> bool:
    """Whether ``source`` (a generated test) calls a function or method named in ``names``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called in names:
                return True
    return False
