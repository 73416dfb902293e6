"""``python -m pytest_qbench.tools.js.build_all DIR SCRATCH``: build every workspace package of
the JavaScript project(s) at ``DIR`` package by package (``build.build_project``), printing one
JSON line per package (its ``CheckRun``: package, status, command, exit status, diagnostics).
Exit status 0 when every package built, 1 otherwise.

The workspace build checker (``js.build``) runs this as its child process, so that the
packages' builds are supervised, timed out and killed with it as any checker is."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.js.build import build_project
from pytest_qbench.tools.js.project import find_projects


TOOL = "js.build"
OK_CODES = frozenset({0, 1})
TIMEOUT = 900.0
"""Seconds one package's build may take (the checker's own timeout bounds them all)."""


def main(argv: list[str]) -> int:
    """Build, print, and say whether every package built."""
    root, scratch = Path(argv[0]), Path(argv[1])
    failed = False
    for project in find_projects(root):
        for run in build_project(project, root, scratch, TIMEOUT):
            print(run.model_dump_json(), flush=True)
            failed = failed or run.status != "clean"
    return 1 if failed else 0


def parse_builds(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """The failed packages' errors, from the JSON lines of ``main``.

    Raises:
        CheckOutputError: a line that is not a package's build.
    """
    del cwd
    found: list[Diagnostic] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            run = CheckRun.model_validate_json(line)
        except ValueError as exc:
            raise CheckOutputError(f"{TOOL} printed {line[:200]!r}: {exc}") from None
        found += [d.model_copy(update={"tool": TOOL}) for d in run.diagnostics]
    return found


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
