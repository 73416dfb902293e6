"""The orchestration: ``generate(request) -> GenerateResult``.

1. measure the target's coverage with the project's existing tests (child pytest, ``--qbench-cov``);
2. list its functions with uncovered lines, most uncovered first, then most complex;
3. generate candidates (Hypothesis ghostwriter, templates) in child processes;
4. verify the candidates in one child pytest with coverage contexts (``verify_batch``: each
   test stopped at ``--test-timeout`` inside it), a Hypothesis candidate that failed there again
   alone (``verify``: its output tells a finding); keep those that pass and add lines,
   keep failures Hypothesis found as strict xfails in a findings file, drop the rest with why
   (a Hypothesis test whose ``@given`` cannot draw a type, as the probe child found, without a
   run of its own: it fails so before calling anything);
   then Pynguin, on the modules still uncovered, with the time that is left (its search and
   mutation times clipped to fit, ``VERIFY_SECONDS`` kept to verify its files the same way);
5. with a language model to ask (``llm`` or ``hybrid``), ask it for tests of the functions still
   uncovered (``llm.py``: CoverUp's loop within ``max_llm_budget``);
6. acceptance of every kept test (``acceptance.py``): 5 runs in a row, then a random order with
   the existing suite without breaking it;
7. write the kept tests, then measure the existing suite plus the written files again.

``request.timeout`` is the budget of steps 1-4: once spent, no new candidate starts and the
functions not tried are listed; writing and the final measurement (step 5, bounded by
``suite_timeout``) still happen.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pytest_qbench.core.install import install_extra
from pytest_qbench.generate import models
from pytest_qbench.generate import pycache
from pytest_qbench.generate import unicode_tables
from pytest_qbench.generate.acceptance import accept
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.candidate import split_source
from pytest_qbench.generate.coverage_gap import Lines
from pytest_qbench.generate.coverage_gap import run_with_coverage
from pytest_qbench.generate.coverage_gap import statements_of
from pytest_qbench.generate.functions import Function
from pytest_qbench.generate.functions import attach_uncovered
from pytest_qbench.generate.functions import read_functions
from pytest_qbench.generate.ghostwriter import GhostSpec
from pytest_qbench.generate.ghostwriter import bound_guessed_ints
from pytest_qbench.generate.ghostwriter import ghost_specs
from pytest_qbench.generate.ghostwriter import with_settings
from pytest_qbench.generate.guess import Guess
from pytest_qbench.generate.guess import comment
from pytest_qbench.generate.hazards import calls_any
from pytest_qbench.generate.hazards import hazard
from pytest_qbench.generate.llm import ask_for_tests
from pytest_qbench.generate.llm import asker_of
from pytest_qbench.generate.llm import has_model
from pytest_qbench.generate.probe import Probed
from pytest_qbench.generate.probe import run_probe
from pytest_qbench.generate.process import START_SECONDS
from pytest_qbench.generate.pynguin import check_pynguin
from pytest_qbench.generate.pynguin import pynguin_python
from pytest_qbench.generate.pynguin import run_pynguin
from pytest_qbench.generate.review import relative
from pytest_qbench.generate.review import review_items
from pytest_qbench.generate.sandbox import Sandbox
from pytest_qbench.generate.state import Generation
from pytest_qbench.generate.target import GenerateError
from pytest_qbench.generate.target import Target
from pytest_qbench.generate.target import resolve_target
from pytest_qbench.generate.templates import Call
from pytest_qbench.generate.templates import NoValue
from pytest_qbench.generate.templates import template_calls
from pytest_qbench.generate.templates import test_source
from pytest_qbench.generate.verify import Verdict
from pytest_qbench.generate.verify import verify_alone
from pytest_qbench.generate.verify import verify_batch
from pytest_qbench.generate.writer import check_inside
from pytest_qbench.generate.writer import check_writable
from pytest_qbench.generate.writer import file_names
from pytest_qbench.generate.writer import render
from pytest_qbench.generate.writer import write_file


PYTEST_OK = (0, 1, 5)
"""pytest's exit statuses of a suite that ran: passed, some failed, no tests."""
MAX_NAMED = 20
"""Functions named in the line that says which were not tried."""
GUESS_MARK = "# argument types guessed from"
"""The comment a test on guessed argument types carries (guess.comment)."""
VERIFY_SECONDS = 10.0
"""The end of the budget kept free of Pynguin to verify its files (at most --test-timeout)."""
NOT_PROBED = "was not probed: no result came back from the probe, so it is undecided"
"""Why an item the probe gave no outcome for is dropped (never taken for a verdict)."""


def generate(request: models.GenerateRequest) -> models.GenerateResult:
    """Generate, verify and write tests for ``request.target``; `GenerateError` when it cannot
    start (target not found, hypothesis missing, a file it must not overwrite)."""
    started = time.monotonic()
    project = Path(request.project).resolve()
    target = resolve_target(request.target, project)
    methods = strategies(request)
    out = project / request.out
    names = [out / n for m in target.modules for n in file_names(m.name)]
    check_inside([out, *names], project)
    out = out.resolve()
    names = [out / n for m in target.modules for n in file_names(m.name)]
    check_writable(names)
    scratch = Path(tempfile.mkdtemp(prefix="qbench-generate-"))
    unicode_tables.seed(scratch / "hypothesis")
    cache = pycache.choose(request.pycache, scratch)
    pycache.start(cache, scratch)
    try:
        run = Generation(request, scratch, Sandbox(project, target, scratch), started)
        run.not_run(unavailable(request))
        run.problems += [cache.note] if cache.note else []
        return _generate(run, target, methods, out, started)
    finally:
        unicode_tables.keep(scratch / "hypothesis")
        pycache.forget(scratch)
        shutil.rmtree(scratch, ignore_errors=True)


def strategies(request: models.GenerateRequest) -> list[str]:
    """The generators to use, in order; `GenerateError` when the one asked for cannot run here
    (hybrid goes on without those that cannot: `unavailable`)."""
    missing = unavailable(request)
    if request.strategy in missing:
        slug = "generate-pynguin" if request.strategy == "pynguin" else "generate-extra"
        raise GenerateError(
            f"--strategy {request.strategy} needs {missing[request.strategy]}", slug=slug
        )
    python = pynguin_python(request.pynguin_python)
    chosen = [name for name in _chosen(request) if name not in missing]
    if not has_model(request):  # hybrid without a model: the libraries alone
        chosen = [name for name in chosen if name != "llm"]
    if "pynguin" in chosen and python is not None:
        check_pynguin(python)
    return chosen


def _chosen(request: models.GenerateRequest) -> list[str]:
    return {"hybrid": ["hypothesis", "template", "pynguin", "llm"]}.get(
        request.strategy, [request.strategy]
    )


def unavailable(request: models.GenerateRequest) -> dict[str, str]:
    """The generators of ``request.strategy`` that cannot run here, each with what it needs."""
    chosen = _chosen(request)
    missing = {}
    if "hypothesis" in chosen and importlib.util.find_spec("hypothesis") is None:
        missing["hypothesis"] = (
            f"Hypothesis, which {sys.executable} cannot import; install it: "
            f"{install_extra('generate')}"
        )
    if request.strategy == "llm" and not has_model(request):
        missing["llm"] = "a language model: give --llm-command CMD (or call it over MCP)"
    if "pynguin" in chosen and pynguin_python(request.pynguin_python) is None:
        missing["pynguin"] = (
            "a Python 3.10 with pynguin installed: give --pynguin-python PATH or set "
            "QBENCH_PYNGUIN_PYTHON"
        )
    return missing


def _generate(
    run: Generation, target: Target, methods: list[str], out: Path, started: float
) -> models.GenerateResult:
    request = run.request
    asker = asker_of(request) if "llm" in methods else None
    lines = statements_of(target, run.project)
    box = run.box
    ignore = [f"--ignore={box.inside(out)}"]
    limit = run.limit(request.suite_timeout)
    before = run_with_coverage(
        box.target, box.fresh(), ignore, run.scratch, "before", limit, isolated=False
    )
    if before.finished.timed_out or before.finished.returncode not in PYTEST_OK:
        option = "--suite-timeout" if limit == request.suite_timeout else "--timeout"
        run.problems.append(
            _suite_problem(
                "the existing tests",
                before.finished.returncode,
                before.finished.tail(),
                limit,
                option,
            )
        )
    lines.absorb(before.executed)
    coverage_before = lines.percent()
    functions = _functions_with_gaps(target, lines)
    if asker is not None and len(methods) > 1:
        run.keep_for_model()
    candidates = _candidates(run, target, functions, methods)
    verdicts = {c.id: Verdict("failed", {}, c.unresolved) for c in candidates if c.unresolved}
    batch = [c for c in candidates if c.id not in verdicts]
    if batch and not run.out_of_time():
        batch_limit = run.limit(request.test_timeout * len(batch) + START_SECONDS)
        box.fresh()
        verdicts.update(
            verify_batch(batch, box.target, run.scratch, request.test_timeout, batch_limit)
        )
    for candidate in candidates:
        if run.out_of_time():
            _skip(run, candidate)
        elif _still_uncovered(candidate, functions, lines):
            _judge(run, candidate, target, lines, verdicts.get(candidate.id))
        else:
            _drop(run, candidate, "not run: its functions are covered already")
    if "pynguin" in methods:
        _pynguin(run, target, lines)
    if asker is not None:
        run.give_to_model()
        ask_for_tests(run, asker, functions, lines)
    accept(run, run.scratch / "runs" / "before" / "report.json")
    run.settle_doubts()
    _note_untried(run, functions)
    _fail_without_generator(run, functions)
    written, findings_file = _write(run, target, out)
    after = _measure_after(run, target, written, lines.statements, before.executed)
    return _result(run, target, functions, coverage_before, after, written, findings_file, started)


def _still_uncovered(
    candidate: Candidate, functions: dict[str, list[Function]], lines: Lines
) -> bool:
    """Whether one of the candidate's functions still has uncovered lines (Pynguin's files, which
    cover a whole module, always run)."""
    if candidate.method == "pynguin":
        return True
    for function in functions.get(candidate.module, []):
        if function.qualname in candidate.functions and function.lines_in(
            lines.missing(function.file)
        ):
            return True
    return False


def _skip(run: Generation, candidate: Candidate) -> None:
    """A candidate the budget left unrun."""
    for function in candidate.functions:
        run.skip(candidate.module, function)
    _drop(run, candidate, run.budget_reason())


def _drop(run: Generation, candidate: Candidate, reason: str) -> None:
    """A candidate not run, or not kept, with why."""
    run.dropped.append(
        models.Dropped(
            test=candidate.name,
            function=candidate.functions[0],
            method=candidate.method,
            reason=reason,
        )
    )


def _note_untried(run: Generation, functions: dict[str, list[Function]]) -> None:
    """The functions of which no candidate ran because the budget was spent: a reason each
    (needs_llm_review), one line of the output naming them, and ``not_tried``."""
    skipped = set(run.skipped) - run.judged
    untried = [
        (module, function.qualname)
        for module, gaps in functions.items()
        for function in gaps
        if f"{module}:{function.qualname}" in skipped
    ]
    if not untried:
        return
    for module, qualname in untried:
        run.explain(module, qualname, run.budget_reason())
    names = [f"{module}.{qualname}" for module, qualname in untried]
    more = f", ... and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    run.problems.append(
        f"budget of {run.request.timeout:g} s reached: {len(names)} functions not tried: "
        f"{', '.join(names[:MAX_NAMED])}{more}"
    )
    run.untried = [f"{module}:{qualname}" for module, qualname in untried]


def _fail_without_generator(run: Generation, functions: dict[str, list[Function]]) -> None:
    """Fail closed: with Hypothesis asked for and missing, a run that kept nothing for functions
    with uncovered lines is not a success (what it would have found is unknown)."""
    if "hypothesis" not in run.missing or run.kept or run.findings:
        return
    if any(functions.values()):
        run.failed = True
        run.problems.append(
            "FAILED: no test was kept, and hypothesis could not run (see above): install it, or "
            "give --strategy template to use the templates alone"
        )


def _suite_problem(
    what: str, code: int | None, tail: str, timeout: float, option: str = "--suite-timeout"
) -> str:
    if code is None:
        return f"{what} hung: killed after {timeout:g}s ({option})"
    last = [line for line in tail.splitlines() if line.strip()][-1:] or ["no output"]
    return f"{what} ended with pytest exit status {code}: {last[0][:200]}"


def _functions_with_gaps(target: Target, lines: Lines) -> dict[str, list[Function]]:
    """Per module name, its functions with uncovered lines, most uncovered first."""
    found: dict[str, list[Function]] = {}
    for module in target.modules:
        functions = read_functions(module.path)
        attach_uncovered(functions, lines.missing(module.path))
        gaps = [f for f in functions if f.uncovered]
        gaps.sort(key=lambda f: (-len(f.uncovered), -f.complexity, f.line))
        found[module.name] = gaps
    return found


def _candidates(
    run: Generation, target: Target, functions: dict[str, list[Function]], methods: list[str]
) -> list[Candidate]:
    specs = []
    calls: dict[str, tuple[str, Call]] = {}
    for module, gaps in functions.items():
        module_specs = ghost_specs(module, gaps) if "hypothesis" in methods else []
        unsafe = _hazardous(run, target, module, gaps)
        module_specs = [s for s in module_specs if not unsafe & set(s.functions)]
        for function in gaps:
            if function.qualname in unsafe:
                continue
            if function.is_async:
                run.note(module, function.qualname, "async: not generated (needs an event loop)")
                continue
            if "hypothesis" in methods:
                specs += [
                    s
                    for s in module_specs
                    if function.name == s.functions[0] and not function.is_method
                ]
            if "template" in methods:
                calls.update(_calls(run, module, function))
    probed = Probed()
    if (specs or calls) and not run.out_of_time():
        box = run.box
        box.fresh()
        probed = run_probe(
            box.target,
            specs,
            calls,
            run.scratch,
            run.request.test_timeout,
            limit=run.remaining(),
            refresh=box.fresh,
        )
    if probed.import_errors and set(probed.import_errors) >= {m.name for m in target.modules}:
        run.failed = True
        run.problems.append("FAILED: nothing could be verified: the target cannot be imported")
    for module, error in probed.import_errors.items():
        run.problems.append(f"{module}: cannot be imported: {error}")
        for function in functions.get(module, []):
            run.explain(module, function.qualname, f"its module cannot be imported: {error}")
    calls = {k: v for k, v in calls.items() if v[0] not in probed.import_errors}
    if probed.problem:
        run.problems.append(probed.problem)
    for (module_name, qualname), why in probed.died.items():
        run.note(module_name, qualname, why)
    return _ghost_candidates(run, specs, probed) + _template_candidates(run, calls, probed)


def _hazardous(run: Generation, target: Target, module: str, gaps: list[Function]) -> set[str]:
    """The functions of ``gaps`` that must not be run with generated inputs (hazards.py), each
    with its reason; their names are also kept to drop Pynguin's tests that call them."""
    path = next(m.path for m in target.modules if m.name == module)
    every = read_functions(path)
    found = set()
    for function in gaps:
        why = hazard(function, every)
        if why is not None:
            run.note(module, function.qualname, why)
            found.add(function.qualname)
            run.unsafe.add(function.name)
    return found


def _pynguin(run: Generation, target: Target, lines: Lines) -> None:
    """Pynguin last, on the modules still uncovered, with the time that is left less what
    verifying its files takes; what was kept before is kept whatever Pynguin does."""
    python = pynguin_python(run.request.pynguin_python)
    modules = [m.name for m in target.modules if lines.missing(m.path)]
    if python is None or not modules:
        return
    verifying = min(run.request.test_timeout, VERIFY_SECONDS)
    until = run.deadline - verifying
    box = run.box
    box.fresh()
    found, problems = run_pynguin(
        python, box.target, modules, run.scratch, run.request.pynguin_seconds, until
    )
    run.problems += problems
    for candidate in found:
        if calls_any(candidate.body, run.unsafe):
            _drop(run, candidate, "calls a function not run with generated inputs")
        elif run.out_of_time():
            _skip(run, candidate)
        else:
            _judge(run, candidate, target, lines, None)


def _calls(run: Generation, module: str, function: Function) -> dict[str, tuple[str, Call]]:
    try:
        calls = template_calls(function)
    except NoValue as exc:
        run.note(module, function.qualname, str(exc))
        return {}
    base = f"{module}.{function.qualname}".replace(".", "_")
    return {f"{base}__{call.label}": (module, call) for call in calls}


def _ghost_candidates(run: Generation, specs: list[GhostSpec], probed: Probed) -> list[Candidate]:
    found = []
    for spec in specs:
        result = probed.ghost.get(spec.id)
        function = spec.functions[0]
        if result is None:
            if run.out_of_time():
                run.skip(spec.module, function)
            elif spec.module not in probed.import_errors:  # undecided: said, never a verdict
                run.doubt(spec.module, function, f"ghostwriter ({spec.kind}) {NOT_PROBED}")
            continue
        if "code" not in result:
            why = "hung" if result.get("timeout") else result.get("error", "")
            run.doubt(spec.module, function, f"ghostwriter ({spec.kind}) failed: {why}")
            continue
        code: str = result["code"]
        if "st.nothing()" in code:
            args = _nothing_args(code)
            run.doubt(
                spec.module, function, f"strategies could not be inferred for {args}{_kind(spec)}"
            )
            continue
        guesses = spec.guesses()
        code = bound_guessed_ints(with_settings(code, run.request.max_examples), guesses)
        imports, body = split_source(code)
        if guesses:
            body = f"{comment(guesses)}\n{body}"
            _note_guesses(run, spec.module, function, guesses)
        ident = spec.id.replace(":", "_").replace(".", "_").replace("+", "_")
        found.append(
            Candidate(
                ident,
                "hypothesis",
                spec.module,
                list(spec.functions),
                imports,
                body,
                declared=spec.except_,
                unresolved=result.get("unresolved"),
            )
        )
    return found


def _kind(spec: GhostSpec) -> str:
    """`` (in its roundtrip test with decode)``: which test, when not its own fuzz test."""
    others = [f for f in spec.functions if f != spec.functions[0]]
    if spec.kind == "fuzz":
        return ""
    return f" (in its {spec.kind} test{' with ' + ', '.join(others) if others else ''})"


def _note_guesses(run: Generation, module: str, function: str, guesses: list[Guess]) -> None:
    """One line of the output per function whose argument types were guessed."""
    line = f"{module}.{function}: {comment(guesses)[2:]} (review the tests that use them)"
    if line not in run.problems:
        run.problems.append(line)


def _nothing_args(code: str) -> str:
    import re

    names = re.findall(r"(\w+)=st\.nothing\(\)", code)
    return ", ".join(f"argument `{n}`" for n in names) or "an argument"


def _template_candidates(
    run: Generation, calls: dict[str, tuple[str, Call]], probed: Probed
) -> list[Candidate]:
    found = []
    for ident, (module, call) in calls.items():
        outcome = probed.probes.get(ident)
        qualname = call.function.qualname
        if outcome is None and run.out_of_time():
            run.skip(module, qualname)
            continue
        if outcome is None or outcome.get("timeout") or "error" in outcome:
            why = (
                "hung"
                if outcome and outcome.get("timeout")
                else (outcome or {}).get("error", NOT_PROBED)
            )
            run.dropped.append(
                models.Dropped(
                    test=ident,
                    function=qualname,
                    method="template",
                    reason=f"the call {call.args_text() or '()'} {why}",
                )
            )
            continue
        try:
            body, imports = test_source(call, module, outcome)
        except ValueError as exc:
            run.dropped.append(
                models.Dropped(test=ident, function=qualname, method="template", reason=str(exc))
            )
            continue
        if call.guessed:
            _note_guesses(run, module, qualname, list(call.guessed))
        found.append(Candidate(ident, "template", module, [qualname], imports, body))
    return found


def _judge(
    run: Generation, candidate: Candidate, target: Target, lines: Lines, verdict: Verdict | None
) -> None:
    if verdict is None:
        verdict = verify_alone(run, candidate)
    if verdict.outcome == "hung" and run.out_of_time():
        _skip(run, candidate)  # stopped by the budget, not by its own hang
        return
    run.judged.update(f"{candidate.module}:{f}" for f in candidate.functions)
    function = candidate.functions[0]
    if verdict.outcome == "passed":
        if lines.adds(verdict.executed):
            lines.absorb(verdict.executed)
            run.kept.append(candidate)
            return
        reason = "adds no coverage"
    elif verdict.outcome == "finding":
        example, error = verdict.detail.split("|", 1)
        if _declared(candidate, error):
            reason = f"{error} with {example}: an input it rejects as it declares, not a bug"
        elif not _wrong_guess(candidate, error):
            run.findings.append((candidate, example, error))
            return
        else:
            reason = f"{error} with {example}: likely a wrong type guess, not a bug"
    else:
        reason = (
            verdict.detail if verdict.outcome == "hung" else f"{verdict.outcome}: {verdict.detail}"
        )
        if "Could not resolve" in verdict.detail:
            what = verdict.detail.split("Could not resolve", 1)[1].split(" to a strategy")[0]
            run.doubt(
                candidate.module, function, f"{candidate.name}: no strategy for {what.strip()}"
            )
        elif verdict.outcome in ("hung", "error"):
            run.note(candidate.module, function, f"{candidate.name} {reason}")
    run.dropped.append(
        models.Dropped(
            test=candidate.name, function=function, method=candidate.method, reason=reason
        )
    )


def _declared(candidate: Candidate, error: str) -> bool:
    """Whether a failure is an exception the candidate's functions declare (``ValueError: ...``
    against ``raise ValueError`` or a docstring's ``Raises: ValueError``)."""
    raised = error.split(":", 1)[0].strip().rsplit(".", 1)[-1]
    return raised in {name.rsplit(".", 1)[-1] for name in candidate.declared}


def _wrong_guess(candidate: Candidate, error: str) -> bool:
    """Whether a failure is a type error of a test that runs on guessed argument types: no
    finding (the guess, not the code, is likely wrong)."""
    guessed = GUESS_MARK in candidate.body
    return guessed and error.startswith(("TypeError", "AttributeError"))


def _write(run: Generation, target: Target, out: Path) -> tuple[list[Path], str | None]:
    command = regenerate_command(run.request)
    written: list[Path] = []
    findings_file = None
    for module in target.modules:
        tests_name, findings_name = file_names(module.name)
        kept = [c for c in run.kept if c.module == module.name]
        if kept:
            tests = sum(c.tests for c in kept)
            text = render(kept, command, f"{tests} tests of {module.name}", [])
            run.problems += write_file(out / tests_name, text, run.project)
            written.append(out / tests_name)
        found = [
            _as_xfail(c, example, error)
            for c, example, error in run.findings
            if c.module == module.name
        ]
        if found:
            what = f"possible bugs in {module.name}: review each"
            text = render(found, command, what, ["import pytest", "from hypothesis import example"])
            run.problems += write_file(out / findings_name, text, run.project)
            written.append(out / findings_name)
            findings_file = str((out / findings_name).relative_to(run.project))
    return written, findings_file


def _as_xfail(candidate: Candidate, example: str, error: str) -> Candidate:
    reason = f"found by qbench generate: {error} with {example}".replace('"', "'")
    marks = f'@pytest.mark.xfail(reason="{reason[:200]}", strict=True)\n@example({example})\n'
    body = marks + candidate.body.lstrip()
    return Candidate(
        candidate.id,
        candidate.method,
        candidate.module,
        candidate.functions,
        candidate.imports,
        body,
    )


def _measure_after(
    run: Generation,
    target: Target,
    written: list[Path],
    statements: dict[Path, set[int]],
    before: dict[Path, set[int]],
) -> Lines:
    """The existing suite's lines (``before``) plus those of the written files, run in the
    project with its configuration: measured, never the sum of the candidates' runs."""
    after = Lines(statements)
    after.absorb(before)
    if written:
        box = run.box
        measured = run_with_coverage(
            box.target,
            box.fresh(again=True),
            [str(box.inside(p)) for p in written],
            run.scratch,
            "after",
            run.request.suite_timeout,
            isolated=False,
        )
        if measured.finished.returncode != 0:
            run.failed = True
            run.problems.append(
                _suite_problem(
                    "the written tests",
                    measured.finished.returncode,
                    measured.finished.tail(),
                    run.request.suite_timeout,
                )
            )
            run.problems.append("FAILED: the written tests do not pass in the project")
        after.absorb(measured.executed)
    return after


def regenerate_command(request: models.GenerateRequest) -> str:
    """The ``qbench generate`` command line that regenerates the files."""
    parts = [
        "qbench",
        "generate",
        request.target,
        "--strategy",
        request.strategy,
        "--out",
        request.out,
        "--coverage-goal",
        f"{request.coverage_goal:g}",
    ]
    if request.llm_command:
        parts += ["--llm-command", request.llm_command]
    return shlex.join(parts)


def _result(
    run: Generation,
    target: Target,
    functions: dict[str, list[Function]],
    coverage_before: float,
    after: Lines,
    written: list[Path],
    findings_file: str | None,
    started: float,
) -> models.GenerateResult:
    request = run.request
    achieved = after.percent()
    methods = models.GenerationMethod(
        hypothesis=sum(c.tests for c in run.kept if c.method == "hypothesis"),
        template=sum(c.tests for c in run.kept if c.method == "template"),
        pynguin=sum(c.tests for c in run.kept if c.method == "pynguin"),
        llm=sum(c.tests for c in run.kept if c.method == "llm"),
    )
    count = methods.hypothesis + methods.template + methods.pynguin + methods.llm
    review = review_items(functions, after, run.reasons, run.project)
    by_file = {relative(p, run.project): sorted(after.missing(p)) for p in after.statements}
    by_file = {k: v for k, v in by_file.items() if v}
    gap = models.CoverageGap(
        percentage_needed=round(max(0.0, request.coverage_goal - achieved), 2),
        uncovered_lines=next(iter(by_file.values()), []) if len(target.modules) == 1 else [],
        uncovered_by_file=by_file,
    )
    failed = run.failed
    findings = [
        models.Finding(test=c.name, function=c.functions[0], falsifying_example=ex, error=err)
        for c, ex, err in run.findings
    ]
    goal_met = achieved >= request.coverage_goal
    return models.GenerateResult(
        success=not failed,
        auto_generated=models.AutoGenerated(
            count=count,
            files=[relative(p, run.project) for p in written],
            coverage_achieved=round(achieved, 2),
            generation_method=methods,
        ),
        needs_llm_review=review,
        coverage_gap=gap,
        tokens_used=run.tokens_used,
        llm_requests=run.llm_requests,
        next_steps=next_steps(goal_met, written, findings_file, review),
        target=target.given,
        coverage_before=round(coverage_before, 2),
        goal_met=goal_met,
        kept=count,
        dropped=run.dropped,
        findings=findings,
        findings_file=findings_file,
        problems=run.problems,
        wall_seconds=round(time.monotonic() - started, 2),
        not_tried=run.untried,
    )


def next_steps(
    goal_met: bool, written: list[Path], findings_file: str | None, review: list[models.ReviewItem]
) -> list[str]:
    """What a person does next."""
    steps = []
    if written:
        steps.append("Read the generated tests and commit those whose assertions you agree with")
    if findings_file:
        steps.append(
            f"Review {findings_file}: each xfail is a possible bug; fix it or delete the test"
        )
    if review:
        steps.append(f"Write tests by hand for the {len(review)} functions in needs_llm_review")
    if goal_met:
        steps.append("Coverage goal met")
    return steps
