"""Real JavaScript tools from the npm registry for the tests: TypeScript and ESLint for the
front-end checkers, vitest, jest and pnpm for the runners and workspaces, each set installed
once into a cache keyed by its pinned versions (tests/npm_cache.py) and reused between tests
and runs; a test skips, saying why, when ``node``/``npm`` are missing.

A fixture project links the cache's ``node_modules``, as if its own install had put them there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_here import qbench_here
from npm_cache import PACKAGES
from npm_cache import RUNNER_PACKAGES
from npm_cache import InstallFailed
from npm_cache import installed

from pytest_qbench.report.models import TestReport


def node_modules(packages: Mapping[str, str] = PACKAGES) -> Path:
    """The cache's ``node_modules`` with ``packages`` (tsc and eslint by default), installed
    on first use (tests/npm_cache.py); skips the test when Node or npm is missing or npm
    fails."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node and npm are needed to install {', '.join(packages)} (not on PATH)")
    try:
        return installed(packages)
    except InstallFailed as error:
        pytest.skip(str(error))


TS_ERROR = """\
function greet(name: string): string {
  return "hello " + name;
}

export const count: number = 3;
export const greeting = greet(count);
"""
"""Line 6, column 31: ``count`` (a number) given for a string: TS2345."""
JS_ERROR = "export const used = 1;\nconst unused = 2;\n"
"""Line 2, column 7: ``unused`` is never used (no-unused-vars, an error by the config)."""
ESLINT_CONFIG = 'export default [{ rules: { "no-unused-vars": "error" } }];\n'
LEAN = {"skipLibCheck": True, "lib": ["ES2022"]}
"""The options that spare tsc what no test is about: TypeScript's own ``lib.*.d.ts`` not
type-checked (``skipLibCheck``, as create-vite's templates set it) and no DOM library (no test
uses it): 0.5 s of CPU a tsc run where it took 2.4 s; the diagnostics of the project's own
files are the same."""
COMPILER_OPTIONS = {"strict": True, "noEmit": True, **LEAN}
"""A fixture front end's ``compilerOptions``."""


def frontend_project(directory: Path) -> Path:
    """A TypeScript front end in ``directory`` (made): package.json, tsconfig.json
    (`COMPILER_OPTIONS`), ``src/greet.ts`` with a TS2345 error, ``src/extra.js`` with an eslint
    error, an ESLint flat config, and the cached tools as its ``node_modules``."""
    modules = node_modules()
    (directory / "src").mkdir(parents=True)
    manifest = {"name": "web", "private": True, "type": "module"}
    (directory / "package.json").write_text(json.dumps(manifest))
    tsconfig = {"compilerOptions": COMPILER_OPTIONS, "include": ["src/**/*.ts"]}
    (directory / "tsconfig.json").write_text(json.dumps(tsconfig))
    (directory / "src" / "greet.ts").write_text(TS_ERROR)
    (directory / "src" / "extra.js").write_text(JS_ERROR)
    (directory / "eslint.config.js").write_text(ESLINT_CONFIG)
    os.symlink(modules, directory / "node_modules")
    return directory


@pytest.fixture(scope="session")
def node_tools() -> Path:
    """The directory whose ``node_modules`` holds the pinned vitest, jest and pnpm."""
    return node_modules(RUNNER_PACKAGES).parent


def link_tools(project: Path, tools: Path) -> None:
    """Give ``project`` the cached ``node_modules`` (a link), as its own install would."""
    (project / "node_modules").symlink_to(tools / "node_modules", target_is_directory=True)


def qbench_test(
    cwd: Path, *args: str, process: bool = False
) -> tuple[subprocess.CompletedProcess[str], TestReport, Path]:
    """``qbench test ARGS`` in ``cwd``: its exit status and output, its stored report and its
    run directory. Run in this process (``cli_here``: every runner, checker and pytest it
    starts is a supervised child process all the same; a child Python for ``qbench`` itself
    cost 0.5 s of CPU a test), or with ``process`` as ``python -m pytest_qbench``, for the
    tests of that process's own exit status."""
    if process:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_qbench", "test", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    else:
        here = qbench_here("test", *args, cwd=cwd)
        command = ["qbench", "test", *args]
        done = subprocess.CompletedProcess(command, here.ret, here.out, here.err)
    runs = sorted((cwd / ".qbench" / "runs").iterdir())
    assert len(runs) == 1, done.stderr
    report = TestReport.model_validate_json((runs[0] / "report.json").read_bytes())
    return done, report, runs[0]


def qbench_check(args: list[str], cwd: Path) -> tuple[int, dict[str, Any]]:
    """``qbench check ARGS --json`` in ``cwd``, in this process (``cli_here``: the checkers it
    runs are child processes all the same; a child Python for ``qbench`` itself cost 0.5 s of
    CPU a test): its exit status and check.json."""
    done = qbench_here("check", *args, "--json", cwd=cwd)
    assert done.out, done.err
    return done.ret, json.loads(done.out)
