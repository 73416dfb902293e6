"""Which Hypothesis ghostwriter tests to ask for, from names and signatures (AST only), and the
settings every property test gets (few examples, no deadline, derandomized so CI is stable)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_qbench.generate.functions import Function
from pytest_qbench.generate.guess import Guess
from pytest_qbench.generate.guess import guess_types
from pytest_qbench.generate.templates import declared_names


PAIRS = (
    ("encode", "decode"),
    ("dumps", "loads"),
    ("dump", "load"),
    ("serialize", "deserialize"),
    ("serialise", "deserialise"),
    ("compress", "decompress"),
    ("encrypt", "decrypt"),
    ("pack", "unpack"),
    ("quote", "unquote"),
    ("escape", "unescape"),
)
IDEMPOTENT = re.compile(r"(sort|normali[sz]e|clean|canonical|dedup|strip|sanitize|sanitise)")
BINARY = re.compile(r"^_?(add|merge|combine|union|concat|multiply|mul|gcd|lcm|max|min)(_|$)")
GUESSED_INTS = (-10, 100)
"""The range of the integers drawn for an argument guessed to be an int."""
VARIANTS = re.compile(r"_(fast|slow|naive|reference|ref|old|new|v\d+)$")


@dataclass(frozen=True)
class GhostSpec:
    """One ghostwriter call."""

    id: str
    kind: str
    module: str
    functions: tuple[str, ...]
    except_: tuple[str, ...]
    guessed: tuple[tuple[str, Guess], ...] = ()
    """``(function, guess)``: the types guessed for required unannotated arguments, given to the
    ghostwriter as annotations (generate/guess.py)."""

    def guesses(self) -> list[Guess]:
        """The guesses, in order, each once."""
        return list(dict.fromkeys(g for _, g in self.guessed))


def ghost_specs(module: str, functions: list[Function]) -> list[GhostSpec]:
    """The ghostwriter calls for the plain (not async, not method, not private) functions."""
    plain = {f.name: f for f in functions if not (f.is_method or f.is_async or f.is_private)}
    specs: list[GhostSpec] = []
    for name, function in plain.items():
        for kind, names in _kinds(name, function, plain):
            raised = tuple(r for n in names for r in declared_names(plain[n].node))
            ident = f"{module}:{kind}:{'+'.join(names)}"
            guessed = tuple((n, g) for n in names for g in required_guesses(plain[n]))
            specs.append(
                GhostSpec(ident, kind, module, names, tuple(dict.fromkeys(raised)), guessed)
            )
    return specs


def _kinds(
    name: str, function: Function, plain: dict[str, Function]
) -> list[tuple[str, tuple[str, ...]]]:
    kinds: list[tuple[str, tuple[str, ...]]] = []
    for forward, backward in PAIRS:
        if name.startswith(forward) and not name.startswith(backward):
            partner = backward + name[len(forward) :]
            if partner in plain:
                kinds.append(("roundtrip", (name, partner)))
    if name.startswith("to_") and "from_" + name[3:] in plain:
        kinds.append(("roundtrip", (name, "from_" + name[3:])))
    if IDEMPOTENT.search(name) and len(_required(function)) == 1:
        kinds.append(("idempotent", (name,)))
    if BINARY.search(name) and len(_required(function)) == 2:
        kinds.append(("binary_operation", (name,)))
    base = VARIANTS.sub("", name)
    if base != name and base in plain:
        kinds.append(("equivalent", (base, name)))
    kinds.append(("fuzz", (name,)))
    return kinds


def required_guesses(function: Function) -> list[Guess]:
    """The guessed types of ``function``'s required unannotated arguments (those with a
    default keep the ghostwriter's own handling)."""
    required = set(_required(function)) | {
        a.arg
        for a, d in zip(function.node.args.kwonlyargs, function.node.args.kw_defaults, strict=True)
        if d is None
    }
    return [g for name, g in guess_types(function.node).items() if name in required]


def _required(function: Function) -> list[str]:
    args = function.node.args
    return [a.arg for a in args.args[: len(args.args) - len(args.defaults)]]


def with_settings(code: str, max_examples: int) -> str:
    """``code`` with ``@settings(max_examples=N, deadline=None, derandomize=True)`` above each
    ``@given``."""
    decorator = f"@settings(max_examples={max_examples}, deadline=None, derandomize=True)\n"
    code = re.sub(r"^@given\(", lambda m: decorator + m.group(0), code, flags=re.MULTILINE)
    return "from hypothesis import settings\n" + code


def bound_guessed_ints(code: str, guesses: list[Guess]) -> str:
    """``code`` with the strategy of each argument guessed to be an int bounded to
    ``GUESSED_INTS``: a count or a width guessed from a name may size a loop or a string."""
    low, high = GUESSED_INTS
    for guess in guesses:
        if guess.type == "int":
            code = code.replace(
                f"{guess.name}=st.integers()",
                f"{guess.name}=st.integers(min_value={low}, max_value={high})",
            )
    return code
