"""The child process that imports the target (``python -m pytest_qbench.generate._child
REQUEST.json``): Hypothesis ghostwriting and template probes. Run only by ``probe.py``, in its
own process group with a timeout; every result is written to the results file as soon as it is
known, so a hang loses only what was still to do."""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import json
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any


class ProbeTimeout(BaseException):
    """One probe took longer than its share of the timeout."""


def main(request_file: str) -> int:
    """Do what the request file asks; write the results beside it."""
    request = json.loads(Path(request_file).read_text(encoding="utf-8"))
    results: dict[str, Any] = {"imports": {}, "ghost": {}, "probes": {}}
    out = Path(request["results"])
    modules = {name: _import(name, results) for name in request["modules"]}
    _save(out, results)
    if request["ghost"]:
        _import_ghostwriter()
    for item in request["ghost"]:
        module = modules.get(item["module"])
        if module is not None:
            results["ghost"][item["id"]] = _guarded(ghostwrite, module, item, request)
            _save(out, results)
    for item in request["probes"]:
        module = modules.get(item["module"])
        if module is not None:
            results["probes"][item["id"]] = _guarded(probe, module, item, request)
            _save(out, results)
    results["done"] = True
    _save(out, results)
    return 0


def _save(out: Path, results: dict[str, Any]) -> None:
    partial = out.with_suffix(".tmp")
    partial.write_text(json.dumps(results), encoding="utf-8")
    partial.replace(out)


def _import(name: str, results: dict[str, Any]) -> types.ModuleType | None:
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # the target's code: anything, SystemExit included
        results["imports"][name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return None
    results["imports"][name] = None
    return module


def _guarded(action: Any, module: types.ModuleType, item: dict[str, Any], request: Any) -> Any:
    """Run ``action`` with an alarm; an exception or a timeout becomes ``{"error": ...}``."""

    def on_alarm(signum: int, frame: object) -> None:
        raise ProbeTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(request["timeout"]))
    try:
        return action(module, item, request)
    except ProbeTimeout:
        return {"timeout": True}
    except BaseException as exc:
        return {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _import_ghostwriter() -> None:
    """Import the ghostwriter and load Hypothesis's Unicode tables (seconds of CPU: all of
    Hypothesis, and the tables when they are not cached yet) before any item's alarm runs, so
    that an item's time is its own ghostwriting, not what the first item would pay for all;
    an import that fails is left to the first item, which reports it."""
    try:
        _shim_black()
        import hypothesis.extra.ghostwriter  # noqa: F401
        from hypothesis.internal.charmap import charmap
        from hypothesis.internal.charmap import intervals_from_codec

        charmap()
        intervals_from_codec("utf-8")
    except Exception:  # the first item's import says what went wrong
        return


def _resolve(module: types.ModuleType, qualname: str) -> Any:
    value: Any = module
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def _exceptions(module: types.ModuleType, names: list[str]) -> tuple[type[Exception], ...]:
    found: list[type[Exception]] = []
    for name in names:
        try:
            value = _resolve(module, name)  # dotted too: errors.Invalid
        except AttributeError:
            value = getattr(builtins, name, None)
        if isinstance(value, type) and issubclass(value, Exception):
            found.append(value)
    return tuple(found)


def ghostwrite(module: types.ModuleType, item: dict[str, Any], request: Any) -> dict[str, str]:
    """Hypothesis's ghostwriter's test for ``item`` (``kind``: fuzz, roundtrip, idempotent,
    equivalent, binary_operation)."""
    _shim_black()
    from hypothesis.extra import ghostwriter

    funcs = [_resolve(module, name) for name in item["functions"]]
    for function, name, kind in item.get("guessed", []):
        _annotate(_resolve(module, function), name, kind)
    except_ = _exceptions(module, item.get("except", []))
    kind = item["kind"]
    if kind == "roundtrip":
        code = ghostwriter.roundtrip(*funcs, except_=except_)
    elif kind == "idempotent":
        code = ghostwriter.idempotent(funcs[0], except_=except_)
    elif kind == "equivalent":
        code = ghostwriter.equivalent(*funcs, except_=except_)
    elif kind == "binary_operation":
        code = ghostwriter.binary_operation(funcs[0], except_=except_)
    else:
        code = ghostwriter.fuzz(funcs[0], except_=except_)
    unresolved = _unresolved(code)
    return {"code": code} if unresolved is None else {"code": code, "unresolved": unresolved}


def _unresolved(code: str) -> str | None:
    """``hypothesis.errors.ResolutionFailed: Could not resolve ...`` when a strategy of ``code``'s ``@given`` has
    no strategy for a type: its test would fail so in any run, before calling the function, so
    the generation drops it without a child pytest of its own. ``None`` otherwise (or when the
    code cannot be checked here: its own run decides)."""
    from hypothesis.errors import ResolutionFailed

    try:
        namespace: dict[str, Any] = {}
        exec(compile(code, "<ghostwritten>", "exec"), namespace)  # defines, never calls, the test
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "given":
                for argument in [*node.args, *(k.value for k in node.keywords)]:
                    eval(compile(ast.Expression(argument), "<given>", "eval"), namespace).validate()
    except ResolutionFailed as exc:
        if "Could not resolve" in str(exc):
            named = f"{type(exc).__module__}.{type(exc).__qualname__}"  # as pytest's E line
            return f"{named}: {exc}".splitlines()[0][:300]
    except Exception:  # anything else: the candidate's own run says what it is
        return None
    return None


def _annotate(function: Any, name: str, kind: str) -> None:
    """Give ``function`` the guessed annotation ``name: kind`` (in this child only), so that
    the ghostwriter infers a strategy for it (``kind`` is a type guess.py names: ``str``,
    ``list[int]``, ...)."""
    annotations = dict(getattr(function, "__annotations__", {}) or {})
    annotations[name] = eval(kind, {"__builtins__": builtins})
    function.__annotations__ = annotations


def _shim_black() -> None:
    """The ghostwriter imports black only to format its output; qbench formats the files it
    writes itself (ruff or black when the project has one), so without black a stand-in that
    returns the text unchanged is enough."""
    if "black" not in sys.modules and importlib.util.find_spec("black") is None:
        shim = types.ModuleType("black")
        shim.Mode = lambda **kwargs: None  # type: ignore[attr-defined]
        shim.format_str = lambda text, mode=None: text  # type: ignore[attr-defined]
        sys.modules["black"] = shim


def probe(module: types.ModuleType, item: dict[str, Any], request: Any) -> dict[str, Any]:
    """Call ``item``'s function with its arguments (source text, evaluated in the module's
    namespace); what it returned (its repr, and whether the repr reads back equal) or raised."""
    namespace = dict(vars(module))
    args = eval(f"dict({item['args']})", namespace)
    try:
        if item.get("init") is not None:
            cls = _resolve(module, item["class"])
            init = eval(f"dict({item['init']})", namespace)
            result = getattr(cls(**init), item["name"])(**args)
        else:
            result = _resolve(module, item["function"])(**args)
    except ProbeTimeout:
        raise
    except BaseException as exc:
        kind = type(exc)
        return {"raised": kind.__name__, "module": kind.__module__, "message": str(exc)[:200]}
    text = repr(result)
    return {"returned": text, "literal": _reads_back(text, result)}


def _reads_back(text: str, value: object) -> bool:
    import ast

    try:
        return bool(ast.literal_eval(text) == value) and len(text) <= 200
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except Exception:
        traceback.print_exc()
        sys.exit(1)
