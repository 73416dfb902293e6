"""Built-in template names go to the loader, never to the working directory: a stray
``report.md.j2`` in the directory pytest or ``qbench render`` runs from does not replace the
built-in report, with or without --qbench-template-dir; only an option's value is a path
(issue 19.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_render import report_of
from test_render import result

from pytest_qbench.cli import main
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render

from conftest import RunQBench


STRAY = "STRAY TEMPLATE\n"


def test_render_ignores_a_stray_template_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """render()'s default and the built-in names come from the loader, not the cwd."""
    (tmp_path / "report.md.j2").write_text(STRAY, encoding="utf-8")
    (tmp_path / "summary.md.j2").write_text(STRAY, encoding="utf-8")
    user_dir = tmp_path / "templates"
    user_dir.mkdir()
    monkeypatch.chdir(tmp_path)
    report = report_of([result("t.py::test_a", "passed")], exit_code=0)
    for env in (None, make_environment(user_dir)):
        text = render(report, env=env)
        assert text.startswith("# ✅ Test report: 1 passed"), text
        assert render(report, "summary.md.j2", env=env).startswith("# ✅ Test report")
    assert render(report, tmp_path / "report.md.j2") == STRAY  # a path is a path
    assert render(report, str(tmp_path / "report.md.j2")) == STRAY


@pytest.mark.parametrize("template_dir", [False, True])
def test_plugin_report_md_ignores_a_stray_template(
    pytester: pytest.Pytester, run_qbench: RunQBench, template_dir: bool
) -> None:
    """pytest run from a directory holding a report.md.j2 still writes the built-in report.md;
    --qbench-template naming that file renders it."""
    pytester.makepyfile("def test_a():\n    pass\n")
    pytester.makefile(".md.j2", report=STRAY)
    args = ["--qbench-template=report.md.j2=custom.md"]
    if template_dir:
        pytester.mkdir("tpl").joinpath("other.md.j2").write_text("x\n", encoding="utf-8")
        args.append("--qbench-template-dir=tpl")
    run = run_qbench(*args)
    assert run.result.ret == 0
    assert run.markdown.startswith("# ✅ Test report: 1 passed"), run.markdown
    assert (pytester.path / "custom.md").read_text(encoding="utf-8").strip() == STRAY.strip()


def test_cli_render_ignores_a_stray_template(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """qbench render's default template is the built-in; --template given a file is that file."""
    pytester.makepyfile("def test_a():\n    pass\n")
    run = run_qbench()
    pytester.makefile(".md.j2", report=STRAY)
    monkeypatch.chdir(pytester.path)
    report_json = str(run.run_dir / "report.json")
    assert main(["render", report_json, "-o", "out.md"]) == 0
    assert (pytester.path / "out.md").read_text(encoding="utf-8").startswith("# ✅ Test report")
    assert main(["render", report_json, "--template", "report.md.j2", "-o", "own.md"]) == 0
    assert (pytester.path / "own.md").read_text(encoding="utf-8").strip() == STRAY.strip()
