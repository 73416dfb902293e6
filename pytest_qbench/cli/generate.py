"""``qbench generate`` (issue 14): tests for the uncovered functions of a module, generated with
Hypothesis's ghostwriter, templates and Pynguin, verified in child processes, kept only when
they pass and add coverage."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.exit_codes import USAGE


if TYPE_CHECKING:
    from pytest_qbench.generate.models import GenerateResult

MAX_LINES = 20
"""Items listed per section of the text output."""


def add_generate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench generate``'s arguments."""
    parser = sub.add_parser(
        "generate",
        help="Generate tests for the uncovered functions of a module (Hypothesis, templates)",
        description="Measure TARGET's coverage with the project's tests, generate tests for its "
        "functions with uncovered lines, run each in a child process with a timeout (the "
        "target's code runs there), keep those that pass and add coverage, write them under "
        "--out, and measure the coverage again. Exit 0 when the generation succeeded (even if the "
        "goal is not met), 1 when it did not (a written test fails, the target cannot be "
        "imported or found), 2 on a usage error.",
    )
    parser.add_argument(
        "target", metavar="TARGET", help="A module file, package directory or dotted module name"
    )
    parser.add_argument(
        "--coverage-goal",
        type=float,
        default=85.0,
        metavar="PERCENT",
        help="Line coverage aimed at. Default: %(default)g",
    )
    parser.add_argument(
        "--strategy",
        choices=["hypothesis", "template", "pynguin", "hybrid", "llm"],
        default="hybrid",
        help="Generators to use; hybrid is hypothesis, then "
        "template, then pynguin when a Python 3.10 is given, then --llm-command when given; "
        "llm is --llm-command alone. Default: %(default)s",
    )
    parser.add_argument(
        "--out",
        default="tests/generated",
        metavar="DIR",
        help="Where the tests are written. Default: %(default)s",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="Seconds the whole generation may take: then no new candidate starts, what is done "
        "is written and measured, and the functions not tried are listed. Default: %(default)g",
    )
    parser.add_argument(
        "--test-timeout",
        type=float,
        default=20.0,
        metavar="S",
        help="Seconds one generated test (from its set-up, not its pytest's start), or one "
        "probe of the target, may run before it is stopped as hung. Default: %(default)g",
    )
    parser.add_argument(
        "--suite-timeout",
        type=float,
        default=900.0,
        metavar="S",
        help="Seconds the project's existing tests may run. Default: %(default)g",
    )
    parser.add_argument(
        "--max-examples",
        type=int,
        default=50,
        metavar="N",
        help="Hypothesis examples per property test. Default: %(default)r",
    )
    parser.add_argument(
        "--pynguin-python",
        metavar="PATH",
        help="A Python 3.10 with pynguin installed. Default: $QBENCH_PYNGUIN_PYTHON",
    )
    parser.add_argument(
        "--pynguin-seconds",
        type=int,
        default=60,
        metavar="S",
        help="Pynguin's search time and assertion (mutation) time per module, at most; less when "
        "less of --timeout is left. Default: %(default)r",
    )
    parser.add_argument(
        "--llm-command",
        metavar="CMD",
        help="A command that writes a test: it reads the prompt on its standard input and "
        "writes the test file on its standard output (split like a shell line, run without "
        "a shell). Default: none (no model is asked)",
    )
    parser.add_argument(
        "--llm-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="Seconds one answer of --llm-command may take. Default: %(default)g",
    )
    parser.add_argument(
        "--max-llm-budget",
        type=int,
        default=10000,
        metavar="TOKENS",
        help="Tokens the model may spend, prompts and answers (estimated at 4 characters a "
        "token when not reported). Default: %(default)r",
    )
    parser.add_argument(
        "--llm-log",
        metavar="FILE",
        help="Append the prompts and answers to FILE (secrets redacted)",
    )
    parser.add_argument(
        "--pycache",
        metavar="DIR",
        help="Where the children keep their byte-code between generations, or off (each "
        "generation's own, removed with it). Default: $QBENCH_PYCACHE, else "
        "$XDG_CACHE_HOME/qbench/pycache/<interpreter tag>",
    )
    parser.add_argument("--llm-exchange", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="Print the result as JSON")
    parser.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    """``qbench generate``."""
    from pydantic import ValidationError

    from pytest_qbench.generate.models import GenerateRequest
    from pytest_qbench.generate.run import generate

    unusable = _llm_command_problem(args.llm_command) or _asks_no_model(args)
    if unusable:
        print(f"qbench: error: {unusable}", file=sys.stderr)
        return USAGE
    try:
        request = GenerateRequest(
            target=args.target,
            coverage_goal=args.coverage_goal,
            strategy=args.strategy,
            out=args.out,
            timeout=args.timeout,
            test_timeout=args.test_timeout,
            suite_timeout=args.suite_timeout,
            max_examples=args.max_examples,
            pynguin_python=args.pynguin_python,
            pycache=args.pycache,
            pynguin_seconds=args.pynguin_seconds,
            llm_command=args.llm_command,
            llm_exchange=args.llm_exchange,
            llm_timeout=args.llm_timeout,
            max_llm_budget=args.max_llm_budget,
            llm_log=args.llm_log,
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = "--" + str(problem["loc"][0]).replace("_", "-")
        refused = QBenchError(
            f"{where} {problem['msg'].lower()}, given: {problem['input']!r}",
            slug="generate-options",
        )
        print(f"qbench: error: {refused}", file=sys.stderr)
        return USAGE
    result = generate(request)
    if args.json:
        print(result.model_dump_json(indent=1))
    else:
        print("\n".join(text_lines(result)))
    return OK if result.success else ERR


def _asks_no_model(args: argparse.Namespace) -> str:
    """Why ``--llm-command`` or ``--llm-log`` would do nothing (a strategy that asks no model),
    or ``""``."""
    given = [
        f"--{name.replace('_', '-')}" for name in ("llm_command", "llm_log") if getattr(args, name)
    ]
    if given and args.strategy not in ("hybrid", "llm"):
        return (
            f"{' and '.join(given)} asks a model, and --strategy {args.strategy} asks none; "
            "use --strategy hybrid or llm, or leave them out"
        )
    return ""


def _llm_command_problem(command: str | None) -> str:
    """Why ``--llm-command`` cannot be run, or ``""``."""
    import shlex

    if command is None:
        return ""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"--llm-command cannot be split like a shell line ({exc}), given: {command!r}"
    if not words:
        return "--llm-command is empty; give the command that writes a test, e.g. 'llm -m gpt-4o'"
    return ""


def text_lines(result: GenerateResult) -> list[str]:
    """Coverage before -> after, kept and dropped, files, findings, problems, needs a human."""
    made = result.auto_generated
    goal = (
        "goal met"
        if result.goal_met
        else f"{result.coverage_gap.percentage_needed:g} points short of the goal"
    )
    lines = [
        f"coverage of {result.target}: {result.coverage_before:.2f}% -> "
        f"{made.coverage_achieved:.2f}% ({goal})",
        f"tests kept: {made.count} (hypothesis {made.generation_method.hypothesis}, template "
        f"{made.generation_method.template}, pynguin {made.generation_method.pynguin}, llm "
        f"{made.generation_method.llm}); dropped: "
        f"{sum(not d.reason.startswith(('not run', 'not tried')) for d in result.dropped)}; "
        f"wall time {result.wall_seconds:.1f}s",
    ]
    if result.llm_requests:
        lines.append(
            f"language model: {result.llm_requests} prompts, {result.tokens_used} tokens used"
        )
    lines += [f"  wrote {path}" for path in made.files]
    skipped = [d for d in result.dropped if d.reason.startswith("not run")]
    dropped = [d for d in result.dropped if not d.reason.startswith(("not run", "not tried"))]
    lines += bounded("dropped", [f"{d.test} ({d.function}): {d.reason}" for d in dropped])
    if skipped:
        lines.append(f"not run: {len(skipped)} tests of functions already covered by kept tests")
    lines += bounded(
        "findings (strict xfail, review each)",
        [f"{f.test}: {f.error} with {f.falsifying_example}" for f in result.findings],
    )
    lines += bounded("problems", result.problems)
    lines += bounded(
        "needs a human",
        [
            f"{i.file}:{i.line} {i.function} (complexity {i.complexity_score:g}): {i.reason}"
            for i in result.needs_llm_review
        ],
    )
    return lines


def bounded(title: str, items: list[str]) -> list[str]:
    """A section of at most ``MAX_LINES`` items (none when empty)."""
    if not items:
        return []
    lines = [f"{title}:"] + [f"  {item}" for item in items[:MAX_LINES]]
    if len(items) > MAX_LINES:
        lines.append(f"  ... {len(items) - MAX_LINES} more (--json for all)")
    return lines
