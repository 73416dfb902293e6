"""Compiled templates are kept between runs (Jinja's bytecode cache), and never break a report."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from pytest_qbench.report.html.page import make_html_environment
from pytest_qbench.report.render import HTML_TEMPLATE
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.template_cache import DISABLE_ENV


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh system temporary directory, where Jinja keeps its cache."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    return tmp_path / f"_jinja2-cache-{os.getuid()}"


def report_md(qbench_dir: Path) -> str:
    (path,) = qbench_dir.glob("runs/*/report.md")
    return path.read_text()


def entries(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.glob("__qbench_*.cache"))


def test_compiled_template_is_kept_and_used(temp_dir: Path) -> None:
    first = make_environment().get_template("report.md.j2")
    kept = entries(temp_dir)
    assert kept and all(name.startswith("__qbench_text_") for name in kept)
    env = make_environment()
    compiled: list[str] = []
    env.compile = lambda *args, **kwargs: compiled.append("compiled")  # type: ignore[method-assign,assignment]
    second = env.get_template("report.md.j2")
    assert compiled == []  # loaded from the cache, not compiled again
    assert second.render is not None and first.name == second.name


def test_html_and_text_environments_do_not_share_entries(temp_dir: Path) -> None:
    make_environment().get_template("report.md.j2")
    make_html_environment().get_template(HTML_TEMPLATE)  # autoescape on: other code
    kinds = {name.split("_")[3] for name in entries(temp_dir)}
    assert kinds == {"text", "html"}


def test_switched_off_writes_nothing(temp_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "0")
    make_environment().get_template("report.md.j2")
    assert not temp_dir.exists() or entries(temp_dir) == []


def test_unusable_cache_directory_still_renders(pytester: pytest.Pytester) -> None:
    """A file where the cache directory should be: the run compiles as before and reports."""
    temp = pytester.path / "tmp"
    temp.mkdir()
    (temp / f"_jinja2-cache-{os.getuid()}").write_text("not a directory")
    pytester.makepyfile("def test_ok():\n    pass\n")
    os.environ.pop(DISABLE_ENV, None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(temp))
        patch.setattr(tempfile, "tempdir", None)
        done = pytester.runpytest_subprocess("-p", "qbench", "--qbench-dir=out")
    done.assert_outcomes(passed=1)
    assert "1 passed" in report_md(pytester.path / "out")


def test_run_reuses_the_compiled_report_template(pytester: pytest.Pytester) -> None:
    """Two real runs: the first keeps report.md's compiled template, the second writes the
    same report from it."""
    temp = pytester.path / "tmp"
    temp.mkdir()
    pytester.makepyfile("def test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(temp))
        patch.delenv(DISABLE_ENV, raising=False)
        pytester.runpytest_subprocess("-p", "qbench", "--qbench-dir=one")
        cache_dir = temp / f"_jinja2-cache-{os.getuid()}"
        kept = {p: p.stat().st_mtime_ns for p in cache_dir.glob("__qbench_text_*.cache")}
        assert kept
        done = pytester.runpytest_subprocess("-p", "qbench", "--qbench-dir=two")
    done.assert_outcomes(passed=1, failed=1)
    assert {p: p.stat().st_mtime_ns for p in cache_dir.glob("__qbench_text_*.cache")} == kept
    one = report_md(pytester.path / "one")
    two = report_md(pytester.path / "two")
    assert one.split(" in ")[0] == two.split(" in ")[0] == "# ❌ Test report: 1 failed, 1 passed"
    assert "test_bad" in two
