"""Real JavaScript tools for the tests (issue 22): vitest, jest and pnpm at pinned versions,
installed from the npm registry once into a cache shared by every test session
(``~/.cache/qbench-tests/npm/<key>``, the key naming the pins and Node's major version), never
on each test. Without ``node`` and ``npm`` the tests that need them are skipped, saying so.

A fixture project links the cache's ``node_modules``, as if its own install had put them there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_qbench.report.models import TestReport


PINS = {"vitest": "3.2.4", "jest": "29.7.0", "pnpm": "9.15.0"}
"""The tools and their versions (vitest 3 runs on Node 20)."""
INSTALL_TIMEOUT = 900


def node_major() -> str:
    """``20`` for Node 20.x."""
    done = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    return done.stdout.strip().lstrip("v").split(".", 1)[0]


def cache_dir() -> Path:
    """Where the pinned tools are installed."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(json.dumps([PINS, node_major()]).encode()).hexdigest()[:12]
    return base / "qbench-tests" / "npm" / key


def install(target: Path) -> None:
    """``npm install`` of the pins into ``target`` (under a lock: parallel sessions wait)."""
    target.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".installed").is_file():
            return
        manifest = {"name": "qbench-test-tools", "private": True, "devDependencies": PINS}
        (target / "package.json").write_text(json.dumps(manifest))
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, f"npm install of {PINS} failed:\n{done.stderr[-3000:]}"
        (target / ".installed").write_text("")


@pytest.fixture(scope="session")
def node_tools() -> Path:
    """The directory whose ``node_modules`` holds the pinned vitest, jest and pnpm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the JavaScript runners' tests (install Node.js)")
    target = cache_dir()
    install(target)
    return target


def link_tools(project: Path, tools: Path) -> None:
    """Give ``project`` the cached ``node_modules`` (a link), as its own install would."""
    (project / "node_modules").symlink_to(tools / "node_modules", target_is_directory=True)


def qbench_test(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], TestReport, Path]:
    """``qbench test ARGS`` in ``cwd``: the process, its stored report and its run directory."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench", "test", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    runs = sorted((cwd / ".qbench" / "runs").iterdir())
    assert len(runs) == 1, done.stderr
    report = TestReport.model_validate_json((runs[0] / "report.json").read_bytes())
    return done, report, runs[0]
