"""The state of one generation (``run.py``): its budget of time, what was kept, dropped and
found, the problems and the reasons a function was not covered, the model's tokens."""

from __future__ import annotations

import time
from pathlib import Path

from pytest_qbench.generate import models
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.sandbox import Sandbox


MIN_CHILD_SECONDS = 0.5
"""The least time a child is given when the budget is nearly spent."""
LIBRARY_SHARE = 0.5
"""In ``hybrid`` with a language model to ask, the share of the budget the library generators
may spend: the rest is kept for the model, asked only about what they left uncovered (without
it, slow library generators spent the whole budget and the model was never asked)."""


class Generation:
    """The state of one generation: the problems, the candidates kept, dropped and found."""

    def __init__(
        self,
        request: models.GenerateRequest,
        scratch: Path,
        box: Sandbox,
        started: float | None = None,
    ) -> None:
        self.request = request
        self.box = box
        """The project's disposable copy, where every child that runs the target's code works."""
        self.started = time.monotonic() if started is None else started
        self.deadline = self.started + request.timeout
        """When the budget (``request.timeout``) runs out (``time.monotonic``); earlier while
        part of it is kept for the language model (``keep_for_model``)."""
        self.kept_for_model = False
        self.skipped: list[str] = []
        """Functions (``module:qualname``) with a candidate not run because the budget ran out."""
        self.judged: set[str] = set()
        """Functions with a candidate that ran."""
        self.project = Path(request.project).resolve()
        self.scratch = scratch
        self.problems: list[str] = []
        self.reasons: dict[str, list[str]] = {}
        """Why a function was not covered, by qualified name (``module:qualname``)."""
        self.doubts: list[tuple[str, str, str]] = []
        """``(module, function, reason)``: a Hypothesis test of the function that could not be
        made, said only when no other Hypothesis test of it is kept (`settle_doubts`)."""
        self.kept: list[Candidate] = []
        self.findings: list[tuple[Candidate, str, str]] = []
        self.dropped: list[models.Dropped] = []
        self.unsafe: set[str] = set()
        """Names of the functions never run with generated inputs (hazards.py)."""
        self.untried: list[str] = []
        """Functions no candidate of which ran: the budget was spent."""
        self.failed = False
        """Whether the run did not succeed: a written file fails, the target cannot be imported
        at all, or nothing was kept while a generator asked for could not run."""
        self.missing: dict[str, str] = {}
        """The generators asked for that cannot run here, each with what it needs."""
        self.tokens_used = 0
        """Tokens the language model's requests cost (llm.py)."""
        self.llm_requests = 0
        """Prompts sent to the language model."""
        self.llm_stopped = ""
        """Why no more prompts are sent (the token budget), once it is so."""

    def not_run(self, missing: dict[str, str]) -> None:
        """The generators that cannot run here: one line of the output each."""
        self.missing = missing
        self.problems += [f"{name} did not run: it needs {why}" for name, why in missing.items()]

    def note(self, module: str, function: str, reason: str) -> None:
        """A reason ``function`` could not be covered, also one line of the output."""
        self.explain(module, function, reason)
        self.problems.append(f"{module}.{function}: {reason}")

    def doubt(self, module: str, function: str, reason: str) -> None:
        """A reason one Hypothesis test of ``function`` could not be made."""
        self.doubts.append((module, function, reason))

    def settle_doubts(self) -> None:
        """The doubts about functions no kept Hypothesis test exercises, as notes: the output
        never says Hypothesis could not test a function whose Hypothesis test it wrote."""
        tested = {
            (c.module, f)
            for c in [*self.kept, *(found[0] for found in self.findings)]
            if c.method == "hypothesis"
            for f in c.functions
        }
        for module, function, reason in self.doubts:
            if (module, function) not in tested:
                self.note(module, function, reason)
        self.doubts = []

    def explain(self, module: str, function: str, reason: str) -> None:
        """A reason ``function`` could not be covered (for needs_llm_review only)."""
        self.reasons.setdefault(f"{module}:{function}", []).append(reason)

    def remaining(self) -> float:
        """Seconds left of the budget (negative once it is spent)."""
        return self.deadline - time.monotonic()

    def out_of_time(self) -> bool:
        """Whether the budget is spent."""
        return self.remaining() <= 0

    def limit(self, seconds: float) -> float:
        """``seconds``, or less when the budget ends sooner (never below a floor)."""
        return min(seconds, max(self.remaining(), MIN_CHILD_SECONDS))

    def skip(self, module: str, function: str) -> None:
        """``function`` had a candidate that the budget left unrun."""
        self.skipped.append(f"{module}:{function}")

    def keep_for_model(self) -> None:
        """Stop the library generators at ``LIBRARY_SHARE`` of the budget, keeping the rest for
        the language model (``give_to_model``)."""
        self.kept_for_model = True
        self.deadline = self.started + LIBRARY_SHARE * self.request.timeout

    def give_to_model(self) -> None:
        """The whole budget again, for the language model's turn."""
        self.kept_for_model = False
        self.deadline = self.started + self.request.timeout

    def budget_reason(self) -> str:
        """Why a candidate was not run."""
        if self.kept_for_model:
            return (
                f"not tried: the library generators' share of the budget ({LIBRARY_SHARE:.0%} "
                f"of {self.request.timeout:g}s, --timeout) was reached; the rest is kept for "
                "the language model"
            )
        return f"not tried: the budget of {self.request.timeout:g}s (--timeout) was reached"
