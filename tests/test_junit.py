"""``qbench ingest-junit``: other runners' JUnit XML into the report model, parsed safely (issue 5)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from xml.parsers import expat

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.errors import JUnitFormatError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.limits import Limits
from pytest_qbench.report import junit
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult

from conftest import RunQBench
from conftest import line_of


DATA = Path(__file__).parent / "data" / "junit"
SAMPLES = {
    "vitest.xml": "vitest",
    "jest-junit.xml": "jest",
    "go-junit-report.xml": "go",
    "TEST-com.example.shop.CalculatorTest.xml": "maven-surefire",
    "dotnet-junit-logger.xml": "dotnet",
}


def ingest(path: Path, **kwargs: object) -> TestReport:
    """Read one file and check the report is a fixed point of the model."""
    report = junit.read_junit([path], **kwargs)  # type: ignore[arg-type]
    assert TestReport.model_validate_json(report.model_dump_json()) == report
    return report


def declared_counts(path: Path) -> dict[str, int]:
    """tests/failures/errors/skipped as the XML's top-level suites declare them (trusted test
    data, so the standard parser is fine here)."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    return {
        key: sum(int(s.get(key) or 0) for s in suites)
        for key in ("tests", "failures", "errors", "skipped")
    }


def by_nodeid(report: TestReport, nodeid: str) -> TestResult:
    [found] = [r for r in report.results if r.nodeid == nodeid]
    return found


# --- every sample ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "tool"), SAMPLES.items())
def test_summary_equals_the_xml_counts(name: str, tool: str) -> None:
    """The ingested summary has the XML's tests, failures, errors and skipped; the runner is
    detected."""
    path = DATA / name
    report = ingest(path)
    declared = declared_counts(path)
    s = report.summary
    assert report.run.tool == tool
    assert (s.total, s.failed, s.errors, s.skipped + s.xfailed) == (
        declared["tests"],
        declared["failures"],
        declared["errors"],
        declared["skipped"],
    )
    recount = ReportSummary.model_validate(aggregate(report.results).summary(s.duration))
    assert s == recount
    assert report.run.exit_code == (1 if s.failed + s.errors else 0)
    assert not [w for w in report.warnings if w.code == "junit-count"]


def test_vitest() -> None:
    """vitest: file::describe > name, the assertion type, the test file's line, captured output."""
    report = ingest(DATA / "vitest.xml")
    result = by_nodeid(report, "src/cart.test.ts::Cart > total > sums the prices")
    assert result.file == "src/cart.test.ts"
    assert result.test_name == "Cart > total > sums the prices"
    assert result.duration == 0.012
    failure = result.failure
    assert failure is not None
    assert (failure.error_type, failure.file, failure.line) == (
        "AssertionError",
        "src/cart.test.ts",
        18,
    )
    assert failure.error_message == "expected 30 to be 35 // Object.is equality"
    assert "- 35\n+ 30" in failure.stack_trace
    assert result.captured is not None and result.captured.stdout == "computing total for 2 items"
    typed = by_nodeid(report, "src/price.test.ts::parses <input> values").failure
    assert typed is not None
    assert (typed.error_type, typed.file, typed.line) == ("TypeError", "src/price.test.ts", 22)
    assert report.run.started_at == datetime(2026, 3, 4, 10, 15, 20, 125000, tzinfo=timezone.utc)
    assert report.summary.duration == 0.842
    assert report.environment.extra == {"hostname": "runner-7"}


def test_jest_junit() -> None:
    """jest-junit: a failure without attributes gets its type and message from the text; the
    node id is suite::name when classname repeats the name."""
    report = ingest(DATA / "jest-junit.xml")
    result = by_nodeid(report, "auth::auth refuses an expired token")
    failure = result.failure
    assert failure is not None
    assert failure.error_type == "Error"
    assert failure.error_message == "expect(received).toBe(expected) // Object.is equality"
    assert (failure.file, failure.line) == ("/home/ci/app/src/auth.test.js", 27)
    skipped = by_nodeid(report, "auth::auth locks the account after 5 failures")
    assert skipped.outcome == "skipped" and skipped.reason is None


def test_go_junit_report() -> None:
    """go-junit-report: package::Test/sub, go.version kept, the output's first line as message."""
    report = ingest(DATA / "go-junit-report.xml")
    assert report.environment.extra["go.version"] == "go1.22.1 linux/amd64"
    assert by_nodeid(report, "example.com/shop/calc::TestDivide/by_zero").outcome == "passed"
    failure = by_nodeid(report, "example.com/shop/calc::TestDivide").failure
    assert failure is not None
    assert failure.error_type == "Failed"
    assert failure.error_message == "calc_test.go:21: Divide(7, 2) = 3, want 3.5"
    assert (failure.file, failure.line) == ("calc_test.go", 21)
    skipped = by_nodeid(report, "example.com/shop/calc::TestPower")
    assert skipped.reason == "calc_test.go:40: not implemented yet"
    # timestamps with an offset come out in UTC
    assert report.run.started_at == datetime(2026, 3, 4, 9, 17, 11, tzinfo=timezone.utc)


def test_maven_surefire() -> None:
    """Surefire: flakyFailure makes a flaky pass, rerunFailure the attempts of a failure, the
    frame of the test class is the location, only version-like properties are kept."""
    report = ingest(DATA / "TEST-com.example.shop.CalculatorTest.xml")
    prefix = "com.example.shop.CalculatorTest::"
    divides = by_nodeid(report, prefix + "divides").failure
    assert divides is not None
    assert divides.error_type == "org.opentest4j.AssertionFailedError"
    assert (divides.file, divides.line) == ("CalculatorTest.java", 31)
    npe = by_nodeid(report, prefix + "parsesInput")
    assert npe.outcome == "error" and npe.failure is not None
    assert npe.failure.error_type == "java.lang.NullPointerException"
    assert npe.failure.line == 44
    flaky = by_nodeid(report, prefix + "cachesResults")
    assert (flaky.outcome, flaky.flaky, flaky.reruns, flaky.counted_as) == (
        "passed",
        True,
        1,
        ["rerun", "passed"],
    )
    assert flaky.attempts[0].failure is not None and flaky.attempts[0].failure.line == 52
    rerun = by_nodeid(report, prefix + "talksToTheServer")
    assert (rerun.outcome, rerun.reruns, rerun.flaky) == ("failed", 2, False)
    assert rerun.failure is not None and rerun.failure.error_message == "Read timed out"
    assert [a.failure.error_type for a in rerun.attempts if a.failure] == [
        "java.net.ConnectException"
    ] * 2
    s = report.summary
    assert (s.reruns, s.flaky) == (3, 1)
    assert report.environment.extra == {
        "java.version": "21.0.2",
        "os.name": "Linux",
        "os.arch": "amd64",
    }
    assert "s3cr3t" not in report.model_dump_json()


def test_dotnet_junit_logger() -> None:
    """JunitXml.TestLogger: tests of the same name stay two results (the XML counts two), the
    assembly is not taken for the test file, the message is dedented."""
    report = ingest(DATA / "dotnet-junit-logger.xml")
    twins = [r for r in report.results if r.nodeid == "Shop.Tests.PriceTests::Multiplies(2,2)"]
    assert len(twins) == 2
    failure = twins[0].failure
    assert failure is not None
    assert twins[0].file == "Shop.Tests.PriceTests"
    assert failure.error_type == "Failed"
    assert failure.error_message == "Expected: 4\nBut was:  5"
    assert failure.file == r"C:\agent\_work\1\s\Shop.Tests\PriceTests.cs"
    assert failure.line == 40
    assert by_nodeid(report, "Shop.Tests.StockTests::Reserves").reason == "Needs the warehouse API"


def test_several_files_and_a_directory(tmp_path: Path) -> None:
    """Several files (or a directory of them) are one run: counts add, the tools are named."""
    for name in ("vitest.xml", "jest-junit.xml"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    report = junit.read_junit([tmp_path])
    assert report.summary.total == 13
    assert report.run.tool == "jest+vitest"
    assert report.run.started_at == datetime(2026, 3, 4, 10, 15, 20, 125000, tzinfo=timezone.utc)


# --- pytest's own junitxml ------------------------------------------------------------------

PYTEST_SUITE = """
    import pytest

    def test_pass(record_property):
        record_property("jira", "QB-1")

    def test_fail():
        assert 1 == 2

    @pytest.fixture
    def broken():
        raise RuntimeError("boom")

    def test_setup_error(broken):
        pass

    @pytest.fixture
    def broken_teardown():
        yield
        raise OSError("teardown broke")

    def test_fail_then_teardown_error(broken_teardown):
        assert 0

    @pytest.mark.skip(reason="not today")
    def test_skip():
        pass

    @pytest.mark.xfail(reason="known bug")
    def test_xfail():
        assert 0

    @pytest.mark.xfail(reason="must fail", strict=True)
    def test_xpass_strict():
        pass

    class TestGroup:
        @pytest.mark.parametrize("x", [1, 2])
        def test_param(self, x):
            assert x == 1
"""


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_pytest_junitxml_matches_the_qbench_report(
    pytester: pytest.Pytester, run_qbench: RunQBench, family: str
) -> None:
    """pytest's --junitxml, ingested, has the node ids, outcomes and counts of qbench's own report
    of the same run (the teardown error's second <testcase> folded back)."""
    pytester.makepyfile(test_suite=PYTEST_SUITE)
    xml = pytester.path / "junit.xml"
    ignore = "ignore:record_property is incompatible with junit_family"  # xunit2 drops properties
    run = run_qbench(f"--junitxml={xml}", "-o", f"junit_family={family}", "-W", ignore)
    report = ingest(xml)
    assert report.run.tool == "pytest"
    fields = ("total", "passed", "failed", "errors", "skipped", "xfailed", "xpassed")
    assert {f: getattr(report.summary, f) for f in fields} == {
        f: getattr(run.report.summary, f) for f in fields
    }
    mine = {r.nodeid: (r.outcome, r.counted_as) for r in run.report.results}
    assert {r.nodeid: (r.outcome, r.counted_as) for r in report.results} == mine
    ingested = {r.nodeid: r for r in report.results}
    for original in run.report.results:
        copy = ingested[original.nodeid]
        assert copy.test_name == original.test_name
        for got, want in (
            (copy.failure, original.failure),
            (copy.teardown_failure, original.teardown_failure),
        ):
            assert (got and (got.error_type, got.phase)) == (want and (want.error_type, want.phase))
    if family == "xunit1":  # xunit2 has neither file, line nor properties
        assert all(ingested[r.nodeid].line == r.line for r in run.report.results)
        assert ingested["test_suite.py::test_pass"].user_properties == [("jira", "QB-1")]
    setup = ingested["test_suite.py::test_setup_error"].failure
    assert setup is not None and setup.error_message == "boom"
    assert (setup.file, setup.line) == ("test_suite.py", line_of("boom", PYTEST_SUITE))


# --- safety -------------------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuites><testsuite name="s"><testcase name="t"><failure message="&lol9;"/></testcase></testsuite></testsuites>
"""

XXE = """<?xml version="1.0"?>
<!DOCTYPE testsuites [<!ENTITY secret SYSTEM "file://{path}">]>
<testsuites><testsuite name="s"><testcase name="t"><failure message="&secret;"/></testcase></testsuite></testsuites>
"""

PARAMETER_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE testsuites [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>
<testsuites/>
"""

EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE testsuites SYSTEM "http://127.0.0.1:9/junit.dtd">
<testsuites/>
"""


@pytest.mark.parametrize(
    "payload",
    [BILLION_LAUGHS, XXE, PARAMETER_ENTITY, EXTERNAL_DTD],
    ids=["laughs", "xxe", "param", "dtd"],
)
def test_dtds_and_entities_are_refused(tmp_path: Path, payload: str) -> None:
    """Entity expansion and external entities are refused before anything is expanded or read."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    path = tmp_path / "evil.xml"
    path.write_text(payload.replace("{path}", str(secret)))
    with pytest.raises(JUnitFormatError) as excinfo:
        junit.read_junit([path])
    message = str(excinfo.value)
    assert str(path) in message and "declares a DTD" in message and "refuses" in message
    assert "TOP-SECRET-VALUE" not in message
    assert excinfo.value.slug == "junit-dtd"


def test_cli_refuses_billion_laughs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command prints one error line and writes nothing."""
    path = tmp_path / "evil.xml"
    path.write_text(BILLION_LAUGHS)
    out = tmp_path / "out.json"
    assert main(["ingest-junit", str(path), "-o", str(out)]) == ERR
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "declares a DTD" in captured.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<testsuites><testsuite>", "not well-formed XML: no element found at line 1"),
        ("<testsuite><testcase name='a'>&nbsp;</testcase></testsuite>", "undefined entity"),
        ("<html><body/></html>", "is not JUnit XML: its root element is <html>"),
        ("", "not well-formed XML: no element found"),
    ],
)
def test_not_junit(tmp_path: Path, text: str, fragment: str) -> None:
    """Broken or foreign XML is one clear error naming the file."""
    path = tmp_path / "x.xml"
    path.write_text(text)
    with pytest.raises(JUnitFormatError, match=r"x\.xml") as excinfo:
        junit.read_junit([path])
    assert fragment in str(excinfo.value)


def test_missing_file_and_empty_directory(tmp_path: Path) -> None:
    """A missing file and a directory without XML are errors naming them."""
    with pytest.raises(JUnitFormatError, match=r"cannot read .*nope\.xml"):
        junit.read_junit([tmp_path / "nope.xml"])
    with pytest.raises(JUnitFormatError, match=re.escape(f"no JUnit XML file in {tmp_path}")):
        junit.read_junit([tmp_path])


# --- text handling --------------------------------------------------------------------------


def test_secrets_redacted_and_output_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values of secret-looking environment variables never reach the report; output is cut."""
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-5up3r-s3cret")
    path = tmp_path / "t.xml"
    path.write_text(
        '<testsuite name="s" tests="1"><testcase classname="c" name="t">'
        '<failure message="login with tok-5up3r-s3cret failed">trace tok-5up3r-s3cret</failure>'
        f"<system-out>{'x' * 500}</system-out>"
        '<properties><property name="token" value="tok-5up3r-s3cret"/></properties>'
        "</testcase></testsuite>"
    )
    report = ingest(path, limits=Limits(max_output=100, max_trace=1000))
    text = report.model_dump_json()
    assert "tok-5up3r-s3cret" not in text and "[redacted]" in text
    captured = report.results[0].captured
    assert captured is not None and "qbench cut 400 characters" in captured.stdout


def test_nested_suites_count_each_case_once(tmp_path: Path) -> None:
    """Test cases of nested suites are read once, with their own suite's name."""
    path = tmp_path / "t.xml"
    path.write_text(
        '<testsuites tests="3"><testsuite name="outer"><testcase name="a"/>'
        '<testsuite name="inner"><testcase name="b"/><testcase name="c"><skipped/></testcase>'
        "</testsuite></testsuite></testsuites>"
    )
    report = ingest(path)
    assert [r.nodeid for r in report.results] == ["outer::a", "inner::b", "inner::c"]
    assert (report.summary.total, report.summary.skipped) == (3, 1)
    assert not report.warnings


def test_declared_count_mismatch_is_noted(tmp_path: Path) -> None:
    """An XML whose declared tests disagree with its test cases gets a note; cases count."""
    path = tmp_path / "t.xml"
    path.write_text('<testsuite name="s" tests="3"><testcase name="a"/></testsuite>')
    report = ingest(path)
    assert report.summary.total == 1
    [note] = report.warnings
    assert (note.tool, note.code) == ("qbench", "junit-count")
    assert "declares 3 tests but holds 1" in note.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-04T10:15:20.125Z", datetime(2026, 3, 4, 10, 15, 20, 125000, tzinfo=timezone.utc)),
        ("2026-03-04T10:15:20", datetime(2026, 3, 4, 10, 15, 20, tzinfo=timezone.utc)),
        ("2019-09-01T 23:56:54Z", datetime(2019, 9, 1, 23, 56, 54, tzinfo=timezone.utc)),
        (
            "2026-11-22T01:29:44.922144+01:00",
            datetime(2026, 11, 22, 0, 29, 44, 922144, tzinfo=timezone.utc),
        ),
        (
            "2026-03-04T10:15:20.1234567Z",
            datetime(2026, 3, 4, 10, 15, 20, 123456, tzinfo=timezone.utc),
        ),
        ("yesterday", None),
        (None, None),
    ],
)
def test_parse_timestamp(text: str | None, expected: datetime | None) -> None:
    """Every runner's timestamp spelling is read, in UTC."""
    assert junit.parse_timestamp(text) == expected


def test_error_type_of() -> None:
    """The type attribute when it names a type, else the text's ``Name:``, else Failed/Error."""
    assert junit.error_type_of("TypeError", "", "", False) == "TypeError"
    assert junit.error_type_of("failure", "x", "AssertionError: no", False) == "AssertionError"
    assert junit.error_type_of(None, "Error: boom", "", False) == "Error"
    assert junit.error_type_of("", "expected: 2", "", False) == "Failed"
    assert junit.error_type_of("", "", "", True) == "Error"


# --- the command ----------------------------------------------------------------------------


def test_cli_ingest_writes_json_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench ingest-junit FILE -o OUT --md MD`` writes both and says what it read."""
    out, md = tmp_path / "out" / "vitest.json", tmp_path / "vitest.md"
    argv = ["ingest-junit", str(DATA / "vitest.xml"), "-o", str(out), "--md", str(md)]
    assert main(argv) == OK
    assert capsys.readouterr().out == (
        "qbench: read vitest JUnit XML: 7 tests: 2 failed, 4 passed, 1 skipped\n"
    )
    report = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert report.run.command == ["qbench", *argv[:2]]
    markdown = md.read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report: 2 failed, 4 passed, 1 skipped")
    assert " · vitest · 2026-03-04 10:15:20 UTC" in markdown
    assert "### `src/cart.test.ts::Cart > total > sums the prices`" in markdown


def test_cli_ingest_to_stdout_with_tool(capsys: pytest.CaptureFixture[str]) -> None:
    """``-o -`` prints the JSON (the note goes to stderr); ``--tool`` names the runner."""
    assert main(["ingest-junit", str(DATA / "jest-junit.xml"), "-o", "-", "--tool", "web"]) == OK
    captured = capsys.readouterr()
    assert json.loads(captured.out)["run"]["tool"] == "web"
    assert captured.err.startswith("qbench: read web JUnit XML: 6 tests")


def test_cli_bad_cap(capsys: pytest.CaptureFixture[str]) -> None:
    """A negative cap is one error line."""
    assert main(["ingest-junit", str(DATA / "vitest.xml"), "-o", "-", "--max-output", "-1"]) == ERR
    assert "must not be negative" in capsys.readouterr().err


class CountingParser:
    """An expat parser that records how it is fed."""

    _real: Any
    calls: list[tuple[str, int]]

    def __init__(self, real: Any, calls: list[tuple[str, int]]) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "calls", calls)

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._real, name, value)

    def Parse(self, data: bytes, final: bool = False) -> int:
        self.calls.append(("Parse", len(data)))
        return int(self._real.Parse(data, final))

    def ParseFile(self, handle: object) -> int:
        self.calls.append(("ParseFile", 0))
        return int(self._real.ParseFile(handle))


def test_huge_attribute_is_parsed_in_one_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 4 MB failure message is fed to expat in one Parse call, not in small chunks, which
    rescan the attribute each time (issue 12.10)."""
    calls: list[tuple[str, int]] = []
    create = expat.ParserCreate
    monkeypatch.setattr(expat, "ParserCreate", lambda: CountingParser(create(), calls))
    path = tmp_path / "big.xml"
    path.write_text(
        '<testsuite tests="1"><testcase classname="a" name="b">'
        f'<failure message="{"A" * 4_000_000}">trace</failure></testcase></testsuite>'
    )
    report = ingest(path)
    assert report.summary.failed == 1
    assert calls == [("Parse", path.stat().st_size)]
    (tmp_path / "dtd.xml").write_text('<!DOCTYPE t [<!ENTITY a "b">]><t/>')
    with pytest.raises(JUnitFormatError, match="refuses DTDs"):
        junit.parse_xml(tmp_path / "dtd.xml")


def test_non_python_traces_get_a_neutral_fence() -> None:
    """vitest's JavaScript stacks are fenced as ``text`` in report.md, not as Python's ``pytb``
    (issue 19.13); a pytest report's traces stay ``pytb``."""
    from pytest_qbench.report.render import render

    vitest = render(ingest(DATA / "vitest.xml"))
    assert "```text\n" in vitest and "AssertionError" in vitest
    assert "pytb" not in vitest
    pytest_report = ingest(DATA / "vitest.xml")
    pytest_report.run.tool = "pytest"
    assert "```pytb\n" in render(pytest_report)
