"""The type guess for unannotated parameters (issue 14 fix): default, then name, then use; each
guess said in the generated test and in the output."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_qbench.generate import templates
from pytest_qbench.generate.functions import read_functions
from pytest_qbench.generate.ghostwriter import bound_guessed_ints
from pytest_qbench.generate.ghostwriter import ghost_specs
from pytest_qbench.generate.guess import Guess
from pytest_qbench.generate.guess import comment
from pytest_qbench.generate.guess import from_name
from pytest_qbench.generate.guess import guess_types
from pytest_qbench.generate.templates import template_calls


def node_of(source: str) -> ast.FunctionDef:
    """The first function of ``source``."""
    found = ast.parse(source).body[0]
    assert isinstance(found, ast.FunctionDef)
    return found


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text", "str"),
        ("under_string", "str"),
        ("unit_noun", "str"),
        ("s", "str"),
        ("nbytes", "int"),
        ("number", "int"),
        ("max_count", "int"),
        ("bytestring", "bytes"),
        ("is_valid", "bool"),
        ("int_list", "list[int]"),
        ("args", "list[str]"),
        ("sized_iterable", "list[str]"),
        ("obj", None),
        ("master", None),
        ("key", None),
        ("data", None),
    ],
)
def test_names_give_types_only_when_they_are_clear(name: str, expected: str | None) -> None:
    assert from_name(name) == expected


def test_default_then_name_then_use() -> None:
    node = node_of(
        "def f(self, text, count=3, thing=None, blob=None, value=None, *, n):\n"
        "    value.lower()\n"
        "    blob.decode()\n"
        "    for _ in range(thing): pass\n"
    )
    guesses = guess_types(node)
    assert guesses["text"] == Guess("text", "str", "name")
    assert guesses["count"] == Guess("count", "int", "default")
    assert guesses["value"] == Guess("value", "str", "use")
    assert guesses["blob"] == Guess("blob", "bytes", "use")
    assert guesses["thing"] == Guess("thing", "int", "use")
    assert guesses["n"].type == "int"
    assert "self" not in guesses


def test_annotated_and_unclear_parameters_are_not_guessed() -> None:
    node = node_of("def f(text: bytes, obj, other):\n    return obj(other)\n")
    assert guess_types(node) == {}


def test_the_comment_says_where_each_guess_comes_from() -> None:
    text = comment([Guess("text", "str", "name"), Guess("n", "int", "default")])
    assert text == "# argument types guessed from defaults, names: text: str, n: int"
    assert comment([Guess("text", "str", "name")]) == (
        "# argument types guessed from names: text: str"
    )


def test_template_values_use_the_guess_and_carry_the_comment(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def shout(text, width):\n    return text.upper()[:width]\n", "utf-8")
    (shout,) = read_functions(module)
    (call, *_) = template_calls(shout)
    assert call.args_text() == "text='a', width=1"
    body, _ = templates.test_source(call, "m", {"returned": "'A'", "literal": True})
    assert "    # argument types guessed from names: text: str, width: int\n" in body


def test_ghost_specs_carry_required_guesses_only(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def shout(text, times=2):\n    return text * times\n", "utf-8")
    (spec,) = ghost_specs("m", read_functions(module))
    assert [g.text() for g in spec.guesses()] == ["text: str"]
    code = "@given(text=st.text(), n=st.integers())\ndef test(): ...\n"
    bounded = bound_guessed_ints(code, [Guess("n", "int", "name")])
    assert "n=st.integers(min_value=-10, max_value=100)" in bounded
