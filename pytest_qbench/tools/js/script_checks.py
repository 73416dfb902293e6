"""The checker commands of a package's ``test`` script (``"test": "vitest run && tsc --noEmit"``,
``jest && eslint . --max-warnings 0``, ``prettier --check src``), run by ``qbench test`` through
the checkers of ``qbench check`` (`pytest_qbench.tools.node`): their diagnostics in the run,
their failure failing it as it fails ``npm test``; and the eslint command of its ``lint``
script, which ``qbench check``'s eslint runs as written (`lint_eslint`).

A command is run only when its options can be carried exactly (tsc's ``--noEmit``, ``-p X``,
``-b [X]``; eslint's paths, ``--max-warnings N``, ``-c X``, ``--ext X``...); one giving another
option is refused, naming it (``runner-options-refused``), never run otherwise than written.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.summary_words import plural
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.execute import run_supervised
from pytest_qbench.tools.js.project import read_package
from pytest_qbench.tools.js.scripts import calls
from pytest_qbench.tools.js.scripts import split
from pytest_qbench.tools.node import biome
from pytest_qbench.tools.node import eslint
from pytest_qbench.tools.node import oxfmt
from pytest_qbench.tools.node import oxlint
from pytest_qbench.tools.node import prettier
from pytest_qbench.tools.node import tsc
from pytest_qbench.tools.node.bins import project_bin
from pytest_qbench.tools.node.eslint import TOO_MANY_WARNINGS
from pytest_qbench.tools.node.words import SHELL
from pytest_qbench.tools.node.words import Grammar
from pytest_qbench.tools.node.words import sort_words
from pytest_qbench.tools.node.words import warnings_limit
from pytest_qbench.tools.problems import CRASHED
from pytest_qbench.tools.problems import problem
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported
from pytest_qbench.tools.spec import planning_for
from pytest_qbench.tools.spec import store_directory
from pytest_qbench.tools.spec import store_of


CHECKERS = ("tsc", "tsgo", "eslint", "prettier", "oxlint", "biome", "oxfmt")
"""The checkers whose commands in a test script qbench runs."""
_PREFIXES = frozenset({"npx", "pnpx"})
"""Words before a checker's name that run the project's own binary as it is."""
_TSC_FLAGS = frozenset({"--noEmit"})
"""tsc's options carried as written (qbench's run of tsc emits nothing either way)."""
_TSC_DROPPED = frozenset({"--pretty"})
"""tsc's options changing only how it prints (qbench reads ``--pretty false``)."""
_ESLINT_VALUES = frozenset(
    {
        "-c",
        "--config",
        "--ext",
        "--rulesdir",
        "--ignore-path",
        "--ignore-pattern",
        "--parser",
        "--parser-options",
        "--env",
        "--global",
        "--plugin",
        "--rule",
        "--resolve-plugins-relative-to",
        "--report-unused-disable-directives-severity",
        "--flag",
    }
)
"""eslint's options taking a value, carried as written (a value is one argument, as the shell
gave it: ``--rule 'no-console: error'``)."""
_ESLINT_FLAGS = frozenset(
    {
        "--quiet",
        "--report-unused-disable-directives",
        "--no-error-on-unmatched-pattern",
        "--no-warn-ignored",
        "--no-eslintrc",
        "--no-inline-config",
        "--no-ignore",
        "--no-config-lookup",
        "--exit-on-fatal-error",
        "--pass-on-no-patterns",
    }
)
"""eslint's options taking no value, carried as written."""
_ESLINT_DROPPED = frozenset({"--cache", "--color", "--no-color"})
"""eslint's options that change neither what it reports nor its exit status."""
_ESLINT_DROPPED_VALUES = frozenset({"-f", "--format", "--cache-location", "--cache-strategy"})
"""eslint's options taking a value that change only how it prints or caches (qbench reads
its JSON)."""
_ESLINT = Grammar(
    _ESLINT_VALUES,
    _ESLINT_FLAGS,
    _ESLINT_DROPPED,
    _ESLINT_DROPPED_VALUES,
    read=frozenset({"--max-warnings"}),
)
"""How qbench reads eslint's words."""
_ESLINT_FIXING = replace(
    _ESLINT,
    dropped=_ESLINT.dropped | {"--fix", "--fix-dry-run"},
    dropped_values=_ESLINT.dropped_values | {"--fix-type"},
)
"""The same, eslint's fixing options left out (`plan_eslint`'s ``fixes``)."""
_VALUED_NEXT = _ESLINT_VALUES | _ESLINT_DROPPED_VALUES | {"--max-warnings"}
"""eslint's options taking a value, as ``next lint`` passes them on."""


LINT = "lint"
"""The script whose eslint command ``qbench check``'s eslint runs as written: the one ``npm
run lint`` runs."""
_LAUNCHERS = (("npx",), ("pnpx",), ("bunx",), ("pnpm", "exec"), ("npm", "exec"), ("yarn",))
"""Words before eslint's name that run the project's own binary as it is."""


def lint_eslint(cwd: Path) -> tuple[dict[str, str], list[str], str] | None:
    """The eslint command of the ``lint`` script of the package in ``cwd`` (or of a script it
    runs, ``npm run lint:js``; ``next lint`` as eslint's words): `script_command`'s answer.

    Raises:
        Unsupported: as `script_command`.
    """
    package = read_package(cwd)
    if package is None:
        return None
    found = calls(package, "eslint", LINT)
    nexts = [
        (before, after) for before, after in calls(package, "next", LINT) if after[:1] == ["lint"]
    ]
    found += [(before, next_lint_words(after[1:], cwd)) for before, after in nexts]
    return one_command(found, "eslint", LINT)


FORMAT_SCRIPTS = (LINT, "format:check", "check:format", "format-check", "fmt:check")
"""The scripts whose ``prettier --check`` qbench check's prettier runs: the first that runs it."""


def script_command(
    cwd: Path,
    tool: str,
    scripts: tuple[str, ...] = (LINT,),
    checks: Callable[[list[str]], bool] | None = None,
) -> tuple[dict[str, str], list[str], str] | None:
    """The ``tool`` command of the first of ``scripts`` of the package in ``cwd`` running it
    (or of a script it runs, ``npm run lint:js``): the variables set before it, its words
    after the tool's name, and the command as written; ``None`` when no such script runs it.
    ``checks``: which of the tool's commands (by their words) count, the others left aside
    (``prettier --write``, which fails on no file, beside ``prettier --check``).

    Raises:
        Unsupported: the tool run several times with different words (qbench check runs it
            once), or started otherwise than plainly (``node --max-old-space-size=4096
            node_modules/eslint/bin/eslint.js``), or with a value the shell expands.
    """
    package = read_package(cwd)
    if package is None:
        return None
    for script in scripts:
        found = [one for one in calls(package, tool, script) if checks is None or checks(one[1])]
        if found:
            return one_command(found, tool, script)
    return None


def one_command(
    found: list[tuple[list[str], list[str]]], tool: str, script: str
) -> tuple[dict[str, str], list[str], str] | None:
    """The one ``tool`` command of ``found`` (`scripts.calls`): its variables, its words and
    the command as written (`script_command`)."""
    if not found:
        return None
    commands = list(dict.fromkeys(" ".join([*before, *after]) for before, after in found))
    if len(commands) > 1:
        raise Unsupported(
            f"the package's {script!r} script runs {tool} {len(commands)} times with different "
            f"words ({', '.join(f'`{c[:200]}`' for c in commands[:3])}): qbench check runs "
            f"{tool} once; make the script run it once"
        )
    before, after = found[0]
    env: dict[str, str] = {}
    words = list(before[:-1])
    if words and words[0].rsplit("/", 1)[-1] in ("cross-env", "cross-env-shell"):
        words.pop(0)
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if tuple(words) not in ((), *_LAUNCHERS) or any(SHELL.search(v) for v in env.values()):
        raise Unsupported(
            f"the package's {script!r} script starts {tool} as `{commands[0][:200]}`, which "
            f"qbench check does not run the same way; start it plainly (`{tool} ...`)"
        )
    return env, after, commands[0]


_NEXT_PATHS = frozenset({"--dir", "-d", "--file"})
"""``next lint``'s options naming what it lints (several times each)."""
_NEXT_DROPPED = frozenset({"--output-file", "-o"})
"""``next lint``'s options taking a value that change only where it prints."""
NEXT_DIRS = ("app", "pages", "components", "lib", "src")
"""The directories ``next lint`` lints when given none (those of them that exist)."""


def next_lint_words(words: list[str], cwd: Path) -> list[str]:
    """``next lint``'s words (after ``lint``) as eslint's: its ``--dir``/``--file`` values as
    paths (none: those of `NEXT_DIRS` in ``cwd``, as ``next lint`` picks them), ``--no-cache``
    and ``--output-file`` left out, the other options as given (eslint's own spellings,
    planned and refused by `plan_eslint`: ``--strict`` is refused).

    Raises:
        Unsupported: a project directory (``next lint web``), which qbench cannot move to.
    """
    paths: list[str] = []
    rest: list[str] = []
    number = 0
    while number < len(words):
        word = words[number]
        number += 1
        name, equals, value = word.partition("=")
        if name in _NEXT_PATHS or name in _NEXT_DROPPED:
            if not equals and number < len(words):
                value, number = words[number], number + 1
            if name in _NEXT_PATHS:
                paths.append(value)
        elif word == "--no-cache":
            continue
        elif not word.startswith("-") and not (rest and rest[-1] in _VALUED_NEXT):
            raise Unsupported(
                f"next lint's project directory {word!r}: qbench check runs eslint in the "
                "front end's own directory; point qbench_frontend at it instead"
            )
        else:
            rest.append(word)
    found = paths or [name for name in NEXT_DIRS if (cwd / name).is_dir()] or ["."]
    return [*found, *rest]


def checker_of(part: str) -> tuple[str, list[str]] | None:
    """The checker a command of a test script runs (``tsc``, ``eslint``) and the words after
    its name; ``None`` for any other command (and for one setting variables: a checker run
    with them is not run as written)."""
    words = split(part)
    if words and words[0] in _PREFIXES:
        words = words[1:]
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    if name not in CHECKERS:
        return None
    return name, words[1:]


@dataclass
class PartRun:
    """What running one checker command of a test script gave."""

    part: str
    checker: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    """Why it failed the run beyond its error diagnostics (refused, not installed, crashed,
    more warnings than ``--max-warnings``)."""


def plan_part(checker: str, words: list[str], cwd: Path, scratch: Path) -> Plan[Diagnostic]:
    """The plan running ``checker`` with the script's ``words`` (eslint's ``--max-warnings``
    read by its parser: `eslint.parse_limited`).

    Raises:
        NotInstalled: the project has not installed the checker (or no ``node`` for ``tsc -b``).
        Unsupported: an option qbench cannot carry exactly; the message names it.
    """
    if checker in ("tsc", "tsgo"):
        return plan_tsc(words, cwd, scratch, native=checker == "tsgo")
    if checker == "prettier":
        return prettier.plan_check(words, cwd)
    if checker == "oxlint":
        return oxlint.plan_oxlint(words, cwd)
    if checker == "biome":
        return biome.plan_biome(words, cwd)
    if checker == "oxfmt":
        return oxfmt.plan_check(words, cwd)
    return plan_eslint(words, cwd, scratch)


def plan_tsc(words: list[str], cwd: Path, scratch: Path, native: bool = False) -> Plan[Diagnostic]:
    """``tsc [--noEmit] [-p X]`` as ``tsc --noEmit -p X`` (its ``.tsbuildinfo`` into
    ``scratch``); ``tsc -b [X] --noEmit`` by `tsc.BUILD` (``tsc -b``'s own builder, nothing
    written). A ``tsc`` that writes its output is refused: without ``--noEmit`` (and, but for
    ``-b``, a ``tsconfig.json`` saying ``noEmit`` itself), a later command of the script may
    run what it writes, and qbench writes nothing into the project. ``native``: the same
    words given to ``tsgo`` (TypeScript's native preview, ``@typescript/native-preview``,
    printing tsc's lines), run as ``tsgo --noEmit``; its ``-b`` (no JavaScript API for
    `tsc.BUILD`) refused."""
    build = bool(words) and words[0] in ("-b", "--build")
    if build and native:
        raise Unsupported(
            "tsgo -b: qbench runs a build's projects with TypeScript's JavaScript API, which "
            "tsgo has not; check with tsgo -p on each project"
        )
    rest = words[1:] if build else words
    project: str | None = None
    refused: list[str] = []
    no_emit = "--noEmit" in rest
    number = 0
    while number < len(rest):
        word = rest[number]
        number += 1
        name = word.partition("=")[0]
        if not build and name in ("-p", "--project"):
            if "=" in word:
                project = word.partition("=")[2]
            elif number < len(rest):
                project, number = rest[number], number + 1
            else:
                refused.append(word)
        elif name in _TSC_DROPPED:
            if "=" not in word and number < len(rest) and rest[number] in ("true", "false"):
                number += 1
        elif word in _TSC_FLAGS:
            continue
        elif build and not word.startswith("-") and project is None:
            project = word  # tsc -b web: one project (several: refused)
        else:
            refused.append(word)
    if refused:
        raise Unsupported(f"tsc options qbench cannot carry: {' '.join(refused)}")
    config = cwd / (project or "tsconfig.json")
    if config.is_dir():
        config = config / "tsconfig.json"
    if not no_emit and (build or not tsc.emits_nothing(config)):
        raise Unsupported(
            f"tsc{' -b' if build else ''} without --noEmit writes its output (which the "
            "script's later commands may run), and qbench writes nothing into the project; "
            "give it --noEmit, or run the tests on a build of your own"
        )
    if native:
        executable = project_bin(cwd, "tsgo", "@typescript/native-preview")
    else:
        executable = project_bin(cwd, "tsc", "typescript")
    if build:
        node = shutil.which("node")
        if node is None:
            raise NotInstalled("node is not on PATH: install Node.js to run the project's tsc -b")
        relative = config.relative_to(cwd).as_posix() if config.is_relative_to(cwd) else str(config)
        command = [node, str(tsc.BUILD), executable, relative, str(scratch)]
    else:
        command = tsc.tsc_command(executable, buildinfo=scratch / "tsconfig.tsbuildinfo")
        if project is not None:
            command[1:1] = ["-p", project]
    return Plan(tsc.TOOL, command, tsc.OK_CODES, tsc.parse_tsc)


def plan_eslint(
    words: list[str],
    cwd: Path,
    scratch: Path,
    given: list[str] | None = None,
    fixes: bool = False,
) -> Plan[Diagnostic]:
    """``eslint [paths] [options]`` with its carried options, its JSON into ``scratch``, its
    ``--max-warnings`` read by its parser (more warnings: an error, `eslint.parse_limited`).
    ``given``: paths replacing the command's own (``qbench check PATHS``); ``fixes``: leave
    out ``--fix``, ``--fix-dry-run`` and ``--fix-type X`` (qbench fixes nothing: it lists
    every problem, those the fix would have fixed too, never fewer than the command's own run
    leaves), else refused."""
    found = sort_words(words, _ESLINT_FIXING if fixes else _ESLINT)
    limit = warnings_limit(found)
    if found.refused:
        raise Unsupported(f"eslint options qbench cannot carry: {' '.join(found.refused)}")
    executable = project_bin(cwd, "eslint", "eslint")
    output = scratch / "eslint.json"
    command = eslint.eslint_command(executable, given or found.paths, cwd, store_directory())
    command[1:1] = [*found.carried, "-o", str(output)]
    parse = eslint.parse_limited(limit)
    return Plan(eslint.TOOL, command, eslint.OK_CODES, parse, output=output)


def run_part(
    part: str,
    cwd: Path,
    log_dir: Path,
    timeout: float,
    stop: threading.Event | None,
) -> PartRun | None:
    """Run the checker command ``part`` of the test script in ``cwd``; ``None`` when it runs
    no checker qbench knows (it stays a part not run)."""
    found = checker_of(part)
    if found is None:
        return None
    checker, words = found
    done = PartRun(part, checker)
    label = f"{checker} ({cwd.name}), the test script's `{part[:200]}`"
    log_name = f"{checker}-{len(list(log_dir.glob(f'{checker}-*.log'))) + 1}"
    with tempfile.TemporaryDirectory(prefix=f"qbench-{checker}-") as scratch:
        try:
            with planning_for(store_of(log_dir)):
                plan = plan_part(checker, words, cwd, Path(scratch))
        except NotInstalled as exc:
            done.problems.append(problem(checker, f"{label}: {exc}", "runner-not-installed"))
            return done
        except Unsupported as exc:
            message = f"{label}: not run: {exc}; run it with qbench check, or write it plainly"
            done.problems.append(problem(checker, message, "runner-options-refused"))
            return done
        ran = run_supervised(plan.command, cwd, log_dir, log_name, timeout, stop, plan.env)
        raw_in = f"raw output in {ran.log.name}"
        if ran.problem is not None:
            done.problems.append(problem(checker, f"{label}: {ran.problem}; {raw_in}", CRASHED))
            return done
        source = plan.output or ran.log
        if ran.exit_code not in plan.ok_codes or not source.is_file():
            why = f"exit code {ran.exit_code}" + ("" if source.is_file() else ", no report")
            message = f"{label} crashed: {why}; {raw_in}"
            done.problems.append(problem(checker, message, CRASHED))
            return done
        try:
            done.diagnostics = plan.parse(source.read_bytes(), cwd)
        except CheckOutputError as exc:
            done.problems.append(problem(checker, f"{label}: {exc}; {raw_in}", CRASHED))
            return done
    over = [d for d in done.diagnostics if d.code == TOO_MANY_WARNINGS and d.file is None]
    if over:
        done.diagnostics = [d for d in done.diagnostics if d not in over]
        message = f"{label}: {over[0].message} and fails the test script; {raw_in}"
        done.problems.append(problem(checker, message, TOO_MANY_WARNINGS))
    errors = sum(1 for d in done.diagnostics if d.severity == "error") + len(over)
    if ran.exit_code != 0 and not errors:
        message = f"{label} exited {ran.exit_code} with no error; {raw_in}"
        done.problems.append(problem(checker, message, CRASHED))
    elif ran.exit_code == 0 and errors:
        message = f"{label} reported {plural(errors, 'error')} but exited 0; {raw_in}"
        done.problems.append(problem(checker, message, CRASHED))
    return done
