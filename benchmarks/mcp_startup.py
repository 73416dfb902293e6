"""How long ``qbench-mcp`` makes an assistant wait at start: ``initialize`` and ``tools/list``.

A stdlib-only JSON-RPC client starts the server over stdio (``python -c`` calling
``pytest_qbench.mcp.launch.main``, the ``qbench-mcp`` console script's function, with
``PYTHONPATH`` set to each checkout given), sends ``initialize``, then
``notifications/initialized`` and ``tools/list``, and closes stdin. It records the wall time
until each answer and the server process's CPU time (user + sys, from ``/proc/PID/stat``) when
each answer arrived; a separate, unmeasured run under ``python -X importtime`` (after
``compileall`` of the checkout's package; its stderr a file, so the lines written before an
answer are there when it arrives) counts the modules the server imported before it answered
``initialize`` and before it exited (nothing else happens in between). The checkouts' runs are
interleaved round by round.

Usage::

    git archive main | tar -x -C /tmp/old
    python benchmarks/mcp_startup.py [--repeat 5] [--checkout old=/tmp/old --checkout new=.]

No target is checked (exit status 0 once every server answered): most of the time is the MCP
SDK's own import, which ``SDK_ONLY`` (``import mcp.server``, ``anyio``) is timed alone to show,
beside ``SDK_STDIO`` (the same with uvicorn hidden, as ``qbench-mcp`` imports it:
``pytest_qbench/mcp/server_import.py``) and ``TYPES_ONLY`` (the protocol's types alone).
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
SDK_STDIO = "import sys; sys.modules['uvicorn'] = None; " + SDK_ONLY
TYPES_ONLY = "import mcp_types, mcp_types.methods, anyio"
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
    log = root / "importtime.log"
    with log.open("wb") as stderr:  # the server writes through a descriptor of its own
        started = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, *flags, "-c", SERVER, "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if importtime else subprocess.DEVNULL,
            env=env,
            cwd=root,  # `python -c` puts its directory first on sys.path, before PYTHONPATH
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
    if importtime:  # stderr is unbuffered: every line before the answer is in the file
        got["init_modules"] = imports_logged(log)
    server.stdin.write(message("notifications/initialized", {}, None))
    server.stdin.write(message("tools/list", {}, 2))
    server.stdin.flush()
    tools = answer(server.stdout, 2)["result"]["tools"]
    got |= {"list_wall_s": time.perf_counter() - started, "list_cpu_s": cpu_s(server.pid)}
    got["tools"] = len(tools)
    server.stdin.close()
    server.wait(timeout=60)
    if importtime:
        got["modules"] = imports_logged(log)
    return got


def imports_logged(log: Path) -> int:
    """The modules ``-X importtime`` has listed in ``log`` so far (its header line left out; an
    import that failed at once, such as sse-starlette's of a hidden uvicorn, is listed too)."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return sum(1 for line in lines if line.startswith("import time:")) - 1


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
    modules: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="qbench-mcp-startup-") as work:
        root = Path(work)
        for name, checkout in checkouts:
            compile_package(checkout)
            modules[name] = session(checkout, root, importtime=True)
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
    for label, key in [("before `initialize` answered", "init_modules"), ("in all", "modules")]:
        cells = [f"{modules[name][key]:.0f}" for name in names]
        print(f"| modules imported {label} | " + " | ".join(cells) + " |")
    print("| tools listed | " + " | ".join(f"{runs[n][0]['tools']:.0f}" for n in names) + " |")
    print(f"\nThe MCP SDK's import alone, CPU s, median of {args.repeat} (interleaved):\n")
    alone: dict[str, list[float]] = {}
    for _round in range(args.repeat):
        for code in (SDK_ONLY, SDK_STDIO, TYPES_ONLY):
            alone.setdefault(code, []).append(import_cpu_s(code))
    for code, times in alone.items():
        print(f"- `{code}`: {statistics.median(times):.2f}")
    return 0


def import_cpu_s(code: str) -> float:
    """CPU seconds of a Python process that runs ``code`` (imports) and exits."""
    before = os.times()
    subprocess.run([sys.executable, "-c", code], check=True)
    after = os.times()
    return (
        after.children_user + after.children_system - before.children_user - before.children_system
    )


if __name__ == "__main__":
    sys.exit(main())
