"""What ``--qbench-check`` costs in wall time: ``pytest -p qbench --qbench-check=ruff,mypy``
next to ``pytest -p qbench``, then ``ruff check``, then ``mypy``, one after the other.

Generates a package (``--modules`` modules, each with typed functions, one deliberate lint error
and, in every tenth module, one deliberate type error) and a suite of ``--tests`` tests calling
it, each doing a little work (``--work-ms`` of CPU per test), so the tests take about as long as
a small project's. Then runs, per round and in a rotated order, the two configurations; every run
starts without ruff's and mypy's caches (``--warm`` keeps them, as a developer's machine would).
Each run's diagnostics are checked: the report of the combined run must hold exactly the errors
ruff and mypy find on their own (count per tool), or the round is flagged and not counted.

Usage::

    python benchmarks/check_cost.py [--modules 60] [--tests 600] [--work-ms 5] [--rounds 5]
                                    [--warm] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_project(root: Path, modules: int, tests: int, work_ms: float) -> None:
    """The package ``pkg`` and the suite ``tests/``, with deliberate ruff and mypy errors."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    for i in range(modules):
        wrong = '    return "no"\n' if i % 10 == 0 else "    return a + b\n"
        (pkg / f"mod{i}.py").write_text(
            "import os\n\n\n"  # F401, every module
            "def add(a: int, b: int) -> int:\n" + wrong + "\n\n"
            "def mul(a: int, b: int) -> int:\n    return a * b\n",
            encoding="utf-8",
        )
    (root / "tests").mkdir()
    per = max(1, tests // modules)
    for i in range(modules):
        body = [
            f"import time\n\nfrom pkg import mod{i}\n\n\n",
            "def spin() -> None:\n",
            f"    end = time.perf_counter() + {work_ms / 1000!r}\n",
            "    while time.perf_counter() < end:\n        pass\n\n",
        ]
        for j in range(per):
            body.append(
                f"\ndef test_{j}() -> None:\n    spin()\n    assert mod{i}.mul({j}, 1) == {j}\n\n"
            )
        (root / "tests" / f"test_mod{i}.py").write_text("".join(body), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', encoding="utf-8"
    )


def timed(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one command, and its result."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def clear_caches(root: Path) -> None:
    """Remove ruff's and mypy's caches and the run store."""
    for name in (".mypy_cache", ".ruff_cache", ".qbench", ".pytest_cache"):
        shutil.rmtree(root / name, ignore_errors=True)


def combined(root: Path) -> tuple[float, dict[str, int]]:
    """``pytest -p qbench --qbench-check=ruff,mypy``: wall time and errors per tool."""
    seconds, done = timed(
        [sys.executable, "-m", "pytest", "-q", "-p", "qbench", "--qbench-check=ruff,mypy"], root
    )
    if done.returncode != 0:
        raise RuntimeError(f"pytest exited {done.returncode}: {done.stdout[-2000:]}")
    (report,) = (root / ".qbench" / "runs").glob("*/report.json")
    counts = json.loads(report.read_text(encoding="utf-8"))["summary"]["diagnostics"]
    return seconds, {tool: per.get("error", 0) for tool, per in counts.items()}


def sequential(root: Path) -> tuple[float, dict[str, int]]:
    """``pytest -p qbench``, then ``ruff check``, then ``mypy``: total wall time and errors."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    t1, tests = timed([sys.executable, "-m", "pytest", "-q", "-p", "qbench"], root)
    t2, lint = timed([ruff, "check", "--output-format", "json", "--no-fix", "."], root)
    t3, types = timed([sys.executable, "-m", "mypy", "-O", "json", "--no-error-summary", "."], root)
    if tests.returncode != 0:
        raise RuntimeError(f"pytest exited {tests.returncode}: {tests.stdout[-2000:]}")
    type_errors = sum(
        1 for line in types.stdout.splitlines() if json.loads(line)["severity"] == "error"
    )
    return t1 + t2 + t3, {"ruff.lint": len(json.loads(lint.stdout)), "mypy.typecheck": type_errors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=60)
    parser.add_argument("--tests", type=int, default=600)
    parser.add_argument("--work-ms", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", action="store_true", help="Keep ruff's and mypy's caches")
    parser.add_argument("--json", type=Path, help="Also write the measurements as JSON")
    args = parser.parse_args(argv)
    configs = {"pytest --qbench-check=ruff,mypy": combined, "pytest; ruff; mypy": sequential}
    times: dict[str, list[float]] = {name: [] for name in configs}
    flagged: list[str] = []
    with tempfile.TemporaryDirectory(prefix="qbench-check-cost-") as tmp:
        root = Path(tmp)
        write_project(root, args.modules, args.tests, args.work_ms)
        names = list(configs)
        for round_no in range(args.rounds):
            order = names[round_no % 2 :] + names[: round_no % 2]  # interleaved, rotated
            found: dict[str, dict[str, int]] = {}
            seconds: dict[str, float] = {}
            for name in order:
                if not args.warm:
                    clear_caches(root)
                shutil.rmtree(root / ".qbench", ignore_errors=True)
                seconds[name], found[name] = configs[name](root)
            if len({json.dumps(f, sort_keys=True) for f in found.values()}) != 1:
                flagged.append(f"round {round_no + 1}: diagnostics differ: {found}")
                continue
            for name, value in seconds.items():
                times[name].append(value)
            print(
                f"round {round_no + 1}: " + ", ".join(f"{n} {s:.2f} s" for n, s in seconds.items())
            )
    print()
    print("| configuration | median wall time (s) | runs |")
    print("|---|---|---|")
    medians = {name: statistics.median(values) for name, values in times.items() if values}
    for name, values in times.items():
        shown = f"{medians[name]:.2f}" if values else "-"
        print(f"| `{name}` | {shown} | {len(values)} |")
    if len(medians) == 2:
        together, apart = medians[names[0]], medians[names[1]]
        print(f"\n--qbench-check takes {together / apart:.2f}x the sequential wall time")
    for line in flagged:
        print(f"FLAGGED {line}")
    if args.json:
        args.json.write_text(
            json.dumps({"args": vars(args) | {"json": str(args.json)}, "times": times}, indent=1),
            encoding="utf-8",
        )
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
