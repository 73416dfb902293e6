""".NET results, ingest only (no .NET SDK on these machines): ``qbench ingest-trx`` on TRX and
NUnit 3 files, and MSBuild build logs through ``qbench ingest-sarif``.

The files under ``tests/data/dotnet/`` were written by hand from the formats' documentation
(VSTest's TRX schema as ``dotnet test --logger trx`` writes it, NUnit 3's "Test Result XML
Format", MSBuild's canonical error format), not produced by a .NET SDK: each says so in a
comment (the build log, plain text, has none)."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.report.msbuild import parse_msbuild


DATA = Path(__file__).parent / "data" / "dotnet"
NS = "{http://microsoft.com/schemas/VisualStudio/TeamTest/2010}"


def ingest(tmp_path: Path, *files: Path | str) -> tuple[int, dict[str, Any], Path | None]:
    """``qbench ingest-trx FILES --dir tmp/.qbench``: its exit status, the stored report and
    the run directory (``None`` when nothing was stored)."""
    qdir = tmp_path / ".qbench"
    code = main(["ingest-trx", *map(str, files), "--dir", str(qdir)])
    runs = sorted((qdir / "runs").glob("*")) if (qdir / "runs").is_dir() else []
    if not runs:
        return code, {}, None
    (run_dir,) = runs
    return code, json.loads((run_dir / "report.json").read_text()), run_dir


def test_a_trx_run_has_its_counters_and_its_failures(tmp_path: Path) -> None:
    """The run's counts equal the TRX ResultSummary counters (read here from the file); the
    failure has its message, trace and the file:line of the trace; the run is stored with its
    report.md and indexed."""
    counters = ET.parse(DATA / "calc.trx").getroot().find(f"{NS}ResultSummary/{NS}Counters")
    assert counters is not None
    code, report, run_dir = ingest(tmp_path, DATA / "calc.trx")
    assert code == 0 and run_dir is not None
    summary = report["summary"]
    c = {k: int(v) for k, v in counters.attrib.items()}
    assert summary["total"] == c["total"]
    assert summary["passed"] == c["passed"] + c["passedButRunAborted"] + c["warning"]
    assert summary["failed"] == c["failed"] + c["timeout"]
    assert summary["errors"] == c["error"] + c["aborted"] + c["disconnected"]
    assert summary["skipped"] == c["notExecuted"] + c["notRunnable"] + c["inconclusive"]
    assert report["run"]["tool"] == "dotnet" and report["run"]["exit_code"] == 1
    results = {r["nodeid"]: r for r in report["results"]}
    divide = results["Calc.Tests.CalculatorTests::Divide_ByZero_Throws"]
    assert (divide["outcome"], divide["file"], divide["line"]) == (
        "failed",
        "/src/Calc.Tests/CalculatorTests.cs",
        42,
    )
    assert divide["failure"]["error_message"].startswith("Assert.Throws() Failure")
    assert "CalculatorTests.cs:line 42" in divide["failure"]["stack_trace"]
    assert divide["captured"]["stdout"] == "dividing 1 by 0"
    timeout = results["Calc.Tests.CalculatorTests::Factorial_Large"]
    assert (timeout["outcome"], timeout["failure"]["error_type"]) == ("failed", "Timeout")
    assert results["Calc.Tests.CalculatorTests::Sqrt_Negative"]["reason"] == "not ready yet"
    assert results["Calc.Tests.CalculatorTests::Add_ReturnsSum"]["duration"] == 0.012346
    assert "Divide_ByZero_Throws" in (run_dir / "report.md").read_text()
    with sqlite3.connect(tmp_path / ".qbench" / "index.sqlite") as db:
        assert db.execute("SELECT run_id FROM runs").fetchall() == [(run_dir.name,)]


def test_nunit3_xml_fits_the_same_reader(tmp_path: Path) -> None:
    """NUnit 3's result file: its counts equal the <test-run> attributes (NUnit counts an
    error as failed); the label Error makes an error with the exception's type."""
    root = ET.parse(DATA / "nunit3.xml").getroot()
    code, report, _ = ingest(tmp_path, DATA / "nunit3.xml")
    assert code == 0
    s = report["summary"]
    assert s["total"] == int(root.get("total", ""))
    assert s["passed"] == int(root.get("passed", "")) + int(root.get("warnings", ""))
    assert s["failed"] + s["errors"] == int(root.get("failed", ""))
    assert s["skipped"] == int(root.get("skipped", "")) + int(root.get("inconclusive", ""))
    results = {r["nodeid"]: r for r in report["results"]}
    error = results["Shop.Tests.CartTests::Checkout_WithoutStock"]
    assert error["outcome"] == "error"
    assert error["failure"]["error_type"] == "System.InvalidOperationException"
    assert (error["file"], error["line"]) == ("/src/Shop.Tests/CartTests.cs", 41)
    assert results["Shop.Tests.CartTests::Discount_Later"]["reason"] == "discounts come next sprint"


def test_an_aborted_run_is_refused_never_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TRX whose ResultSummary is Aborted (its one result passed) fails the ingest with the
    reason VSTest gave; nothing is stored."""
    code, _, run_dir = ingest(tmp_path, DATA / "aborted.trx")
    err = capsys.readouterr().err
    assert code != 0 and run_dir is None
    assert "the test run did not finish (its outcome is Aborted)" in err
    assert "Test host process crashed" in err


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace('passed="2"', 'passed="3"', 1), "disagree with its Counters"),
        (
            lambda t: t.replace(
                '<ResultSummary outcome="Failed">', '<ResultSummary outcome="Timeout">'
            ),
            "did not finish",
        ),
        (lambda t: t[: len(t) // 2], "is not well-formed XML"),
        (lambda t: "<html><body>nope</body></html>", "neither a TRX file nor NUnit 3 XML"),
    ],
    ids=["counts", "timeout", "truncated", "not-trx"],
)
def test_a_file_that_cannot_be_trusted_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, expected: str
) -> None:
    """Counters that disagree with the results, a run that timed out, a cut file, another
    format: each fails the ingest with a message naming the file; nothing is stored."""
    bad = tmp_path / "bad.trx"
    bad.write_text(edit((DATA / "calc.trx").read_text()))  # type: ignore[operator]
    code, _, run_dir = ingest(tmp_path, bad)
    err = capsys.readouterr().err
    assert code != 0 and run_dir is None
    assert expected in err and str(bad) in err


def test_a_missing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, run_dir = ingest(tmp_path, tmp_path / "nowhere.trx")
    assert code != 0 and run_dir is None
    assert "cannot read" in capsys.readouterr().err


def test_msbuild_diagnostics_become_a_check_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench ingest-sarif build.log``: each canonical line once (MSBuild repeats them in its
    closing summary), errors at their file, line and column; the run failed."""
    code = main(["ingest-sarif", str(DATA / "build.log"), "--dir", str(tmp_path), "--json"])
    check = json.loads(capsys.readouterr().out)
    assert code == 1
    (run,) = check["checks"]
    assert (run["run"]["tool"], run["status"]) == ("msbuild", "failed")
    found = [
        (d["severity"], d["code"], d["file"], d["line"], d["column"]) for d in run["diagnostics"]
    ]
    assert found == [
        ("warning", "NU1603", "/src/Shop/Shop.csproj", None, None),
        ("error", "CS1002", "/src/Shop/Cart.cs", 12, 31),
        ("warning", "CS0168", "/src/Shop/Cart.cs", 20, 17),
        ("error", "CS5001", None, None, None),
    ]
    assert run["diagnostics"][1]["message"] == "; expected"
    assert run["diagnostics"][3]["message"].startswith("CSC: Program does not contain")


@pytest.mark.parametrize(
    ("log", "message"),
    [
        (b"", "the build log is empty"),
        (b"Build FAILED.\n\n    0 Warning(s)\n    1 Error(s)\n", "the build failed but no error"),
    ],
)
def test_a_build_log_without_a_verdict_is_an_error(log: bytes, message: str) -> None:
    """Fail closed: an empty log, or a failed build whose error line cannot be read, is an
    error diagnostic, never a clean run."""
    (diagnostic,) = parse_msbuild(log, Path.cwd())
    assert diagnostic.severity == "error" and diagnostic.message.startswith(message)


def test_the_position_forms_and_a_node_prefix() -> None:
    """``(line)``, ``(line-line)``, ``(line,col-col)``, ``(l,c,l,c)``, a Windows path and a
    ``1>`` node prefix; other lines are not diagnostics."""
    log = (
        b"1>C:\\src\\App\\Main.cs(7,3,7,9): error CS0103: The name 'x' does not exist\n"
        b"App.resx(2) : error BC30188: Declaration expected.\n"
        b"Main.cs(5-6): warning CS0162: Unreachable code detected\n"
        b"Main.cs(5,3-8): warning CS0219: assigned but never used\n"
        b"  Restored /src/App/App.csproj (in 120 ms).\n"
        b"error MSB1009: Project file does not exist.\n"
    )
    found = [(d.code, d.file, d.line, d.column) for d in parse_msbuild(log, Path("/src"))]
    assert found == [
        ("CS0103", "C:/src/App/Main.cs", 7, 3),
        ("BC30188", "App.resx", 2, None),
        ("CS0162", "Main.cs", 5, None),
        ("CS0219", "Main.cs", 5, 3),
        ("MSB1009", None, None, None),
    ]
