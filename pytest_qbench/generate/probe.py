"""Import the target in a child process (``_child.py``): the ghostwriter's tests and the
template calls' outcomes. The child is killed with its process group after the timeout; the
results it wrote until then are kept. When a function ends the shared child (``os._exit``, a
crash), the items it left undone are probed again one function at a time, each in a child of
its own, so that one such function hides no other and its line quotes its own child's output."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_qbench.core.supervise import Ending
from pytest_qbench.core.supervise import run
from pytest_qbench.generate.ghostwriter import GhostSpec
from pytest_qbench.generate.process import START_SECONDS
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.process import python
from pytest_qbench.generate.pycache import prefix_of
from pytest_qbench.generate.target import Target
from pytest_qbench.generate.templates import Call


QUOTED_LINES = 2
"""Last lines of a dead child's output quoted in its function's line."""


@dataclass
class Probed:
    """What the child found."""

    import_errors: dict[str, str] = field(default_factory=dict)
    ghost: dict[str, dict[str, Any]] = field(default_factory=dict)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str | None = None
    """Why the child stopped early (a timeout, a crash), if it did."""
    died: dict[tuple[str, str], str] = field(default_factory=dict)
    """``(module, function)``: how the function ended the child that probed it alone."""
    imported: bool = False
    """Whether the child got past importing the modules (it wrote its first results)."""
    done: bool = False
    """Whether the child wrote all its results."""


def run_probe(
    target: Target,
    specs: list[GhostSpec],
    calls: dict[str, tuple[str, Call]],
    scratch: Path,
    timeout: float,
    limit: float | None = None,
    refresh: Callable[[], object] | None = None,
) -> Probed:
    """Ghostwrite ``specs`` and probe ``calls`` (by id: module and call) in one child; each item
    gets ``timeout`` seconds, the child as many as its items together, or ``limit`` seconds
    when that is less (what is left of the generation's budget). ``refresh`` makes the
    project's copy again where a child changed it (``Sandbox.fresh``), before each child of
    its own a function gets after the shared one died."""
    deadline = None if limit is None else time.monotonic() + limit
    ghost = [_ghost_item(s) for s in specs]
    probes = [_probe_item(ident, module, call) for ident, (module, call) in calls.items()]
    budget = probe_timeout(timeout) * (len(ghost) + len(probes)) + timeout * len(target.modules)
    budget += START_SECONDS  # the child's start, Hypothesis's import and Unicode tables
    capped = limit is not None and limit < budget
    if limit is not None:
        budget = max(min(budget, limit), 0.5)
    modules = [m.name for m in target.modules]
    finished, probed = _run(target, modules, ghost, probes, scratch, "probe", timeout, budget)
    if finished.timed_out and capped:
        probed.problem = (
            f"the probe was stopped after {budget:.3g}s: the budget (--timeout) ran out"
        )
    elif finished.timed_out:
        probed.problem = f"importing the target hung: killed after {budget:g}s"
    elif not probed.done and probed.imported:
        _one_at_a_time(target, ghost, probes, scratch, timeout, deadline, probed, refresh)
    elif finished.returncode != 0 or not probed.done:
        last = _last_lines(finished, 1)
        probed.problem = f"the child that imports the target crashed: {last}"
    return probed


def _run(
    target: Target,
    modules: list[str],
    ghost: list[dict[str, Any]],
    probes: list[dict[str, Any]],
    scratch: Path,
    name: str,
    timeout: float,
    budget: float,
) -> tuple[Ending, Probed]:
    """One child importing ``modules`` and probing ``ghost`` and ``probes``, its files named
    after ``name``."""
    results = scratch / f"{name}-results.json"
    request = {
        "results": str(results),
        "timeout": probe_timeout(timeout),
        "modules": modules,
        "ghost": ghost,
        "probes": probes,
    }
    request_file = scratch / f"{name}-request.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    workdir = scratch / "probe"
    workdir.mkdir(exist_ok=True)
    command = [python(), "-m", "pytest_qbench.generate._child", str(request_file)]
    storage = {"HYPOTHESIS_STORAGE_DIRECTORY": str(scratch / "hypothesis")}
    env = child_env(target.import_root, storage, prefix_of(scratch))
    finished = run(command, cwd=workdir, env=env, timeout=budget, name="probe")
    return finished, _read(results)


def _one_at_a_time(
    target: Target,
    ghost: list[dict[str, Any]],
    probes: list[dict[str, Any]],
    scratch: Path,
    timeout: float,
    deadline: float | None,
    probed: Probed,
    refresh: Callable[[], object] | None = None,
) -> None:
    """Probe the items the shared child left undone, one function per child, into ``probed``,
    each child in the project's copy as it is (``refresh``: a function before may have deleted
    its module there). Each item ends with an outcome of its own: a function that ends its own
    child too gets a line quoting that child's last lines; an item its child gave no result
    for (its module would not import, the child hung) fails, saying so. Only the budget's end
    leaves items without one (the generation skips them, by the budget)."""
    groups: dict[tuple[str, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for item in ghost:
        if item["id"] not in probed.ghost:
            groups.setdefault((item["module"], item["functions"][0]), ([], []))[0].append(item)
    for item in probes:
        if item["id"] not in probed.probes:
            groups.setdefault((item["module"], item["function"]), ([], []))[1].append(item)
    for index, ((module, function), (own_ghost, own_probes)) in enumerate(groups.items()):
        full = probe_timeout(timeout) * (len(own_ghost) + len(own_probes)) + timeout
        budget = full if deadline is None else min(full, deadline - time.monotonic())
        if budget <= 0:
            return
        if refresh is not None:
            refresh()
        name = f"probe-{index}"
        finished, alone = _run(
            target, [module], own_ghost, own_probes, scratch, name, timeout, budget
        )
        probed.ghost.update(alone.ghost)
        probed.probes.update(alone.probes)
        outcome = _undone_outcome(module, finished, alone, capped=budget < full)
        if outcome is None:
            continue
        if "error" in outcome and not alone.done:
            probed.died[(module, function)] = outcome["error"]
        for item in own_ghost:
            probed.ghost.setdefault(item["id"], outcome)
        for item in own_probes:
            probed.probes.setdefault(item["id"], outcome)


def _undone_outcome(
    module: str, finished: Ending, alone: Probed, capped: bool
) -> dict[str, Any] | None:
    """The outcome of each item a function's own child gave no result for: it hung (killed
    after its own time, ``timeout``), its module would not import there, or it ended the child
    (``error``, with why); ``None`` when the budget's end stopped the child (``capped``)."""
    if finished.timed_out:
        return None if capped else {"timeout": True}
    error = alone.import_errors.get(module)
    if error:
        return {
            "error": f"could not be probed: its module would not import in its own child: {error}"
        }
    if alone.done:
        return {"error": "could not be probed: its own child gave no result for it"}
    return {
        "error": f"ended the child that probed it (exit status {finished.returncode}): "
        f"{_last_lines(finished, QUOTED_LINES)}"
    }


def _last_lines(finished: Ending, count: int) -> str:
    lines = [line.strip() for line in finished.tail().splitlines() if line.strip()]
    return " | ".join(lines[-count:])[:300] or "no output"


def probe_timeout(timeout: float) -> float:
    """Seconds one ghostwriter call or one template call may take in the child: a third of
    ``--timeout``, which also pays for a pytest process's start when a test is verified."""
    return max(1.0, timeout / 3)


def _ghost_item(spec: GhostSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "kind": spec.kind,
        "module": spec.module,
        "functions": list(spec.functions),
        "except": list(spec.except_),
        "guessed": [[function, g.name, g.type] for function, g in spec.guessed],
    }


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
    done = bool(data.get("done"))
    return Probed(errors, data["ghost"], data["probes"], imported=True, done=done)
