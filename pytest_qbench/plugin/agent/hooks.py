"""Wiring agent evaluation into pytest: which tests use it, and the hooks that gate them.

Light on purpose (pytest and the standard library only): the plugin imports it at the end of
collection. `AgentHooks` is registered only when a collected test uses the ``qbench`` fixture or
the ``@pytest.mark.qbench`` marker (or when the fixture is first set up), so a suite without
agent tests runs no per-test hook of it. The evaluation package is imported by the fixture.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pytest

from pytest_qbench.core.repeat import REPEAT_FIXTURE
from pytest_qbench.core.repeat import repeat_id
from pytest_qbench.plugin import registered


if TYPE_CHECKING:
    from pytest_qbench.plugin.agent.state import AgentState

PLUGIN_NAME = "qbench-agent"
MARKER = "qbench"
FIXTURE = "qbench"

agent_state_key: pytest.StashKey[AgentState] = pytest.StashKey()
"""Where the ``qbench`` fixture keeps the test's recorded sample and metric results."""
thresholds_key: pytest.StashKey[dict[str, float]] = pytest.StashKey()
"""ini ``qbench_thresholds``, parsed once per process."""
CASE_FILE_SUFFIXES = (".yaml", ".yml")
METRIC_FAILURE_MODULE = "pytest_qbench.plugin.agent.state"


def is_agent_function(metafunc: pytest.Metafunc) -> bool:
    """Whether a test function uses the ``qbench`` fixture or carries the ``qbench`` marker."""
    return FIXTURE in metafunc.fixturenames or (
        metafunc.definition.get_closest_marker(MARKER) is not None
    )


def parametrize_repeats(metafunc: pytest.Metafunc, count: int) -> None:
    """Run an agent test ``count`` times: ids ``[repeat-1]``... after the test's own."""
    if REPEAT_FIXTURE not in metafunc.fixturenames:
        metafunc.fixturenames.append(REPEAT_FIXTURE)
    metafunc.parametrize(
        REPEAT_FIXTURE,
        range(1, count + 1),
        indirect=True,
        ids=[repeat_id(i) for i in range(1, count + 1)],
    )


class Repeats:
    """``--qbench-repeat N``: each agent test runs N times (ids after the test's own).

    Registered only when N is above 1 (`pytest_qbench.plugin`'s ``pytest_configure``):
    ``pytest_generate_tests`` runs for every test function a run collects, so a run without
    repeats has no implementation of it to call (issue 28)."""

    def __init__(self, count: int) -> None:
        self.count = count

    # trylast: after pytest's own implementation applied the parametrize marks, so the repeat's
    # index ends the id (test[a-1], not test[1-a]): ids join in the order parametrize is called
    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if is_agent_function(metafunc):
            parametrize_repeats(metafunc, self.count)


def uses_agent_evaluation(items: Iterable[pytest.Item]) -> bool:
    """Whether any item uses the ``qbench`` fixture or carries the ``qbench`` marker (on itself,
    its class or its module)."""
    # Runs for every session, qbench asked for or not: plain loops, each collector looked at once.
    marked: dict[int, bool] = {}  # by collector: the marker is on it or above it
    last_parent = None
    for item in items:
        if FIXTURE in getattr(item, "fixturenames", ()):
            return True
        for mark in item.own_markers:
            if mark.name == MARKER:
                return True
        if item.parent is not last_parent:
            last_parent = item.parent
            if _collector_marked(last_parent, marked):
                return True
    return False


def _collector_marked(node: pytest.Item | pytest.Collector | None, memo: dict[int, bool]) -> bool:
    if node is None:
        return False
    found = memo.get(id(node))
    if found is None:
        own = any(mark.name == MARKER for mark in node.own_markers)
        found = memo[id(node)] = own or _collector_marked(node.parent, memo)
    return found


def is_metric_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a `MetricFailure` (by name: a test run in-process may hold a second
    copy of its module)."""
    return any(
        cls.__name__ == "MetricFailure" and cls.__module__ == METRIC_FAILURE_MODULE
        for cls in type(exc).__mro__
    )


def register(config: pytest.Config) -> None:
    """Register `AgentHooks` once in this process."""
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        registered.register(config, AgentHooks(), PLUGIN_NAME)


class AgentHooks:
    """Refuses the marker on tests without the fixture; evaluates the marker's metrics and
    applies the fail rules when the test function returns."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        __tracebackhide__ = True
        if FIXTURE not in getattr(item, "fixturenames", ()) and item.get_closest_marker(MARKER):
            from pytest_qbench.evaluation.config import AgentConfigError

            raise AgentConfigError(
                f"@pytest.mark.qbench on {item.nodeid}: the test does not use the qbench "
                "fixture, so it records nothing to evaluate; add a qbench argument and call "
                "qbench.record(response, ...)"
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        result = yield  # an exception (a failed assert, a skip) propagates: nothing to gate
        state = item.stash.get(agent_state_key, None)
        if state is not None:
            __tracebackhide__ = True
            state.finish()
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        excinfo = call.excinfo
        if excinfo is None or item.config.getoption("fulltrace", False):
            return report
        if is_metric_failure(excinfo.value):
            from pytest_qbench.plugin.agent.failure import rewrite_failure

            with contextlib.suppress(Exception):  # else pytest's own repr stays
                rewrite_failure(report, item, item.stash.get(agent_state_key, None))
        return report
