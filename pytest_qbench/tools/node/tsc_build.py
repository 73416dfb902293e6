"""``python -m pytest_qbench.tools.node.tsc_build TSC SCRATCH``: check the project references of
the ``tsconfig.json`` in the current directory as ``tsc -b`` would, without writing a file into
the project: ``tsc -p PROJECT --noEmit`` for each project in ``tsc -b``'s order
(`tsc.build_order`), each ``.tsbuildinfo`` into ``SCRATCH``, their messages printed one after
another (one diagnostics list).

``tsc -b`` writes what the referenced projects emit and their ``.tsbuildinfo`` files (before
TypeScript 5.6 its build mode refuses ``--noEmit``; from 5.6 it still writes the
``.tsbuildinfo`` of an incremental project). Exit status: the first one outside tsc's
documented 0, 1 and 2 (a crash), else the highest.

The tsc checker runs this as its child process, so that the projects' checks are supervised,
timed out and killed with it as any checker is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_qbench.tools.node import tsc


def main(argv: list[str]) -> int:
    """Check each project, print tsc's output, return the worst status."""
    executable, scratch = argv[0], Path(argv[1])
    cwd = Path.cwd()
    worst = 0
    for number, project in enumerate(tsc.build_order(cwd / "tsconfig.json")):
        name = str(project.relative_to(cwd)) if project.is_relative_to(cwd) else str(project)
        buildinfo = scratch / f"project-{number}.tsbuildinfo"
        done = subprocess.run(tsc.tsc_command(executable, name, buildinfo), check=False)
        if done.returncode not in tsc.OK_CODES:
            return done.returncode
        worst = max(worst, done.returncode)
    return worst


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
