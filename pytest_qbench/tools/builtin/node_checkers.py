"""The TypeScript/JavaScript front end's checkers as a plugin: tsc, eslint, oxlint, Biome and
Prettier (the last three as the project's scripts run them)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.js import script_checks
from pytest_qbench.tools.node import biome
from pytest_qbench.tools.node import eslint
from pytest_qbench.tools.node import oxlint
from pytest_qbench.tools.node import prettier
from pytest_qbench.tools.node import tsc
from pytest_qbench.tools.node.bins import has_bin
from pytest_qbench.tools.node.bins import project_bin
from pytest_qbench.tools.spec import Checker
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan
from pytest_qbench.tools.spec import Unsupported
from pytest_qbench.tools.spec import store_directory


def has_tsconfig(root: Path) -> bool:
    """A ``tsconfig.json`` at ``root``."""
    return (root / "tsconfig.json").is_file()


def has_eslint_config(root: Path) -> bool:
    """An ESLint configuration file at ``root``, or ``eslintConfig`` in its package.json."""
    if any((root / name).is_file() for name in eslint.CONFIG_FILES):
        return True
    try:
        manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "eslintConfig" in manifest


def plan_tsc(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """The project's tsc on its ``tsconfig.json`` (``paths`` are not passed: tsc given files
    ignores the configuration), its ``.tsbuildinfo`` into ``scratch``; when it lists project
    references, ``tsc -b``'s own builder with what it writes kept in memory (`tsc.BUILD`, run
    by the project's TypeScript; TypeScript 7, without a JavaScript API: each project by
    ``tsc -p`` with what it writes sent into ``scratch``): nothing written into the project
    either way.

    Raises:
        NotInstalled: no tsc in the project, or no ``node`` to run the builder with.
    """
    executable = project_bin(cwd, "tsc", "typescript")
    if tsc.has_references(cwd / "tsconfig.json"):
        node = shutil.which("node")
        if node is None:
            raise NotInstalled("node is not on PATH: install Node.js to run the project's tsc")
        command = [node, str(tsc.BUILD), executable, "tsconfig.json", str(scratch)]
    else:
        command = tsc.tsc_command(executable, buildinfo=scratch / "tsconfig.tsbuildinfo")
    return Plan(tsc.TOOL, command, tsc.OK_CODES, tsc.parse_tsc)


def plan_eslint(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
    """The project's eslint as its ``lint`` script runs it (`script_checks.lint_eslint`:
    its paths, ``--max-warnings``, ``-c``, ``--ext``..., planned as a test script's eslint
    is), ``paths`` replacing the script's; without such a script, on ``paths`` (default:
    ``.``); the directory the run writes to left out either way (`store_directory`).

    Raises:
        NotInstalled: no eslint in the project.
        Unsupported: a ``lint`` script whose eslint qbench cannot run as written (the
            message names the script and what): the checker is not run, never run otherwise.
    """
    script = script_checks.lint_eslint(cwd)
    if script is not None:
        env, words, written = script
        try:
            plan = script_checks.plan_eslint(words, cwd, scratch, given=paths, fixes=True)
        except Unsupported as exc:
            raise Unsupported(
                f"the package's {script_checks.LINT!r} script runs `{written[:200]}`: {exc}; "
                "qbench check runs eslint as that script does, or not at all: write the "
                "script's eslint plainly"
            ) from None
        return replace(plan, env=env) if env else plan
    executable = project_bin(cwd, "eslint", "eslint")
    command = eslint.eslint_command(executable, paths, cwd, store_directory())
    return Plan(eslint.TOOL, command, eslint.OK_CODES, eslint.parse_eslint)


CHECKS = {"prettier": prettier.checks}
"""Which commands of a tool in a script check (the others, such as ``prettier --write``,
fail on nothing and are left aside)."""


def from_script(
    cwd: Path, tool: str, scripts: tuple[str, ...]
) -> tuple[dict[str, str], list[str], str] | None:
    """The ``tool`` command of the first of the package's ``scripts`` running it
    (`script_checks.script_command`), or ``None``; one qbench cannot run as written raises
    `Unsupported` naming the script (the checker is then not run)."""
    try:
        return script_checks.script_command(cwd, tool, scripts, CHECKS.get(tool))
    except Unsupported as exc:
        raise Unsupported(
            f"{exc}; qbench check runs {tool} as the script does, or not at all"
        ) from None


def runs_in_script(
    tool: str, scripts: tuple[str, ...] = (script_checks.LINT,)
) -> Callable[[Path], bool]:
    """Whether one of the package's ``scripts`` runs ``tool`` (that it runs it as qbench
    can is for the plan to say)."""

    def applies(root: Path) -> bool:
        try:
            return script_checks.script_command(root, tool, scripts, CHECKS.get(tool)) is not None
        except Unsupported:
            return True

    return applies


def plan_script_tool(
    tool: str,
    scripts: tuple[str, ...],
    planner: Callable[[list[str], Path, list[str]], Plan[Diagnostic]],
    default: list[str] | None,
) -> Callable[[Path, list[str], Path], Plan[Diagnostic]]:
    """The planner of a checker run as the first of ``scripts`` running ``tool`` runs it
    (its words, its variables; ``paths`` replacing its own), else with ``default`` words
    (``None``: the checker does not run without such a script).

    Raises (the planner):
        NotInstalled: the tool is not installed in the project.
        Unsupported: a script's command qbench cannot run as written, or no script.
    """

    def plan(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
        found = from_script(cwd, tool, scripts)
        if found is None:
            if default is None:
                raise Unsupported(f"no script of {', '.join(scripts)} runs {tool}")
            return planner(default, cwd, paths)
        env, words, written = found
        try:
            planned = planner(words, cwd, paths)
        except Unsupported as exc:
            raise Unsupported(
                f"the package's script runs `{written[:200]}`: {exc}; qbench check runs {tool} "
                "as the script does, or not at all"
            ) from None
        return replace(planned, env=env) if env else planned

    return plan


def _oxlint(words: list[str], cwd: Path, paths: list[str]) -> Plan[Diagnostic]:
    return oxlint.plan_oxlint(words, cwd, given=paths, fixes=True)


def _biome(words: list[str], cwd: Path, paths: list[str]) -> Plan[Diagnostic]:
    return biome.plan_biome(words, cwd, given=paths, fixes=True)


def _prettier(words: list[str], cwd: Path, paths: list[str]) -> Plan[Diagnostic]:
    return prettier.plan_check(words, cwd, given=paths)


def has_config(names: tuple[str, ...], tool: str) -> Callable[[Path], bool]:
    """Whether the project has one of the configuration files ``names``, or its ``lint``
    script runs ``tool``."""
    in_script = runs_in_script(tool)
    return lambda root: any((root / name).is_file() for name in names) or in_script(root)


def script_checker(
    name: str,
    tool: str,
    applies: Callable[[Path], bool],
    scripts: tuple[str, ...],
    planned: tuple[Callable[[list[str], Path, list[str]], Plan[Diagnostic]], list[str] | None],
    description: str,
) -> Checker:
    """A front-end lint checker run as the first of ``scripts`` running ``name`` runs it
    (`plan_script_tool`; ``planned``: its planner and its words without such a script)."""
    planner, default = planned
    return Checker(
        name,
        "lint",
        "frontend",
        tool,
        applies,
        plan_script_tool(name, scripts, planner, default),
        installed=lambda root: has_bin(root, name),
        description=description,
    )


@hookimpl
def qbench_checkers() -> list[Checker]:
    """tsc (typecheck) and eslint (lint), for the front end."""
    return [
        Checker(
            "tsc",
            "typecheck",
            "frontend",
            tsc.TOOL,
            has_tsconfig,
            plan_tsc,
            installed=lambda root: has_bin(root, "tsc"),
            description="node_modules/.bin/tsc --noEmit --pretty false (references: tsc -b in memory)",
        ),
        Checker(
            "eslint",
            "lint",
            "frontend",
            eslint.TOOL,
            has_eslint_config,
            plan_eslint,
            installed=lambda root: has_bin(root, "eslint"),
            description="node_modules/.bin/eslint -f json --ignore-pattern '**/.qbench/' (and the run's --dir), with the lint script's paths and options",
        ),
        script_checker(
            "oxlint",
            oxlint.TOOL,
            has_config(oxlint.CONFIG_FILES, "oxlint"),
            (script_checks.LINT,),
            (_oxlint, []),
            "node_modules/.bin/oxlint -f json, with the lint script's paths and options",
        ),
        script_checker(
            "biome",
            biome.TOOL,
            has_config(biome.CONFIG_FILES, "biome"),
            (script_checks.LINT,),
            (_biome, ["check"]),
            "node_modules/.bin/biome check --reporter=json (or the lint script's biome command)",
        ),
        script_checker(
            "prettier",
            prettier.TOOL,
            runs_in_script("prettier", script_checks.FORMAT_SCRIPTS),
            script_checks.FORMAT_SCRIPTS,
            (_prettier, None),
            "node_modules/.bin/prettier --list-different, as the lint or format:check script's prettier --check",
        ),
    ]
