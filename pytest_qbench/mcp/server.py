"""The MCP server (``qbench-mcp``, ``qbench mcp``): the one module that imports the MCP SDK.

Each tool is one function decorated with ``@tool``: its first parameter is the
``QBenchTools``, the others are its arguments (the SDK validates them against the signature),
and it returns its result model (its return annotation, the tool's output schema: ``OUTPUTS``).
The decorator does the rest for every tool: the result goes out as structured content with a
compact text next to it, and a ``QBenchError`` becomes a tool error carrying its message. ``run_test_workflow`` and ``ingest_tests`` watch
their pytest child from the event loop: progress notifications while tests run, and on
cancellation the child's process group is killed before the cancellation goes on.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
import traceback
import warnings
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from functools import partial
from types import MappingProxyType
from types import UnionType
from typing import Annotated
from typing import Any
from typing import Literal
from typing import get_args
from typing import get_type_hints

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp.types import CallToolResult
from mcp.types import ClientCapabilities
from mcp.types import CreateMessageRequest
from mcp.types import CreateMessageRequestParams
from mcp.types import CreateMessageResult
from mcp.types import InputRequest
from mcp.types import InputRequiredResult
from mcp.types import InputResponses
from mcp.types import SamplingCapability
from mcp.types import SamplingMessage
from mcp.types import TextContent
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import BaseModel
from pydantic import Field
from pydantic import ValidationError

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.text import readable
from pytest_qbench.mcp import build
from pytest_qbench.mcp import failure
from pytest_qbench.mcp import generation
from pytest_qbench.mcp import health
from pytest_qbench.mcp import ingest
from pytest_qbench.mcp import other_runners
from pytest_qbench.mcp import output
from pytest_qbench.mcp import run_history
from pytest_qbench.mcp import search
from pytest_qbench.mcp import testrun
from pytest_qbench.mcp import text as texts
from pytest_qbench.mcp.budget import bounded_content
from pytest_qbench.mcp.budget import readable_content
from pytest_qbench.mcp.build import BuildResult
from pytest_qbench.mcp.calllog import CallLog
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.failure import FailureDetail
from pytest_qbench.mcp.generation import GenerateWorkflowResult
from pytest_qbench.mcp.generation import GenerationStrategy
from pytest_qbench.mcp.generation import TestType
from pytest_qbench.mcp.health import Health
from pytest_qbench.mcp.ingest import IngestReport
from pytest_qbench.mcp.other_runners import TestType as RunnerType
from pytest_qbench.mcp.output import RunOutputPage
from pytest_qbench.mcp.paths import listed
from pytest_qbench.mcp.process import POLL_SECONDS
from pytest_qbench.mcp.process import PytestProcess
from pytest_qbench.mcp.rounds import HeldGenerations
from pytest_qbench.mcp.run_history import FlakyList
from pytest_qbench.mcp.run_history import RunList
from pytest_qbench.mcp.schemas import compact_input
from pytest_qbench.mcp.schemas import compact_schema
from pytest_qbench.mcp.schemas import mistyped_arguments
from pytest_qbench.mcp.schemas import unknown_arguments
from pytest_qbench.mcp.search import SearchResult
from pytest_qbench.mcp.search import SimilarTests
from pytest_qbench.mcp.search import TestCaseDetail
from pytest_qbench.mcp.testrun import RunResult
from pytest_qbench.mcp.tools import QBenchTools


INSTRUCTIONS = """\
Runs this project's pytest suite and reads its results without raw output. Call \
run_test_workflow to run tests (it returns failures only), get_test_failure for one failure in \
full, get_run_output to page through pytest's output. search_tests, get_test_by_key and \
find_similar_tests search the test catalog (build it with ingest_tests). list_runs and \
flaky_tests read the run history. run_build_workflow runs the linter, the type checkers and \
the build check and returns their errors only; get_run_output pages a checker's raw log. \
generate_tests_workflow writes unit tests for a module's uncovered functions (Hypothesis, \
templates, then your model through sampling), keeps those that pass and add coverage, and lists \
what needs a person."""

Paths = Annotated[
    list[str] | str | None,
    Field(
        description="Files, directories or node ids (path::Class::test) in the project; "
        "default: testpaths"
    ),
]
Texts = Annotated[list[str] | None, Field(description="Any of these (case-insensitive)")]
RunId = Annotated[
    str,
    Field(
        description="A run id or unique prefix (list_runs), 'last' or 'last~N' (N runs before it)",
        max_length=128,
    ),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, open_world_hint=False)

SCOPES = {
    "run_test_workflow": "it runs pytest, vitest and jest (test_type)",
    "run_build_workflow": "it runs the registered checkers (qbench check --list)",
    "generate_tests_workflow": "it generates Python unit tests only",
}
"""What a tool does and does not do, told with a refused argument (a ``test_type`` or a
``target`` the tool does not have)."""
ROUNDS_PROTOCOL = "2026-07-28"
"""The protocol from which the server asks the client through ``InputRequiredResult`` rounds."""
TIMED = ("run_test_workflow", "ingest_tests", "run_build_workflow", "generate_tests_workflow")
"""The tools that stop what they started at a timeout."""


class QBenchServer(MCPServer[Any]):
    """The SDK's server, listing each tool with short schemas: the output schema of its result
    model (``schemas.compact_schema``; results are still validated against the model itself),
    the input schema without titles."""

    published: Mapping[str, dict[str, Any]] = MappingProxyType({})
    """Each tool's short output schema (``build_server`` sets it from ``OUTPUTS``)."""
    call_log: CallLog | None = None
    """Where each tool call is logged (``build_server`` sets it)."""
    notes: Mapping[str, str] = MappingProxyType({})
    """A sentence added to a tool's description (``build_server`` sets the timeouts')."""
    held: HeldGenerations | None = None
    """The generations waiting for their client (``build_server`` sets it; stopped at exit)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call the tool, then log the call (failed and cancelled ones too) in the history
        index, off the event loop and shielded from cancellation."""
        started, called_at = time.monotonic(), datetime.now(timezone.utc)
        try:
            await self._check_arguments(name, arguments)
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            refused = with_scope(name, exc)
            size = len(str(refused).encode())
            await self._log(name, arguments, called_at, started, unwrapped(refused), size)
            raise refused from exc.__cause__
        except BaseException as exc:
            size = len(str(exc).encode())
            await self._log(name, arguments, called_at, started, unwrapped(exc), size)
            raise
        content = result.structured_content if isinstance(result, CallToolResult) else None
        size = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
        await self._log(name, arguments, called_at, started, None, size, content)
        return result

    async def _check_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Refuse an argument the tool does not list (the SDK would ignore it), and one of
        another JSON type (the SDK would read ``"yes"`` as true, ``true`` as 1 second)."""
        for tool in await super().list_tools():
            if tool.name == name:
                schema, scope = tool.input_schema, SCOPES.get(name, "")
                refusal = unknown_arguments(name, schema, arguments, scope)
                refusal = refusal or mistyped_arguments(name, schema, arguments)
                if refusal:
                    raise ToolError(refusal)

    async def _log(
        self,
        name: str,
        arguments: dict[str, Any],
        called_at: datetime,
        started: float,
        error: BaseException | None,
        size: int,
        content: dict[str, Any] | None = None,
    ) -> None:
        log = self.call_log
        if log is None:
            return
        took = time.monotonic() - started
        record = partial(
            log.record,
            name,
            arguments,
            called_at,
            took,
            error=error,
            response_bytes=size,
            content=content,
        )
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(record)

    async def list_tools(self) -> list[MCPTool]:
        """The tools, their output schemas short, their descriptions without the docstrings'
        indentation."""
        return [
            tool.model_copy(
                update={
                    "description": described(tool.description, self.notes.get(tool.name)),
                    "input_schema": compact_input(tool.input_schema),
                    "output_schema": self.published.get(tool.name, tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]


def with_scope(name: str, exc: ToolError) -> ToolError:
    """A refused value (``check_type: "tsc"``) told with what the tool does; a crash told with
    its exception (its traceback stays in the server's log); other errors as they are."""
    if isinstance(exc, UnexpectedToolError):  # the SDK's text names no exception
        crash = unwrapped(exc)
        what = " ".join("".join(traceback.format_exception_only(type(crash), crash)).split())
        crashed = UnexpectedToolError(
            f"{exc}: internal error (a bug in qbench, please report it): {what}"
        )
        crashed.__cause__ = exc.__cause__
        return crashed
    scope = SCOPES.get(name)
    if scope and isinstance(exc.__cause__, ValidationError):
        told = ToolError(f"{exc}\n{name}: {scope}")
        told.__cause__ = exc.__cause__
        return told
    return exc


def described(description: str | None, note: str | None) -> str:
    """A tool's docstring as clients show it: dedented (``inspect.cleandoc``), ``note`` added."""
    text = inspect.cleandoc(description or "")
    return f"{text} {note}" if note else text


def timeout_note(config: ServerConfig, name: str) -> str:
    """The default timeout, as a tool's description states it."""
    if name == "ingest_tests":
        return f"Default timeout: {config.default_timeout:g}s."
    return f"Default timeout: {config.default_timeout:g}s (max {config.max_timeout:g}s)."


def unwrapped(exc: BaseException) -> BaseException:
    """The exception a tool call failed with, out of the SDK's ``ToolError`` wrappers (a
    ``ToolFailure``, the arguments' ``ValidationError``, an unexpected error)."""
    while isinstance(exc, ToolError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def respond(model: BaseModel, summary: str, budget: int) -> CallToolResult:
    """The tool result: ``summary`` as text (at most ``budget`` bytes), ``model`` as structured
    content (every string of it bounded, should it be over ``budget`` bytes); in both, ANSI
    escapes and control characters a test printed are left out or written as ``\\xNN``."""
    content = readable_content(model.model_dump(mode="json"))
    return CallToolResult(
        content=[TextContent(type="text", text=texts.bound_bytes(readable(summary), budget))],
        structured_content=bounded_content(content, budget),
    )


@contextmanager
def tool_errors(budget: int) -> Iterator[None]:
    """A qbench error becomes a tool error with its message (the model reads it and acts), at
    most ``budget`` bytes of it."""
    try:
        yield
    except QBenchError as exc:
        raise ToolError(texts.bound_bytes(str(exc), budget)) from exc


ToolFunction = Callable[..., Any]
"""A tool's function: its first parameter is the ``QBenchTools``, the others are the tool's
arguments (and the SDK's ``Context``), its return annotation is its result model."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as ``@tool`` registered it: its function, its annotations, its text."""

    function: ToolFunction
    annotations: ToolAnnotations
    text: Callable[[Any, int], str]

    @property
    def name(self) -> str:
        """The tool's name: its function's."""
        return self.function.__name__

    @property
    def model(self) -> type[BaseModel]:
        """The tool's result model: its function's return annotation."""
        model = get_type_hints(self.function)["return"]
        data = [arm for arm in get_args(model) if arm is not InputRequiredResult]
        if isinstance(model, UnionType) and len(data) == 1:  # the rounds of issue 23
            model = data[0]
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"tool {self.name} must return a pydantic model, not {model!r}")
        return model

    def bound(self, tools: QBenchTools) -> ToolFunction:
        """The function the SDK calls: ``tools`` given, a qbench error turned into a tool error
        (``tool_errors``), the result returned as structured content and text (``respond``).
        Its signature is the tool's arguments and ``Annotated[CallToolResult, model]``."""
        function, render, budget = self.function, self.text, tools.config.budget
        signature = inspect.signature(function, eval_str=True)
        parameters = list(signature.parameters.values())[1:]
        returns = Annotated[CallToolResult, self.model] | InputRequiredResult

        async def call_async(*args: Any, **kwargs: Any) -> CallToolResult | InputRequiredResult:
            with tool_errors(budget):
                result = await function(tools, *args, **kwargs)
            if isinstance(result, InputRequiredResult):
                return result
            return respond(result, render(result, budget), budget)

        def call_sync(*args: Any, **kwargs: Any) -> CallToolResult:
            with tool_errors(budget):
                result = function(tools, *args, **kwargs)
            return respond(result, render(result, budget), budget)

        # a sync tool stays sync: the SDK runs it in a worker thread, off the event loop
        call: ToolFunction = call_async if inspect.iscoroutinefunction(function) else call_sync
        call.__name__ = call.__qualname__ = self.name
        call.__doc__ = function.__doc__
        call.__module__ = function.__module__
        setattr(  # noqa: B010 (a function has no declared __signature__)
            call,
            "__signature__",
            signature.replace(parameters=parameters, return_annotation=returns),
        )
        call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
        return call


REGISTERED: list[ToolSpec] = []
"""Every tool, in the order it is listed."""


def tool(
    annotations: ToolAnnotations, text: Callable[[Any, int], str]
) -> Callable[[ToolFunction], ToolFunction]:
    """Register a tool: ``text`` renders its result (at most the budget's bytes) next to the
    structured content; the SDK reads the arguments' schema from the function's signature."""

    def register(function: ToolFunction) -> ToolFunction:
        REGISTERED.append(ToolSpec(function, annotations, text))
        return function

    return register


async def supervise(
    tools: QBenchTools,
    process: PytestProcess,
    ctx: Context,
    until: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """Wait for pytest, reporting the tests finished, until it ends or ``until`` says so; on
    cancellation (or any error) kill its process group first, shielded, then let the
    cancellation go on."""
    sent = -1
    try:
        while True:
            running = await anyio.to_thread.run_sync(tools.step, process)
            progress = process.progress()  # once more after the end: the last tests count too
            if progress.done > sent:
                await ctx.report_progress(progress.done, progress.total, progress.message)
                sent = progress.done
            if not running or (until is not None and await until()):
                break
            await anyio.sleep(POLL_SECONDS)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(tools.abandon, process)
        raise


@tool(WRITES, testrun.run_text)
async def run_test_workflow(
    tools: QBenchTools,
    ctx: Context,
    test_path: Paths = None,
    keyword: Annotated[
        str | None, Field(description="pytest -k expression, e.g. 'login and not slow'")
    ] = None,
    markers: Annotated[
        str | None, Field(description="pytest -m expression, e.g. 'not integration'")
    ] = None,
    coverage: Annotated[bool | None, Field(description="Measure coverage")] = None,
    coverage_threshold: Annotated[
        float | None,
        Field(ge=0, le=100, description="Fail the run below this coverage percentage"),
    ] = None,
    coverage_source: Annotated[
        list[str] | None,
        Field(description="Directories or packages to measure (default: the project's)"),
    ] = None,
    fail_fast: Annotated[bool, Field(description="Stop at the first failure (-x)")] = False,
    verbose: Annotated[
        bool, Field(description="Verbose pytest output (-v) and longer traces")
    ] = False,
    max_failures: Annotated[
        int, Field(ge=1, le=100, description="Failures listed in full; the rest are counted")
    ] = 10,
    timeout_seconds: Annotated[
        float | None, Field(gt=0, description="Stop the run after this long (capped)")
    ] = None,
    test_type: Annotated[RunnerType, Field(description="all: each that applies")] = "all",
) -> RunResult:
    """Run the project's tests (pytest, vitest, jest) and return failures only: summary counts,
    each failure (test, file, line, error type, message, end of the trace), collection
    errors, coverage and next steps. Never passing tests, never raw output (get_run_output pages
    it). One run at a time; stopped and marked partial at the timeout (once all tests have
    results, the session end gets a grace period)."""
    request = RunRequest(
        test_path=listed(test_path, "test_path"),
        keyword=keyword,
        markers=markers,
        coverage=coverage,
        coverage_threshold=coverage_threshold,
        coverage_source=listed(coverage_source, "coverage_source"),
        fail_fast=fail_fast,
        verbose=verbose,
        max_failures=max_failures,
        timeout_seconds=timeout_seconds,
    )
    runners = other_runners.choose_runners(tools, test_type)
    others = [name for name in runners if name != "pytest"]
    whole = test_type in (None, "all")
    if "pytest" not in runners:
        return await without_pytest(tools, request, runners, whole)
    process = tools.start_run(request)
    deadline = time.monotonic() + process.plan.timeout
    await supervise(tools, process, ctx)
    stop = threading.Event()
    paths = list(request.test_path)
    extend = partial(other_runners.add_other_runners, others, paths, stop, deadline, whole=whole)
    finish = partial(tools.finish_run, process, extend if others else None)
    try:  # a cancellation while vitest or jest runs stops them (their trees killed)
        return await anyio.to_thread.run_sync(finish, abandon_on_cancel=bool(others))
    except BaseException:
        stop.set()
        raise


async def without_pytest(
    tools: QBenchTools, request: RunRequest, runners: list[str], whole: bool
) -> RunResult:
    """vitest and/or jest alone; a cancellation stops them (their process trees killed)."""
    stop = threading.Event()
    run = partial(other_runners.run_without_pytest, tools, request, runners, stop, whole)
    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except BaseException:
        stop.set()
        raise


@tool(READ_ONLY, failure.failure_text)
def get_test_failure(
    tools: QBenchTools,
    run_id: RunId,
    test: Annotated[str, Field(description="Node id of the failed test (or a unique part)")],
) -> FailureDetail:
    """One failed test of a run in full (bounded): message, trace (the test's own frame and
    the end), captured stdout/stderr/log, history."""
    return tools.get_test_failure(run_id, test)


@tool(READ_ONLY, output.output_text)
def get_run_output(
    tools: QBenchTools,
    run_id: RunId,
    stream: Annotated[
        str,
        Field(
            description="stdout, stderr or markdown; of a check run: a checker, e.g. ruff.lint",
            max_length=100,
        ),
    ] = "stdout",
    offset: Annotated[int, Field(ge=0, description="First line (0-based)")] = 0,
    limit: Annotated[int, Field(ge=1, le=1000, description="Lines in the page")] = 200,
) -> RunOutputPage:
    """A page of a run's raw output, with the run's metadata (command, exit status)."""
    return tools.get_run_output(run_id, stream, offset, limit)


@tool(READ_ONLY, run_history.runs_text)
def list_runs(
    tools: QBenchTools,
    limit: Annotated[int, Field(ge=1, le=100, description="How many runs")] = 10,
) -> RunList:
    """The most recent runs, newest first: id, start, exit status, counts."""
    return tools.list_runs(limit)


@tool(READ_ONLY, run_history.flaky_text)
def flaky_tests(
    tools: QBenchTools,
    limit: Annotated[int, Field(ge=1, le=100, description="How many tests")] = 10,
    runs: Annotated[int, Field(ge=1, le=1000, description="Recent runs looked at")] = 30,
) -> FlakyList:
    """Flaky, then broken tests; quarantined ones marked."""
    return tools.flaky_tests(limit, runs)


@tool(READ_ONLY, search.search_text)
def search_tests(
    tools: QBenchTools,
    query: Annotated[str, Field(description="Words to look for", max_length=1000)] = "",
    tags: Texts = None,
    priority: Texts = None,
    markers: Texts = None,
    platforms: Texts = None,
    path: Annotated[
        str | None, Field(description="Glob or prefix of the test file or folder")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="Results in the page")] = 10,
    cursor: Annotated[
        str | None, Field(description="next_cursor of the previous page", max_length=200)
    ] = None,
    expand: Annotated[bool, Field(description="One hit per parametrized case")] = False,
) -> SearchResult:
    """Ranked search of the test catalog (BM25, hybrid with embeddings): node ids,
    docstrings, qbench_case fields and steps; one hit per test function; filters, facets and a
    cursor for the next page."""
    return tools.search_tests(
        query,
        tags,
        priority,
        markers,
        platforms,
        path,
        limit,
        cursor,
        expand,
    )


@tool(READ_ONLY, search.case_text)
def get_test_by_key(
    tools: QBenchTools,
    key: Annotated[str, Field(description="Test-case key, e.g. FRAMED-1390", max_length=200)],
) -> TestCaseDetail:
    """One test case by its key (qbench_case or an imported export), with its steps."""
    return tools.get_test_by_key(key)


@tool(READ_ONLY, search.similar_text)
def find_similar_tests(
    tools: QBenchTools,
    test: Annotated[
        str | None, Field(description="Key or node id of the reference test", max_length=1000)
    ] = None,
    text: Annotated[
        str | None, Field(description="Or: a text to compare with", max_length=4000)
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="How many")] = 10,
    scope: Annotated[
        Literal["all", "docs", "steps"],
        Field(description="Compare everything, the descriptions, or the steps"),
    ] = "all",
    include_siblings: Annotated[
        bool, Field(description="Keep the reference's own parametrized cases")
    ] = False,
) -> SimilarTests:
    """Test cases most like a given test (by key or node id), or like a text; one per test
    function."""
    return tools.find_similar_tests(test, text, limit, scope, include_siblings)


@tool(WRITES, ingest.ingest_text)
async def ingest_tests(
    tools: QBenchTools,
    ctx: Context,
    source: Annotated[
        str,
        Field(
            description="'pytest' (collect the tests) or a JSON export file or directory in "
            "the project",
            max_length=1000,
        ),
    ] = "pytest",
) -> IngestReport:
    """Build or refresh the test catalog from pytest's collection or a test-case export
    (key, title, priority, tags, platforms, folder, steps): added, updated, removed and
    rejected records with reasons."""
    if source.strip() == "pytest":
        process = tools.start_collection()
        await supervise(tools, process, ctx)
        report = await anyio.to_thread.run_sync(tools.finish_collection, process)
    else:
        report = await anyio.to_thread.run_sync(partial(tools.ingest_file, source))
    return report


@tool(WRITES, build.build_text)
async def run_build_workflow(
    tools: QBenchTools,
    check_type: Annotated[
        Literal["lint", "typecheck", "build", "both", "all"],
        Field(description="both=typecheck+build"),
    ] = "all",
    target: Literal["auto", "frontend", "backend", "both"] = "auto",
    paths: Annotated[
        list[str] | str | None,
        Field(description="Files or directories inside the project; default: all"),
    ] = None,
    strict: Annotated[bool, Field(description="List warnings too, and fail on them")] = False,
    timeout_seconds: Annotated[
        float | None, Field(gt=0, description="Stop after this long (capped)")
    ] = None,
) -> BuildResult:
    """Run ruff, mypy, tsc, eslint (the project's config); return errors only: file,
    line, column, code, message; get_run_output pages raw logs."""
    given = listed(paths, "paths")
    stop = threading.Event()
    call = partial(
        tools.run_build_workflow, check_type, given, strict, timeout_seconds, stop, target=target
    )
    try:
        result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    except BaseException:
        stop.set()  # the checker's process group is killed at its next look (0.1 s)
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(tools.wait_for_checks)
        raise
    return result


@tool(WRITES, generation.generate_text)
async def generate_tests_workflow(
    tools: QBenchTools,
    ctx: Context,
    target_path: Annotated[
        str,
        Field(
            description="A module file or package directory inside the project",
            max_length=1000,
        ),
    ],
    test_type: Annotated[TestType, Field(description="Only unit tests are generated")] = "unit",
    coverage_goal: Annotated[
        float, Field(ge=0, le=100, description="Line coverage aimed at, in percent")
    ] = 85,
    generation_strategy: Annotated[
        GenerationStrategy,
        Field(description="hybrid: hypothesis, template, pynguin, llm"),
    ] = "hybrid",
    max_llm_budget: Annotated[
        int | None, Field(ge=0, description="Sampling tokens (hybrid, llm); default 10000")
    ] = None,
    timeout_seconds: Annotated[
        float | None,
        Field(gt=0, description="Kill the generation after this long (capped)"),
    ] = None,
) -> GenerateWorkflowResult | InputRequiredResult:
    """Generate unit tests for a module's uncovered functions (Hypothesis, templates,
    sampling; runs their code), keep under tests/generated/ those that pass and add
    coverage; return the coverage measured, the gap and what needs a person. One at a time."""
    no_sampling = sampling_refusal(ctx)
    if ctx.request_state is not None:  # a later round: the client answers the last prompts
        held = tools.held.claim(ctx.request_state)
        process = held.process
        answers = ctx.input_responses or {}
        await anyio.to_thread.run_sync(write_answers, process, held.asked, answers)
    else:
        process = tools.start_generation(
            target_path,
            test_type,
            coverage_goal,
            generation_strategy,
            timeout_seconds,
            generation.llm_budget(generation_strategy, max_llm_budget),
            no_sampling,
        )
    if no_sampling is None and not ctx.session.can_send_request:
        prompts = await until_prompts(tools, process, ctx)
        if prompts:
            return input_required(tools, process, prompts)
    else:
        await supervise_answering(tools, process, ctx, no_sampling is None)
    wanted = generation_strategy == "hybrid"  # llm was refused without sampling
    call = partial(tools.finish_generation, process, test_type, no_sampling if wanted else None)
    return await anyio.to_thread.run_sync(call)


async def supervise_answering(
    tools: QBenchTools, process: PytestProcess, ctx: Context, answering: bool
) -> None:
    """Supervise the generation to its end, answering its prompts when ``answering`` (a
    connection that carries requests from the server during a call)."""
    failure: Exception | None = None  # raised after the task group, never wrapped by it
    async with anyio.create_task_group() as group:
        if answering:
            group.start_soon(answer_prompts, process, ctx)
        try:
            await supervise(tools, process, ctx)
        except Exception as exc:
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure


async def until_prompts(
    tools: QBenchTools, process: PytestProcess, ctx: Context
) -> list[tuple[str, dict[str, Any]]]:
    """Supervise the generation until it asks for tests (its prompts) or ends (none)."""
    found: list[tuple[str, dict[str, Any]]] = []

    async def asked() -> bool:
        nonlocal found
        found = await anyio.to_thread.run_sync(generation.pending_prompts, process.plan, set())
        return bool(found)

    await supervise(tools, process, ctx, asked)
    return found if process.poll() is None else []


def input_required(
    tools: QBenchTools, process: PytestProcess, prompts: list[tuple[str, dict[str, Any]]]
) -> InputRequiredResult:
    """The round that asks the client (protocol 2026-07-28) for the prompts' answers: the
    generation is held meanwhile under the request state."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sampling is deprecated in 2026-07-28 (SEP-2577)
        requests: dict[str, InputRequest] = {
            stem: CreateMessageRequest(params=sampling_params(request)) for stem, request in prompts
        }
    state = tools.held.hold(process, [stem for stem, _ in prompts])
    return InputRequiredResult(input_requests=requests, request_state=state)


def write_answers(process: PytestProcess, asked: list[str], answers: InputResponses) -> None:
    """The client's answers to the last round's prompts, for the child (a prompt left
    unanswered is told so; an answer that cannot be written leaves it to its own timeout)."""
    for stem in asked:
        response = answers.get(stem)
        if isinstance(response, CreateMessageResult):
            answer = {"text": sampled_text(response), **sampled_usage(response)}
        else:
            answer = {"error": "the client returned no sampling result for this prompt"}
        with contextlib.suppress(OSError):
            generation.write_answer(process.plan, stem, answer)


def sampling_refusal(ctx: Context) -> str | None:
    """Why the client cannot be asked for tests (``sampling/createMessage`` during the call,
    or as an ``InputRequiredResult`` round on 2026-07-28), or ``None``."""
    wanted = ClientCapabilities(sampling=SamplingCapability())
    if not ctx.session.check_client_capability(wanted):
        return "the client declared no sampling capability"
    if not ctx.session.can_send_request and (ctx.protocol_version or "") < ROUNDS_PROTOCOL:
        return (
            f"this connection (protocol {ctx.protocol_version}) carries no request from the "
            "server during a tool call; connect with the initialize handshake (2025-11-25)"
        )
    return None


async def answer_prompts(process: PytestProcess, ctx: Context) -> None:
    """Answer the generation's prompts by sampling the client, until cancelled (an answer that
    cannot be written leaves the child to its own timeout)."""
    answered: set[str] = set()
    while True:
        found = await anyio.to_thread.run_sync(generation.pending_prompts, process.plan, answered)
        for stem, request in found:
            answer = await sample(ctx, request)
            answered.add(stem)
            with contextlib.suppress(OSError):
                await anyio.to_thread.run_sync(generation.write_answer, process.plan, stem, answer)
        await anyio.sleep(POLL_SECONDS)


async def sample(ctx: Context, request: dict[str, Any]) -> dict[str, Any]:
    """One ``sampling/createMessage``: the answer's text and the usage it reports (in
    ``_meta.usage``, as ``inputTokens``/``outputTokens``), or why there is none."""
    params = sampling_params(request)
    try:
        with anyio.fail_after(float(request["timeout"])), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sampling is deprecated in 2026-07-28 (SEP-2577)
            result = await ctx.session.create_message(
                params.messages, max_tokens=params.max_tokens, system_prompt=params.system_prompt
            )
    except TimeoutError:
        return {"error": f"the client did not answer in {request['timeout']:g}s"}
    except Exception as exc:  # the client's refusal or failure: the child is told why
        return {"error": f"the client's sampling failed: {type(exc).__name__}: {exc}"}
    return {"text": sampled_text(result), **sampled_usage(result)}


def sampling_params(request: dict[str, Any]) -> CreateMessageRequestParams:
    """The ``sampling/createMessage`` parameters of one of the child's requests."""
    messages = [
        SamplingMessage(role=m["role"], content=TextContent(type="text", text=m["text"]))
        for m in request["messages"]
    ]
    return CreateMessageRequestParams(
        messages=messages,
        max_tokens=int(request["max_tokens"]),
        system_prompt=str(request["system"]),
    )


def sampled_text(result: CreateMessageResult) -> str:
    """The text of a sampling result (``""`` for an image or audio answer)."""
    content = result.content
    return content.text if isinstance(content, TextContent) else ""


def sampled_usage(result: CreateMessageResult) -> dict[str, int]:
    """``input_tokens`` and ``output_tokens`` when the client reports them."""
    usage = (result.meta or {}).get("usage")
    if not isinstance(usage, dict):
        return {}
    counts = usage.get("inputTokens"), usage.get("outputTokens")
    if all(isinstance(n, int) and not isinstance(n, bool) for n in counts):
        return {"input_tokens": int(counts[0] or 0), "output_tokens": int(counts[1] or 0)}
    return {}


@tool(READ_ONLY, health.health_text)
def check_health(tools: QBenchTools) -> Health:
    """Versions, the run store, the history index, the catalog, and the limits."""
    return tools.check_health()


OUTPUTS: Mapping[str, type[BaseModel]] = MappingProxyType(
    {spec.name: spec.model for spec in REGISTERED}
)
"""Each tool's result model: the return annotation of its function."""


def build_server(config: ServerConfig) -> QBenchServer:
    """The server with every tool, for the project ``config`` names."""
    tools = QBenchTools(config)
    server = QBenchServer("pytest-qbench", version=__version__, instructions=INSTRUCTIONS)
    server.call_log = CallLog(config)
    server.held = tools.held
    server.notes = {name: timeout_note(config, name) for name in TIMED}
    server.published = {name: compact_schema(model) for name, model in OUTPUTS.items()}
    for spec in REGISTERED:
        server.add_tool(spec.bound(tools), annotations=spec.annotations)
    return server


def serve(config: ServerConfig) -> None:
    """Serve over stdio until the client closes the connection."""
    server = build_server(config)
    try:
        server.run("stdio")
    finally:
        if server.held is not None:
            server.held.stop_all()
