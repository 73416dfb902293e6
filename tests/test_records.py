"""`core.records.dataclass`: the standard decorator's classes, without code compiled at import."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import field
from typing import Any
from typing import ClassVar

import pytest

from pytest_qbench.core import records


def _pair(**options: Any) -> tuple[Any, Any]:
    """The same class made by the standard decorator and by ``records.dataclass``."""
    made = []
    for decorate in (dataclasses.dataclass, records.dataclass):

        class Point:
            x: int
            y: str = "a"
            z: list[int] = field(default_factory=list)
            w: float = field(default=3.0, repr=False, compare=False)

        made.append(decorate(**options)(Point))
    return made[0], made[1]


@pytest.mark.parametrize(
    "options",
    [{}, {"frozen": True}, {"frozen": True, "eq": False, "repr": False}, {"eq": False}],
    ids=["plain", "frozen", "frozen-no-eq-repr", "no-eq"],
)
def test_a_record_behaves_as_the_standard_dataclass(options: dict[str, Any]) -> None:
    """Construction, defaults, repr, equality, hashing, frozenness, ``asdict``, ``replace``,
    ``fields`` and copying give what the standard decorator's class gives."""
    standard, cheap = _pair(**options)
    nan = float("nan")
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, "b", [2]), {"w": 4.0}),
        ((), {"x": nan, "z": [1]}),
    ]
    for args, kwargs in cases:
        a, b = standard(*args, **kwargs), cheap(*args, **kwargs)
        if options.get("repr", True):
            assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
        assert dataclasses.asdict(a) == dataclasses.asdict(b) or nan in kwargs.values()
        assert (a == standard(*args, **kwargs)) is (b == cheap(*args, **kwargs))
        assert (a == standard(*args, **{**kwargs, "w": 9.0})) is (
            b == cheap(*args, **{**kwargs, "w": 9.0})
        )
        assert (type(a).__hash__ is None) is (type(b).__hash__ is None)
        assert copy.deepcopy(b).x == b.x or kwargs.get("x") is nan
        assert dataclasses.replace(b, y="c").y == "c"
    assert [f.name for f in dataclasses.fields(cheap)] == [
        f.name for f in dataclasses.fields(standard)
    ]
    assert cheap.__match_args__ == standard.__match_args__
    assert cheap.__dataclass_params__.frozen is standard.__dataclass_params__.frozen
    if options.get("frozen"):
        if options.get("eq", True):
            assert hash(cheap(1, z=())) == hash(cheap(1, z=()))
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            cheap(1).x = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
            del cheap(1).y


def test_a_record_refuses_what_the_standard_init_refuses() -> None:
    """A missing, doubled, unknown or extra argument is a ``TypeError`` as before."""
    _standard, cheap = _pair(frozen=True)
    refused: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        ((), {}, "missing 1 required positional argument: 'x'"),
        ((1,), {"x": 2}, "multiple values for argument 'x'"),
        ((1,), {"q": 2}, "unexpected keyword argument 'q'"),
        ((1, "a", [], 1.0, 5), {}, "takes 5 positional arguments but 6 were given"),
    ]
    for args, kwargs, words in refused:
        with pytest.raises(TypeError, match=words):
            cheap(*args, **kwargs)


def test_the_run_s_classes_compile_no_code_when_made() -> None:
    """The classes a default run makes at import (the settings, the history readers and
    judges) get no method compiled from source: their ``__init__`` is the shared one."""
    from pytest_qbench.history import analysis
    from pytest_qbench.history import flakiness
    from pytest_qbench.history import indexer
    from pytest_qbench.history import queries
    from pytest_qbench.history import session_end
    from pytest_qbench.plugin.options import settings
    from pytest_qbench.report import outputs
    from pytest_qbench.report import shapes

    made = [
        queries.RunInfo,
        queries.PastResult,
        queries.Recent,
        flakiness.Monitors,
        flakiness.Assessment,
        flakiness.Verdict,
        analysis.Outcome,
        analysis.ExecutionSummary,
        settings.Settings,
        shapes._Layout,
        outputs.OutputWriter,
        indexer.Indexed,
        session_end.Recorded,
    ]
    compiled = [c.__name__ for c in made if vars(c)["__init__"].__code__.co_filename == "<string>"]
    assert compiled == []
    assert all(dataclasses.is_dataclass(c) for c in made)


def test_post_init_runs_and_fields_it_does_not_cover_are_refused() -> None:
    """``__post_init__`` runs after the fields are set; an ``InitVar`` or ``ClassVar`` field,
    which the shared ``__init__`` would get wrong, is refused when the class is made."""

    @records.dataclass(eq=False, repr=False)
    class Doubled:
        x: int

        def __post_init__(self) -> None:
            self.twice = self.x * 2

    assert Doubled(3).twice == 6
    with pytest.raises(TypeError, match="Counted: InitVar, ClassVar"):

        @records.dataclass
        class Counted:
            x: int
            made: ClassVar[int] = 0
