"""Real TypeScript and ESLint from the npm registry for the front-end checkers' tests, installed
once into a cache keyed by their pinned versions (``~/.cache/qbench-tests/npm/...``) and reused
between tests and runs; a test skips, saying why, when ``node``/``npm`` are missing."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


PACKAGES = {"typescript": "5.9.3", "eslint": "9.9.1"}
"""The pinned versions installed."""
INSTALL_TIMEOUT = 600.0


def cache_dir() -> Path:
    """Where the pinned packages are installed."""
    key = "-".join(f"{name}{version}" for name, version in sorted(PACKAGES.items()))
    return Path.home() / ".cache" / "qbench-tests" / "npm" / key


def node_modules() -> Path:
    """The cache's ``node_modules`` with tsc and eslint, installed on first use (one process
    at a time, under a file lock); skips the test when Node or npm is missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to install tsc and eslint (not on PATH)")
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".lock"):
        done = root / "node_modules" / ".installed"
        if not done.is_file():
            _install(root)
            done.write_text(json.dumps(PACKAGES))
    return root / "node_modules"


def _install(root: Path) -> None:
    manifest = {"name": "qbench-test-tools", "private": True, "devDependencies": PACKAGES}
    (root / "package.json").write_text(json.dumps(manifest))
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=INSTALL_TIMEOUT,
    )
    if done.returncode != 0:
        pytest.skip(f"npm install of {PACKAGES} failed (no registry?): {done.stderr[-500:]}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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


def frontend_project(directory: Path) -> Path:
    """A TypeScript front end in ``directory`` (made): package.json, tsconfig.json,
    ``src/greet.ts`` with a TS2345 error, ``src/extra.js`` with an eslint error, an ESLint
    flat config, and the cached tools as its ``node_modules``."""
    modules = node_modules()
    (directory / "src").mkdir(parents=True)
    manifest = {"name": "web", "private": True, "type": "module"}
    (directory / "package.json").write_text(json.dumps(manifest))
    tsconfig = {"compilerOptions": {"strict": True, "noEmit": True}, "include": ["src/**/*.ts"]}
    (directory / "tsconfig.json").write_text(json.dumps(tsconfig))
    (directory / "src" / "greet.ts").write_text(TS_ERROR)
    (directory / "src" / "extra.js").write_text(JS_ERROR)
    (directory / "eslint.config.js").write_text(ESLINT_CONFIG)
    os.symlink(modules, directory / "node_modules")
    return directory
