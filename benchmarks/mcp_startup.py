"""How long ``qbench-mcp`` makes an assistant wait at start: ``initialize`` and ``tools/list``.

A stdlib-only JSON-RPC client starts the server over stdio (``python -c`` calling
``pytest_qbench.mcp.launch.main``, the ``qbench-mcp`` console script's function, with
``PYTHONPATH`` set to each checkout given), sends ``initialize``, then
``notifications/initialized`` and ``tools/list``, and closes stdin. It records the wall time
until each answer and the server process's CPU time (user + sys, from ``/proc/PID/stat``) when
each answer arrived; a separate, unmeasured run under ``python -X importtime`` (after
``compileall`` of the checkout's package) counts the modules the server imported before it
exited (nothing else happens in between). The checkouts' runs are interleaved round by round.

Usage::

    git archive main | tar -x -C /tmp/old
    python benchmarks/mcp_startup.py [--repeat 5] [--checkout old=/tmp/old --checkout new=.]

No target is checked (exit status 0 once every server answered): most of the time is the MCP
SDK's own import, which ``SDK_ONLY`` (``import mcp.server``, ``anyio``) is timed alone to show.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO
from typing import Any

from _measure import add_checkout_option
from _measure import checkouts_of
from _measure import compile_package


SDK_ONLY = "import mcp.server, anyio; from mcp.server import MCPServer"
SERVER = "import sys; from pytest_qbench.mcp.launch import main; sys.exit(main())"
TICKS = os.sysconf("SC_CLK_TCK")


def message(method: str, params: dict[str, Any], ident: int | None) -> bytes:
    """One JSON-RPC message, one line (MCP's stdio framing)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        body["id"] = ident
    return (json.dumps(body) + "\n").encode()


def answer(stream: IO[bytes], ident: int) -> dict[str, Any]:
    """The response to request ``ident`` (notifications and log lines before it skipped)."""
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError(f"the server closed its output before answering request {ident}")
        got: dict[str, Any] = json.loads(line)
        if got.get("id") == ident:
            if "error" in got:
                raise RuntimeError(f"request {ident} failed: {got['error']}")
            return got


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def session(checkout: Path, root: Path, importtime: bool) -> dict[str, float]:
    """One server's start: seconds (wall, CPU) to each answer; modules with ``importtime``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    flags = ["-X", "importtime"] if importtime else []
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, *flags, "-c", SERVER, "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if importtime else subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    client = {"name": "mcp_startup.py", "version": "1"}
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    server.stdin.write(message("initialize", init, 1))
    server.stdin.flush()
    reply = answer(server.stdout, 1)
    got = {"init_wall_s": time.perf_counter() - started, "init_cpu_s": cpu_s(server.pid)}
    if "serverInfo" not in reply["result"]:
        raise RuntimeError(f"not an initialize result: {reply}")
    server.stdin.write(message("notifications/initialized", {}, None))
    server.stdin.write(message("tools/list", {}, 2))
    server.stdin.flush()
    tools = answer(server.stdout, 2)["result"]["tools"]
    got |= {"list_wall_s": time.perf_counter() - started, "list_cpu_s": cpu_s(server.pid)}
    got["tools"] = len(tools)
    server.stdin.close()
    stderr = server.stderr.read().decode() if server.stderr is not None else ""
    server.wait(timeout=60)
    if importtime:
        got["modules"] = sum(1 for line in stderr.splitlines() if line.startswith("import time:"))
        got["modules"] -= 1  # the header line
    return got


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    add_checkout_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the Markdown table, then the SDK's import alone."""
    args = parse_args(argv)
    checkouts = checkouts_of(args.checkout)
    runs: dict[str, list[dict[str, float]]] = {}
    modules: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="qbench-mcp-startup-") as work:
        root = Path(work)
        for name, checkout in checkouts:
            compile_package(checkout)
            modules[name] = session(checkout, root, importtime=True)["modules"]
        for _round in range(args.repeat):
            for name, checkout in checkouts:
                runs.setdefault(name, []).append(session(checkout, root, False))
    names = [name for name, _ in checkouts]
    print(f"qbench-mcp start-up, median of {args.repeat}:\n")
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    rows = [
        ("CPU s until `initialize` answered", "init_cpu_s"),
        ("CPU s until `tools/list` answered", "list_cpu_s"),
        ("wall s until `initialize` answered", "init_wall_s"),
        ("wall s until `tools/list` answered", "list_wall_s"),
    ]
    for label, key in rows:
        cells = [f"{statistics.median(r[key] for r in runs[name]):.2f}" for name in names]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| modules imported | " + " | ".join(f"{modules[n]:.0f}" for n in names) + " |")
    print("| tools listed | " + " | ".join(f"{runs[n][0]['tools']:.0f}" for n in names) + " |")
    sdk = statistics.median(sdk_cpu_s() for _ in range(args.repeat))
    print(f"\nThe MCP SDK's import alone (`{SDK_ONLY}`): {sdk:.2f} s CPU, median.")
    return 0


def sdk_cpu_s() -> float:
    """CPU seconds of a Python process that imports the MCP SDK's server and exits."""
    before = os.times()
    subprocess.run([sys.executable, "-c", SDK_ONLY], check=True)
    after = os.times()
    return (
        after.children_user + after.children_system - before.children_user - before.children_system
    )


if __name__ == "__main__":
    sys.exit(main())
