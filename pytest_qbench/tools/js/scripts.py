"""What a package's ``test`` script (the one ``npm test`` runs) gives a test runner: the
options that decide which tests run (``vitest --project unit``, ``jest --config
jest.unit.json``), its file filters (``vitest run src/unit``, ``jest tests/api``), its coverage
(``--coverage``, whose thresholds decide the exit status), the variables set before it
(``NODE_OPTIONS=--experimental-vm-modules jest``) and the options of the Node running it
(``node --experimental-vm-modules node_modules/jest/bin/jest.js``), so that qbench's own run
of the runner runs the same tests the same way.

The script is split into its commands (``&&``, ``;``, ``|``...); a command running the runner
(``vitest``, ``npx vitest``, ``NODE_ENV=test vitest``, ``node node_modules/jest/bin/jest.js``)
gives its words; one running another
script (``npm run unit``, ``pnpm test:unit``, ``yarn unit``) is followed, a few scripts deep,
with the words it passes after ``--``. Standard library only; nothing here starts a process.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass

from pytest_qbench.tools.js import coverage_wrap
from pytest_qbench.tools.js.project import Package
from pytest_qbench.tools.js.project import workspace_packages
from pytest_qbench.tools.js.project import workspace_patterns
from pytest_qbench.tools.node.words import SHELL
from pytest_qbench.tools.spec import Unsupported


SCRIPT = "test"
"""The script whose runner options qbench's run takes: the one ``npm test`` runs."""
_COMMANDS = re.compile(r"&&|\|\||[;|&\n]")
"""What separates the commands of a script."""
_RUNS_SCRIPT = re.compile(r"^(?:npm|pnpm|yarn|bun)$")
_DEPTH = 5
"""How many scripts deep ``npm run other`` is followed."""


@dataclass(frozen=True)
class Option:
    """An option of a runner that decides which tests run, carried into qbench's run."""

    names: tuple[str, ...]
    """Its spellings, the long one first (``--config``, ``-c``)."""
    values: int | None = 1
    """How many values follow it: 1; 0: none (``--coverage``); ``None``: every word up to the
    next option (jest's ``--selectProjects a b``)."""
    repeated: bool = False
    """Whether the runner takes it several times, each adding tests (vitest's ``--project``):
    the values of several commands are then run together."""
    filters: bool = False
    """Whether it names test files as the positional filters do (jest's ``--testPathPattern``,
    added to them): left out, as they are, when qbench's run is given paths."""


@dataclass(frozen=True)
class Grammar:
    """How a runner reads the words of its command line, for telling its file filters (the
    words that are no option nor an option's value) from the rest. As the runners' own
    parsers (vitest's cac, jest's yargs) do, an option not listed in ``flags`` takes the word
    after it as its value."""

    flags: frozenset[str]
    """Its options that take no value (``--coverage``, ``--run``, ``-u``); ``--no-X`` too."""
    lists: frozenset[str] = frozenset()
    """Its options that take every word up to the next option (jest's arrays)."""
    modes: frozenset[str] = frozenset()
    """Words naming its mode before any filter, skipped (vitest's ``run``, ``watch``)."""
    refused: tuple[tuple[str, str], ...] = ()
    """Options and modes whose tests qbench cannot choose the same way, each with why
    (``--onlyChanged``: the files git sees changed)."""


def long_options(names: str) -> frozenset[str]:
    """``--name`` for each of the space-separated ``names``."""
    return frozenset(f"--{name}" for name in names.split())


@dataclass(frozen=True)
class Launch:
    """How the test script starts the runner, beyond its arguments."""

    env: dict[str, str]
    """Variables set before it (``NODE_OPTIONS=--experimental-vm-modules jest``, ``cross-env
    TZ=UTC vitest``)."""
    node: list[str]
    """The options of the Node running the runner's script (``node --experimental-vm-modules
    node_modules/jest/bin/jest.js``), then that script as the command names it; empty: the
    runner's binary runs as it is."""


def wrappers(package: Package, runner: str) -> list[list[str]]:
    """The coverage wrappers (`coverage_wrap`) the test script runs ``runner`` under, each
    once, as written (``["c8", "-r", "lcov"]``)."""
    found = [coverage_wrap.unwrap(before)[0] for before, _ in calls(package, runner)]
    return [list(one) for one in dict.fromkeys(tuple(w) for w in found if w)]


def invocations(package: Package, runner: str, script: str = SCRIPT) -> list[list[str]]:
    """The argument lists of every command of ``package``'s ``script`` (and of the scripts it
    runs) that runs ``runner``: the words after the runner's name."""
    return [words for _, words in calls(package, runner, script)]


def calls(package: Package, runner: str, script: str = SCRIPT) -> list[tuple[list[str], list[str]]]:
    """Each command of ``package``'s ``script`` (and of the scripts it runs) running
    ``runner``: the words before the runner's and the runner's own (its variables first),
    and the words after it."""
    found: list[tuple[list[str], list[str]]] = []
    _walk(package, script, [], runner, found, _DEPTH)
    return found


def _walk(
    package: Package,
    name: str,
    extra: list[str],
    runner: str,
    found: list[tuple[list[str], list[str]]],
    depth: int,
) -> None:
    if depth == 0:
        return
    for hook, script in around(package, name):
        parts = _COMMANDS.split(script)
        for number, part in enumerate(parts):
            words = split(part)
            if hook == name and number == len(parts) - 1:
                words += extra  # npm run X -- more: added to the script's last command
            _walk_command(package, words, runner, found, depth)


def _walk_command(
    package: Package,
    words: list[str],
    runner: str,
    found: list[tuple[list[str], list[str]]],
    depth: int,
) -> None:
    at = [n for n, w in enumerate(words) if runs(w, runner)]
    if at:
        found.append((words[: at[0] + 1], words[at[0] + 1 :]))
        return
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)  # NODE_ENV=test npm run unit
    if len(words) >= 2 and _RUNS_SCRIPT.match(words[0]):
        rest = words[2:] if words[1] in ("run", "run-script") else words[1:]
        if rest:
            more = rest[rest.index("--") + 1 :] if "--" in rest else []
            _walk(package, rest[0], more, runner, found, depth - 1)
    for name in run_all(package, words) or []:
        _walk(package, name, [], runner, found, depth - 1)


_RUN_ALL = frozenset({"npm-run-all", "npm-run-all2", "run-s", "run-p"})
"""npm-run-all's commands, which run the scripts they name (``run-p lint:*``)."""


def run_all(package: Package, words: list[str]) -> list[str] | None:
    """The scripts an npm-run-all command (``run-s build test``, ``npm-run-all -p lint:*``)
    runs, in order, its globs matched against ``package``'s scripts as it matches them (``*``
    within a ``:``-separated part, ``**`` across them); ``None`` for another command, or one
    naming a script the package has not (it then fails, as the command does)."""
    if not words or words[0].rsplit("/", 1)[-1] not in _RUN_ALL:
        return None
    names: list[str] = []
    for word in (w for w in words[1:] if not w.startswith("-")):
        name = word.split(" ", 1)[0]  # "test:* -- --coverage": its arguments not read
        if "*" in name:
            pattern = re.escape(name).replace(r"\*\*", ".+").replace(r"\*", "[^:]+")
            names += [key for key in package.scripts if re.fullmatch(pattern, key)]
        elif isinstance(package.scripts.get(name), str):
            names.append(name)
        else:
            return None
    return list(dict.fromkeys(names)) or None


def around(package: Package, name: str) -> list[tuple[str, str]]:
    """The script ``name`` of ``package`` with those npm runs around it, ``pre<name>`` before
    and ``post<name>`` after (``npm test`` runs ``pretest``, ``test``, ``posttest``; ``npm run
    lint``, ``prelint``...), each present one's name and text, in that order; none without
    ``name`` itself (npm then runs nothing: a missing script)."""
    if not isinstance(package.scripts.get(name), str):
        return []
    names = (f"pre{name}", name, f"post{name}")
    return [(one, text) for one in names if isinstance(text := package.scripts.get(one), str)]


_PARTS = re.compile(r"&&|\|\||(?<![<>])&(?!>)|[;|\n]")
"""What separates the commands of a script, a redirection (``2>&1``) not."""
_HARMLESS = frozenset({"echo", "printf", "true", ":", "rimraf", "rm", "mkdir"})
"""Commands of a script that decide nothing about its tests (they print, or clean up)."""


def parts_besides(
    package: Package,
    runners: list[str],
    script: str = SCRIPT,
    depth: int = _DEPTH,
    ran: frozenset[str] = frozenset(),
) -> list[str]:
    """The commands of ``package``'s ``script`` (and of the scripts it runs) that run none of
    ``runners``: another runner (``node --test test/``, ``mocha``), a checker (``tsc``,
    ``eslint .``), anything else that can fail ``npm test`` (``cd web``, a missing script), as
    written; not those that only print or clean up (``echo``, ``rimraf dist``), nor a script
    of ``ran``, which qbench ran itself (``npm run build`` under ``qbench test --build``)."""
    if depth == 0:
        return []
    found: list[str] = []
    texts = [text for _, text in around(package, script)]
    for part in (part for text in texts for part in _PARTS.split(text)):
        words = split(part)
        if not words or any(runs(word, runner) for word in words for runner in runners):
            continue
        bare = list(words)
        while bare and "=" in bare[0] and not bare[0].startswith("-"):
            bare.pop(0)  # NODE_ENV=test npm run unit
        if bare and bare[0].rsplit("/", 1)[-1] in _HARMLESS:
            continue
        if script == SCRIPT and workspace_patterns(package) and runs_workspaces(bare, package):
            continue  # the packages' own test scripts, which qbench runs package by package
        if len(bare) >= 2 and _RUNS_SCRIPT.match(bare[0]):
            rest = bare[2:] if bare[1] in ("run", "run-script") else bare[1:]
            if rest and rest[0] in ran:
                continue
            if rest and rest[0] != script and isinstance(package.scripts.get(rest[0]), str):
                found += parts_besides(package, runners, rest[0], depth - 1, ran)
                continue
        names = run_all(package, bare)
        if names and script not in names:
            for name in (name for name in names if name not in ran):
                found += parts_besides(package, runners, name, depth - 1, ran)
            continue
        found.append(" ".join(words))
    return list(dict.fromkeys(found))


_EVERY_PACKAGE = {
    "npm": frozenset({"--workspaces", "-ws", "--workspace", "-w"}),
    "pnpm": frozenset({"-r", "--recursive", "--filter", "-F"}),
}
"""The options by which npm and pnpm run a script in the workspace packages (all, or those
chosen)."""
_CHOOSING = frozenset(
    {"--filter", "-F", "--workspace", "-w", "--scope", "--ignore", "--since", "--concurrency"}
)
"""Options of the workspace commands taking a value (the packages chosen, how many at once)."""
_TASKS = {"turbo": ("run",), "lerna": ("run",), "nx": ("run-many",)}
"""The task runners running a script in the workspace packages, with their command word."""


def runs_workspaces(words: list[str], root: Package | None = None) -> bool:
    """Whether a command runs the ``test`` script of the workspace packages (every one or
    some: qbench runs every package's tests, no fewer) and nothing else: ``npm run test
    --workspaces`` (``npm test -ws``, ``-w web``), ``pnpm -r test`` (``pnpm --filter ./packages/*
    run test``), ``yarn workspaces run test``, ``yarn workspaces foreach -A run test``, ``turbo
    run test`` (``turbo test``), ``lerna run test``, ``nx run-many -t test``. Not one running
    other scripts too (``turbo run lint test``, ``pnpm -r lint``), nor npm's without
    ``--if-present`` or yarn 1's ``workspaces run`` where a package of ``root`` has no
    ``test`` script (they fail on it)."""
    tool, options, plain = _command_words(words)
    strict = (tool == "npm" and "--if-present" not in options) or plain[:2] == ["workspaces", "run"]
    if strict and root is not None and not _all_have_tests(root):
        return False  # npm fails on a package without the script
    if tool in _EVERY_PACKAGE:
        named = plain[1:] if plain[:1] in (["run"], ["run-script"]) else plain
        return bool(options & _EVERY_PACKAGE[tool]) and named == [SCRIPT]
    if tool == "yarn":
        if plain[:2] == ["workspaces", "run"]:
            return plain[2:] == [SCRIPT]
        every = bool(options & {"-A", "--all", "--since", "--include"})
        return plain[:3] == ["workspaces", "foreach", "run"] and plain[3:] == [SCRIPT] and every
    if tool == "nx":
        return plain[:1] == ["run-many"] and _nx_targets(words) == [SCRIPT]
    if tool in _TASKS:
        named = plain[1:] if plain[:1] == list(_TASKS[tool]) else plain
        return (plain[:1] == list(_TASKS[tool]) or tool == "turbo") and named == [SCRIPT]
    return False


def _command_words(words: list[str]) -> tuple[str, set[str], list[str]]:
    """A command's tool (``npx``, ``pnpm exec`` left out), its options' names and its other
    words (the values of `_CHOOSING`'s options left out)."""
    if words[:1] in (["npx"], ["pnpx"], ["bunx"]):
        words = words[1:]
    elif words[:2] in (["pnpm", "exec"], ["npm", "exec"]):
        words = words[2:]
    options: set[str] = set()
    plain: list[str] = []
    rest = iter(words[1:])
    for word in rest:
        name, equals, _ = word.partition("=")
        if word.startswith("-"):
            options.add(name)
            if name in _CHOOSING and not equals:
                next(rest, None)
        else:
            plain.append(word)
    return (words[0].rsplit("/", 1)[-1] if words else ""), options, plain


def _all_have_tests(root: Package) -> bool:
    """Whether every workspace package of ``root`` has a ``test`` script."""
    return all(isinstance(one.scripts.get(SCRIPT), str) for one in workspace_packages(root))


def _nx_targets(words: list[str]) -> list[str]:
    """The targets an nx command names (``-t test``, ``--target=test``)."""
    targets = [
        w.partition("=")[2] for w in words if w.startswith(("--target=", "-t=", "--targets="))
    ]
    pairs = itertools.pairwise(words)
    return targets + [after for before, after in pairs if before in ("-t", "--target", "--targets")]


_BAILS: tuple[tuple[str, frozenset[str], str], ...] = (
    ("pnpm", frozenset({"-r", "--recursive"}), "--no-bail"),
    ("turbo", frozenset(), "--continue"),
    ("lerna", frozenset(), "--no-bail"),
)
"""Commands running a script in every workspace package that stop at the first package whose
script fails, unless given the option that goes on: ``pnpm -r test`` (``--no-bail``), ``turbo
run test`` (``--continue``), ``lerna run test`` (``--no-bail``). npm's ``--workspaces`` and
nx's ``run-many`` go on by default."""


def stops_at_first_failure(package: Package, depth: int = _DEPTH) -> str | None:
    """The command of ``package``'s test script (or of a script it runs) that runs every
    workspace package's tests and stops at the first that fails (`_BAILS`), as written;
    ``None`` without one."""
    return _bailing(package, SCRIPT, depth)


def _bailing(package: Package, script: str, depth: int) -> str | None:
    text = package.scripts.get(script)
    if not isinstance(text, str) or depth == 0:
        return None
    for part in _PARTS.split(text):
        words = split(part)
        while words and "=" in words[0] and not words[0].startswith("-"):
            words.pop(0)
        if words and words[0] in ("npx", "pnpx") and len(words) > 1:
            words = words[1:]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        for tool, needs, goes_on in _BAILS:
            mode = not needs or bool(needs & set(words))
            if name == tool and SCRIPT in words and goes_on not in words and mode:
                return " ".join(words)
        if len(words) >= 2 and _RUNS_SCRIPT.match(words[0]):
            rest = words[2:] if words[1] in ("run", "run-script") else words[1:]
            if rest and rest[0] != script:
                found = _bailing(package, rest[0], depth - 1)
                if found is not None:
                    return found
    return None


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


def carried(
    package: Package, runner: str, options: tuple[Option, ...], filters: bool = True
) -> list[str]:
    """The ``options`` that ``package``'s test script gives ``runner``, as arguments for
    qbench's one run of it (``--option=value``; a repeated option once per value; one taking
    no value as written); without ``filters``, none naming test files (`Option.filters`).

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
        if option.filters and not filters:
            continue
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
        if option.values == 0:
            arguments += values[:1]
        elif option.values is None:
            arguments += [name, *values]
        else:
            arguments += [f"{name}={value}" for value in values]
    return arguments


def launch(package: Package, runner: str) -> Launch:
    """How the test script starts ``runner`` (`Launch`); every command running it must start
    it the same way.

    Raises:
        Unsupported: commands starting it differently, or a value the shell would expand.
    """
    launches: list[Launch] = []
    for before, _ in calls(package, runner):
        wrapper, words = coverage_wrap.unwrap(before)
        why = coverage_wrap.threshold(wrapper, package.path) if wrapper else None
        if why is not None:
            raise Unsupported(coverage_wrap.refusal(runner, wrapper, why))
        env: dict[str, str] = {}
        while words and "=" in words[0] and not words[0].startswith("-"):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        if words and words[0].rsplit("/", 1)[-1] in ("cross-env", "cross-env-shell"):
            words.pop(0)
            while words and "=" in words[0] and not words[0].startswith("-"):
                key, _, value = words.pop(0).partition("=")
                env[key] = value
        node: list[str] = []
        if len(words) > 2 and words[0].rsplit("/", 1)[-1] == "node":
            node = words[1:]  # node's options, then the runner's script
        shell = [v for v in [*env.values(), *node] if SHELL.search(v)]
        if shell:
            raise Unsupported(
                f"the package's {SCRIPT!r} script starts {runner} with {shell[0]}, which its "
                "shell expands and qbench (no shell) cannot; write the value itself"
            )
        launches.append(Launch(env, node))
    if not launches:
        return Launch({}, [])
    if any(other != launches[0] for other in launches):
        described = ", ".join(
            " ".join([*(f"{k}={v}" for k, v in one.env.items()), *one.node]) or "(plain)"
            for one in launches
        )
        raise Unsupported(
            f"the package's {SCRIPT!r} script starts {runner} {len(launches)} times in "
            f"different ways ({described}): qbench runs {runner} once; make the script start it "
            "one way"
        )
    return launches[0]


def filters(package: Package, runner: str, grammar: Grammar) -> list[str]:
    """The file filters the test script gives ``runner``: the words that are no option nor an
    option's value (``vitest run src/unit``: ``src/unit``; jest's patterns). Several commands
    running it each with filters run them together (their files are run together); commands
    with and without filters cannot be one run.

    Raises:
        Unsupported: a refused option or mode (`Grammar.refused`), or commands some of which
            filter their files and some not.
    """
    seen = [_positional(words, runner, grammar) for words in invocations(package, runner)]
    if all(seen):
        return list(dict.fromkeys(word for words in seen for word in words))
    if any(seen):
        described = ", ".join(" ".join(words) or "(none)" for words in seen)
        raise Unsupported(
            f"the package's {SCRIPT!r} script runs {runner} {len(seen)} times with different "
            f"file filters ({described}): qbench runs {runner} once; make the script run "
            f"{runner} once, or give each set of tests its own package"
        )
    return []


def _positional(words: list[str], runner: str, grammar: Grammar) -> list[str]:
    refused = dict(grammar.refused)
    found: list[str] = []
    number = 0
    while number < len(words):
        word = words[number]
        number += 1
        name = word.partition("=")[0]
        why = refused.get(name) if word.startswith("-") or not found else None
        if why is not None:
            raise Unsupported(
                f"the package's {SCRIPT!r} script gives {runner} {word}: {why}, which qbench "
                f"cannot do the same way; run {runner} without it in the test script"
            )
        if word == "--":
            raise Unsupported(
                f"the package's {SCRIPT!r} script gives {runner} a `--`, after which qbench "
                "cannot tell files from options; leave it out"
            )
        if not word.startswith("-") or word == "-":
            if not found and word in grammar.modes:
                continue  # vitest's command: its first word that is no option
            found.append(word)
        elif "=" not in word and name not in grammar.flags and not name.startswith("--no-"):
            while number < len(words) and not words[number].startswith("-"):
                number += 1  # its value, or every word of a list
                if name not in grammar.lists:
                    break
    shell = [v for v in found if SHELL.search(v)]
    if shell:
        raise Unsupported(
            f"the package's {SCRIPT!r} script gives {runner} {shell[0]}, which its shell "
            "expands and qbench (no shell) cannot; write the value itself"
        )
    return found


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
        if option.values == 0:
            found[option.names[0]] = [word]  # as written: --coverage, --coverage=false
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
        shell = [v for v in values if SHELL.search(v)]
        if shell:
            raise Unsupported(
                f"the package's {SCRIPT!r} script gives {runner} {word} {shell[0]}, which its "
                "shell expands and qbench (no shell) cannot; write the value itself"
            )
        found.setdefault(option.names[0], []).extend(values)
    return found
