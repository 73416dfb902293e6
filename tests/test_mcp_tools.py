"""The MCP tools without the SDK and without pytest children: paths, the command line, the size
budget, the catalog and its imports (issue 6)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pytest
from mcp_helpers import bm25_only

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.core.text import CUT_MARKER
from pytest_qbench.mcp import search
from pytest_qbench.mcp import testrun
from pytest_qbench.mcp import text as texts
from pytest_qbench.mcp.budget import bound_trace
from pytest_qbench.mcp.budget import json_size
from pytest_qbench.mcp.catalog import Filters
from pytest_qbench.mcp.catalog import fts_query
from pytest_qbench.mcp.catalog import open_catalog
from pytest_qbench.mcp.catalog import split_words
from pytest_qbench.mcp.command import RunRequest
from pytest_qbench.mcp.command import plan_collection
from pytest_qbench.mcp.command import plan_run
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.health import Health
from pytest_qbench.mcp.ingest import export_case
from pytest_qbench.mcp.ingest import read_export
from pytest_qbench.mcp.paths import resolve_test_path
from pytest_qbench.mcp.testrun import build_result
from pytest_qbench.mcp.tools import QBenchTools
from pytest_qbench.report.models import CoverageFile
from pytest_qbench.report.models import CoverageReport
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult


CATALOG = Path(__file__).parent / "data" / "mcp" / "catalog.json"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project with a tests directory and a file."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    return project.resolve()


@pytest.fixture
def config(root: Path, monkeypatch: pytest.MonkeyPatch) -> ServerConfig:
    bm25_only(monkeypatch)  # these tests pin BM25's ranking; test_mcp_search the hybrid one
    return ServerConfig(root=root, qbench_dir=root / ".qbench")


@pytest.fixture
def tools(config: ServerConfig) -> QBenchTools:
    """The tools, with the fixture catalog imported."""
    tools = QBenchTools(config)
    shutil.copy(CATALOG, config.root / "catalog.json")
    tools.ingest_file("catalog.json")
    return tools


# --- paths and the command line -------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("tests", "tests"),
        ("tests/test_a.py", "tests/test_a.py"),
        ("./tests//test_a.py", "tests/test_a.py"),
        ("tests/test_a.py::test_a", "tests/test_a.py::test_a"),
        ("tests/test_a.py::TestX::test_y[a-b c]", "tests/test_a.py::TestX::test_y[a-b c]"),
        (".", "."),
    ],
)
def test_paths_inside_the_root_are_kept(root: Path, given: str, expected: str) -> None:
    """Paths and node ids inside the project come back relative to it (issue 6)."""
    assert resolve_test_path(root, given) == expected


def test_absolute_path_inside_the_root_becomes_relative(root: Path) -> None:
    """An absolute path inside the root is accepted, as a relative one (issue 6)."""
    assert resolve_test_path(root, str(root / "tests")) == "tests"


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("../outside", "holds '..'"),
        ("tests/../../outside", "holds '..'"),
        ("/etc", "outside the project root"),
        ("-x", "options are not accepted"),
        ("--collect-only", "options are not accepted"),
        ("-p evil", "options are not accepted"),
        ("@args.txt", "options are not accepted"),
        ("tests\n-x", "control character"),
        ("tests\x00", "control character"),
        ("", "is empty"),
        ("nope.py", "does not exist"),
        ("x" * 1001, "longer than"),
    ],
)
def test_escapes_and_options_are_refused(root: Path, given: str, reason: str) -> None:
    """`..`, outside absolute paths, option-like values and junk are refused (issue 6)."""
    with pytest.raises(ToolFailure, match=reason):
        resolve_test_path(root, given)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlink_escape_is_refused(root: Path, tmp_path: Path) -> None:
    """A symlink inside the root that points outside it is refused (issue 6)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_secret.py").write_text("def test_x(): pass\n")
    (root / "tests" / "link").symlink_to(outside)
    with pytest.raises(ToolFailure, match="through a symlink"):
        resolve_test_path(root, "tests/link/test_secret.py")
    with pytest.raises(ToolFailure, match="through a symlink"):
        resolve_test_path(root, "tests/link")


def test_a_file_named_like_an_option_stays_a_path(root: Path) -> None:
    """A real file called '-x.py' is passed as './-x.py', never as an option."""
    (root / "-x.py").write_text("")
    assert resolve_test_path(root, str(root / "-x.py")) == "./-x.py"


def test_command_is_an_argument_list_with_one_item_per_value(config: ServerConfig) -> None:
    """-k and -m expressions are single attached arguments; nothing free-form (issue 6)."""
    request = RunRequest(
        test_path=["tests"],
        keyword="login and not (slow or x)",
        markers="not integration",
        fail_fast=True,
        verbose=True,
        coverage_threshold=80,
    )
    plan = plan_run(config, request, run_id="r1")
    argv = plan.argv
    assert argv[:7] == [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "qbench",
        "-p",
        "pytest_qbench.plugin.collect_dump",
    ]
    assert "-k=login and not (slow or x)" in argv
    assert "-m=not integration" in argv
    assert argv[7:9] == ["--qbench-cov", "--qbench-cov-fail-under=80"]
    assert "--qbench-run-id=r1" in argv
    assert f"--qbench-digest={config.qbench_dir / 'runs' / 'r1' / 'digest.json'}" in argv
    assert argv[-1] == "tests"
    assert {"-x", "-v"} <= set(argv)


@pytest.mark.parametrize(
    "request_",
    [
        RunRequest(keyword="-p no:qbench"),
        RunRequest(markers="--co"),
        RunRequest(test_path=["--rootdir=/"]),
        RunRequest(coverage_source=["../src"]),
        RunRequest(coverage_source=["--cov=/"]),
        RunRequest(coverage_threshold=101),
        RunRequest(max_failures=0),
        RunRequest(timeout_seconds=-1),
    ],
)
def test_option_injection_is_refused(config: ServerConfig, request_: RunRequest) -> None:
    """Values that would become options or leave the project are refused (issue 6)."""
    with pytest.raises(ToolFailure):
        plan_run(config, request_)


def test_a_run_that_cannot_start_is_a_tool_error(root: Path) -> None:
    """A run store that cannot be made stops the run with the reason, and frees the runner."""
    (root / "store").write_text("a file, not a directory")
    tools = QBenchTools(ServerConfig(root=root, qbench_dir=root / "store"))
    for _ in range(2):
        with pytest.raises(ToolFailure, match="cannot start pytest"):
            tools.start_run(RunRequest())


def test_coverage_sources_and_timeout_cap(config: ServerConfig) -> None:
    """Sources are module names or paths in the root; the timeout is capped at the maximum."""
    (config.root / "src").mkdir()
    request = RunRequest(coverage_source=["src", "mypkg.sub"], timeout_seconds=99999)
    plan = plan_run(config, request)
    assert plan.argv[7:9] == ["--qbench-cov=src", "--qbench-cov=mypkg.sub"]
    assert plan.timeout == config.max_timeout
    assert plan_run(config, RunRequest()).timeout == config.default_timeout


# --- the size budget -------------------------------------------------------------------------


def _trace(frames: int) -> str:
    lines = ["tests/test_a.py:10: in test_a", "    helper(1)"]
    for n in range(frames):
        lines += [f"src/pkg/mod{n}.py:{n + 1}: in step{n}", f"    step{n + 1}(value)"]
    lines += ["E   ValueError: the very end", "E   assert 1 == 2"]
    return "\n".join(lines)


def test_bound_trace_keeps_the_tests_own_frame_and_the_end() -> None:
    """A long trace keeps its first frame in the test file and its last lines (issue 6)."""
    trace = _trace(200)
    cut = bound_trace(trace, 800, "tests/test_a.py")
    assert len(cut) < 900
    assert cut.startswith("tests/test_a.py:10: in test_a\n    helper(1)\n")
    assert cut.endswith("E   ValueError: the very end\nE   assert 1 == 2")
    assert "qbench cut" in cut
    assert bound_trace(trace, len(trace), "tests/test_a.py") == trace


def test_bound_trace_without_the_own_frame_keeps_the_end() -> None:
    """Without a frame in the test's file, the end is kept."""
    cut = bound_trace(_trace(200), 500, "tests/other.py")
    assert cut.startswith(CUT_MARKER.split("{")[0])
    assert cut.endswith("assert 1 == 2")


def _report(failures: int, passed: int = 3) -> TestReport:
    now = datetime.now(timezone.utc)
    results = [
        TestResult(
            nodeid=f"tests/test_p.py::test_ok{n}",
            test_name=f"test_ok{n}",
            file="tests/test_p.py",
            outcome="passed",
        )
        for n in range(passed)
    ]
    for n in range(failures):
        results.append(
            TestResult(
                nodeid=f"tests/test_f.py::test_fail[{n}]",
                test_name=f"test_fail[{n}]",
                file="tests/test_f.py",
                line=3,
                outcome="failed",
                failure=Failure(
                    error_type="AssertionError",
                    error_message=f"value {n} is wrong " + "x" * 3000,
                    file="tests/test_f.py",
                    line=5,
                    stack_trace=_trace(100).replace("tests/test_a.py", "tests/test_f.py"),
                ),
            )
        )
    return TestReport(
        meta=ReportMeta(qbench_version="0", created_at=now),
        run=RunMeta(
            run_id="r500", started_at=now, completed_at=now, exit_code=1, cwd="/", command=[]
        ),
        environment=Environment(
            python="3",
            implementation="CPython",
            platform="x",
            pytest_version="9",
            qbench_version="0",
        ),
        summary=ReportSummary(total=failures + passed, passed=passed, failed=failures),
        results=results,
    )


@pytest.mark.parametrize("budget", [4000, 12000, 22000])
def test_500_failures_stay_within_the_budget(config: ServerConfig, budget: int) -> None:
    """500 failures with long messages and traces: the summary and the first failures come
    first, the rest are counted, and the JSON and the text fit the budget (issue 6)."""
    plan = plan_run(config, RunRequest(max_failures=100), run_id="r500")
    result = build_result(plan, 1, _report(500), None, budget)
    assert json_size(result) <= budget
    assert result.summary.failed == 500
    assert result.failures, "the first failures are listed"
    assert result.failures[0].test_name == "tests/test_f.py::test_fail[0]"
    assert result.truncated.failures == 500 - len(result.failures)
    assert result.truncated.budget_bytes == budget
    assert "tests/test_f.py:10: in test_a" in result.failures[0].stack_trace
    assert result.failures[0].stack_trace.endswith("assert 1 == 2")
    summary = testrun.run_text(result, budget)
    assert len(summary) <= budget
    assert summary.startswith("FAILED: 500 failed, 3 passed")


def test_the_first_failure_always_gets_room(config: ServerConfig) -> None:
    """A huge coverage block gives way (its totals stay) so that a failed run lists a failure,
    not `failures: []` beside `failed: 1` (issue 6)."""
    report = _report(1, passed=0)
    files = [
        CoverageFile(
            path=f"src/pkg/module_{n}.py",
            statements=1000,
            covered=10,
            missing=990,
            percent=1.0,
            missing_ranges=[f"{i * 3}-{i * 3 + 1}" for i in range(40)],
        )
        for n in range(5)
    ]
    report.coverage = CoverageReport(
        percentage=1.0, lines_covered=50, lines_total=5000, files=files, threshold=90, met=False
    )
    plan = plan_run(config, RunRequest(), run_id="r1")
    result = build_result(plan, 1, report, None, 4000)
    assert json_size(result) <= 4000
    assert len(result.failures) == 1 and result.truncated.failures == 0
    assert result.coverage is not None and result.coverage.least_covered == []
    assert result.coverage.percentage == 1.0 and result.coverage.met is False


# --- imports into the catalog ----------------------------------------------------------------


def test_export_fields_and_their_other_spellings() -> None:
    """jiraKey, labels, folderStructure lists, expectedResult lists and step pairs are read."""
    cases, rejected = read_export(CATALOG, "json:catalog.json")
    assert not rejected
    first = cases[0]
    assert (first.uid, first.key, first.priority) == ("AUTH-1", "AUTH-1", "High")
    assert first.tags == ["login", "auth", "web"]
    assert first.folder == "Auth/Login"
    assert first.steps[1] == (
        "Enter a valid username and password",
        "User is logged in\nHome page shows the user's name",
    )
    second = cases[1]
    assert second.tags == ["login", "mobile"]
    assert second.steps == [
        ("Launch the app", None),
        ("Tap sign in", "The login form is shown"),
        ("Enter credentials", "Home screen is shown"),
    ]


def test_bad_records_are_rejected_with_reasons(tmp_path: Path) -> None:
    """Each broken case is rejected with why; the good ones are taken (issue 6)."""
    export = tmp_path / "cases.json"
    export.write_text(
        json.dumps(
            [
                {"key": "OK-1", "title": "Fine"},
                {"title": "No key"},
                {"key": "NT-1"},
                "just a string",
                {"key": "OK-1", "title": "Twice"},
                {"key": "ST-1", "title": "Bad steps", "steps": "do it"},
                {"key": "ST-2", "title": "Bad step", "steps": [{"expected": "x"}]},
                {"key": "TG-1", "title": "Bad tags", "tags": [1, 2]},
                {"key": "LG-1", "title": "x" * 501},
            ]
        )
    )
    cases, rejected = read_export(export, "json:cases.json")
    assert [c.uid for c in cases] == ["OK-1"]
    reasons = {r.record: r.reason for r in rejected}
    assert reasons == {
        "#2": "no key: give one of key, jiraKey, jira_key, testCaseKey, testCaseId, uid, id",
        "#3 (NT-1)": "no title: give one of title, name, summary",
        "#4": "not an object but str",
        "#5 (OK-1)": "duplicate key 'OK-1' in the file",
        "#6 (ST-1)": "steps must be a list",
        "#7 (ST-2)": "step 1 must be a string, an [action, expected] pair, or an object with an "
        "action (and an expected result)",
        "#8 (TG-1)": "tags must be a list of strings or a comma-separated string",
        "#9 (LG-1)": "title is longer than 500 characters",
    }


def test_an_export_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    """A file without a list of cases, or not JSON, is a tool error naming the fix."""
    (tmp_path / "a.json").write_text('{"other": 1}')
    with pytest.raises(ToolFailure, match="holds no list of test cases"):
        read_export(tmp_path / "a.json", "json:a.json")
    (tmp_path / "b.json").write_text("{nope")
    with pytest.raises(ToolFailure, match="is not JSON"):
        read_export(tmp_path / "b.json", "json:b.json")


def test_ingest_reports_added_updated_unchanged_removed(
    tools: QBenchTools, config: ServerConfig
) -> None:
    """Ingesting again reports what changed; cases gone from the file are removed (issue 6)."""
    data = json.loads(CATALOG.read_text())
    cases = data["testCases"]
    cases[0]["priority"] = "Low"
    del cases[1]
    cases.append({"key": "NEW-1", "title": "A new case"})
    (config.root / "catalog.json").write_text(json.dumps(data))
    report = tools.ingest_file("catalog.json")
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    assert report.unchanged == 9
    assert report.catalog_size == 11
    assert report.source == "json:catalog.json"


def test_ingest_source_must_be_inside_the_root(tools: QBenchTools) -> None:
    """An export path outside the project is refused like a test path."""
    with pytest.raises(ToolFailure, match=r"holds '\.\.'"):
        tools.ingest_file("../catalog.json")
    with pytest.raises(ToolFailure, match="outside the project root"):
        tools.ingest_file("/etc/passwd")


# --- searching the catalog -------------------------------------------------------------------


def _keys(result: object) -> list[str]:
    return [hit.key for hit in result.results]  # type: ignore[attr-defined]


def test_ranking_puts_title_matches_before_step_mentions(tools: QBenchTools) -> None:
    """'login' in a title ranks above 'login' in a step only; stemming finds 'logins'."""
    result = tools.search_tests("login")
    keys = _keys(result)
    assert set(keys[:3]) == {"AUTH-1", "AUTH-2", "API-1"}
    assert keys.index("CART-2") > keys.index("AUTH-4")
    assert set(keys) == {"AUTH-1", "AUTH-2", "API-1", "AUTH-4", "CART-2"}
    assert result.results[0].score == 1.0 and all(0 < hit.score <= 1 for hit in result.results)
    scores = [hit.score for hit in result.results]
    assert scores == sorted(scores, reverse=True)
    assert result.results[0].matched_steps


def test_ranking_of_a_phrase(tools: QBenchTools) -> None:
    """The case holding every word comes first."""
    assert _keys(tools.search_tests("password reset email"))[0] == "AUTH-3"
    assert _keys(tools.search_tests("refund the payment"))[0] == "PAY-2"
    assert _keys(tools.search_tests("credit card checkout"))[0] == "PAY-1"


def test_filters_and_facets(tools: QBenchTools) -> None:
    """Filters narrow (any of a list's values, case-insensitive); facets count all matches."""
    assert _keys(tools.search_tests("", tags=["AUTH"], priority=["critical"])) == ["AUTH-4"]
    assert set(_keys(tools.search_tests("", platforms=["ios"]))) == {"AUTH-1", "AUTH-2"}
    assert set(_keys(tools.search_tests("", path="Auth/Login"))) == {"AUTH-1", "AUTH-2"}
    assert set(_keys(tools.search_tests("", path="Shop/*ment"))) == {"PAY-1", "PAY-2"}
    result = tools.search_tests("login", limit=2)
    assert result.total == 5
    assert result.facets.tags["login"] == 2
    assert result.facets.tags["auth"] == 3
    assert result.facets.priority == {"High": 3, "Critical": 1, "Medium": 1}


def test_cursor_pages_through_and_belongs_to_its_search(tools: QBenchTools) -> None:
    """The cursor gives the next page; replayed on another search it is refused."""
    first = tools.search_tests("login", limit=2)
    assert first.next_cursor is not None
    second = tools.search_tests("login", limit=2, cursor=first.next_cursor)
    third = tools.search_tests("login", limit=2, cursor=second.next_cursor)
    assert third.next_cursor is None
    seen = _keys(first) + _keys(second) + _keys(third)
    assert seen == _keys(tools.search_tests("login", limit=10))
    with pytest.raises(ToolFailure, match="another search"):
        tools.search_tests("cart", cursor=first.next_cursor)
    with pytest.raises(ToolFailure, match="not one search_tests returned"):
        tools.search_tests("login", cursor="!!garbage!!")


def test_query_words_are_never_fts_syntax() -> None:
    """Quotes, operators and column filters in a query are words, not FTS5 syntax."""
    assert fts_query('title: "x" OR NEAR(a b) -c*') == '"title" OR "x" OR "near" OR "b" OR "c"'
    assert fts_query("the test") is None
    assert split_words("tests/test_cart.py::TestCart::test_addItem[de]") == (
        "tests test cart py Test Cart test add Item de"
    )


def test_search_with_hostile_text_works(tools: QBenchTools) -> None:
    """Any text searches safely: SQL in a query is words ("drop" finds "drops")."""
    result = tools.search_tests('"; DROP TABLE cases; --')
    assert _keys(result) == ["CART-2"]
    assert result.catalog_size == 11
    assert _keys(tools.search_tests("login' OR 1=1 --"))[0] in {"AUTH-1", "AUTH-2", "API-1"}


def test_get_test_by_key_and_similar(tools: QBenchTools) -> None:
    """Keys are case-insensitive; a missing key names similar ones; similar tests rank by
    shared words, the reference left out (issue 6)."""
    case = tools.get_test_by_key("auth-1")
    assert case.title == "User login with valid credentials"
    assert case.steps[1].expected == "User is logged in\nHome page shows the user's name"
    with pytest.raises(ToolFailure, match="similar keys: AUTH-1, AUTH-2, AUTH-3"):
        tools.get_test_by_key("AUTH-99")
    similar = tools.find_similar_tests(test="AUTH-1", limit=3)
    assert similar.reference is not None and similar.reference.uid == "AUTH-1"
    keys = _keys(similar)
    assert "AUTH-1" not in keys
    assert keys[0] in {"AUTH-2", "API-1"}
    assert "PROF-1" not in keys
    by_text = tools.find_similar_tests(text="refund money for a paid order", limit=2)
    assert _keys(by_text)[0] == "PAY-2"
    with pytest.raises(ToolFailure, match="either test"):
        tools.find_similar_tests()


def test_search_results_fit_the_budget(config: ServerConfig) -> None:
    """Many long cases: the page is cut to the budget and the cursor goes on from there."""
    tools = QBenchTools(ServerConfig(root=config.root, qbench_dir=config.qbench_dir, budget=4000))
    cases = [
        {"key": f"L-{n}", "title": f"login case {n}", "description": "login " * 200}
        for n in range(50)
    ]
    (config.root / "many.json").write_text(json.dumps(cases))
    tools.ingest_file("many.json")
    result = tools.search_tests("login", limit=50)
    assert json_size(result) <= 4000
    assert 0 < len(result.results) < 50
    assert result.next_cursor is not None
    rest = tools.search_tests("login", limit=50, cursor=result.next_cursor)
    assert rest.results[0].key not in _keys(result)


def test_empty_catalog_says_how_to_build_it(config: ServerConfig) -> None:
    """Before any ingest, searching says to call ingest_tests and writes nothing."""
    result = QBenchTools(config).search_tests("anything")
    assert result.total == 0
    assert result.note is not None and "ingest_tests" in result.note
    assert not config.catalog_path.exists()


def test_catalog_of_another_schema_is_refused(config: ServerConfig) -> None:
    """A catalog file from another version is a tool error that says to rebuild it."""
    with open_catalog(config.catalog_path, create=True) as catalog:
        catalog.conn.execute("UPDATE meta SET value = '99'")
        catalog.conn.commit()
    with pytest.raises(ToolFailure, match="delete it and call ingest_tests"):
        QBenchTools(config).search_tests("x")


def test_filters_without_values_match_everything(tools: QBenchTools) -> None:
    """Empty filters are no filters."""
    assert tools.search_tests("", limit=50).total == 11
    assert Filters() == Filters((), (), (), (), None)


def test_health_without_sdk_parts(config: ServerConfig) -> None:
    """check_health reports the store, the index and the catalog."""
    health = QBenchTools(config).check_health()
    assert health.status == "ok"
    assert health.store_writable and health.fts5
    assert health.runs_indexed is None
    assert health.limits["budget_bytes"] == config.budget


HEALTH = """
import sys
from pathlib import Path
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.health import Health
from pytest_qbench.mcp.tools import QBenchTools

root = Path(sys.argv[1])
print(QBenchTools(ServerConfig(root=root, qbench_dir=root / ".qbench")).check_health().model_dump_json())
"""
"""The MCP server's ``check_health`` of the project named, printed as JSON."""


@pytest.mark.usefixtures("chmod_binds")
def test_health_of_a_read_only_store(config: ServerConfig) -> None:
    """A store that cannot be written makes the server degraded, with the reason. Asked in a
    child that chmod binds (``chmod_binds.run``: as root too, so it runs in CI)."""
    from chmod_binds import run

    config.qbench_dir.mkdir()
    config.qbench_dir.chmod(0o500)
    try:
        done = run([sys.executable, "-c", HEALTH, str(config.root)], cwd=config.root)
    finally:
        config.qbench_dir.chmod(0o700)
    assert done.returncode == 0, done.stderr
    health = Health.model_validate_json(done.stdout)
    assert health.status == "degraded"
    assert "not writable" in health.problems[0]


def test_export_case_keeps_numbers_as_text() -> None:
    """A numeric id or priority is text in the catalog."""
    case = export_case({"id": 1234, "name": "Numbered", "priority": 2}, "json:x")
    assert (case.uid, case.title, case.priority) == ("1234", "Numbered", "2")


# --- the commands ----------------------------------------------------------------------------


@pytest.fixture
def without_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imports of the MCP SDK fail, as without the extra."""
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "pytest_qbench.mcp.server", raising=False)
    monkeypatch.setitem(sys.modules, "mcp", None)


@pytest.mark.usefixtures("without_sdk")
def test_without_the_extra_both_commands_say_what_to_install(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    """One line on stderr naming the extra, exit status 1 (issue 6)."""
    from pytest_qbench.cli import main
    from pytest_qbench.mcp import launch

    assert main(["mcp", "--root", str(root)]) == 1
    hint = f"qbench mcp requires the 'mcp' extra; install it: {sys.executable} -m pip install"
    assert capsys.readouterr().err == f"qbench: error: {hint} 'mcp<3,>=2.3'\n"
    assert launch.main(["--root", str(root)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"qbench-mcp: error: {hint} 'mcp<3,>=2.3'\n"


def test_server_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """qbench mcp --help lists the options; bad values are refused before serving."""
    from pytest_qbench.cli import main

    with pytest.raises(SystemExit):
        main(["mcp", "--help"])
    out = capsys.readouterr().out
    for option in ("--root", "--qbench-dir", "--default-timeout", "--max-timeout", "--budget"):
        assert option in out
    with pytest.raises(SystemExit):
        main(["mcp", "--budget", "100"])
    assert "must be from 4000 to 22000 bytes" in capsys.readouterr().err
    assert main(["mcp", "--root", str(tmp_path / "missing")]) == 1
    assert "is not a directory" in capsys.readouterr().err


def test_text_is_bounded_in_bytes() -> None:
    """The text next to a result never passes the budget in bytes, even when every character
    takes several."""
    text = "é€" * 5000
    cut = texts.bound_bytes(text, 4000)
    assert len(cut.encode()) <= 4000
    assert cut.endswith("[... cut to 4000 bytes]")
    assert texts.bound_bytes("short", 4000) == "short"


@pytest.mark.skipif(sys.platform == "win32", reason="shell-script interpreters")
def test_python_option_names_the_interpreter_of_the_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--python: the project's interpreter runs pytest (a path, relative ones from the root, or
    a command); one that is missing or lacks pytest-qbench is refused before serving (issue
    11.15)."""
    from pytest_qbench.cli import main
    from pytest_qbench.mcp.config import add_server_options
    from pytest_qbench.mcp.config import config_from_args

    parser = argparse.ArgumentParser()
    add_server_options(parser)
    assert config_from_args(parser.parse_args(["--root", str(tmp_path)])).python == sys.executable
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (tmp_path / "bin" / "python").chmod(0o755)
    args = parser.parse_args(["--root", str(tmp_path), "--python", "bin/python"])
    config = config_from_args(args)
    assert config.python == str(tmp_path / "bin" / "python")
    assert plan_run(config, RunRequest()).argv[:3] == [config.python, "-m", "pytest"]
    assert plan_collection(config).argv[:3] == [config.python, "-m", "pytest"]
    assert QBenchTools(config).check_health().interpreter == config.python

    assert main(["mcp", "--root", str(tmp_path), "--python", "no-such-python-qbench"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qbench: error: --python no-such-python-qbench: no such executable;")
    bare = tmp_path / "bare-python"
    bare.write_text(
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pytest'\" >&2\nexit 1\n"
    )
    bare.chmod(0o755)
    assert main(["mcp", "--root", str(tmp_path), "--python", str(bare)]) == 1
    err = capsys.readouterr().err
    assert "cannot import pytest and pytest-qbench (ModuleNotFoundError: No module" in err
    from pytest_qbench.core.install import qbench_source

    assert (
        f"install them in that environment: {bare} -m pip install pytest {qbench_source()}" in err
    )


def test_run_text_keeps_the_assertion_explanation_in_full() -> None:
    """run_test_workflow's text shows every line of pytest's assertion explanation (the middle
    '+  where' lines too), once, before the end of the trace (issue 11.14)."""
    from pytest_qbench.mcp.testrun import RunCounts
    from pytest_qbench.mcp.testrun import RunResult
    from pytest_qbench.report.models import DigestFailure

    explanation = [
        "assert 3 == 4",
        " +  where 3 = len([1, 2, 3])",
        " +    where [1, 2, 3] = build(1)",
        " +      where build = <function build at 0x7f>",
        " +  and   4 = expected_size()",
        " +    where expected_size = Spec.size",
    ]
    trace = "\n".join(
        [
            "tests/test_a.py:8: in test_a",
            "    assert len(build(1)) == expected_size()",
            f"E   AssertionError: {explanation[0]}",
            *(f"E   {line}" for line in explanation[1:]),
        ]
    )
    failure = DigestFailure(
        test_name="tests/test_a.py::test_a",
        outcome="failed",
        file="tests/test_a.py",
        line=8,
        error_type="AssertionError",
        error_message="\n".join(explanation),
        stack_trace=trace,
    )
    result = RunResult(
        run_id="r1",
        success=False,
        exit_code=1,
        exit_meaning="tests failed",
        timeout_seconds=50,
        summary=RunCounts(total=1, failed=1),
        failures=[failure],
    )
    text = testrun.run_text(result, 12_000)
    for line in explanation:
        assert text.count(line) == 1, line
    assert "   | E   AssertionError: (message shown above)" in text
    assert "   |     assert len(build(1)) == expected_size()" in text
    many = failure.model_copy(
        update={"error_message": "\n".join(f"line {n}" for n in range(30)), "stack_trace": ""}
    )
    text = testrun.run_text(result.model_copy(update={"failures": [many]}), 12_000)
    assert "line 19" in text and "line 20" not in text
    assert "... 10 more lines: get_test_failure has them" in text


def test_search_scores_discriminate_and_name_the_matched_fields(config: ServerConfig) -> None:
    """Among 83 matches the top ten's scores spread (raw BM25 divided by the query's best, so
    the best is 1.0), and each hit says which fields hold the query's words (issue 11.14)."""
    cases = [
        {"key": "PAY-1", "title": "Refund a card payment", "description": "refund to the card"},
        {"key": "PAY-2", "title": "Refund by voucher", "steps": ["Open orders", "Ask a refund"]},
    ]
    cases += [
        {
            "key": f"OPS-{n}",
            "title": f"Order screen {n}",
            "description": "A long description of the order screen " * (1 + n % 40)
            + "that mentions refund once.",
        }
        for n in range(81)
    ]
    (config.root / "cases.json").write_text(json.dumps(cases))
    tools = QBenchTools(config)
    tools.ingest_file("cases.json")
    found = tools.search_tests("refund", limit=10)
    assert found.total == 83
    scores = [hit.score for hit in found.results]
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True)
    assert scores[0] - scores[-1] > 0.1  # 0.932 to 0.928 before
    assert len(set(scores[2:])) > 3  # the descriptions of different lengths rank apart
    first = found.results[0]
    assert first.key == "PAY-1" and first.matched_fields == ["title", "description"]
    assert first.bm25 > found.results[-1].bm25 > 0
    by_key = {hit.key: hit for hit in found.results}
    assert by_key["PAY-2"].matched_fields == ["title", "steps"]
    assert all(hit.matched_fields == ["description"] for hit in found.results[2:])
    assert "matched in title, description" in search.search_text(found, 12_000)
    assert tools.search_tests("", limit=1).results[0].score == 0.0
