"""Case files (``agent.yaml``) collected as pytest items, and how their agent is called.

Each case becomes a ``pytest.Function`` that uses the ``qbench`` fixture and carries the case's
``@pytest.mark.qbench``, so it runs exactly like a Python agent test: the same fail rules, judge
fixture, report fields, ``-k``/``-m`` selection and pytest-xdist behaviour. Its body calls the
agent and records what it returned (`run_case`).

The agent contract: ``agent(input, files)`` (or ``agent(input)`` when it takes one argument)
returns the response, or a mapping / an object with ``response`` and optionally ``tool_calls``,
``latency_ms``, ``tokens`` and ``cost``; ``latency_ms`` defaults to the call's wall time. An
``async def`` agent is run to completion with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import importlib
import inspect
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.core.repeat import repeat_id
from pytest_qbench.evaluation.cases import AgentCase
from pytest_qbench.evaluation.cases import AgentFileError
from pytest_qbench.evaluation.cases import AgentSuite
from pytest_qbench.evaluation.cases import call_signature_accepts_files
from pytest_qbench.evaluation.cases import load_agent_file
from pytest_qbench.evaluation.config import AgentConfigError
from pytest_qbench.plugin.agent.hooks import MARKER


if TYPE_CHECKING:
    from pytest_qbench.plugin.agent.fixture import QBench

RESULT_FIELDS = ("tool_calls", "latency_ms", "tokens", "cost")
"""What an agent may return besides ``response``."""
CASE_FIELDS = ("input", "ground_truth", "expected_tools")
"""Fields that come from the case, never from the agent's result."""
Agent = Callable[..., Any]


def is_case_file(file_path: Path, config: pytest.Config) -> bool:
    """Whether ``file_path``'s name matches ini ``qbench_agent_files``."""
    name = file_path.name
    return any(fnmatch.fnmatch(name, pattern) for pattern in case_patterns(config))


def case_patterns(config: pytest.Config) -> list[str]:
    """ini ``qbench_agent_files`` (the defaults when it is not set)."""
    patterns: list[str] = config.getini("qbench_agent_files")
    return patterns


class AgentCaseFile(pytest.File):
    """A case file: one item per case (per repetition under ``--qbench-repeat``)."""

    def collect(self) -> Iterator[pytest.Item]:
        shown = _shown(self.path, self.config.rootpath)
        try:
            suite = load_agent_file(self.path, shown)
            agent = resolve_agent(suite, self.config, shown)
        except AgentConfigError as exc:
            raise self.CollectError(str(exc)) from None
        repeats = repeat_count(self.config)
        for case in suite.cases:
            for index in range(1, repeats + 1) if repeats > 1 else (None,):
                yield self._item(case, agent, index)

    def _item(self, case: AgentCase, agent: Agent, index: int | None) -> AgentCaseItem:
        name = case.name if index is None else f"{case.name}[{repeat_id(index)}]"
        item = AgentCaseItem.from_parent(self, name=name, callobj=case_function(case, agent))
        item.case = case
        item.repeat = index
        item.add_marker(getattr(pytest.mark, MARKER)(**case.marker_kwargs()))
        return item


class AgentCaseItem(pytest.Function):
    """One case of a case file, run as a test function that uses the ``qbench`` fixture."""

    case: AgentCase
    repeat: int | None = None

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line
        return self.path, None if line is None else line - 1, self.name


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def repeat_count(config: pytest.Config) -> int:
    """``--qbench-repeat`` (1 when not given)."""
    count = config.getoption("qbench_repeat", None)
    return int(count) if count else 1


# --- the agent ---------------------------------------------------------------------------------


def resolve_agent(suite: AgentSuite, config: pytest.Config, shown: str) -> Agent:
    """The callable named by the file's ``agent:``, else by ini ``qbench_agent``.

    The file's directory (and, for the ini's, the ini file's) is put on ``sys.path`` first, as
    pytest does for test modules, so an agent module beside the case file imports; what was put
    there is taken off when the run ends (`put_on_sys_path`).

    Raises:
        AgentFileError: no agent named, or it does not import, or is not callable.
    """
    spec, where = suite.agent, f"{shown}:{suite.agent_line}: agent"
    directories = [suite.path.parent]
    if spec is None:
        spec = str(config.getini("qbench_agent") or "").strip() or None
        where = f"{shown}: ini qbench_agent"
        directories.append(config.inipath.parent if config.inipath else config.rootpath)
    if spec is None:
        raise AgentFileError(
            f"{shown}: no agent to run the cases: add 'agent: module:function' to the file, "
            "or set ini qbench_agent = module:function"
        )
    put_on_sys_path(config, directories)
    return import_agent(spec, where)


_sys_path_key = pytest.StashKey[list[str]]()


def put_on_sys_path(config: pytest.Config, directories: list[Path]) -> None:
    """Put ``directories`` first on ``sys.path`` (those not there yet) for the rest of the run:
    the entries added are removed when ``config`` ends, so the process's ``sys.path`` is as it
    was before the run."""
    added = config.stash.get(_sys_path_key, None)
    if added is None:
        added = config.stash[_sys_path_key] = []
        config.add_cleanup(partial(_take_off_sys_path, added))
    for directory in map(str, directories):
        if directory not in sys.path:
            sys.path.insert(0, directory)
            added.append(directory)


def _take_off_sys_path(added: list[str]) -> None:
    for directory in added:
        with contextlib.suppress(ValueError):  # the run took it off itself
            sys.path.remove(directory)
    added.clear()


def import_agent(spec: str, where: str) -> Agent:
    """Import ``module:function`` (dots allowed on both sides)."""
    module_name, sep, attribute = spec.strip().partition(":")
    if not sep or not module_name or not attribute:
        raise AgentFileError(
            f"{where} must be 'module:function', given: {spec!r}; e.g. my_agent:answer"
        )
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise AgentFileError(
            f"{where} {spec!r}: cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise AgentFileError(f"{where} {spec!r}: {module_name} has no attribute {attribute}")
        target = getattr(target, part)
    if not callable(target):
        raise AgentFileError(f"{where} {spec!r} is not callable: {type(target).__name__}")
    agent: Agent = target
    return agent


def case_function(case: AgentCase, agent: Agent) -> Callable[[QBench], None]:
    """The test function of a case: it asks for the ``qbench`` fixture by its signature."""

    def qbench_case(qbench: QBench) -> None:
        __tracebackhide__ = True
        run_case(case, agent, qbench)

    qbench_case.__doc__ = None  # not the test's description
    return qbench_case


def run_case(case: AgentCase, agent: Agent, qbench: QBench) -> None:
    """Call the agent with the case's input (and files), and record what it returned."""
    __tracebackhide__ = True
    started = time.perf_counter()
    result = call_agent(agent, case)
    elapsed_ms = (time.perf_counter() - started) * 1000
    response, fields = agent_result(result)
    fields.setdefault("latency_ms", round(elapsed_ms, 3))
    try:
        qbench.record(response, input=case.input, **fields)
    except ValueError as exc:  # AgentConfigError
        message = str(exc).replace("qbench.record(...): ", "")
        raise AgentConfigError(f"the agent's result for case {case.name!r}: {message}") from None


def call_agent(agent: Agent, case: AgentCase) -> Any:
    """``agent(input, files)``, or ``agent(input)`` for an agent that takes one argument."""
    __tracebackhide__ = True
    if call_signature_accepts_files(agent):
        result = agent(case.input, case.read_files())
    elif case.files:
        raise AgentConfigError(
            f"case {case.name!r} has files, but the agent takes only the input; "
            "give it a second parameter: def agent(input, files)"
        )
    else:
        result = agent(case.input)
    if inspect.isawaitable(result):
        result = asyncio.run(_wait(result))
    return result


async def _wait(awaitable: Any) -> Any:
    return await awaitable


def agent_result(result: Any) -> tuple[Any, dict[str, Any]]:
    """The response and the other ``qbench.record`` keywords from what an agent returned."""
    if result is None:
        raise AgentConfigError(
            "the agent returned None; return the response (e.g. a str), or a dict with "
            "'response' (and tool_calls, latency_ms, tokens, cost)"
        )
    if isinstance(result, Mapping):
        if "response" not in result:
            raise AgentConfigError(
                f"the agent returned a mapping without 'response', keys: {sorted(result)!r}; "
                "add the response under 'response'"
            )
        taken = [key for key in CASE_FIELDS if key in result]
        if taken:
            raise AgentConfigError(
                f"the agent returned {taken[0]!r}, which comes from the case file; drop it"
            )
        fields = {str(k): v for k, v in result.items() if k != "response"}
        return result["response"], fields
    if hasattr(result, "response") and not isinstance(result, (str, bytes)):
        fields = {name: getattr(result, name) for name in RESULT_FIELDS if hasattr(result, name)}
        return result.response, {k: v for k, v in fields.items() if v is not None}
    return result, {}


__all__ = [
    "AgentCaseFile",
    "AgentCaseItem",
    "agent_result",
    "call_agent",
    "import_agent",
    "is_case_file",
    "resolve_agent",
]
