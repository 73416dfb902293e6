"""Rendering reports with the built-in and custom Jinja templates."""

from __future__ import annotations

import json
import os
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from test_markdown import markdown_structure
from test_markdown import nasty_text

from pytest_qbench.core.errors import TemplateError
from pytest_qbench.core.types import Outcome
from pytest_qbench.report import models
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import Attempt
from pytest_qbench.report.models import Captured
from pytest_qbench.report.models import CIInfo
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSection
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import SubtestResult
from pytest_qbench.report.render import list_builtin_templates
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render


GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("QBENCH_UPDATE_GOLDEN") == "1"
FIXED_TIME = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
ENVIRONMENT = Environment(
    python="3.12.4",
    implementation="CPython",
    platform="Linux-6.1-x86_64",
    pytest_version="9.0.0",
    qbench_version="0.1.0",
)


def result(nodeid: str, outcome: Outcome, **fields: Any) -> models.TestResult:
    """A result for ``nodeid`` (``file::name``), counted as pytest counts its outcome."""
    file, _, name = nodeid.partition("::")
    counted = {"error": "error"}.get(outcome, outcome)
    fields.setdefault("counted_as", [counted])
    return models.TestResult(nodeid=nodeid, test_name=name, file=file, outcome=outcome, **fields)


def report_of(
    results: list[models.TestResult],
    *,
    collection_errors: list[Diagnostic] | None = None,
    warnings: list[Diagnostic] | None = None,
    **run: Any,
) -> models.TestReport:
    """A report of ``results`` whose run id, timestamps and duration are pinned."""
    collection_errors = collection_errors or []
    warnings = warnings or []
    summary = ReportSummary.model_validate(
        aggregate(results, collection_errors, warnings).summary(12.5)
    )
    return models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=FIXED_TIME),
        run=RunMeta(
            **{
                "run_id": "20260102T030405Z-abcdef",
                "started_at": FIXED_TIME,
                "completed_at": FIXED_TIME,
                "exit_code": 1,
                "cwd": "/src",
                "command": ["pytest", "-p", "qbench"],
                **run,
            }
        ),
        environment=ENVIRONMENT,
        summary=summary,
        results=results,
        collection_errors=collection_errors,
        warnings=warnings,
    )


def golden_report() -> models.TestReport:
    """A small report with every section of report.md; all volatile fields are fixed."""
    results = [
        result("tests/test_a.py::test_ok", "passed", line=3, duration=0.25),
        result(
            "tests/test_a.py::test_total[2-3]",
            "failed",
            line=7,
            duration=1.5,
            failure=Failure(
                error_type="AssertionError",
                error_message="assert 5 == 6\n +  where 5 = total(2, 3)",
                file="tests/test_a.py",
                line=9,
                stack_trace="def test_total():\n>       assert total(2, 3) == 6\nE       assert 5 == 6",
                falsifying_example="test_total(a=2, b=3)",
            ),
            captured=Captured(stdout="computing total\n", log="INFO cart: 2 items"),
        ),
        result(
            "tests/test_a.py::test_subs",
            "failed",
            line=12,
            duration=0.1,
            failure=Failure(
                error_type="ValueError",
                error_message="bad | value",
                file="tests/test_a.py",
                line=14,
                stack_trace="ValueError: bad | value",
            ),
            subtests=[
                SubtestResult(
                    description="[even] (i=2)",
                    outcome="failed",
                    failure=Failure(error_type="AssertionError", error_message="assert 2 % 2"),
                ),
                SubtestResult(description="[even] (i=1)", outcome="passed"),
            ],
        ),
        result(
            "tests/test_b.py::test_db",
            "error",
            line=20,
            duration=0.05,
            failure=Failure(
                error_type="RuntimeError",
                error_message="no database",
                phase="setup",
                file="tests/conftest.py",
                line=5,
                stack_trace="@pytest.fixture\ndef db():\n>   raise RuntimeError('no database')\n"
                "E   RuntimeError: no database",
            ),
        ),
        result(
            "tests/test_b.py::test_retry",
            "passed",
            line=30,
            duration=0.3,
            reruns=1,
            flaky=True,
            counted_as=["passed", "rerun"],
            attempts=[
                Attempt(
                    outcome="failed",
                    duration=0.1,
                    failure=Failure(error_type="ConnectionError", error_message="timed out"),
                )
            ],
        ),
        result("tests/test_b.py::test_win", "skipped", line=40, reason="needs Windows"),
        result("tests/test_b.py::test_mac", "skipped", line=44, reason="needs Windows"),
        result("tests/test_c.py::test_known", "xfailed", line=2, reason="bug #12", duration=0.01),
        result("tests/test_c.py::test_fixed", "xpassed", line=6, reason="fixed?", duration=0.02),
        result(
            "tests/test_c.py::test_strict",
            "failed",
            line=10,
            failure=Failure(
                error_type="XPASS(strict)",
                error_message="must fail",
                file="tests/test_c.py",
                line=10,
                stack_trace="[XPASS(strict)] must fail",
            ),
        ),
    ]
    report = report_of(
        results,
        collection_errors=[
            Diagnostic(
                severity="error",
                code="collection-error",
                message="ImportError while importing test module\n"
                "E   ModuleNotFoundError: No module named 'numpy'",
                file="tests/test_np.py",
                nodeid="tests/test_np.py",
            )
        ],
        warnings=[
            Diagnostic(
                severity="warning",
                code="DeprecationWarning",
                message="old_api() is deprecated",
                file="tests/test_a.py",
                line=4,
                nodeid="tests/test_a.py::test_ok",
            ),
            Diagnostic(
                tool="qbench",
                severity="warning",
                code="internal-error",
                message="internal error in pytest_collectreport: boom",
            ),
        ],
        interrupted=True,
        exit_code=2,
    )
    report.environment = ENVIRONMENT.model_copy(
        update={"ci": CIInfo(provider="github-actions", commit="0123456789abcdef01", branch="main")}
    )
    report.sections.append(ReportSection(title="Coverage", body="Total: **91%**"))
    return report


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/golden/<name>`` whole (QBENCH_UPDATE_GOLDEN=1 rewrites it)."""
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_text(text, encoding="utf-8", newline="\n")
    assert text == path.read_text(encoding="utf-8")


def test_report_md_golden() -> None:
    """report.md of a small fixed report (its record, as the plugin and the CLI render it) equals
    tests/golden/report.md; the model renders the same."""
    text = render(golden_report().model_dump(mode="json"))
    check_golden("report.md", text)
    assert render(golden_report()) == text


def test_summary_md_golden() -> None:
    """summary.md.j2 (the CI job summary) equals tests/golden/summary.md and ends with a newline."""
    text = render(golden_report().model_dump(mode="json"), "summary.md.j2")
    check_golden("summary.md", text)
    assert text.endswith("\n")
    assert render(golden_report(), "summary.md.j2") == text


def test_golden_report_structure() -> None:
    """The golden report has every section once, well-formed."""
    headings = markdown_structure(render(golden_report()))
    assert [h.split(" (")[0] for h in headings[2]] == [
        "Failures",
        "Errors",
        "Collection errors",
        "Flaky",
        "Warnings",
        "Skipped",
        "Expected failures",
        "Slowest tests",
        "Coverage",
    ]


def test_all_passed_report() -> None:
    """A green run: a tick, no problem sections, and a final newline."""
    report = report_of([result("t.py::test_a", "passed")], exit_code=0)
    text = render(report)
    assert text.startswith("# ✅ Test report: 1 passed in 12.5s\n")
    assert "## " not in text
    assert "Interrupted" not in text
    assert text.endswith("\n")


def test_no_tests() -> None:
    """An empty run says so in pytest's words, and is red: pytest exits 5, which fails a CI
    job, and the report says why."""
    text = render(report_of([], exit_code=5))
    assert text.startswith("# ❌ Test report: no tests ran in 12.5s\n")
    assert "**❌ Not green:** pytest ran no tests (exit status 5" in text


@pytest.mark.parametrize("exit_code", [1, 3])
def test_a_failing_exit_status_is_never_green(exit_code: int) -> None:
    """Every test passed, but pytest exited 3 (an internal error) or 1 (a plugin such as syrupy
    failed the session): the headline is red, as the job is, and as the digest's ``success``
    already said (it was green)."""
    report = report_of([result("t.py::test_a", "passed")], exit_code=exit_code)
    assert render(report).startswith("# ❌ Test report: 1 passed in 12.5s\n")


@pytest.mark.parametrize(
    ("count", "words"),
    [(1, "1 failed, 1 warning, 1 error"), (2, "2 failed, 2 warnings, 2 errors")],
)
def test_headline_plurals_like_pytest(count: int, words: str) -> None:
    """The headline makes 'warnings' and 'errors' singular for one, as pytest does."""
    results = [result(f"t.py::test_{i}", "failed") for i in range(count)]
    results += [result(f"t.py::test_e{i}", "error") for i in range(count)]
    warnings = [Diagnostic(severity="warning", message="w") for _ in range(count)]
    text = render(report_of(results, warnings=warnings))
    assert text.startswith(f"# ❌ Test report: {words} in 12.5s\n")


def failures_of(count: int, outcome: Outcome = "failed") -> list[models.TestResult]:
    """``count`` results with ``outcome`` and a short failure each."""
    return [
        result(
            f"tests/test_many.py::test_{outcome}_{i}",
            outcome,
            failure=Failure(error_type="AssertionError", error_message=f"case {i}"),
        )
        for i in range(count)
    ]


def test_cap_lists_first_items_and_counts_the_rest() -> None:
    """Past max_items (50), each list stops and says how many more there are."""
    skips = [result(f"t.py::test_s{i}", "skipped", reason=f"reason {i}") for i in range(53)]
    warnings = [Diagnostic(severity="warning", message=f"w{i}") for i in range(51)]
    collection_errors = [
        Diagnostic(severity="error", message="boom", file=f"tests/test_c{i}.py") for i in range(52)
    ]
    report = report_of(
        failures_of(60) + failures_of(55, "error") + skips,
        warnings=warnings,
        collection_errors=collection_errors,
    )
    text = render(report)
    headings = markdown_structure(text)
    assert len(headings[3]) == 50 + 50 + 50
    assert "test_failed_49`" in text and "test_failed_50`" not in text
    assert "## Failures (60)" in text
    assert "\n…and 10 more failures (all are in report.json).\n" in text
    assert "\n…and 5 more errors (all are in report.json).\n" in text
    assert "\n…and 2 more collection errors.\n" in text
    assert "\n…and 1 more warnings.\n" in text
    assert "\n…and 3 more skipped tests with other reasons.\n" in text


def test_cap_is_configurable() -> None:
    """max_items sets the cap."""
    text = render(report_of(failures_of(4)), max_items=3)
    assert text.count("\n### ") == 3
    assert "…and 1 more failures" in text


def test_large_report_has_bounded_markdown() -> None:
    """10 000 results (failures, errors, skips, warnings) render to well under 60 KB."""
    trace = "\n".join(f"tests/test_big.py:{n}: in helper_{n}\n    call()" for n in range(8))
    results = []
    for i in range(10_000):
        kind = i % 10
        if kind in (0, 1):
            failure = Failure(
                error_type="AssertionError",
                error_message=f"assert {i} == {i + 1}",
                file="tests/test_big.py",
                line=i,
                stack_trace=trace,
            )
            results.append(result(f"tests/test_big.py::test_{i}", "failed", failure=failure))
        elif kind == 2:
            results.append(result(f"tests/test_big.py::test_{i}", "error", failure=None))
        elif kind == 3:
            results.append(result(f"tests/test_big.py::test_{i}", "skipped", reason=f"r{i}"))
        elif kind == 4:
            results.append(result(f"tests/test_big.py::test_{i}", "xfailed", reason="bug"))
        else:
            results.append(result(f"tests/test_big.py::test_{i}", "passed", duration=i / 1000))
    warnings = [Diagnostic(severity="warning", message=f"deprecated {i}") for i in range(2000)]
    text = render(report_of(results, warnings=warnings))
    assert text.startswith("# ❌ Test report: 2000 failed, 5000 passed, 1000 skipped, 1000 xfailed")
    assert len(text.encode()) < 60_000
    markdown_structure(text)


def test_interrupted_run_is_flagged() -> None:
    """An interrupted run gets a cross and says why, even with nothing failed."""
    text = render(report_of([result("t.py::test_a", "passed")], interrupted=True))
    assert text.startswith("# ❌ ")
    assert "\n\n**❌ Not green:**" in text
    assert "\n- the run did not finish; this report holds the tests that finished\n" in text


JSON_TEMPLATE = """\
{"run_id": {{ report.run.run_id | tojson }},
 "started_at": {{ report.run.started_at | tojson }},
 "total": {{ summary.total }},
 "results": [
{% for r in results %}
  {{ {"nodeid": r.nodeid, "outcome": r.outcome,
      "message": r.failure.error_message if r.failure else none} | tojson }}{{ "," if not loop.last }}
{% endfor %}
 ],
 "first_failure": {{ view.failures.items[0] | tojson }},
 "skip_groups": {{ view.skip_groups | tojson }}}
"""


def test_custom_json_template(tmp_path: Path) -> None:
    """A JSON template that sends every value through tojson yields valid, exact JSON."""
    template = tmp_path / "results.json.j2"
    template.write_text(JSON_TEMPLATE, encoding="utf-8")
    nasty = 'a "quoted" \\ back\nslash </script> \x1b[31m é'
    failure = Failure(error_type="ValueError", error_message=nasty)
    results = [
        result(f"t.py::test_{nasty}", "failed", failure=failure),
        result("t.py::test_ok", "passed"),
        result("t.py::test_skip", "skipped", reason=nasty),
    ]
    report = report_of(results)
    text = render(report.model_dump(mode="json"), str(template))
    assert render(report, str(template)) == text
    data = json.loads(text)
    assert data["run_id"] == report.run.run_id
    assert data["started_at"] == "2026-01-02T03:04:05Z"
    assert data["total"] == 3
    assert data["results"] == [
        {"nodeid": r.nodeid, "outcome": r.outcome, "message": r.failure and nasty} for r in results
    ]
    assert data["first_failure"] == results[0].model_dump(mode="json")
    assert data["skip_groups"] == [
        {"reason": nasty, "count": 1, "example": results[2].model_dump(mode="json")}
    ]


def test_custom_template_iterates_lazy_results(tmp_path: Path) -> None:
    """``results`` may be a one-shot iterator: the template still sees every result."""
    (tmp_path / "ids.txt.j2").write_text("{% for r in results %}{{ r.nodeid }}\n{% endfor %}")
    results = [result(f"t.py::test_{i}", "passed").model_dump(mode="json") for i in range(3)]
    text = render(
        report_of([]), "ids.txt.j2", results=iter(results), env=make_environment(tmp_path)
    )
    assert text == "t.py::test_0\nt.py::test_1\nt.py::test_2\n"


def test_user_template_dir_overrides_builtin(tmp_path: Path) -> None:
    """A report.md.j2 in the user's directory wins, and can still include the built-in summary."""
    (tmp_path / "report.md.j2").write_text('{% include "summary.md.j2" %}\nCustom footer\n')
    report = report_of([result("t.py::test_a", "passed")], exit_code=0)
    text = render(report, env=make_environment(tmp_path))
    assert text.startswith("# ✅ Test report: 1 passed")
    assert text.endswith(" UTC\nCustom footer\n")


def test_missing_template_lists_builtins() -> None:
    """An unknown template name is a TemplateError that names the built-in templates."""
    assert list_builtin_templates() == ["report.md.j2", "step-summary.md.j2", "summary.md.j2"]
    with pytest.raises(TemplateError) as excinfo:
        render(report_of([]), "nope.md.j2")
    message = str(excinfo.value)
    assert "'nope.md.j2' not found" in message
    assert "(built-ins: report.md.j2, step-summary.md.j2, summary.md.j2)" in message
    assert excinfo.value.slug == "template-missing"


def test_template_syntax_error(tmp_path: Path) -> None:
    """A template that does not parse is a TemplateError with the line."""
    bad = tmp_path / "bad.j2"
    bad.write_text("ok\n{% if %}\n")
    with pytest.raises(TemplateError, match="syntax error at line 2") as excinfo:
        render(report_of([]), str(bad))
    assert excinfo.value.slug == "template-syntax"


def test_template_undefined_name(tmp_path: Path) -> None:
    """Templates are strict: an undefined name is a TemplateError, not an empty string."""
    bad = tmp_path / "undefined.j2"
    bad.write_text("{{ report.no_such_field }}")
    with pytest.raises(TemplateError, match="no_such_field") as excinfo:
        render(report_of([]), str(bad))
    assert excinfo.value.slug == "template-render"


@st.composite
def nasty_reports(draw: st.DrawFn) -> tuple[models.TestReport, int]:
    """A report with one item or more in every section, all its text arbitrary.

    Returns the report and how many ``###`` headings it should have.
    """

    def text() -> str:
        return draw(nasty_text)

    def failure(phase: models.Phase = "call") -> Failure:
        return Failure(
            error_type=text(),
            error_message=text(),
            phase=phase,
            file=text() or None,
            line=draw(st.none() | st.integers(1, 10_000)),
            stack_trace=text(),
            falsifying_example=draw(st.none() | nasty_text),
        )

    def nasty_result(outcome: Outcome, **fields: Any) -> models.TestResult:
        return models.TestResult(
            nodeid=text(), test_name=text(), file=text(), outcome=outcome, duration=0.5, **fields
        )

    n_failed, n_errors, n_collection = (draw(st.integers(1, 3)) for _ in range(3))
    results = [
        nasty_result(
            "failed",
            failure=failure(),
            captured=Captured(stdout=text(), stderr=text(), log=text()),
            subtests=[
                SubtestResult(
                    description=text(),
                    outcome="failed",
                    failure=draw(st.none() | st.just(failure())),
                )
            ],
        )
        for _ in range(n_failed)
    ]
    results += [nasty_result("error", failure=failure("setup")) for _ in range(n_errors)]
    attempt = Attempt(outcome="failed", duration=0.1, failure=failure())
    results.append(nasty_result("passed", flaky=True, reruns=1, attempts=[attempt]))
    results += [nasty_result("skipped", reason=text()) for _ in range(draw(st.integers(1, 3)))]
    results += [nasty_result("xfailed", reason=text()), nasty_result("xpassed", reason=text())]
    diagnostic = st.builds(
        Diagnostic,
        severity=st.sampled_from(["error", "warning", "info"]),
        message=nasty_text,
        code=st.none() | nasty_text,
        file=st.none() | nasty_text,
        line=st.none() | st.integers(1, 100),
        nodeid=st.none() | nasty_text,
    )
    collection_errors = draw(st.lists(diagnostic, min_size=n_collection, max_size=n_collection))
    warnings = draw(st.lists(diagnostic, min_size=1, max_size=3))
    report = report_of(
        results, collection_errors=collection_errors, warnings=warnings, run_id=text()
    )
    report.summary.other[text()] = 1
    report.environment = ENVIRONMENT.model_copy(
        update={"ci": CIInfo(provider=text(), branch=text() or None, commit=text() or None)}
    )
    return report, n_failed + n_errors + n_collection


BUILTINS = make_environment()
EXPECTED_SECTIONS = {
    "Failures",
    "Errors",
    "Collection errors",
    "Flaky",
    "Warnings",
    "Skipped",
    "Expected failures",
    "Slowest tests",
}


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nasty_reports())
def test_markdown_keeps_its_structure_for_any_text(case: tuple[models.TestReport, int]) -> None:
    """Arbitrary names, messages, traces, reasons and warnings never break report.md's structure."""
    report, blocks = case
    text = render(report.model_dump(mode="json"), env=BUILTINS)
    headings = markdown_structure(text)
    assert len(headings[1]) == 1
    assert {h.split(" (")[0] for h in headings[2]} == EXPECTED_SECTIONS
    assert len(headings[2]) == len(EXPECTED_SECTIONS)
    assert len(headings[3]) == blocks
    assert set(headings) == {1, 2, 3}
