"""Tests written by a language model for the functions still uncovered (issue 23), in
CoverUp's loop: a prompt with the function's source, its uncovered lines, the module's imports
and the style of an existing test; the answer's code parsed and verified like every other
candidate (a child pytest with coverage, its timeout); kept only when it passes and covers new
lines; else one follow-up prompt with the error or the lines still missed. Every request fits
``max_llm_budget``: no prompt is sent whose estimate plus the answer's room would pass it.
Each prompt and answer is appended to ``llm_log`` (secrets redacted)."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.redact import Redactor
from pytest_qbench.generate import models
from pytest_qbench.generate.asking import Answer
from pytest_qbench.generate.asking import Asker
from pytest_qbench.generate.asking import CommandAsker
from pytest_qbench.generate.asking import ExchangeAsker
from pytest_qbench.generate.asking import Message
from pytest_qbench.generate.asking import extract_code
from pytest_qbench.generate.asking import prompt_tokens
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.candidate import count_tests
from pytest_qbench.generate.candidate import split_source
from pytest_qbench.generate.review import line_ranges
from pytest_qbench.generate.verify import verify_alone


if TYPE_CHECKING:
    from pytest_qbench.generate.coverage_gap import Lines
    from pytest_qbench.generate.functions import Function
    from pytest_qbench.generate.state import Generation

ANSWER_TOKENS = 2000
"""The longest answer asked for (``max_tokens``), less when the budget has less room."""
MIN_ANSWER_TOKENS = 256
"""Below this room for the answer, no prompt is sent: the budget is reached."""
ATTEMPTS = 2
"""The first prompt and one follow-up (CoverUp's loop)."""
STYLE_LINES = 30
"""Lines of an existing test file shown as the style to follow."""
STYLE_FILES = 200
"""Test files looked at, at most."""
PRUNED = {"venv", "node_modules", "__pycache__", "site-packages"}


def has_model(request: models.GenerateRequest) -> bool:
    """Whether a model is there to ask (``llm_exchange`` or ``llm_command``)."""
    return bool(request.llm_exchange or request.llm_command)


def asker_of(request: models.GenerateRequest) -> Asker | None:
    """Who answers: the server (``llm_exchange``), the user's command, or nobody."""
    if request.llm_exchange:
        return ExchangeAsker(Path(request.llm_exchange))
    if request.llm_command:
        return CommandAsker(request.llm_command, Path(request.project).resolve())
    return None


class Transcript:
    """The prompts and answers of a generation, appended to a text file, secrets redacted."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self.redact = Redactor(os.environ)

    def add(self, title: str, text: str) -> None:
        """One entry: a heading line, then the text."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as log:
            log.write(f"===== {title}\n{self.redact(text).rstrip()}\n\n")


def ask_for_tests(
    run: Generation, asker: Asker, functions: dict[str, list[Function]], lines: Lines
) -> None:
    """Ask for a test of each function still uncovered, most uncovered first, within the
    budgets (tokens and time)."""
    transcript = Transcript(run.request.llm_log)
    style = existing_style(run.project, run.request.out)
    for module, gaps in functions.items():
        imports = module_imports(gaps[0].file) if gaps else ""
        for function in gaps:
            if function.name in run.unsafe or not function.lines_in(lines.missing(function.file)):
                continue
            if run.llm_stopped or run.out_of_time():
                run.explain(module, function.qualname, run.llm_stopped or run.budget_reason())
                continue
            _converse(run, asker, transcript, module, function, lines, imports, style)


def _converse(
    run: Generation,
    asker: Asker,
    transcript: Transcript,
    module: str,
    function: Function,
    lines: Lines,
    imports: str,
    style: str,
) -> None:
    messages = [Message("user", first_prompt(module, function, lines, imports, style))]
    why = ""
    for attempt in range(1, ATTEMPTS + 1):
        answer = _ask(run, asker, transcript, messages, f"{module}.{function.qualname}")
        if answer is None:
            why = run.llm_stopped or why
            break
        if answer.error:
            why = f"the model was not asked again: {answer.error}"
            run.problems.append(f"{module}.{function.qualname}: {answer.error}")
            break
        code = extract_code(answer.text)
        if code is None:
            why = "the model's answer held no test code"
            follow = NO_CODE
        else:
            verdict, follow = _try(run, module, function, lines, code, attempt)
            if verdict is None:
                return
            why = verdict
        messages += [Message("assistant", answer.text), Message("user", follow)]
    run.explain(module, function.qualname, why or "the model was not asked")
    run.dropped.append(
        models.Dropped(
            test=f"llm_{function.qualname}", function=function.qualname, method="llm", reason=why
        )
    )


def _ask(
    run: Generation, asker: Asker, transcript: Transcript, messages: list[Message], what: str
) -> Answer | None:
    """The answer, or ``None`` when the budget (tokens or time) does not allow the request."""
    budget = run.request.max_llm_budget
    room = budget - run.tokens_used - prompt_tokens(messages)
    if room < MIN_ANSWER_TOKENS:
        run.llm_stopped = (
            f"not asked: max_llm_budget of {budget} tokens reached ({run.tokens_used} used; "
            f"the next prompt needs about {prompt_tokens(messages) + MIN_ANSWER_TOKENS})"
        )
        run.problems.append(run.llm_stopped)
        return None
    if run.out_of_time():
        run.llm_stopped = run.budget_reason()
        return None
    transcript.add(f"prompt {run.llm_requests + 1} ({what})", messages[-1].text)
    timeout = min(run.request.llm_timeout, max(run.remaining(), 1.0))
    answer = asker.ask(messages, min(ANSWER_TOKENS, room), timeout)
    run.llm_requests += 1
    run.tokens_used += answer.tokens
    counted = "reported" if answer.reported else "estimated"
    transcript.add(
        f"answer {run.llm_requests} ({answer.tokens} tokens, {counted})",
        answer.error or answer.text,
    )
    return answer


def _try(
    run: Generation, module: str, function: Function, lines: Lines, code: str, attempt: int
) -> tuple[str | None, str]:
    """Verify the model's test: ``(None, "")`` when kept, else why not and the follow-up."""
    try:
        imports, body = split_source(code)
        tests = count_tests(body)
    except SyntaxError as exc:
        return f"its test does not parse: {exc}", FAILED.format(error=f"SyntaxError: {exc}")
    ident = re.sub(r"\W", "_", f"llm_{module}_{function.qualname}_{attempt}")
    candidate = Candidate(ident, "llm", module, [function.qualname], imports, body, tests=tests)
    verdict = verify_alone(run, candidate)
    run.judged.add(f"{module}:{function.qualname}")
    if verdict.outcome == "passed":
        if lines.adds(verdict.executed):
            lines.absorb(verdict.executed)
            run.kept.append(candidate)
            return None, ""
        missed = line_ranges(function.lines_in(lines.missing(function.file)))
        return "its test passed but adds no coverage", MISSED.format(
            lines=missed, function=function.qualname
        )
    detail = verdict.detail.split("|", 1)[-1] if verdict.outcome == "finding" else verdict.detail
    return f"its test {verdict.outcome}: {detail}", FAILED.format(error=detail)


NO_CODE = (
    "Your answer held no Python code block with a test function. Answer with one ```python "
    "code block holding the complete test file, and nothing else."
)
FAILED = (
    "The test did not pass:\n\n{error}\n\nAnswer with the whole corrected test file in one "
    "```python code block."
)
MISSED = (
    "The test passed but did not run lines {lines} of `{function}`, which are still not "
    "covered. Answer with a test file (one ```python code block) whose tests run them."
)


def first_prompt(module: str, function: Function, lines: Lines, imports: str, style: str) -> str:
    """The first prompt about ``function``: its source with line numbers, its uncovered lines,
    the module's imports and an existing test's style."""
    missing = function.lines_in(lines.missing(function.file))
    where = f"the method `{function.qualname}`" if function.is_method else "the function"
    name = function.class_name or function.name
    parts = [
        f"Write a pytest test file for {where} `{function.name}` of the module `{module}` "
        f"(import it with `from {module} import {name}`). Lines {line_ranges(missing)} are not "
        "run by the existing tests: the tests must run them, and pass.",
        f"The module's imports:\n```python\n{imports or '# none'}\n```",
        f"The code (line numbers at the left):\n```python\n{numbered(function)}\n```",
    ]
    if style:
        parts.append(
            f"An existing test of the project, whose style to follow:\n```python\n{style}\n```"
        )
    parts.append("Answer with one ```python code block: a complete test file, no explanation.")
    return "\n\n".join(parts)


def numbered(function: Function) -> str:
    """The function's lines (and its class's ``__init__``), each with its number."""
    source = function.file.read_text(encoding="utf-8").splitlines()
    spans = []
    if function.init is not None:
        spans.append((function.init.lineno, function.init.end_lineno or function.init.lineno))
    spans.append((function.line, function.end_line))
    shown = [f"{n:4d} | {source[n - 1]}" for start, end in spans for n in range(start, end + 1)]
    return "\n".join(shown)


def module_imports(path: Path) -> str:
    """The module's top-level import statements."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    found = [
        ast.get_source_segment(text, node) or ""
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return "\n".join(found)


def existing_style(project: Path, out: str) -> str:
    """The first lines of an existing test file of the project (not a generated one); hidden
    directories, virtual environments and ``node_modules`` are not looked in."""
    skip = (project / out).resolve()
    seen = 0
    for folder, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in PRUNED)
        if Path(folder).resolve().is_relative_to(skip):
            continue
        for name in sorted(files):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            seen += 1
            if seen > STYLE_FILES:
                return ""
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            return "\n".join(text.splitlines()[:STYLE_LINES])
    return ""
