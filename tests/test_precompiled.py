"""report.md from the built-in templates' kept code, without importing Jinja: the same text."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from test_render import failures_of
from test_render import golden_report
from test_render import nasty_reports
from test_render import report_of
from test_render import result
from test_run_imports import loaded_after_run

from pytest_qbench.report import models
from pytest_qbench.report import precompiled
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.aggregate import as_record
from pytest_qbench.report.readers import load_source_results_json
from pytest_qbench.report.render import MARKDOWN_TEMPLATE
from pytest_qbench.report.render import additions
from pytest_qbench.report.render import builtin_template_dir
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render
from pytest_qbench.report.render import template_context
from pytest_qbench.report.template_cache import DISABLE_ENV


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh system temporary directory, where Jinja keeps its cache and qbench its entry."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    return tmp_path / f"_jinja2-cache-{os.getuid()}"


def kept(report: models.TestReport, template_dir: Path | None = None) -> tuple[str | None, bool]:
    """``report`` rendered from the kept code (``None`` when there is none) and whether a new
    entry should be kept."""
    record: Any = as_record(report.model_dump(mode="json"))
    context = template_context(record, record["results"], aggregate(record["results"]).view(), 50)
    directory = template_dir or builtin_template_dir()
    return precompiled.render_builtin(MARKDOWN_TEMPLATE, directory, additions, context)


def by_jinja(report: models.TestReport) -> str:
    return render(report.model_dump(mode="json"), env=make_environment())


def keep_entry(template_dir: Path | None = None) -> None:
    """What a run's session end does after Jinja rendered report.md and found no entry (this
    process has imported Jinja: its `render` uses Jinja's environment and keeps nothing)."""
    env = make_environment()
    if template_dir is not None:
        env.loader = make_environment(template_dir).loader
    green = report_of([result("t.py::test_a", "passed")], exit_code=0)
    render(green.model_dump(mode="json"), env=env)  # report.md and the summary it includes
    precompiled.store(env, template_dir or builtin_template_dir())


def test_an_entry_is_kept_and_renders_what_jinja_renders(temp_dir: Path) -> None:
    """The first render keeps the compiled code (report.md and the summary it includes); the
    kept code renders the golden report, a green one, an empty one, a red exit status and a
    long one as Jinja does, to the byte."""
    assert kept(golden_report()) == (None, True)
    keep_entry()
    assert [p.name for p in temp_dir.glob("__qbench_text_precompiled_*")] != []
    reports = [
        golden_report(),
        report_of([result("t.py::test_a", "passed")], exit_code=0),
        report_of([], exit_code=5),
        report_of([result("t.py::test_a", "passed")], exit_code=3),
        report_of(failures_of(60) + failures_of(3, "error")),
    ]
    for report in reports:
        text, _ = kept(report)
        assert text is not None
        assert text == by_jinja(report)


def test_a_changed_template_is_not_rendered_from_old_code(temp_dir: Path, tmp_path: Path) -> None:
    """The entry holds the templates' text: a changed summary.md.j2 makes it stale (Jinja
    renders, and a new entry is kept)."""
    copy = tmp_path / "templates"
    copy.mkdir()
    for path in builtin_template_dir().glob("*.md.j2"):
        (copy / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    keep_entry(copy)
    assert kept(golden_report(), copy)[0] is not None
    summary = copy / "summary.md.j2"
    summary.write_text(summary.read_text(encoding="utf-8") + "changed\n", encoding="utf-8")
    assert kept(golden_report(), copy) == (None, True)


def test_no_entry_when_the_cache_is_switched_off(
    temp_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep_entry()
    monkeypatch.setenv(DISABLE_ENV, "0")
    assert kept(golden_report()) == (None, True)  # an entry kept before is not used either
    for entry in temp_dir.glob("__qbench_text_precompiled_*"):
        entry.unlink()
    keep_entry()
    assert list(temp_dir.glob("__qbench_text_precompiled_*")) == []


@settings(
    deadline=None,
    max_examples=15,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(case=nasty_reports())
def test_kept_code_renders_any_text_as_jinja_does(
    temp_dir: Path, case: tuple[models.TestReport, int]
) -> None:
    """Arbitrary names, messages, traces, reasons, warnings and CI facts: the same text."""
    report, _ = case
    if kept(report)[0] is None:
        keep_entry()
    text, _ = kept(report)
    assert text == by_jinja(report)


def test_a_run_renders_report_md_without_importing_jinja(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second of two runs (the first keeps the entry) writes report.md without importing
    Jinja; its report.md is the one Jinja writes for the same report.json."""
    monkeypatch.setenv("TMPDIR", str(pytester.path / "tmp"))
    (pytester.path / "tmp").mkdir()
    tests = "def test_a(): pass\ndef test_b(): assert 0\n"
    loaded_after_run(pytester, ("jinja2",), tests)
    _, loaded = loaded_after_run(pytester, ("jinja2", "_qbench_jinja2.runtime"), tests)
    assert loaded == ["_qbench_jinja2.runtime"]
    run = max((pytester.path / ".qbench" / "runs").iterdir())
    report, _, _ = load_source_results_json(run / "report.json")
    expected = render(report, env=make_environment())
    assert (run / "report.md").read_text(encoding="utf-8") == expected
