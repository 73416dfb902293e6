"""``generate_tests_workflow`` without the SDK (issue 14.3): the request checked and turned into
a ``qbench generate`` child, and its JSON result fitted to the seed's output within the budget.

The generation runs as ``PYTHON -m pytest_qbench generate TARGET --json`` (the project's
interpreter, ``--python``) in its own process group, like a test run (``process.py``): its
stdout (the result as JSON) and stderr (its log) are kept in the run directory
``.qbench/runs/generate-<id>/``, so ``get_run_output`` pages them. Of the timeout, 60% is the
generation's own budget (``--timeout``: then it stops starting candidates) and 25% bounds its
final measurement (``--suite-timeout``); at the timeout the whole process group is killed.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import first_line
from pytest_qbench.generate.models import GenerateResult
from pytest_qbench.generate.models import ReviewItem
from pytest_qbench.mcp.budget import fit_items
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.command import GENERATION_PREFIX
from pytest_qbench.mcp.command import RunPlan
from pytest_qbench.mcp.command import effective_timeout
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.models import GenerateTruncation
from pytest_qbench.mcp.models import GenerateWorkflowResult
from pytest_qbench.mcp.models import GenerationStrategy
from pytest_qbench.mcp.models import TestType
from pytest_qbench.mcp.paths import inside_root
from pytest_qbench.mcp.paths import safe_text
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.report import store


OUT = "tests/generated"
"""Where the generated tests are written, relative to the project root."""
BUDGET_SHARE = 0.6
"""The share of the timeout that is the generation's own budget (``--timeout``)."""
MEASURE_SHARE = 0.25
"""The share that bounds its measurements of the existing suite (``--suite-timeout``)."""
MAX_PROBLEMS = 20
"""Problem lines listed."""
SHORT_CONTEXT = 200
"""Characters of a review item's context when shortened to fit."""
RESULT_NAME = "generation.json"
"""The whole result, in the run directory."""


def check_request(test_type: TestType, strategy: GenerationStrategy) -> None:
    """Refuse what qbench does not generate.

    Raises:
        ToolFailure: ``integration`` or ``e2e`` tests, or the ``llm`` strategy.
    """
    if test_type in ("integration", "e2e"):
        raise ToolFailure(
            f"test_type {test_type!r} is not generated here: qbench generates unit tests only "
            "(test_type 'unit'); write integration and end-to-end tests by hand"
        )
    if strategy == "llm":
        raise ToolFailure(
            "generation_strategy 'llm' is not available: qbench calls no language model; use "
            "'hybrid' (Hypothesis, templates, Pynguin) and write what is left in "
            "needs_llm_review yourself"
        )


def plan_generation(
    config: ServerConfig,
    target_path: str,
    coverage_goal: float,
    strategy: GenerationStrategy,
    timeout_seconds: float | None,
) -> RunPlan:
    """The ``qbench generate`` command of a request, with the run's directories.

    Raises:
        ToolFailure: a target path outside the project, missing, or read as an option; a
            refused timeout.
    """
    target = inside_root(config.root, safe_text(target_path, "target_path"), "target_path")
    timeout = effective_timeout(config, timeout_seconds)
    run_id = GENERATION_PREFIX + store.new_run_id()
    argv = [config.python, "-m", "pytest_qbench", "generate", target, "--json"]
    argv += ["--strategy", strategy, "--coverage-goal", f"{coverage_goal:g}", "--out", OUT]
    argv += ["--timeout", f"{timeout * BUDGET_SHARE:.3g}"]
    argv += ["--suite-timeout", f"{timeout * MEASURE_SHARE:.3g}"]
    return RunPlan(
        run_id=run_id,
        argv=argv,
        cwd=config.root,
        run_dir=store.run_dir(config.qbench_dir, run_id),
        staging=config.qbench_dir / "mcp-staging" / run_id,
        timeout=timeout,
        max_failures=0,
        verbose=False,
    )


def read_result(plan: RunPlan, code: int, stopped_by: str | None) -> GenerateResult:
    """The generation's result from its stdout, kept in the run directory.

    Raises:
        ToolFailure: it was stopped at the timeout, or ended without a result (the last line
            of its stderr says why).
    """
    log = f'get_run_output(run_id="{plan.run_id}", stream="stderr")'
    if stopped_by == "timeout":
        raise ToolFailure(
            f"the generation {plan.run_id} took longer than {plan.timeout:g}s and was stopped: "
            "its whole process group was killed and nothing was measured; call again with a "
            f"larger timeout_seconds or a smaller target_path; its log: {log}"
        )
    stdout = plan.run_dir / OUTPUT_NAMES["stdout"]
    try:
        return GenerateResult.model_validate_json(stdout.read_bytes())
    except (OSError, ValidationError):
        pass
    stderr = plan.run_dir / OUTPUT_NAMES["stderr"]
    why = _last_line(stderr) or "no output"
    raise ToolFailure(f"qbench generate ended with status {code} and no result: {why}; {log}")


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    found = [line.strip() for line in lines if line.strip()]
    return found[-1][:500] if found else ""


def store_result(plan: RunPlan, result: GenerateResult) -> None:
    """Keep the whole result beside the log."""
    (plan.run_dir / RESULT_NAME).write_text(
        json.dumps(result.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8"
    )


def workflow_result(
    run_id: str, result: GenerateResult, test_type: TestType, budget: int
) -> GenerateWorkflowResult:
    """The seed's output of a generation, within ``budget`` bytes of JSON: needs_llm_review
    first-things-first (a context shortened before an item is dropped), then the uncovered line
    numbers, each cut counted in ``truncated``."""
    steps = list(result.next_steps)
    if test_type == "all":
        steps.append("Only unit tests were generated: qbench generates no integration or e2e tests")
    steps.append(
        f'The whole result and the log: get_run_output(run_id="{run_id}", stream="stdout" or '
        '"stderr")'
    )
    problems = result.problems[:MAX_PROBLEMS]
    gap = result.coverage_gap
    lines_total = len(gap.uncovered_lines) + sum(len(v) for v in gap.uncovered_by_file.values())
    bare = GenerateWorkflowResult(
        run_id=run_id,
        success=result.success,
        auto_generated=result.auto_generated,
        coverage_gap=gap.model_copy(update={"uncovered_lines": [], "uncovered_by_file": {}}),
        tokens_used=0,
        next_steps=steps,
        coverage_before=result.coverage_before,
        goal_met=result.goal_met,
        problems=problems,
        wall_seconds=result.wall_seconds,
        truncated=GenerateTruncation(
            problems=len(result.problems) - len(problems),
            needs_llm_review=len(result.needs_llm_review),
            uncovered_lines=lines_total,
            budget_bytes=budget,
        ),
    )
    room = budget - json_size(bare) - 16
    fitted = fit_items(result.needs_llm_review, room, shorten)
    room -= fitted.used
    uncovered = _fit_numbers(gap.uncovered_lines, room)
    room -= len(json.dumps(uncovered))
    by_file = {}
    for name, numbers in gap.uncovered_by_file.items():
        kept = _fit_numbers(numbers, room - len(json.dumps(name)) - 4)
        if not kept:
            break
        by_file[name] = kept
        room -= len(json.dumps(name)) + len(json.dumps(kept)) + 4
    listed = len(uncovered) + sum(len(v) for v in by_file.values())
    return bare.model_copy(
        update={
            "needs_llm_review": fitted.items,
            "coverage_gap": gap.model_copy(
                update={"uncovered_lines": uncovered, "uncovered_by_file": by_file}
            ),
            "truncated": bare.truncated.model_copy(
                update={"needs_llm_review": fitted.dropped, "uncovered_lines": lines_total - listed}
            ),
        }
    )


def shorten(item: ReviewItem) -> ReviewItem:
    """A review item with its context cut and its uncovered lines left to coverage_gap."""
    context = item.context
    if len(context) > SHORT_CONTEXT:
        context = context[:SHORT_CONTEXT] + "…"
    return item.model_copy(
        update={"context": context, "reason": first_line(item.reason), "uncovered_lines": []}
    )


def _fit_numbers(numbers: list[int], room: int) -> list[int]:
    """The first line numbers that fit in ``room`` bytes of JSON."""
    kept: list[int] = []
    used = 2
    for number in numbers:
        size = len(str(number)) + 1
        if used + size > room:
            break
        kept.append(number)
        used += size
    return kept
