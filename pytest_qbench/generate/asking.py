"""Asking a language model for a test: the conversation, the answer, its tokens, and the two
ways of asking (issue 23). ``CommandAsker`` runs the user's command (``--llm-command``: the
conversation on its standard input, the answer on its standard output); ``ExchangeAsker``
hands the conversation to the process that started this generation (the MCP server, which owns
the client session and sends ``sampling/createMessage``) through files in a directory, and
waits for the answer file.

Tokens are the usage the answer reports (input plus output); an answer without usage (a
command's, a client that reports none) is counted with ``estimate_tokens``: one token per four
characters of the conversation and of the answer, rounded up (the usual rule of thumb for
English text and code with OpenAI's and Anthropic's tokenizers; real counts differ by about a
quarter either way)."""

from __future__ import annotations

import ast
import json
import math
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pytest_qbench.core.atomic import write_text_atomic
from pytest_qbench.core.supervise import run
from pytest_qbench.generate.process import child_env


CHARS_PER_TOKEN = 4
"""The estimate's characters per token (see the module's docstring)."""
POLL_SECONDS = 0.1
"""How often ``ExchangeAsker`` looks for the answer file."""
FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL)
SYSTEM = (
    "You write pytest tests for Python code. Answer with one Python code block holding a "
    "complete test file (imports included) and nothing else."
)
"""The system prompt of every request."""


@dataclass(frozen=True)
class Message:
    """One turn of the conversation: ``user`` (qbench) or ``assistant`` (the model)."""

    role: str
    text: str


@dataclass(frozen=True)
class Answer:
    """The model's answer, or why there is none."""

    text: str
    tokens: int
    """Tokens this request cost: reported usage when there is one, else estimated."""
    reported: bool = False
    """Whether ``tokens`` is the usage the answer reported."""
    error: str | None = None
    """Why there is no answer (the command failed, the client refused, the timeout)."""


class Asker(Protocol):
    """Something that answers a conversation."""

    def ask(self, messages: list[Message], max_tokens: int, timeout: float) -> Answer:
        """The answer to ``messages`` (``max_tokens`` long at most), within ``timeout``."""
        ...


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` estimated: one per ``CHARS_PER_TOKEN`` characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def conversation_text(messages: list[Message]) -> str:
    """The conversation as one text (what a command reads on its standard input)."""
    if len(messages) == 1:
        return messages[0].text
    return "\n\n".join(f"## {m.role}\n\n{m.text}" for m in messages)


def prompt_tokens(messages: list[Message]) -> int:
    """The estimated tokens of sending ``messages`` (with the system prompt)."""
    return estimate_tokens(SYSTEM) + sum(estimate_tokens(m.text) for m in messages)


def extract_code(answer: str) -> str | None:
    """The test file in ``answer``: its first fenced code block that defines a test, else the
    whole answer when it is Python that defines one; ``None`` when there is no such code."""
    blocks: list[str] = [*FENCE.findall(answer), answer]
    for block in blocks:
        try:
            tree = ast.parse(block)
        except SyntaxError:
            continue
        if any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name.lower().startswith("test")
            for node in tree.body
        ):
            return block.strip() + "\n"
    return None


class CommandAsker:
    """The user's command (``--llm-command``), run without a shell, in its own process group,
    killed whole at the timeout."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.argv = shlex.split(command)
        self.cwd = cwd

    def ask(self, messages: list[Message], max_tokens: int, timeout: float) -> Answer:
        """Run the command with the conversation on its standard input."""
        prompt = conversation_text(messages)
        spent = prompt_tokens(messages)
        try:
            finished = run(
                self.argv,
                cwd=self.cwd,
                env=child_env(self.cwd),
                timeout=timeout,
                stdin=prompt.encode(),
                name="llm-command",
            )
        except OSError as exc:
            return Answer("", spent, error=f"--llm-command could not start: {exc}")
        if finished.timed_out:
            return Answer("", spent, error=f"--llm-command timed out after {timeout:g}s")
        if finished.returncode != 0:
            last = finished.tail(300).strip().splitlines()[-1:] or ["no output"]
            return Answer(
                "", spent, error=f"--llm-command exited with {finished.returncode}: {last[0]}"
            )
        return Answer(finished.output, spent + estimate_tokens(finished.output))


class ExchangeAsker:
    """The MCP server, asked through files: ``NNNN.prompt.json`` written here, the server's
    ``NNNN.answer.json`` awaited."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def ask(self, messages: list[Message], max_tokens: int, timeout: float) -> Answer:
        """Write the request, wait for its answer at most ``timeout`` seconds."""
        self.count += 1
        stem = f"{self.count:04d}"
        request = {
            "system": SYSTEM,
            "messages": [{"role": m.role, "text": m.text} for m in messages],
            "max_tokens": max_tokens,
            "timeout": timeout,
        }
        write_text_atomic(self.directory / f"{stem}.prompt.json", json.dumps(request))
        answer_file = self.directory / f"{stem}.answer.json"
        spent = prompt_tokens(messages)
        deadline = time.monotonic() + timeout
        while not answer_file.is_file():
            if time.monotonic() > deadline:
                return Answer("", spent, error=f"no answer from the client in {timeout:g}s")
            time.sleep(POLL_SECONDS)
        return read_answer(answer_file, spent)


def read_answer(path: Path, spent: int) -> Answer:
    """An answer file: ``{"text", "input_tokens"?, "output_tokens"?}`` or ``{"error"}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Answer("", spent, error=f"unreadable answer: {exc}")
    if data.get("error"):
        return Answer("", spent, error=str(data["error"]))
    text = str(data.get("text", ""))
    used = data.get("input_tokens"), data.get("output_tokens")
    if all(isinstance(n, int) and n >= 0 for n in used):
        return Answer(text, int(used[0]) + int(used[1]), reported=True)
    return Answer(text, spent + estimate_tokens(text))
