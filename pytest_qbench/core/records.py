"""`dataclass`: the standard decorator's classes, made without compiling code at import.

Python compiles every method ``dataclasses.dataclass`` generates from source when the class is
made (before 3.13): about 3 M instructions for a small frozen class with ``__eq__``, ``__hash__``
and ``__repr__``, in every process that imports it, every pytest run included. This decorator
makes the same class (``dataclasses.fields``, ``asdict``, ``replace`` and ``is_dataclass``
work on it) with ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and the frozen
``__setattr__``/``__delattr__`` shared functions that read the fields at call time instead.
Type checkers see ``dataclasses.dataclass`` itself. Options it does not cover (``order``,
``slots``, ``kw_only``, ``unsafe_hash``, ``init=False``) get the standard decorator; a field it
does not cover (``InitVar``, ``ClassVar``, ``kw_only``, ``init=False``) is refused when the class
is made.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(
        cls: type | None = None,
        /,
        *,
        init: bool = True,
        repr: bool = True,
        eq: bool = True,
        frozen: bool = False,
        **other: Any,
    ) -> Any:
        """``dataclasses.dataclass``, made at run time without compiling its methods."""

        def wrap(cls: type) -> type:
            return _make(cls, init=init, repr=repr, eq=eq, frozen=frozen, other=other)

        return wrap if cls is None else wrap(cls)


def _make(cls: type, *, init: bool, repr: bool, eq: bool, frozen: bool, other: Any) -> type:
    if other or not init:
        return dataclasses.dataclass(init=init, repr=repr, eq=eq, frozen=frozen, **other)(cls)
    made: type[Any] = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(made)
    pseudo = len(made.__dataclass_fields__) != len(fields)  # an InitVar or a ClassVar
    if pseudo or any(not f.init or f.kw_only is True for f in fields):
        raise TypeError(
            f"{cls.__qualname__}: InitVar, ClassVar, kw_only and init=False fields need"
            " dataclasses.dataclass itself"
        )
    params = made.__dataclass_params__
    params.init, params.repr, params.eq, params.frozen = True, repr, eq, frozen
    names = tuple(f.name for f in fields)
    _set(made, "__init__", _init(made, names, fields, frozen))
    if repr:
        _set(made, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))
    if eq:
        compared = tuple(f.name for f in fields if f.compare)
        _set(made, "__eq__", _eq(compared))
        if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            made.__hash__ = _hash(hashed) if frozen else None  # type: ignore[assignment]
    if frozen:
        _set(made, "__setattr__", _frozen_set(made, frozenset(names)))
        _set(made, "__delattr__", _frozen_del(made, frozenset(names)))
    return made


def _set(cls: type, name: str, function: Callable[..., Any]) -> None:
    if name in cls.__dict__:  # the class's own method wins, as with the standard decorator
        return
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, function)


def _init(
    cls: type, names: tuple[str, ...], fields: tuple[dataclasses.Field[Any], ...], frozen: bool
) -> Callable[..., None]:
    missing = dataclasses.MISSING
    defaults = {f.name: f.default for f in fields if f.default is not missing}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not missing}
    setter = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(
                f"{cls.__qualname__}.__init__() takes {len(names) + 1} positional arguments"
                f" but {len(args) + 1} were given"
            )
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument '{name}'"
                )
            setter(self, name, value)
        for name in names[len(args) :]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in defaults:
                value = defaults[name]
            elif name in factories:
                value = factories[name]()
            else:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() missing 1 required positional argument:"
                    f" '{name}'"
                )
            setter(self, name, value)
        if kwargs:
            unexpected = next(iter(kwargs))
            raise TypeError(
                f"{cls.__qualname__}.__init__() got an unexpected keyword argument '{unexpected}'"
            )
        if post_init:
            self.__post_init__()

    return __init__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in names))

    return __hash__


def _frozen_set(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_del(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
