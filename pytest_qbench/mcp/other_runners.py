"""``run_test_workflow``'s ``test_type``: the runners other than pytest (vitest, jest) run on
the project, their results in the same run and answer as pytest's, each failure naming its
runner. ``all`` (the default) is every runner that applies to the project; without pytest among
them no pytest child is started. The runners' machinery is imported when a run needs it."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING
from typing import Literal

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.command import plan_run


if TYPE_CHECKING:
    from pytest_qbench.mcp.command import RunPlan
    from pytest_qbench.mcp.service import RunService
    from pytest_qbench.mcp.testrun import RunResult
    from pytest_qbench.report.models import TestReport

TestType = Literal["pytest", "vitest", "jest", "all"]
"""What ``test_type`` takes."""
PYTEST_ONLY = (
    "keyword",
    "markers",
    "coverage",
    "coverage_threshold",
    "coverage_source",
    "fail_fast",
)
"""Arguments only pytest reads: refused for a run without pytest."""


def choose_runners(tools: RunService, test_type: TestType | None) -> list[str]:
    """The runners of ``test_type``; ``all`` or none given: every one that applies."""
    if test_type is not None and test_type != "all":
        return [test_type]
    from pytest_qbench.tools.run_tests import applicable

    return list(applicable(tools.config.root))


def refuse_pytest_only(request: RunRequest, runners: list[str]) -> None:
    """A pytest-only argument given to a run without pytest is refused, not ignored.

    Raises:
        ToolFailure: naming the argument.
    """
    given = [name for name in PYTEST_ONLY if is_given(getattr(request, name))]
    if given:
        raise ToolFailure(
            f"{', '.join(given)}: pytest only, and this run has {', '.join(runners)}; "
            'leave them out, or use test_type "pytest" or "all"'
        )


def is_given(value: object) -> bool:
    """Whether an argument was given: not its default (``None``, ``False``, an empty list);
    ``0`` is given (``coverage_threshold=0`` compared equal to ``False`` and was ignored)."""
    if value is None or value is False:
        return False
    return not (isinstance(value, (list, tuple)) and not value)


def add_other_runners(
    others: list[str],
    paths: list[str],
    stop: threading.Event,
    deadline: float,
    plan: RunPlan,
    report: TestReport,
    whole: bool = False,
) -> TestReport:
    """``report`` (pytest's run) with the ``others`` runners' results added, its report.json and
    report.md written again (pytest's end indexed it already). They get what is left of the
    run's timeout (``deadline``, a ``time.monotonic()`` instant), and ``stop`` (the client
    cancelled) kills them; ``whole``: ``test_type`` ``all`` (`run_tests`' ``whole``)."""
    if not others:
        return report
    from pytest_qbench.tools.run_tests import merge_report
    from pytest_qbench.tools.run_tests import run_tests

    left = max(0.0, deadline - time.monotonic())
    gathered = run_tests(
        plan.cwd, others, paths, plan.run_dir, timeout=left, stop=stop, whole=whole
    )
    merged = merge_report(report, gathered)
    write_reports(merged, plan, index=False)
    return merged


def run_without_pytest(
    tools: RunService,
    request: RunRequest,
    runners: list[str],
    stop: threading.Event,
    whole: bool = False,
) -> RunResult:
    """vitest and/or jest alone, as one stored, indexed run; ``whole``: ``test_type`` ``all``
    (`run_tests`' ``whole``).

    Raises:
        ToolFailure: a pytest-only argument, or a refused path.
    """
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.mcp.testrun import build_result
    from pytest_qbench.tools.run_tests import build_report
    from pytest_qbench.tools.run_tests import run_tests
    from pytest_qbench.tools.run_tests import started_now

    refuse_pytest_only(request, runners)
    plan = plan_run(tools.config, request)
    started = started_now()
    plan.run_dir.mkdir(parents=True)
    paths = list(request.test_path)
    gathered = run_tests(
        plan.cwd, runners, paths, plan.run_dir, timeout=plan.timeout, stop=stop, whole=whole
    )
    command = ["qbench-mcp", "run_test_workflow", "--test-type", ",".join(runners), *paths]
    report = build_report(gathered, plan.run_id, started, command, plan.cwd)
    write_reports(report, plan, index=True, db=configured_db(None, tools.config.root))
    stopped = "cancelled" if stop.is_set() else None
    return build_result(plan, gathered.exit_code, report, stopped, tools.config.budget)


def write_reports(report: TestReport, plan: RunPlan, *, index: bool, db: str | None = None) -> None:
    """The run's report.json and report.md (and its index entry, with ``index``)."""
    from pytest_qbench.history.publish import publish_test_run

    record = report.model_dump(mode="json")
    qbench_dir = plan.run_dir.parent.parent
    publish_test_run(record, qbench_dir, plan.run_dir, index=index, db=db)  # type: ignore[arg-type]
