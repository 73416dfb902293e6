"""history/publish.py: the outputs of a finished report, written alike at the end of a pytest
run and by ``qbench render``; one output failing does not stop the others."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_store import report_of
from test_store import result

from pytest_qbench.history.publish import OutputPlan
from pytest_qbench.history.publish import Publisher
from pytest_qbench.report import store
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.outputs import OutputWriter


def writer_of(report_path: Path | None = None) -> OutputWriter:
    report = report_of([result("test_a"), result("test_b", "failed")])
    if report_path is not None:
        store.write_report_json(report_path, report, None)
    view = aggregate(report["results"]).view()
    return OutputWriter(report, None, view, template_dir=None, max_items=50)


def test_every_output_of_the_plan_is_written_and_a_failing_one_is_a_note(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    blocked = tmp_path / "blocked"
    blocked.mkdir()  # a directory where a file should go: the disk refuses it
    plan = OutputPlan(
        run_dir=run_dir,
        json=tmp_path / "copy.json",
        markdown=blocked,
        html=tmp_path / "page.html",
        digest=tmp_path / "digest.json",
    )
    publisher = Publisher(writer_of(), plan)
    written = publisher.publish()
    assert written == [
        run_dir / "report.json",
        run_dir / "report.md",
        tmp_path / "copy.json",
        run_dir / "report.html",
        tmp_path / "page.html",
        tmp_path / "digest.json",
    ]
    assert publisher.unwritable == [blocked]
    assert [n.split(":")[0] for n in publisher.notes] == [f"could not write {blocked}"]
    assert json.loads((tmp_path / "copy.json").read_text()) == json.loads(
        (run_dir / "report.json").read_text()
    )
    with pytest.raises(OSError):
        Publisher(writer_of(), OutputPlan(markdown=blocked), strict=True).publish()


def test_qbench_render_writes_what_the_plan_writes(tmp_path: Path) -> None:
    """``qbench render REPORT --html OUT -o MD`` writes the same files as a Publisher given the
    same plan (the CLI goes through it)."""
    source = tmp_path / "report.json"
    writer = writer_of(source)
    Publisher(
        writer,
        OutputPlan(
            html=tmp_path / "expected.html",
            attachments_dir=tmp_path,
            templates=[("report.md.j2", tmp_path / "expected.md")],
        ),
    ).publish()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_qbench",
            "render",
            str(source),
            "--html",
            str(tmp_path / "got.html"),
            "-o",
            str(tmp_path / "got.md"),
        ],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "got.md").read_text() == (tmp_path / "expected.md").read_text()
    assert (tmp_path / "got.html").read_bytes() == (tmp_path / "expected.html").read_bytes()


def test_an_output_failing_as_it_is_written_is_in_the_outputs_after_it(tmp_path: Path) -> None:
    """A bug while report.md is written, after report.json was: report.json is written again
    to say so (written before, it would disagree), the digest written after it is rendered
    again and says the run is not green, and the failure is recorded in the report."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    writer = writer_of()

    def broken(path: Path) -> Callable[[], Path]:
        def write() -> Path:
            raise RuntimeError("injected")

        return write

    writer.rendered_markdown = broken  # type: ignore[method-assign]
    plan = OutputPlan(run_dir=run_dir, digest=tmp_path / "digest.json")
    publisher = Publisher(writer, plan)
    assert publisher.publish() == [run_dir / "report.json", tmp_path / "digest.json"]
    error = "internal error in writing report.md: RuntimeError: injected"
    assert publisher.recorded == [error]
    assert json.loads((run_dir / "report.json").read_text())["run"]["recording_errors"] == [error]
    digest = json.loads((tmp_path / "digest.json").read_text())
    assert digest["success"] is False
    assert [where for where, _ in publisher.internal_errors] == ["writing report.md"]


def test_the_outputs_are_listed_in_one_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OutputPlan.paths()`` (what a bug in the writing loop removes of an earlier run's files)
    repeated ``Publisher.jobs()``'s list of outputs: one list now, ``OutputPlan.outputs()``,
    which both read; a bug in making the renderers still removes every earlier file."""
    plan = OutputPlan(
        run_dir=tmp_path / "run",
        json=tmp_path / "copy.json",
        markdown=tmp_path / "copy.md",
        html=tmp_path / "page.html",
        digest=tmp_path / "digest.json",
        ctrf=tmp_path / "ctrf.json",
        templates=[("summary.md.j2", tmp_path / "summary.md")],
        step_summary=tmp_path / "step.md",
    )
    outputs = plan.outputs()
    jobs = Publisher(writer_of(), plan).jobs()
    assert [(name, path) for name, path, _ in jobs] == outputs
    assert plan.paths() == [path for _, path in outputs[:-1]]
    assert outputs[-1] == ("$GITHUB_STEP_SUMMARY", tmp_path / "step.md")
    (tmp_path / "run").mkdir()
    for path in plan.paths():
        path.write_text("an earlier run's\n")
    monkeypatch.delattr(OutputWriter, "rendered_template")  # a bug in making the renderers
    publisher = Publisher(writer_of(), plan)
    assert publisher.publish() == []
    assert [where for where, _ in publisher.internal_errors] == ["writing the outputs"]
    assert [path for path in plan.paths() if path.exists()] == []
