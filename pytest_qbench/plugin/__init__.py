"""The ``qbench`` pytest plugin (entry point ``pytest11: qbench``): options and wiring only.

Installed but not asked for, this module registers its options, its markers and the ``qbench``
fixtures, and returns: nothing else is imported until collection ends, when a small module looks
for tests that use agent evaluation, and no per-test hook runs unless one does. Agent evaluation
(the fixture and the marker) works whether or not reports are asked for.

The rest of the package, lowest first (each may import only those below it): ``options/``
(declared, parsed, checked into ``Settings``), ``hookspecs`` and ``registered`` (the plugins
qbench registered, all unregistered at ``pytest_unconfigure``); ``collectors`` (pytest's reports
into records); ``agent/`` (the ``qbench`` fixture, marker and case files); ``session``
(`QBenchSession`, the run's state); ``verdicts`` (the gates' verdicts and the exit status they
set); ``gates``, ``coverage_run``, ``collect_dump`` and ``static_checks`` (plugins registered
beside the session). ``docs/architecture.md`` has the whole picture.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

# the os functions and the clock as imported, before a conftest can replace them
from pytest_qbench.core import clock  # noqa: F401
from pytest_qbench.core import real_os  # noqa: F401
from pytest_qbench.plugin import internal_error
from pytest_qbench.plugin import registered
from pytest_qbench.plugin import unstarted
from pytest_qbench.plugin.agent import hooks as agent_hooks
from pytest_qbench.plugin.options.agent import refuse_unreachable
from pytest_qbench.plugin.options.declare import add_options
from pytest_qbench.plugin.options.declare import coverage_asked
from pytest_qbench.plugin.options.declare import is_enabled
from pytest_qbench.plugin.options.shards import read_shard_settings
from pytest_qbench.plugin.options.values import OptionReader
from pytest_qbench.plugin.options.values import parse_thresholds


if TYPE_CHECKING:
    from pytest_qbench.evaluation import Judge
    from pytest_qbench.plugin.agent.fixture import QBench
    from pytest_qbench.plugin.options.settings import Settings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.verdicts import Verdicts


SESSION_PLUGIN_NAME = "qbench-session"
SHARD_PLUGIN_NAME = "qbench-shard"
REPEAT_PLUGIN_NAME = "qbench-repeat"
WORKER_FLAG = "qbench"
ATTACH_FLAG = "qbench_attach"
COVERAGE_FLAG = "qbench_cov"
NEW_TESTS_FLAG = "qbench_new_tests"


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_qbench.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Start coverage before conftest files import the code under test (``--qbench-cov``)."""
    if coverage_asked(early_config):
        from pytest_qbench.plugin.coverage_run import start_early

        start_early(early_config)


# a second implementation of the hook (the one above starts coverage): a wrapper, so that
# the initial conftests are loaded when it goes on
@pytest.hookimpl(wrapper=True, specname="pytest_load_initial_conftests")
def pytest_load_initial_conftests_then(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, object, object]:
    """A run pytest will end before configuring it (a conftest it cannot import, arguments it
    refuses) gets its not-started report now (`unstarted`)."""
    try:
        result = yield
    except Exception as exc:
        unstarted.conftest_failed(early_config, exc)
        raise
    unstarted.foresee_refusal(early_config, parser, args)
    unstarted.watch(early_config)
    return result


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "qbench_case(key, title, priority, tags, platforms, folder, steps): test-case metadata "
        "recorded in qbench reports",
    )
    config.addinivalue_line(
        "markers",
        "qbench(metrics, expected_tools, ground_truth): agent-evaluation metrics, evaluated on "
        "what the test records with the qbench fixture when it returns",
    )
    thresholds = parse_thresholds(config.getini("qbench_thresholds"))  # refused before any test
    refuse_unreachable(thresholds, "ini qbench_thresholds")
    repeat = config.getoption("qbench_repeat", None)
    if repeat and repeat > 1:  # a hook of every test function at collection: only when asked
        registered.register(config, agent_hooks.Repeats(repeat), REPEAT_PLUGIN_NAME)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        _configure_worker(config, workerinput)
        return
    if not is_enabled(config):
        return
    setup_only = _setup_only_option(config)
    if setup_only:  # no test runs: a report would call every test passed
        sys.stderr.write(f"qbench: {setup_only} runs no test: no report written\n")
        return
    from pytest_qbench.plugin import verdicts
    from pytest_qbench.plugin.options.settings import read_settings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.session import qbench_session_key

    settings = read_settings(config)  # a UsageError stops pytest, as it should
    shard = read_shard_settings(OptionReader(config))
    try:
        session = QBenchSession(config, settings)
    except Exception as exc:  # a qbench bug must not stop the user's run
        sys.stderr.write(f"qbench: internal error at start, no reports for this run: {exc!r}\n")
        verdicts.fail_at_start(config, settings, exc)  # nor drop its gates
        return
    config.stash[qbench_session_key] = session
    registered.register(config, session, SESSION_PLUGIN_NAME)
    internal_error.register(config, session)
    expected = verdicts.configured_gates(settings)
    judged = verdicts.register(
        config,
        verdicts.Verdicts(session.gates, session.note_internal_error, session.redact, expected),
    )
    _register_gates(config, session, settings, judged)
    if settings.quarantine != "off":
        from pytest_qbench.plugin import quarantine

        quarantine.register(config, session, settings, judged)
    if settings.new_tests_repeat > 1:
        from pytest_qbench.plugin import new_tests

        new_tests.register(config, session, settings)
    if shard.queue:
        from pytest_qbench.plugin.queue import QueuePlugin

        registered.register(config, QueuePlugin(session, shard), SHARD_PLUGIN_NAME)
    elif shard.count:
        from pytest_qbench.plugin.shards import ShardPlugin

        registered.register(config, ShardPlugin(session, shard), SHARD_PLUGIN_NAME)


def _setup_only_option(config: pytest.Config) -> str | None:
    """``--setup-plan`` or ``--setup-only`` when the run has one (pytest then sets up each
    test's fixtures, or only lists them, and runs no test), else ``None``."""
    if getattr(config.option, "setupplan", False):
        return "--setup-plan"
    return "--setup-only" if getattr(config.option, "setuponly", False) else None


def _register_gates(
    config: pytest.Config, session: QBenchSession, settings: Settings, judged: Verdicts
) -> None:
    """The plugins beside the session; one that cannot start fails the gates it holds."""
    if settings.coverage.active:
        from pytest_qbench.plugin import coverage_run

        with judged.setting_up(settings, "coverage"):
            coverage_run.register(config, session, settings.coverage, judged)
    if settings.gates.active:
        from pytest_qbench.plugin import gates

        with judged.setting_up(settings, "metric_min", "baseline"):
            gates.register(config, session, settings.gates, judged)
    if settings.checks.active:
        from pytest_qbench.plugin import static_checks

        with judged.setting_up(settings, "max_errors"):
            static_checks.register(config, session, settings.checks, judged)


def _configure_worker(config: pytest.Config, workerinput: dict[str, Any]) -> None:
    if COVERAGE_FLAG in workerinput or coverage_asked(config):
        from pytest_qbench.plugin.coverage_run import configure_worker

        configure_worker(config, workerinput.get(COVERAGE_FLAG))
    limits = workerinput.get(WORKER_FLAG)
    if not limits:
        return
    from pytest_qbench.core.limits import Limits
    from pytest_qbench.plugin.session import QBenchWorker

    worker = QBenchWorker(config, Limits(**limits), os.environ.get("PYTEST_XDIST_WORKER"))
    attach = workerinput.get(ATTACH_FLAG)
    if attach:
        from pytest_qbench.core.limits import AttachLimits

        worker.enable_attachments(Path(attach["run_dir"]), AttachLimits(**attach["limits"]))
    registered.register(config, worker, SESSION_PLUGIN_NAME)
    repeat = workerinput.get(NEW_TESTS_FLAG)
    if repeat:
        from pytest_qbench.plugin import new_tests

        workers = int(workerinput.get("workercount", 1))
        new_tests.configure_worker(config, repeat, workers, worker.redact)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker that qbench is on, and with which limits."""
    from pytest_qbench.plugin.session import qbench_session_key

    session = node.config.stash.get(qbench_session_key, None)
    if session is not None:
        limits = session.limits
        node.workerinput[WORKER_FLAG] = {
            "max_output": limits.max_output,
            "max_trace": limits.max_trace,
            "max_message": limits.max_message,
        }
        if session.settings.new_tests_repeat > 1:
            from pytest_qbench.plugin.new_tests import worker_input

            node.workerinput[NEW_TESTS_FLAG] = worker_input(session.settings)
        if session.attacher is not None:  # the run directory is claimed before nodes start
            caps = session.attacher.limits
            node.workerinput[ATTACH_FLAG] = {
                "run_dir": str(session.attacher.run_dir),
                "limits": {"max_size": caps.max_size, "max_total": caps.max_total},
            }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object | None) -> None:
    """xdist: a worker that went down with an error (it crashed) is noted for the report."""
    from pytest_qbench.plugin.session import qbench_session_key

    session = node.config.stash.get(qbench_session_key, None)
    if session is not None and error is not None:
        session.crashed_workers.append(f"{node.gateway.id}: {error}")


@pytest.hookimpl
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect agent case files (ini ``qbench_agent_files``: ``agent.yaml``, ``*.agent.yaml``...)."""
    if file_path.suffix not in agent_hooks.CASE_FILE_SUFFIXES:
        return None
    from pytest_qbench.plugin.agent import items as agent_items

    if not agent_items.is_case_file(file_path, parent.config):
        return None
    case_file: pytest.Collector = agent_items.AgentCaseFile.from_parent(parent, path=file_path)
    return case_file


# trylast: the items left once -k, -m and other plugins deselected theirs, so an agent test
# that does not run registers nothing
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Register the agent-evaluation hooks when a collected test uses the fixture or marker."""
    if agent_hooks.uses_agent_evaluation(items):
        agent_hooks.register(config)


@pytest.fixture
def qbench_judge() -> Judge | None:
    """The judge of judge metrics: none by default, so they are skipped and nothing reaches the
    network. Override it in a conftest.py, e.g. to return a ``ReplayJudge``."""
    return None


@pytest.fixture
def qbench(
    request: pytest.FixtureRequest, qbench_judge: Judge | None
) -> Generator[QBench, None, None]:
    """Record what an agent did, score it, and check the scores (see ``QBench``)."""
    __tracebackhide__ = True
    from pytest_qbench.plugin.agent import fixture as agent

    yield agent.start(request, qbench_judge)
    agent.stop(request)


@pytest.fixture
def qbench_repeat(request: pytest.FixtureRequest) -> int:
    """Which run of the test this is under ``--qbench-repeat`` (1 to N; 1 without it)."""
    return int(getattr(request, "param", 1))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    unstarted.mark_started(session.config)


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    """Unregister every plugin qbench registered (the session, coverage, gates, agent hooks);
    a run whose session never started gets its not-started report (`unstarted`)."""
    unstarted.settle(config)
    registered.unregister_all(config)
