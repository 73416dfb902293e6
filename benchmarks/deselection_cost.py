"""What a run that deselects many tests costs the run store: the history index's growth per run,
and the size of ``report.json`` and ``results.jsonl``.

A generated project has ``--selected`` ordinary tests and ``--deselected`` parametrized stress
tests that its own ``conftest.py`` deselects (``pytest_collection_modifyitems``, as a suite does
that keeps its stress tests out of every run), so each run deselects the same ids. The project
is run ``--runs`` times with ``pytest -p qbench`` (real runs, the index on SQLite); after each
run the index's write-ahead log is checkpointed into ``index.sqlite`` and the file's size is
read. The growth of the first run (the index is created, the set is new) is shown apart from
the mean growth of the others, when nothing changed between runs.

To measure another checkout (before a change), put it first on the path: ``--pythonpath
/tmp/qbench-main`` (e.g. ``git archive main | tar -x -C /tmp/qbench-main``).

Usage::

    python benchmarks/deselection_cost.py [--deselected 31000] [--selected 200] [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path


CONFTEST = """
def pytest_collection_modifyitems(config, items):
    stress = [item for item in items if item.name.startswith("test_stress")]
    if stress:
        config.hook.pytest_deselected(items=stress)
        items[:] = [item for item in items if not item.name.startswith("test_stress")]
"""


def make_project(root: Path, deselected: int, selected: int) -> None:
    """The project: ``selected`` passing tests, ``deselected`` stress tests its conftest
    deselects."""
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_stress.py").write_text(
        textwrap.dedent(f"""
            import pytest

            @pytest.mark.parametrize("case", range({deselected}))
            def test_stress_load(case):
                pass
        """)
    )
    (root / "test_unit.py").write_text(
        textwrap.dedent(f"""
            import pytest

            @pytest.mark.parametrize("n", range({selected}))
            def test_unit(n):
                assert n >= 0
        """)
    )


def index_size(path: Path) -> int:
    """The index's size with its write-ahead log checkpointed into the file."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return path.stat().st_size


def run_once(root: Path, run_id: str, env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "pytest", "-p", "qbench", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, f"--qbench-run-id={run_id}"], cwd=root, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"run {run_id} failed ({done.returncode}):\n{done.stdout[-2000:]}")


def kib(count: float) -> str:
    return f"{count / 1024:,.1f} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deselected", type=int, default=31_000)
    parser.add_argument("--selected", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pythonpath", type=Path, help="A checkout to measure instead")
    parser.add_argument("--label", default="this checkout")
    args = parser.parse_args()
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("QBENCH_DB", None)
    if args.pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(args.pythonpath), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory(prefix="qbench-deselect-") as tmp:
        root = Path(tmp)
        make_project(root, args.deselected, args.selected)
        sizes = []
        for n in range(args.runs):
            run_once(root, f"ci-{n + 1}", env)
            sizes.append(index_size(root / ".qbench" / "index.sqlite"))
        last = root / ".qbench" / "runs" / f"ci-{args.runs}"
        report = (last / "report.json").stat().st_size
        stream = (last / "results.jsonl").stat().st_size
    later = [b - a for a, b in itertools.pairwise(sizes)]
    mean = sum(later) / len(later) if later else 0.0
    print(
        f"| {args.label} | {args.deselected:,} / {args.selected:,} | {kib(sizes[0])} | "
        f"{kib(mean)} | {kib(sizes[-1])} after {args.runs} | {kib(report)} | {kib(stream)} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
