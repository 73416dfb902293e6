"""report.md without importing Jinja: the built-in templates' compiled code, kept on disk, run by
Jinja's own runtime modules.

``import jinja2`` imports the whole package (the environment, lexer, parser, compiler and their
patterns, ``pickle`` for the bytecode cache): about 85 M instructions in a pytest run, the
largest part of a run's fixed cost. Rendering an already compiled template needs only Jinja's
runtime (``runtime``, ``filters``, ``tests``, ``utils``: about 28 M). So when Jinja renders the
built-in ``report.md.j2``, the code it compiled (or loaded from its bytecode cache) for it and
for the ``summary.md.j2`` it includes is kept beside its bytecode cache (one marshalled file, no
second compile: `template_cache`'s cache hands it over). The next run that renders the built-in
``report.md.j2`` loads Jinja's runtime modules from Jinja's own files as the private package
``_qbench_jinja2`` (``jinja2/__init__`` is not run; of ``jinja2.nodes``, which the runtime needs
only for ``EvalContext``, a module with Jinja's class) and runs that code with `_Environment`,
which holds what the compiled code and the runtime read of an ``Environment``: the same filters,
tests and globals as `report.render.make_environment`'s; ``getattr``, ``getitem``,
``call_test`` and ``call_filter`` as Jinja 3.1's.

The entry is used only when everything it was made from is unchanged: the templates' text (read
again each run: the template files stay the single source), this module's format, Python's
version, and Jinja's files (their path, size and time of change); it is made only by a Jinja 3.1
release. Anything else (no entry, another Jinja, ``jinja2`` already imported by the run, a user
template directory, a template that fails) renders through Jinja as before, and rendering twice
is harmless: a template is a pure function of its context. ``QBENCH_TEMPLATE_CACHE=0`` keeps no
entry, as it keeps no compiled template.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import types
import zlib
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any


if TYPE_CHECKING:
    import jinja2

DISABLE_ENV = "QBENCH_TEMPLATE_CACHE"
"""``QBENCH_TEMPLATE_CACHE=0``: no compiled template kept or used (`template_cache` too)."""
FORMAT = 2
"""Bumped whenever the entry's shape or `_Environment` changes."""
PACKAGE = "_qbench_jinja2"
"""The name Jinja's runtime modules are loaded under (``jinja2`` itself stays unimported)."""
ENTRY_NAME = "__qbench_text_precompiled_{:08x}.marshal"
"""The entry's file, in Jinja's bytecode cache directory (``$TMPDIR/_jinja2-cache-<uid>``), one
for each directory of built-in templates (each installation of qbench), as Jinja's own keys."""
SUPPORTED_JINJA = "3.1."
"""The Jinja releases whose ``Environment`` `_Environment` mirrors."""
_JINJA_FILES = (
    "__init__.py",
    "runtime.py",
    "filters.py",
    "tests.py",
    "utils.py",
    "defaults.py",
    "nodes.py",
    "async_utils.py",
    "exceptions.py",
)


def _jinja_dir() -> Path | None:
    spec = importlib.util.find_spec("jinja2")  # finds the package without importing it
    if spec is None or not spec.origin or not spec.submodule_search_locations:
        return None
    return Path(spec.origin).parent


def _jinja_stamp(directory: Path) -> tuple[Any, ...]:
    stamp: list[Any] = [str(directory)]
    for name in _JINJA_FILES:
        st = os.stat(directory / name)
        stamp += [st.st_size, st.st_mtime_ns]
    return tuple(stamp)


def _cache_dir() -> Path | None:
    """Jinja's own bytecode cache directory when it is there and safe (ours, 0700)."""
    if not hasattr(os, "getuid"):
        return None
    path = Path(tempfile.gettempdir(), f"_jinja2-cache-{os.getuid()}")
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid() or not stat.S_ISDIR(st.st_mode):
        return None
    return path if stat.S_IMODE(st.st_mode) == stat.S_IRWXU else None


def _key(directory: Path, sources: Mapping[str, str]) -> tuple[Any, ...]:
    return (FORMAT, sys.version, _jinja_stamp(directory), tuple(sorted(sources.items())))


def store(env: jinja2.Environment, template_dir: Path) -> None:
    """Keep the code Jinja compiled (or loaded from its cache) for the templates ``env`` loaded,
    for `render_builtin`; never an error (the next run renders through Jinja again)."""
    import jinja2

    cache = env.bytecode_cache
    directory = getattr(cache, "directory", None)
    loaded = getattr(cache, "loaded", None)
    jinja_dir = _jinja_dir()
    if not jinja2.__version__.startswith(SUPPORTED_JINJA) or not directory or not loaded:
        return
    with contextlib.suppress(Exception):
        sources = {name: source for name, (source, _) in loaded.items()}
        codes = {name: code for name, (_, code) in loaded.items()}
        if jinja_dir is None or any(code is None for code in codes.values()):
            return
        entry = marshal.dumps((_key(jinja_dir, sources), codes))
        target = Path(directory) / _entry_name(template_dir)
        temporary = target.with_name(f"{target.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as file:
            file.write(entry)
        os.replace(temporary, target)


def _entry_name(template_dir: Path) -> str:
    return ENTRY_NAME.format(zlib.crc32(str(template_dir).encode("utf-8", "surrogateescape")))


def render_builtin(
    name: str,
    template_dir: Path,
    additions: Callable[[], tuple[Mapping[str, Any], Mapping[str, Any]]],
    context: dict[str, Any],
) -> tuple[str | None, bool]:
    """``name`` rendered from its kept code, else ``None`` and whether to keep a new entry (there
    is none, or it is stale). ``additions`` gives qbench's globals and filters."""
    try:
        templates = _load(template_dir)
    except Exception:  # an unreadable template: Jinja says what is wrong with it
        return None, False
    if templates is None or name not in templates:
        return None, True
    try:
        globals_, filters = additions()
        env = _Environment(templates, globals_, filters)
        return env.get_template(name).render(context), False
    except Exception:  # whatever went wrong, Jinja renders it (and reports a template's error)
        return None, False


def _load(template_dir: Path) -> dict[str, Any] | None:
    if os.environ.get(DISABLE_ENV, "1").strip() == "0":
        return None
    cache = _cache_dir()
    jinja_dir = _jinja_dir()
    if cache is None or jinja_dir is None:
        return None
    try:
        with open(cache / _entry_name(template_dir), "rb") as file:
            # loads of the bytes read at once: marshal.load of a file reads it piecemeal, a
            # readinto call for each object (10.5 M instructions for this entry, 1 M so)
            key, codes = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    sources = {name: (template_dir / name).read_text(encoding="utf-8") for name in codes}
    if key != _key(jinja_dir, sources):
        return None
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, jinja_dir / "__init__.py", submodule_search_locations=[str(jinja_dir)]
        )
        if spec is None:
            return None
        sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)  # its __init__ not run
        # The runtime takes only EvalContext from jinja2.nodes, whose import (the template
        # syntax tree's 80 classes) costs 13 M instructions: a module holding Jinja's class.
        nodes = types.ModuleType(f"{PACKAGE}.nodes")
        nodes.EvalContext = _EvalContext  # type: ignore[attr-defined]
        sys.modules[nodes.__name__] = nodes
    return dict(codes)


class _EvalContext:
    """Jinja 3.1's ``jinja2.nodes.EvalContext``, as it is."""

    def __init__(self, environment: Any, template_name: str | None = None) -> None:
        self.environment = environment
        if callable(environment.autoescape):
            self.autoescape = environment.autoescape(template_name)
        else:
            self.autoescape = environment.autoescape
        self.volatile = False

    def save(self) -> Mapping[str, Any]:
        return self.__dict__.copy()

    def revert(self, old: Mapping[str, Any]) -> None:
        self.__dict__.clear()
        self.__dict__.update(old)


class _Template:
    """What Jinja's ``Template`` does for a template made from code (``Template.from_code``)."""

    def __init__(self, environment: _Environment, code: Any) -> None:
        namespace: dict[str, Any] = {
            "environment": environment,
            "__file__": code.co_filename,
            "__builtins__": environment.builtins,
        }
        exec(code, namespace)
        self.environment = environment
        self.globals: MutableMapping[str, Any] = environment.make_globals(None)
        self.name: str = namespace["name"]
        self.blocks: dict[str, Any] = namespace["blocks"]
        self.root_render_func: Callable[[Any], Iterator[str]] = namespace["root"]
        namespace["__jinja_template__"] = self

    def new_context(
        self,
        vars: dict[str, Any] | None = None,
        shared: bool = False,
        locals: Mapping[str, Any] | None = None,
    ) -> Any:
        runtime = self.environment.runtime
        return runtime.new_context(
            self.environment, self.name, self.blocks, vars, shared, self.globals, locals
        )

    def render(self, context: dict[str, Any]) -> str:
        return str(self.environment.concat(self.root_render_func(self.new_context(dict(context)))))


class _Environment:
    """What the compiled templates, Jinja's runtime, filters and tests read of a Jinja 3.1
    ``Environment`` made by `report.render.make_environment` (no autoescape, strict undefined;
    trimming and newlines are the compiler's, already in the code)."""

    sandboxed = False
    optimized = True
    is_async = False
    autoescape = False
    finalize = None
    shared = False
    newline_sequence = "\n"
    keep_trailing_newline = True
    intercepted_binops: frozenset[str] = frozenset()
    intercepted_unops: frozenset[str] = frozenset()

    def __init__(
        self, codes: Mapping[str, Any], globals_: Mapping[str, Any], filters: Mapping[str, Any]
    ) -> None:
        self.runtime = importlib.import_module(f"{PACKAGE}.runtime")
        self.builtins = {**vars(builtins), "__import__": self._import}
        defaults = importlib.import_module(f"{PACKAGE}.defaults")
        self._utils = importlib.import_module(f"{PACKAGE}.utils")
        self.undefined = self.runtime.StrictUndefined
        self.context_class = self.runtime.Context
        self.concat = self._utils.concat
        self.filters = dict(defaults.DEFAULT_FILTERS)
        self.tests = dict(defaults.DEFAULT_TESTS)
        self.globals = dict(defaults.DEFAULT_NAMESPACE)
        self.policies = dict(defaults.DEFAULT_POLICIES)
        self.filters.update(filters)
        self.globals.update(globals_)
        self._codes = codes
        self._templates: dict[str, _Template] = {}

    def _import(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The compiled code's ``from jinja2.runtime import ...``: the private runtime."""
        if name == "jinja2.runtime":
            return self.runtime
        return builtins.__import__(name, *args, **kwargs)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        from collections import ChainMap

        return ChainMap({} if d is None else d, self.globals)

    def get_template(self, name: str, parent: str | None = None, globals: Any = None) -> Any:
        if globals is not None:
            raise LookupError("template globals")  # the built-ins pass none: Jinja renders
        template = self._templates.get(name)
        if template is None:
            template = self._templates[name] = _Template(self, self._codes[name])
        return template

    def getitem(self, obj: Any, argument: Any) -> Any:
        try:
            return obj[argument]
        except (AttributeError, TypeError, LookupError):
            if isinstance(argument, str):
                try:
                    attr = str(argument)
                except Exception:
                    pass
                else:
                    try:
                        return getattr(obj, attr)
                    except AttributeError:
                        pass
            return self.undefined(obj=obj, name=argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)

    def _call(
        self,
        is_filter: bool,
        name: Any,
        value: Any,
        args: Any = None,
        kwargs: Any = None,
        context: Any = None,
        eval_ctx: Any = None,
    ) -> Any:
        """Jinja 3.1's ``Environment._filter_test_common``."""
        env_map = self.filters if is_filter else self.tests
        func = env_map.get(name)
        if func is None:
            raise LookupError(f"No {'filter' if is_filter else 'test'} named {name!r}.")
        args = [value, *(args if args is not None else ())]
        kwargs = kwargs if kwargs is not None else {}
        pass_arg = self._utils._PassArg.from_obj(func)
        if pass_arg is self._utils._PassArg.context:
            if context is None:
                raise LookupError("a context filter or test without context")
            args.insert(0, context)
        elif pass_arg is self._utils._PassArg.eval_context:
            if eval_ctx is None:
                eval_ctx = context.eval_ctx if context is not None else _EvalContext(self)
            args.insert(0, eval_ctx)
        elif pass_arg is self._utils._PassArg.environment:
            args.insert(0, self)
        return func(*args, **kwargs)

    call_filter = functools.partialmethod(_call, True)
    call_test = functools.partialmethod(_call, False)
