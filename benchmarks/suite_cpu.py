"""Where the project's own suite spends its CPU, per test: a pytest plugin that reads
``os.times()`` around each test's whole protocol (setup, call, teardown) and appends one JSON
line per test to ``$SUITE_CPU_OUT`` (default ``suite-cpu.jsonl``): the worker's own CPU and the
CPU of the children it waited for in that time (a module fixture's run counts on the module's
first test; a child reaped later, as the browser a module fixture closes, on the test that
reaped it). Then, as a script, the sums per module, largest first.

    SUITE_CPU_OUT=cpu.jsonl PYTHONPATH=benchmarks pytest -p suite_cpu -n 2 --dist loadgroup \\
        tests/test_js_runners.py tests/test_node_checkers.py
    python benchmarks/suite_cpu.py cpu.jsonl [TOP]

Measure CPU, not wall: on a shared host the wall time is the neighbours'.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Generator
from pathlib import Path

import pytest


def out_path() -> Path:
    """Where the lines go: ``$SUITE_CPU_OUT``, or ``suite-cpu.jsonl`` here."""
    return Path(os.environ.get("SUITE_CPU_OUT", "suite-cpu.jsonl"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    before, started = os.times(), time.monotonic()
    try:
        return (yield)
    finally:
        after = os.times()
        line = {
            "nodeid": item.nodeid,
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "-"),
            "own": after.user - before.user + after.system - before.system,
            "children": after.children_user
            - before.children_user
            + after.children_system
            - before.children_system,
            "wall": time.monotonic() - started,
        }
        with out_path().open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def summarize(lines: list[dict[str, object]], top: int) -> str:
    """Tests, own, children's and summed CPU per module, largest first, a total line, then the
    ``top`` costliest tests."""
    modules: dict[str, list[float]] = {}
    for line in lines:
        sums = modules.setdefault(str(line["nodeid"]).split("::")[0], [0, 0.0, 0.0])
        sums[0] += 1
        sums[1] += float(str(line["own"]))
        sums[2] += float(str(line["children"]))
    rows = sorted(modules.items(), key=lambda item: -(item[1][1] + item[1][2]))
    rows.append(("all", [sum(r[1][i] for r in rows) for i in range(3)]))
    text = [
        f"{m:50} {n:5.0f} own {o:7.1f} children {c:7.1f} sum {o + c:7.1f}" for m, (n, o, c) in rows
    ]
    costly = sorted(
        lines, key=lambda line: -(float(str(line["own"])) + float(str(line["children"])))
    )
    for line in costly[:top]:
        cpu = float(str(line["own"])) + float(str(line["children"]))
        text.append(f"{cpu:6.2f} {line['nodeid']}")
    return "\n".join(text)


if __name__ == "__main__":
    read = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
    print(
        summarize([json.loads(line) for line in read], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    )
