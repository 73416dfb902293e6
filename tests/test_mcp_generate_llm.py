"""generate_tests_workflow asks the client's model for tests (issue 23): the real ``qbench-mcp``
over stdio, the SDK's client with a sampling callback that answers from a table of prepared
answers (a correct test, a failing test then a correct one, an answer with no code), the token
budget, the transcript paged by get_run_output, and clients that cannot be sampled."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from generation_setup import FETCH_OK
from generation_setup import NO_CODE
from generation_setup import SHOUT_OK
from generation_setup import SHOUT_WRONG
from generation_setup import make_shop_project as make_project
from mcp_helpers import overdue_now
from shared_setup import shared_dir


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.types import CallToolResult
from mcp.types import CreateMessageRequestParams
from mcp.types import CreateMessageResult
from mcp_generate_setup import NEVER
from mcp_generate_setup import USAGE
from mcp_generate_setup import Model
from mcp_generate_setup import dump_calls
from mcp_generate_setup import error_text
from mcp_generate_setup import in_process
from mcp_generate_setup import load_calls
from mcp_generate_setup import server
from mcp_generate_setup import stop_held
from mcp_generate_setup import structured


pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Linux process groups and /proc"),
    pytest.mark.generation,
]

GENERATE = {"target_path": "shop.py", "coverage_goal": 100, "timeout_seconds": 300}


def library_and_model() -> Model:
    """The model of the whole generations: fetch's test right at once, shout's after one
    follow-up, no code for ping and clamp."""
    return Model(
        USAGE,
        {
            "fetch": [FETCH_OK],
            "shout": [SHOUT_WRONG, SHOUT_OK],
            "ping": [NO_CODE, NO_CODE],
            "clamp": [NO_CODE],
        },
    )


class Sampled:
    """A budget too small for a second prompt, then a whole generation in hybrid, then the
    transcript, through one client that can be sampled."""

    def __init__(self, root: Path) -> None:
        self.root = make_project(root)
        every = {name: [NO_CODE] for name in ("fetch", "shout", "ping", "clamp")}
        self.tight = Model({"inputTokens": 400, "outputTokens": 100}, every)
        self.model = library_and_model()
        self.current = self.tight
        self.calls = anyio.run(self.main)

    async def answer(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        return await self.current(context, params)

    async def main(self) -> dict[str, CallToolResult]:
        calls = {}
        with anyio.fail_after(600):
            async with Client(
                server(self.root), mode="legacy", sampling_callback=self.answer
            ) as client:
                tight = {**GENERATE, "generation_strategy": "llm", "max_llm_budget": 800}
                calls["tight"] = await client.call_tool("generate_tests_workflow", tight)
                self.current = self.model
                calls["hybrid"] = await client.call_tool("generate_tests_workflow", GENERATE)
                run_id = (calls["hybrid"].structured_content or {}).get("run_id", "none")
                calls["llm"] = await client.call_tool(
                    "get_run_output", {"run_id": run_id, "stream": "llm", "limit": 1000}
                )
        return calls


class Shared:
    """Generations made once per test run (``shared_dir``, whichever pytest-xdist workers run
    the tests): their project, the calls' results and the prompts each model was sent."""

    def __init__(self, directory: Path) -> None:
        self.root = (directory / "project").resolve()
        kept = json.loads((directory / "kept.json").read_text(encoding="utf-8"))
        self.calls = load_calls(kept["calls"])
        self.prompts: dict[str, list[list[str]]] = kept["prompts"]


def keep(directory: Path, calls: dict[str, CallToolResult], **models: Model) -> None:
    """The calls' results and the models' prompts, for ``Shared``."""
    prompts = {name: model.prompts for name, model in models.items()}
    kept = {"calls": dump_calls(calls), "prompts": prompts}
    (directory / "kept.json").write_text(json.dumps(kept), encoding="utf-8")


def sample(directory: Path) -> None:
    """The generations through the client that can be sampled, kept for ``Shared``."""
    made = Sampled(directory / "project")
    keep(directory, made.calls, tight=made.tight, model=made.model)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    """The shared generations."""
    return Shared(shared_dir(tmp_path_factory, "test_mcp_generate_llm.session", sample))


SHARED = pytest.mark.xdist_group("test_mcp_generate_llm.session")


@SHARED
def test_hybrid_asks_the_model_for_what_the_libraries_left_and_keeps_what_passes(
    session: Shared,
) -> None:
    """A correct test is kept at once; a failing test gets one follow-up with its error, and
    the corrected test is kept; an answer with no code is dropped with that reason after its
    one follow-up; of clamp, which the library generators try first, only the lines still
    uncovered are asked for (how many they cover depends on the machine's load within the
    budget); tokens_used is the usage the client reported."""
    result = structured(session.calls["hybrid"])
    asked = [texts[0].split("`")[1] for texts in session.prompts["model"] if len(texts) == 1]
    assert {"fetch", "shout", "ping"} <= set(asked) <= {"fetch", "shout", "ping", "clamp"}
    methods = result["auto_generated"]["generation_method"]
    if methods["hypothesis"] + methods["template"]:  # a library test of clamp was kept
        for texts in session.prompts["model"]:
            if "`clamp`" in texts[0]:  # `if x < low:` (line 10) runs in any call of clamp
                assert "Lines 10" not in texts[0]
    shout = [texts for texts in session.prompts["model"] if "`shout`" in texts[0]]
    assert [len(t) for t in shout] == [1, 3]
    assert "AssertionError" in shout[1][2] and "did not pass" in shout[1][2]
    made = result["auto_generated"]
    assert made["generation_method"]["llm"] == 2
    assert result["tokens_used"] == 120 * len(session.prompts["model"])
    written = (session.root / made["files"][0]).read_text(encoding="utf-8")
    assert "def test_fetch" in written and 'shout(Client("u:"), "hi") == "u:HI"' in written
    assert '== "u:hi"' not in written
    review = {item["function"]: item for item in result["needs_llm_review"]}
    assert "fetch" not in review and "shout" not in review
    assert "held no test code" in review["ping"]["reason"]
    assert result["success"] is True


@SHARED
def test_no_prompt_is_sent_that_would_pass_the_budget(session: Shared) -> None:
    """With max_llm_budget 800 and an answer that reports 500 tokens, the follow-up (about 300
    more with the room for its answer) is never sent: one prompt, 500 tokens used, the
    function left for review with the budget named."""
    result = structured(session.calls["tight"])
    assert len(session.prompts["tight"]) == 1
    assert result["tokens_used"] == 500
    assert result["auto_generated"]["generation_method"]["llm"] == 0
    reasons = " ".join(item["reason"] for item in result["needs_llm_review"])
    assert "max_llm_budget of 800 tokens reached" in reasons


@SHARED
def test_the_prompts_and_answers_are_paged_with_the_run(session: Shared) -> None:
    """The run's ``llm`` stream holds every prompt and answer with the tokens each cost."""
    page = structured(session.calls["llm"])
    text = page["text"]
    prompts = len(session.prompts["model"])
    assert text.count("===== prompt ") == text.count("===== answer ") == prompts
    assert "Lines " in text and "def fetch(client: Client, path: str)" in text
    assert "(120 tokens, reported)" in text and "u:HI" in text


ONLY = """\
class Client:
    def __init__(self, url):
        self.url = url


def ping(client: Client) -> bool:
    return client.url.startswith("http")
"""


def test_a_client_that_cannot_be_sampled_is_told_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client without the sampling capability, on the initialize handshake or on the
    2026-07-28 protocol, is refused the llm strategy with the reason; in hybrid, it gets the library generators' result and a next step saying why its model
    was not asked. The server is built in this process (what a client declares is the subject,
    not the server's process; the generation is a child process all the same)."""
    root = make_project(tmp_path / "project")
    (root / "only.py").write_text(ONLY, encoding="utf-8")
    built = in_process(root, monkeypatch)

    async def main() -> list[CallToolResult]:
        found = []
        arguments: dict[str, Any] = {"target_path": "shop.py", "generation_strategy": "llm"}
        with anyio.fail_after(400):
            async with Client(built, mode="legacy") as client:
                found.append(await client.call_tool("generate_tests_workflow", arguments))
                hybrid = {"target_path": "only.py", "timeout_seconds": 300}
                found.append(await client.call_tool("generate_tests_workflow", hybrid))
            async with Client(built) as client:
                found.append(await client.call_tool("generate_tests_workflow", arguments))
        return found

    try:
        bare, hybrid, modern = anyio.run(main)
    finally:
        stop_held(built)
    assert "the client declared no sampling capability" in error_text(bare)
    result = structured(hybrid)
    assert "ping" in [item["function"] for item in result["needs_llm_review"]]
    assert result["tokens_used"] == 0
    assert (
        "The client's model was not asked for these functions' tests: the client declared no "
        "sampling capability" in result["next_steps"]
    )
    assert "the client declared no sampling capability" in error_text(modern)


def round_trip(directory: Path) -> None:
    """A whole generation with the llm strategy through the SDK's default client (protocol
    2026-07-28): the server cannot send requests during a call, so each prompt comes back as an
    ``InputRequiredResult`` the client answers through its sampling callback and retries. The
    library generators are left out (their share of hybrid is the legacy client's test): the
    point here is the rounds, between the client and a server built in this process (the
    shared session's is the stdio process)."""
    root = make_project(directory / "project")
    model = library_and_model()

    async def main() -> CallToolResult:
        with anyio.fail_after(600):
            async with Client(
                built, sampling_callback=model, input_required_max_rounds=30
            ) as client:
                llm = {**GENERATE, "generation_strategy": "llm"}
                return await client.call_tool("generate_tests_workflow", llm)

    with pytest.MonkeyPatch.context() as patch:
        built = in_process(root, patch)
        try:
            called = anyio.run(main)
        finally:
            stop_held(built)
    keep(directory, {"generate": called}, model=model)


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    """The generation through the 2026-07-28 client."""
    return Shared(shared_dir(tmp_path_factory, "test_mcp_generate_llm.rounds", round_trip))


def test_a_2026_client_is_asked_through_input_required_rounds(rounds: Shared) -> None:
    """On the 2026-07-28 protocol the prompts ride InputRequiredResult rounds of the one tool
    call: a correct test is kept at once, a failing one gets one follow-up with its error and
    the corrected test is kept, an answer with no code is left for review; the tokens are the
    usage the client reported."""
    result = structured(rounds.calls["generate"])
    shout = [texts for texts in rounds.prompts["model"] if "`shout`" in texts[0]]
    assert [len(t) for t in shout] == [1, 3]
    assert "AssertionError" in shout[1][2]
    made = result["auto_generated"]
    assert made["generation_method"]["llm"] == 2
    assert result["tokens_used"] == 120 * len(rounds.prompts["model"])
    written = (rounds.root / made["files"][0]).read_text(encoding="utf-8")
    assert "def test_fetch" in written and '== "u:HI"' in written and '== "u:hi"' not in written
    review = {item["function"]: item for item in result["needs_llm_review"]}
    assert "held no test code" in review["ping"]["reason"]
    assert not any("was not asked" in step for step in result["next_steps"])


def test_a_2026_client_that_never_comes_back_does_not_hold_the_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that is handed the first prompt and never calls again: the generation keeps
    the one-run slot until its timeout, then its process group is killed, the run recorded as
    interrupted, the slot freed; a late answer is told the generation is gone. The timeout
    never comes by itself (``NEVER``): once a test run has been refused, the test moves the held
    generation's deadline to now (``overdue_now``), however long the first prompt took."""
    root = make_project(tmp_path / "project")
    (root / "only.py").write_text(ONLY, encoding="utf-8")
    model = Model(None, {"ping": [NO_CODE]})
    arguments = {"target_path": "only.py", "generation_strategy": "llm", "timeout_seconds": NEVER}
    run = {"test_path": ["tests/test_shop.py"]}
    built = in_process(root, monkeypatch)

    async def main() -> tuple[Any, CallToolResult, Path, Any, CallToolResult]:
        with anyio.fail_after(900):  # a safety net: the generation ends once made overdue
            async with Client(built, sampling_callback=model) as client:
                first = await client.session.call_tool(
                    "generate_tests_workflow", arguments, allow_input_required=True
                )
                busy = await client.call_tool("run_test_workflow", run)
                overdue_now(built)
                meta = await ended_generation(root)
                late = await client.session.call_tool(
                    "generate_tests_workflow",
                    arguments,
                    request_state=getattr(first, "request_state", None),
                    allow_input_required=True,
                )
                free = await client.call_tool("run_test_workflow", run)
        return first, busy, meta, late, free

    try:
        first, busy, meta, late, free = anyio.run(main)
    finally:
        stop_held(built)
    assert type(first).__name__ == "InputRequiredResult"
    assert "a generation is running" in error_text(busy)
    assert json.loads(meta.read_text(encoding="utf-8"))["interrupted"] is True
    assert "no generation waits for these answers" in error_text(late)
    assert structured(free)["success"] is True
    assert model.prompts == []


async def ended_generation(root: Path) -> Path:
    """The meta file of the generation once the server has finished it."""
    while True:
        for path in (root / ".qbench" / "runs").glob("generate-*/mcp-run.json"):
            if json.loads(path.read_text(encoding="utf-8")).get("exit_code") is not None:
                return path
        await anyio.sleep(0.5)
