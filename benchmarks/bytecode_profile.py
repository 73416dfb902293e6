"""Bytecodes each qbench function executes per test, inclusive of its callees.

callgrind counts instructions per C function; on CPython 3.11 every Python function runs inside
the one interpreter loop, so it cannot say which of qbench's functions a test's instructions go
to. This counts, deterministically, the bytecodes each function of ``pytest_qbench`` (and
pluggy's dispatch) executes between the first test and the session's end, on ``overhead.py``'s
generated suite, in-process under ``sys.settrace`` (slow: about a minute for 100 tests). Work
inside C calls (``json`` encoding, copying a dict) is not seen; weigh it with callgrind.

Usage::

    python benchmarks/bytecode_profile.py --tests 100 --top 40
    python benchmarks/bytecode_profile.py --qbench-at /tmp/old   # another checkout (PYTHONPATH)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from overhead import DEFAULT_WORK_DIR
from overhead import child_env
from overhead import generate_suite


CHILD = r"""
import collections, sys
import pytest

inclusive = collections.Counter()
calls = collections.Counter()
active = [False]


def key(code):
    name = code.co_filename
    if "pytest_qbench" in name:
        return name.split("pytest_qbench/")[-1] + ":" + code.co_qualname
    if "pluggy" in name:
        return "pluggy:" + code.co_qualname
    return None


def tracer(frame, event, arg):
    if not active[0]:
        return tracer
    frame.f_trace_opcodes = True
    if event == "call":
        found = key(frame.f_code)
        if found:
            calls[found] += 1
    elif event == "opcode":
        seen = set()
        outer = frame
        while outer is not None:
            found = key(outer.f_code)
            if found and found not in seen:
                seen.add(found)
                inclusive[found] += 1
            outer = outer.f_back
    return tracer


class Window:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        active[0] = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        active[0] = False


tests, top = int(sys.argv[1]), int(sys.argv[2])
sys.settrace(tracer)
pytest.main(sys.argv[3:], plugins=[Window()])
sys.settrace(None)
print("| function | bytecodes a test, inclusive | calls a test |")
print("|---|---:|---:|")
for name, count in inclusive.most_common(top):
    print(f"| `{name}` | {count / tests:.0f} | {calls[name] / tests:.2f} |")
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=100)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--qbench-at", help="a checkout whose pytest_qbench is profiled")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    args = parser.parse_args(argv)
    suite = generate_suite(args.work_dir, args.tests, 100)
    env = child_env(args.qbench_at)
    env["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory() as store:
        argv_child = [args.python, "-c", CHILD, str(args.tests), str(args.top)]
        argv_child += ["-q", "-p", "no:cacheprovider", "-p", "qbench", f"--qbench-dir={store}"]
        done = subprocess.run(
            [*argv_child, "tests"], cwd=suite.path, env=env, capture_output=True, text=True
        )
    table = done.stdout[done.stdout.find("| function |") :]
    print(table or done.stdout[-2000:] + done.stderr[-2000:])
    return 0 if table else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
