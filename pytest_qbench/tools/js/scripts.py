"""What a package's ``test`` script (the one ``npm test`` runs) gives a test runner: the
options that decide which tests run (``vitest --project unit``, ``jest --config
jest.unit.json``), so that qbench's own run of the runner runs the same tests.

The script is split into its commands (``&&``, ``;``, ``|``...); a command running the runner
(``vitest``, ``npx vitest``, ``NODE_ENV=test vitest``, ``node node_modules/jest/bin/jest.js``)
gives its words; one running another
script (``npm run unit``, ``pnpm test:unit``, ``yarn unit``) is followed, a few scripts deep,
with the words it passes after ``--``. Standard library only; nothing here starts a process.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.spec import Unsupported


SCRIPT = "test"
"""The script whose runner options qbench's run takes: the one ``npm test`` runs."""
_COMMANDS = re.compile(r"&&|\|\||[;|&\n]")
"""What separates the commands of a script."""
_RUNS_SCRIPT = re.compile(r"^(?:npm|pnpm|yarn|bun)$")
_DEPTH = 5
"""How many scripts deep ``npm run other`` is followed."""
_SHELL = re.compile(r"[$`]")
"""A value the shell would expand (``$CONFIG``, ``$(pwd)``): qbench runs no shell."""


@dataclass(frozen=True)
class Option:
    """An option of a runner that decides which tests run, carried into qbench's run."""

    names: tuple[str, ...]
    """Its spellings, the long one first (``--config``, ``-c``)."""
    values: int | None = 1
    """How many values follow it: 1; ``None``: every word up to the next option (jest's
    ``--selectProjects a b``)."""
    repeated: bool = False
    """Whether the runner takes it several times, each adding tests (vitest's ``--project``):
    the values of several commands are then run together."""


def invocations(package: Package, runner: str, script: str = SCRIPT) -> list[list[str]]:
    """The argument lists of every command of ``package``'s ``script`` (and of the scripts it
    runs) that runs ``runner``: the words after the runner's name."""
    found: list[list[str]] = []
    _walk(package, script, [], runner, found, _DEPTH)
    return found


def _walk(
    package: Package, name: str, extra: list[str], runner: str, found: list[list[str]], depth: int
) -> None:
    script = package.scripts.get(name)
    if not isinstance(script, str) or depth == 0:
        return
    parts = _COMMANDS.split(script)
    for number, part in enumerate(parts):
        words = split(part)
        if number == len(parts) - 1:
            words += extra  # npm run X -- more: added to the script's last command
        while words and "=" in words[0] and not words[0].startswith("-"):
            words.pop(0)  # NODE_ENV=test vitest
        at = [n for n, w in enumerate(words) if runs(w, runner)]
        if at:
            found.append(words[at[0] + 1 :])
        elif len(words) >= 2 and _RUNS_SCRIPT.match(words[0]):
            rest = words[2:] if words[1] in ("run", "run-script") else words[1:]
            if rest:
                more = rest[rest.index("--") + 1 :] if "--" in rest else []
                _walk(package, rest[0], more, runner, found, depth - 1)


def runs(word: str, runner: str) -> bool:
    """Whether a command's word is the runner: ``vitest``, ``node_modules/.bin/vitest``, or
    its script run by Node (``node --experimental-vm-modules node_modules/jest/bin/jest.js``)."""
    name = word.rsplit("/", 1)[-1]
    return name == runner or (name in (f"{runner}.js", f"{runner}.mjs") and "/bin/" in word)


def split(command: str) -> list[str]:
    """A command's words as the shell splits them (by spaces where its quotes do not close)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def carried(package: Package, runner: str, options: tuple[Option, ...]) -> list[str]:
    """The ``options`` that ``package``'s test script gives ``runner``, as arguments for
    qbench's one run of it (``--option=value``; a repeated option once per value).

    Every command of the script that runs the runner must give the same ones (a repeated
    option: some value each, the values run together), so that one run runs the tests they
    run together.

    Raises:
        Unsupported: commands giving different ones, a value the shell would expand, an
            option without its value: the message names the script, the option and the fix.
    """
    runs = [given(words, options, runner) for words in invocations(package, runner)]
    if not runs:
        return []
    arguments: list[str] = []
    for option in options:
        name = option.names[0]
        seen = [run.get(name) for run in runs]
        if all(values is None for values in seen):
            continue
        if option.repeated and all(seen):
            values = list(dict.fromkeys(v for values in seen for v in values or []))
        elif all(values == seen[0] for values in seen):
            values = seen[0] or []
        else:
            raise Unsupported(
                f"the package's {SCRIPT!r} script runs {runner} {len(runs)} times with different "
                f"{name} ({', '.join(' '.join(v) if v else '(none)' for v in seen)}): qbench "
                f"runs {runner} once; make the script run {runner} once, or give each set of "
                "tests its own package"
            )
        if option.values is None:
            arguments += [name, *values]
        else:
            arguments += [f"{name}={value}" for value in values]
    return arguments


def given(words: list[str], options: tuple[Option, ...], runner: str) -> dict[str, list[str]]:
    """Each option of ``options`` in one command's ``words``: its long name and values.

    Raises:
        Unsupported: a value the shell would expand, or an option without its value.
    """
    spelled = {name: option for option in options for name in option.names}
    found: dict[str, list[str]] = {}
    number = 0
    while number < len(words):
        word = words[number]
        number += 1
        name, equals, value = word.partition("=")
        option = spelled.get(name)
        if option is None:
            continue
        values = [value] if equals else []
        if not equals:
            while number < len(words) and not words[number].startswith("-"):
                values.append(words[number])
                number += 1
                if option.values == 1:
                    break
        if not values:
            raise Unsupported(
                f"the package's {SCRIPT!r} script gives {runner} {word} without a value; "
                "give it one"
            )
        shell = [v for v in values if _SHELL.search(v)]
        if shell:
            raise Unsupported(
                f"the package's {SCRIPT!r} script gives {runner} {word} {shell[0]}, which its "
                "shell expands and qbench (no shell) cannot; write the value itself"
            )
        found.setdefault(option.names[0], []).extend(values)
    return found
