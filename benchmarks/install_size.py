"""What the ``[search]`` extra adds to an install: two fresh virtual environments, one with
``pip install CHECKOUT`` and one with ``pip install 'CHECKOUT[search]'``, their sizes by ``du``,
and the largest packages the extra brings.

Usage::

    python benchmarks/install_size.py [--checkout .] [--work /tmp/qbench-size]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def kib(path: Path) -> int:
    """``du -sk`` of a directory."""
    return int(subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True,
                              check=True).stdout.split()[0])  # fmt: skip


def install(work: Path, name: str, spec: str) -> Path:
    """A fresh venv ``work/name`` with ``spec`` installed; its site-packages."""
    target = work / name
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    subprocess.run([str(target / "bin" / "pip"), "install", "-q", spec], check=True)
    return next(target.glob("lib/python*/site-packages"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--work", type=Path, default=Path("/tmp/qbench-size"))
    args = parser.parse_args(argv)
    plain = install(args.work, "plain", str(args.checkout))
    extra = install(args.work, "search", f"{args.checkout}[search]")
    before = {p.name: kib(p) for p in plain.iterdir()}
    added = {p.name: kib(p) for p in extra.iterdir() if p.name not in before}
    print(f"without [search]: {kib(plain.parent.parent.parent) / 1024:.1f} MiB")
    print(f"with [search]:    {kib(extra.parent.parent.parent) / 1024:.1f} MiB")
    for name, size in sorted(added.items(), key=lambda item: -item[1])[:12]:
        print(f"  {name}: {size / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
