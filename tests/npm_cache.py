"""The npm registry's tools the tests use, installed once each into a cache keyed by their pinned
versions (``~/.cache/qbench-tests/npm/...``), one process at a time under a file lock.

Standard library only, so that ``.ci/run`` can fill the cache with the machine's own ``python3``
while tox builds its environments (``python3 tests/npm_cache.py``): on a fresh machine the sets
take about a minute of downloads, which the tests would otherwise wait for, one worker holding
the lock while the other waits. A set missing from `PREWARMED` is still installed by the first
test that needs it (tests/node_tools.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import subprocess
import sys
from collections.abc import Iterator
from collections.abc import Mapping
from pathlib import Path


PACKAGES = {"typescript": "5.9.3", "eslint": "9.9.1"}
"""The pinned versions installed for the checkers."""
RUNNER_PACKAGES = {"vitest": "3.2.4", "jest": "29.7.0", "pnpm": "9.15.0"}
"""The pinned versions installed for the runners (vitest 3 runs on Node 20)."""
FORMAT_PACKAGES = {"prettier": "3.3.3"}
"""The pinned version installed for a test script's ``prettier --check``."""
LINT_PACKAGES = {
    "oxlint": "1.94.0",
    "@biomejs/biome": "2.6.8",
    "prettier": "3.3.3",
    "oxfmt": "0.79.0",
    "@typescript/native-preview": "7.0.0-dev.20260401.1",
}
"""The pinned versions of the linters, the formatters and tsgo."""
VITEST_TYPES = {"vitest": "3.2.4", "typescript": "5.9.3"}
"""vitest with the TypeScript its type tests check against."""
TYPESCRIPTS = ("5.5.4", "5.9.3", "7.0.2")
"""The TypeScript releases whose ``tsc -b`` the checkers' tests compare."""
PREWARMED = (
    RUNNER_PACKAGES,
    PACKAGES,
    LINT_PACKAGES,
    VITEST_TYPES,
    FORMAT_PACKAGES,
    *({"typescript": version} for version in TYPESCRIPTS),
)
"""Every set the tests install, the biggest first: what ``.ci/run`` installs ahead of them."""
INSTALL_TIMEOUT = 600.0


class InstallFailed(Exception):
    """npm could not install a set (no registry, no disk): the tests needing it skip."""


def cache_dir(packages: Mapping[str, str]) -> Path:
    """Where the pinned ``packages`` are installed."""
    key = "-".join(f"{name}{version}" for name, version in sorted(packages.items()))
    return Path.home() / ".cache" / "qbench-tests" / "npm" / key


def installed(packages: Mapping[str, str]) -> Path:
    """The cache's ``node_modules`` holding ``packages``, installed first when missing; raises
    `InstallFailed` with npm's last words when npm fails."""
    root = cache_dir(packages)
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".lock"):
        done = root / "node_modules" / ".installed"
        if not done.is_file():
            _install(root, packages)
            done.write_text(json.dumps(packages))
    return root / "node_modules"


def _install(root: Path, packages: Mapping[str, str]) -> None:
    manifest = {"name": "qbench-test-tools", "private": True, "devDependencies": dict(packages)}
    (root / "package.json").write_text(json.dumps(manifest))
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.TimeoutExpired as stopped:
        raise InstallFailed(
            f"npm install of {packages} took over {INSTALL_TIMEOUT:.0f} s"
        ) from stopped
    if done.returncode != 0:
        raise InstallFailed(
            f"npm install of {packages} failed (no registry?): {done.stderr[-500:]}"
        )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main() -> int:
    """Install every set of `PREWARMED`; a failure is reported and the next set tried."""
    failed = 0
    for packages in PREWARMED:
        try:
            print(installed(packages), flush=True)
        except (InstallFailed, OSError) as error:
            failed += 1
            print(error, file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
