"""The ``qbench`` command: render, rebuild a run directory, schema, errors."""

from __future__ import annotations

import json
import re
import shutil
import sys
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import pytest

from pytest_qbench._version import __version__
from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.types import Outcome
from pytest_qbench.report import models
from pytest_qbench.report import readers
from pytest_qbench.report import store
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import StreamEnd
from pytest_qbench.report.models import StreamStart
from pytest_qbench.report.models import TestResult

from conftest import compact_report


if TYPE_CHECKING:
    from pytest_qbench.report.records import StreamEndRecord
    from pytest_qbench.report.records import StreamStartRecord
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
ENVIRONMENT = Environment(
    python="3.12.4",
    implementation="CPython",
    platform="Linux",
    pytest_version="9.0.0",
    qbench_version="0.1.0",
)
RUN = RunMeta(run_id="20260102T030405Z-abcdef", started_at=T0, cwd="/src", command=["pytest"])


def result(name: str, outcome: Outcome = "passed", **fields: Any) -> TestResultRecord:
    """The record of a result named ``t.py::<name>``."""
    model = TestResult(
        nodeid=f"t.py::{name}", test_name=name, file="t.py", outcome=outcome, **fields
    )
    return cast("TestResultRecord", model.model_dump(mode="json"))


RESULTS = [
    result("test_ok", started_at=T0, duration=0.5),
    result(
        "test_bad",
        "failed",
        started_at=T0 + timedelta(seconds=1),
        duration=1.0,
        counted_as=["failed"],
        failure=Failure(error_type="AssertionError", error_message="assert 1 == 2"),
    ),
]


@pytest.fixture
def report_json(tmp_path: Path) -> Path:
    """A report.json with one passed and one failed test."""
    report = models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RUN.model_copy(update={"exit_code": 1, "completed_at": T0 + timedelta(seconds=2)}),
        environment=ENVIRONMENT,
        summary=ReportSummary(total=2, passed=1, failed=1, duration=2.0),
        results=[TestResult.model_validate(r) for r in RESULTS],
    )
    path = tmp_path / "report.json"
    store.write_report_json(path, cast("TestReportRecord", report.model_dump(mode="json")), None)
    return path


def make_run_dir(root: Path, *, end: bool) -> Path:
    """A run directory holding only results.jsonl (as a run that died, or before rendering)."""
    run_dir = store.run_dir(root / ".qbench", RUN.run_id)
    writer = store.StreamWriter(run_dir / store.STREAM_NAME)
    meta = ReportMeta(qbench_version="0.1.0", created_at=T0)
    start = StreamStart(meta=meta, run=RUN, environment=ENVIRONMENT)
    writer.write_start(cast("StreamStartRecord", start.model_dump(mode="json")))
    for item in RESULTS:
        writer.write_result(item)
    if end:
        end_record = StreamEnd(run=RUN.model_copy(update={"exit_code": 1}))
        writer.write_end(cast("StreamEndRecord", end_record.model_dump(mode="json")))
    writer.close()
    return run_dir


def assert_one_line_error(capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    """stderr is exactly one ``qbench: error: ...`` line containing ``fragments``; stdout empty."""
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("qbench: error: ")
    for fragment in fragments:
        assert fragment in err


# --- schema -----------------------------------------------------------------------------------


def test_schema_prints_report_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """``qbench schema`` prints the report's JSON Schema, with meta.schema_version."""
    assert main(["schema"]) == OK
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "TestReport"
    assert "schema_version" in schema["$defs"]["ReportMeta"]["properties"]
    assert schema == models.TestReport.model_json_schema(mode="serialization")


def test_schema_of_digest_and_stream(capsys: pytest.CaptureFixture[str]) -> None:
    """``--model digest`` and ``--model stream`` print those schemas."""
    assert main(["schema", "--model", "digest"]) == OK
    assert json.loads(capsys.readouterr().out)["title"] == "FailureDigest"
    assert main(["schema", "--model", "stream"]) == OK
    schema = json.loads(capsys.readouterr().out)
    assert schema["discriminator"]["propertyName"] == "kind"
    records = {"StreamStart", "StreamResult", "StreamDiagnostic", "StreamDeselected", "StreamEnd"}
    assert records <= set(schema["$defs"])


# --- render a report.json -----------------------------------------------------------------


def test_render_report_json_to_stdout(
    report_json: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench render report.json`` prints the Markdown report."""
    assert main(["render", str(report_json)]) == OK
    out, err = capsys.readouterr()
    assert out.startswith("# ❌ Test report: 1 failed, 1 passed in 2.00s\n")
    assert "### `t.py::test_bad`" in out
    assert err == ""


def test_render_to_file_with_template(
    report_json: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-t``/``-o`` render any template to a file; ``--template-dir`` is searched first."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "ids.txt.j2").write_text("{% for r in results %}{{ r.nodeid }}\n{% endfor %}")
    out = tmp_path / "out" / "ids.txt"
    argv = ["render", str(report_json), "--template-dir", str(templates), "-t", "ids.txt.j2"]
    assert main([*argv, "-o", str(out)]) == OK
    assert out.read_text() == "t.py::test_ok\nt.py::test_bad\n"
    assert capsys.readouterr().out == f"qbench: wrote {out}\n"
    assert main(["render", str(report_json), "-t", "summary.md.j2", "--max-items", "1"]) == OK
    assert capsys.readouterr().out.startswith("# ❌ Test report:")


def test_render_names_each_file_it_wrote(
    report_json: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o``, ``--html`` and ``--ctrf`` together: one ``wrote`` line per file, in that order;
    when one of them is stdout (``-``), the lines go to stderr and stdout holds only it."""
    md, page, ctrf = tmp_path / "out.md", tmp_path / "x.html", tmp_path / "c.json"
    argv = ["render", str(report_json), "--html", str(page)]
    assert main([*argv, "-o", str(md), "--ctrf", str(ctrf)]) == OK
    out, err = capsys.readouterr()
    assert (out.splitlines(), err) == ([f"qbench: wrote {p}" for p in (md, page, ctrf)], "")
    assert md.read_text().startswith("# ❌ Test report:") and page.is_file() and ctrf.is_file()
    assert main([*argv, "-o", "-"]) == OK
    out, err = capsys.readouterr()
    assert out.startswith("# ❌ Test report:") and "qbench:" not in out
    assert err.splitlines() == [f"qbench: wrote {page}"]


def test_render_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing report is exit status 1 and one ``qbench: error:`` line."""
    assert main(["render", str(tmp_path / "nope.json")]) == ERR
    assert_one_line_error(capsys, "cannot read report", "nope.json")


def test_render_other_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report of another schema version is refused in one line naming both versions."""
    data = models.TestReport(
        meta=ReportMeta(qbench_version="9.9", created_at=T0, schema_version=99),
        run=RUN,
        environment=ENVIRONMENT,
        summary=ReportSummary(),
    ).model_dump(mode="json")
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    assert main(["render", str(path)]) == ERR
    assert_one_line_error(capsys, "schema_version 99", f"reads {models.SCHEMA_VERSION}")


def test_render_not_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not a report (binary, or JSON of something else) is one error line."""
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    assert main(["render", str(binary)]) == ERR
    assert_one_line_error(capsys, "image.png is not a qbench report")
    other = tmp_path / "package.json"
    other.write_text('{"name": "x"}')
    assert main(["render", str(other)]) == ERR
    assert_one_line_error(capsys, "package.json is not a qbench report")


def test_render_missing_template(report_json: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown template is one error line listing the built-ins."""
    assert main(["render", str(report_json), "-t", "nope.j2"]) == ERR
    assert_one_line_error(
        capsys, "'nope.j2' not found", "report.md.j2, step-summary.md.j2, summary.md.j2"
    )


def test_render_missing_template_dir(
    report_json: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --template-dir that is not a directory is refused, as qbench_template_dir is in a run,
    instead of rendering with the built-ins as if the user's templates had been read."""
    out = tmp_path / "out.md"
    missing = tmp_path / "no-such-dir"
    assert main(["render", str(report_json), "--template-dir", str(missing), "-o", str(out)]) == ERR
    assert_one_line_error(capsys, "--template-dir is not a directory", str(missing))
    assert not out.exists()


def test_render_output_not_writable(
    report_json: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output that cannot be written (a directory) is one error line, not a traceback."""
    (tmp_path / "out").mkdir()
    assert main(["render", str(report_json), "-o", str(tmp_path / "out")]) == ERR
    assert_one_line_error(capsys, str(tmp_path / "out"))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_render_directory_that_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory without a stream or a report is one error line."""
    assert main(["render", str(tmp_path)]) == ERR
    assert_one_line_error(capsys, "not a run directory")


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse usage errors exit with status 2."""
    with pytest.raises(SystemExit) as excinfo:
        main(["render"])
    assert excinfo.value.code == 2
    assert "usage: qbench render" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` prints the package version."""
    with pytest.raises(SystemExit) as excinfo:
        main(["--version"])
    assert excinfo.value.code == 0
    assert capsys.readouterr().out == f"pytest-qbench {__version__}\n"


# --- rebuild a run directory ------------------------------------------------------------------


def test_render_run_dir_rebuilds_interrupted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory with only a stream (no end record) gets report.json + report.md back."""
    run_dir = make_run_dir(tmp_path, end=False)
    assert main(["render", str(run_dir)]) == OK
    out = capsys.readouterr().out
    assert out.startswith(f"qbench: rebuilt interrupted run {RUN.run_id}: ")
    assert str(run_dir / "report.json") in out and str(run_dir / "report.md") in out
    report = readers.read_report(run_dir / "report.json")
    assert report.run.interrupted is True
    assert [r.model_dump(mode="json") for r in report.results] == RESULTS
    text = (run_dir / "report.json").read_text(encoding="utf-8")
    assert compact_report(report) == json.loads(text)  # a fixed point of the model
    assert (report.summary.passed, report.summary.failed) == (1, 1)
    assert report.run.completed_at == T0 + timedelta(seconds=2)
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "**❌ Not green:** the run did not finish: its process died" in markdown
    assert "### `t.py::test_bad`" in markdown


def test_render_run_dir_complete_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A complete stream is rebuilt as a complete run."""
    run_dir = make_run_dir(tmp_path, end=True)
    assert main(["render", str(run_dir)]) == OK
    assert capsys.readouterr().out.startswith(f"qbench: rebuilt run {RUN.run_id}: ")
    assert readers.read_report(run_dir / "report.json").run.interrupted is False


def test_render_run_dir_with_output_renders_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``-o -``, a run directory is rendered to stdout and nothing is written into it."""
    run_dir = make_run_dir(tmp_path, end=True)
    assert main(["render", str(run_dir), "-o", "-"]) == OK
    assert capsys.readouterr().out.startswith("# ❌ Test report: 1 failed, 1 passed")
    assert sorted(p.name for p in run_dir.iterdir()) == [store.STREAM_NAME]


def test_render_run_dir_with_report_only(
    report_json: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory holding only report.json is read from it."""
    assert main(["render", str(report_json.parent), "-o", "-"]) == OK
    assert "### `t.py::test_bad`" in capsys.readouterr().out


# --- the installed console script ---------------------------------------------------------------


def test_console_script_help(pytester: pytest.Pytester) -> None:
    """The installed ``qbench`` console script runs and lists its subcommands."""
    script = Path(sys.executable).with_name("qbench")
    found = str(script) if script.is_file() else shutil.which("qbench")
    if found is None:
        pytest.skip("the qbench console script is not installed next to python or on PATH")
    result = pytester.run(found, "--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["usage: qbench *", "*render*", "*schema*"])


# --- robust readers (issue 12.7, 12.11) ---------------------------------------------------------


def test_render_run_dir_refuses_a_newer_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stream whose start record says a newer schema version is refused, not rebuilt as
    version 1 with its lines dropped as torn (issue 12.7)."""
    run_dir = make_run_dir(tmp_path, end=True)
    stream = run_dir / store.STREAM_NAME
    lines = stream.read_text(encoding="utf-8").splitlines()
    start = json.loads(lines[0])
    start["meta"]["schema_version"] = 99
    newer = {**json.loads(lines[1]), "kind": "result-v99"}
    stream.write_text("\n".join([json.dumps(start), json.dumps(newer), *lines[2:]]) + "\n")
    assert main(["render", str(run_dir)]) == ERR
    assert_one_line_error(capsys, "schema_version 99", f"reads {models.SCHEMA_VERSION}")
    assert not (run_dir / store.REPORT_JSON).exists()
    start["meta"]["schema_version"] = 99
    start["future_field"] = {"x": 1}  # a start record this version cannot even validate
    stream.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    assert main(["render", str(run_dir)]) == ERR
    assert_one_line_error(capsys, "schema_version 99")


def test_render_run_dir_never_overwrites_a_newer_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.json of a newer schema version in the run directory is left alone (issue 12.7)."""
    run_dir = make_run_dir(tmp_path, end=True)
    newer = '{\n  "meta": {\n    "schema_version": 99,\n    "qbench_version": "9.9"\n  }\n}\n'
    (run_dir / store.REPORT_JSON).write_text(newer)
    assert main(["render", str(run_dir)]) == ERR
    assert_one_line_error(capsys, "report.json has schema_version 99", "upgrade qbench")
    assert (run_dir / store.REPORT_JSON).read_text() == newer
    assert not (run_dir / store.REPORT_MD).exists()


def test_render_run_dir_names_damaged_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad line that is not the last is called damage, not a torn last line (issue 12.7)."""
    run_dir = make_run_dir(tmp_path, end=True)
    stream = run_dir / store.STREAM_NAME
    lines = stream.read_text(encoding="utf-8").splitlines()
    stream.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    assert main(["render", str(run_dir)]) == OK
    err = capsys.readouterr().err
    assert "skipped 1 line(s)" in err and "(the first at line 2)" in err and "torn" not in err
    stream.write_text("\n".join([*lines, '{"kind": "res']) + "\n")
    assert main(["render", str(run_dir)]) == OK
    assert "skipped a torn last line" in capsys.readouterr().err


def report_data(**summary: Any) -> dict[str, Any]:
    """A valid report.json's data, its summary updated with ``summary``."""
    data = models.TestReport(
        meta=ReportMeta(qbench_version="0.1.0", created_at=T0),
        run=RUN,
        environment=ENVIRONMENT,
        summary=ReportSummary(total=1, passed=1, duration=1.0),
        results=[TestResult.model_validate(RESULTS[0])],
    ).model_dump(mode="json")
    data["summary"].update(summary)
    return data


@pytest.mark.parametrize("command", ["render", "merge"])
def test_deeply_nested_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """JSON nested 100,000 deep is refused in one line, not a RecursionError (issue 12.11)."""
    path = tmp_path / "nested.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert main([command, str(path), "-o", str(tmp_path / "out.json")]) == ERR
    assert_one_line_error(capsys, "nested.json is not a qbench report")
    run_dir = make_run_dir(tmp_path, end=False)
    with (run_dir / store.STREAM_NAME).open("a") as stream:
        stream.write('{"kind": "start", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert main([command, str(run_dir), "-o", str(tmp_path / "out.json")]) == OK
    assert "skipped a torn last line" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["render", "merge", "index"])
@pytest.mark.parametrize(
    ("summary", "fragment"),
    [({"duration": 1e999}, "duration"), ({"total": -5}, "total")],
    ids=["infinite", "negative"],
)
def test_impossible_summary_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    summary: dict[str, Any],
    fragment: str,
) -> None:
    """An infinite duration or a negative count is refused in one line by render, merge and
    index, not a ValueError on writing or "-5 tests" (issue 12.11)."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report_data(**summary)).replace("Infinity", "1e999"))
    extra = ["--dir", str(tmp_path / ".qbench")] if command == "index" else ["-o", "-"]
    assert main([command, str(path), *extra]) == ERR
    assert_one_line_error(capsys, "report.json is not a qbench report", fragment)
    if command == "index":
        assert main(["runs", "--dir", str(tmp_path / ".qbench")]) == OK
        # the temporary path may hold "-5" itself (pytest-5xx)
        assert "-5" not in capsys.readouterr().out.replace(str(tmp_path), "")


def test_huge_count_option_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """qbench flaky --runs 99999999999999999999 is a usage error, not an OverflowError
    (issue 12.11)."""
    with pytest.raises(SystemExit) as excinfo:
        main(["flaky", "--dir", str(tmp_path), "--runs", "99999999999999999999"])
    assert excinfo.value.code == 2
    err = capsys.readouterr().err
    assert "--runs: must be from 1 to 1000000000, given: 99999999999999999999" in err
    assert "Traceback" not in err


def test_coverage_of_a_stored_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.17) qbench coverage RUN writes coverage.py's own report of the run's
    coverage.db: the xml equals coverage.py's on the same data file, term-missing its table."""
    import io
    import re

    import coverage

    pytester.makepyfile(
        mod="def f(x):\n    if x:\n        return 1\n    return 2\n",
        test_mod="import mod\n\ndef test_f():\n    assert mod.f(1) == 1\n",
    )
    pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-cov=.", "--qbench-run-id=cov"
    ).assert_outcomes(passed=1)
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert main(["coverage", "cov", "--format", "xml", "-o", "coverage.xml"]) == OK
    assert "qbench: wrote coverage xml report of cov:" in capsys.readouterr().out
    data_file = pytester.path / ".qbench" / "runs" / "cov" / "coverage.db"
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    cov.xml_report(outfile="expected.xml")
    stamp = re.compile(r'timestamp="\d+"')
    written = (pytester.path / "coverage.xml").read_text(encoding="utf-8")
    assert stamp.sub("", written) == stamp.sub("", Path("expected.xml").read_text())
    table = io.StringIO()
    cov.report(file=table, show_missing=True)
    assert main(["coverage", "last"]) == OK
    assert capsys.readouterr().out == table.getvalue()


def test_coverage_without_data(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.17) A run without coverage data, or no such run, is a one-line error."""
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=plain")
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert main(["coverage", "plain", "--format", "xml"]) == ERR
    assert "has no coverage data (coverage.db)" in capsys.readouterr().err
    assert main(["coverage", "nope"]) == ERR
    assert "qbench: error: no run 'nope'" in capsys.readouterr().err


REPO = Path(__file__).resolve().parent.parent
INSTALL = re.compile(r"(?:pip|pipx|uv tool|uv pip) install(?P<args>[^`\n]*)")
FROM_INDEX = re.compile(r"""^['"]?pytest-qbench(\[[\w,]+\])?['"]?$""")


def test_install_commands_in_the_docs_work_from_a_checkout() -> None:
    """No package index has pytest-qbench: every install command of the docs names a checkout or
    a wheel, except where the line says it is the form for a published release."""
    pages = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "examples").rglob("*.md")]
    wrong = [
        f"{page.relative_to(REPO)}:{number}: {line.strip()}"
        for page in pages
        if page.name != "changelog.md"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for found in INSTALL.finditer(line)
        if any(FROM_INDEX.match(word) for word in found["args"].split())
        and "published release" not in line
    ]
    assert not wrong, "\n".join(wrong)


def test_a_missing_extra_names_a_command_that_installs_it() -> None:
    """The hint installs the extra's own requirements (on the package index) into this Python."""
    from pytest_qbench.core.install import install_extra

    assert install_extra("mcp") == f"{sys.executable} -m pip install 'mcp<3,>=2.3'"
    assert install_extra("generate") == f"{sys.executable} -m pip install 'hypothesis>=6.100'"


def test_render_reads_and_writes_with_the_cyclic_gc_paused(
    report_json: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big report's records are acyclic: collections during the render would walk them all
    for nothing. The collector is back on afterwards."""
    import gc

    seen: list[bool] = []
    real = readers.load_source_results_json

    def reading(source: Path, *args: Any) -> Any:
        seen.append(gc.isenabled())
        return real(source, *args)

    monkeypatch.setattr(readers, "load_source_results_json", reading)
    assert gc.isenabled()
    assert main(["render", str(report_json), "-o", str(tmp_path / "out.md")]) == OK
    assert seen == [False]
    assert gc.isenabled()
    assert (tmp_path / "out.md").read_text(encoding="utf-8").startswith("#")


@pytest.mark.parametrize("max_items", ["50", "1"])
def test_render_run_dir_counts_each_result_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_items: str
) -> None:
    """Rebuilding a run, the pass that counts the summary also makes the Markdown's view: each
    result goes through the aggregation once, and report.md is what a separate pass made."""
    from pytest_qbench.report.aggregate import Aggregator
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.render import render

    run_dir = make_run_dir(tmp_path, end=True)
    added: list[str] = []
    real = Aggregator.add_result

    def add_result(self: Aggregator, value: Any) -> None:
        added.append(value["nodeid"])
        real(self, value)

    monkeypatch.setattr(Aggregator, "add_result", add_result)
    assert main(["render", str(run_dir), "--max-items", max_items]) == OK
    assert added == [r["nodeid"] for r in RESULTS]
    monkeypatch.undo()
    record = readers.load_source_record(run_dir)
    view = aggregate(record["results"], max_items=int(max_items)).view()
    markdown = render(record, view=view, max_items=int(max_items))
    written = (run_dir / "report.md").read_text(encoding="utf-8")
    assert _without_created_at(written) == _without_created_at(markdown)


def _without_created_at(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT[0-9:.]+Z?", "<time>", text)
