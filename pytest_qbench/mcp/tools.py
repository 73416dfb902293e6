"""``QBenchTools``: every MCP tool as a method, for one project, without the SDK.

Each tool's logic lives in its own module (``testrun``, ``failure``, ``output``,
``run_history``, ``search``, ``ingest``, ``build``, ``generation``, ``health``); this class
gives them the run lifecycle they share (``service.RunService``) and one object to call them on
(``server`` and the tests do).
"""

from __future__ import annotations

from pytest_qbench.mcp import build
from pytest_qbench.mcp import failure
from pytest_qbench.mcp import generation
from pytest_qbench.mcp import health
from pytest_qbench.mcp import ingest
from pytest_qbench.mcp import output
from pytest_qbench.mcp import run_history
from pytest_qbench.mcp import search
from pytest_qbench.mcp import testrun
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.rounds import HeldGenerations
from pytest_qbench.mcp.service import RunService


class QBenchTools(RunService):
    """Every tool of the MCP server, for one project."""

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config)
        self.held = HeldGenerations(self)
        """Generations waiting for their client's answers (``InputRequiredResult`` rounds)."""

    search_tests = search.search_tests
    get_test_by_key = search.get_test_by_key
    find_similar_tests = search.find_similar_tests
    get_test_failure = failure.get_test_failure
    get_run_output = output.get_run_output
    list_runs = run_history.list_runs
    flaky_tests = run_history.flaky_tests
    check_health = health.check_health
    run_build_workflow = build.run_build_workflow
    start_generation = generation.start_generation
    finish_generation = generation.finish_generation
    ingest_file = ingest.ingest_file
    start_collection = ingest.start_collection
    finish_collection = ingest.finish_collection
    start_run = testrun.start_run
    finish_run = testrun.finish_run
