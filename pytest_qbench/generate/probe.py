"""Import the target in a child process (``_child.py``): the ghostwriter's tests and the
template calls' outcomes. The child is killed with its process group after the timeout; the
results it wrote until then are kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_qbench.generate.ghostwriter import GhostSpec
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.process import python
from pytest_qbench.generate.process import run_child
from pytest_qbench.generate.target import Target
from pytest_qbench.generate.templates import Call


@dataclass
class Probed:
    """What the child found."""

    import_errors: dict[str, str] = field(default_factory=dict)
    ghost: dict[str, dict[str, Any]] = field(default_factory=dict)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str | None = None
    """Why the child stopped early (a timeout, a crash), if it did."""


def run_probe(
    target: Target,
    specs: list[GhostSpec],
    calls: dict[str, tuple[str, Call]],
    scratch: Path,
    timeout: float,
    limit: float | None = None,
) -> Probed:
    """Ghostwrite ``specs`` and probe ``calls`` (by id: module and call) in one child; each item
    gets ``timeout`` seconds, the child as many as its items together, or ``limit`` seconds
    when that is less (what is left of the generation's budget)."""
    results = scratch / "probe-results.json"
    request = {
        "results": str(results),
        "timeout": probe_timeout(timeout),
        "modules": [m.name for m in target.modules],
        "ghost": [
            {
                "id": s.id,
                "kind": s.kind,
                "module": s.module,
                "functions": list(s.functions),
                "except": list(s.except_),
                "guessed": [[function, g.name, g.type] for function, g in s.guessed],
            }
            for s in specs
        ],
        "probes": [_probe_item(ident, module, call) for ident, (module, call) in calls.items()],
    }
    request_file = scratch / "probe-request.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    workdir = scratch / "probe"
    workdir.mkdir(exist_ok=True)
    budget = probe_timeout(timeout) * (len(specs) + len(calls)) + timeout * len(target.modules)
    capped = limit is not None and limit < budget
    if limit is not None:
        budget = max(min(budget, limit), 0.5)
    command = [python(), "-m", "pytest_qbench.generate._child", str(request_file)]
    env = child_env(
        target.import_root, {"HYPOTHESIS_STORAGE_DIRECTORY": str(scratch / "hypothesis")}
    )
    finished = run_child(command, workdir, env, budget)
    probed = _read(results)
    if finished.timed_out and capped:
        probed.problem = (
            f"the probe was stopped after {budget:.3g}s: the budget (--timeout) ran out"
        )
    elif finished.timed_out:
        probed.problem = f"importing the target hung: killed after {budget:g}s"
    elif finished.returncode != 0:
        last = finished.tail().strip().splitlines()[-1:] or ["no output"]
        probed.problem = f"the child that imports the target crashed: {last[0]}"
    return probed


def probe_timeout(timeout: float) -> float:
    """Seconds one ghostwriter call or one template call may take in the child: a third of
    ``--timeout``, which also pays for a pytest process's start when a test is verified."""
    return max(1.0, timeout / 3)


def _probe_item(ident: str, module: str, call: Call) -> dict[str, Any]:
    function = call.function
    return {
        "id": ident,
        "module": module,
        "function": function.qualname,
        "class": function.class_name,
        "name": function.name,
        "init": call.init_text(),
        "args": call.args_text(),
    }


def _read(results: Path) -> Probed:
    if not results.is_file():
        return Probed()
    data = json.loads(results.read_text(encoding="utf-8"))
    errors = {name: error for name, error in data["imports"].items() if error}
    return Probed(errors, data["ghost"], data["probes"])
