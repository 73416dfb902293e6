"""The TypeScript/JavaScript front end's checkers as a plugin: tsc and eslint."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.hookspecs import hookimpl
from pytest_qbench.tools.js import script_checks
from pytest_qbench.tools.node import eslint
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
    ]
