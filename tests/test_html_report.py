"""The HTML report: written by --qbench-html and `qbench render --html`, self-contained, with
every text from tests inert, the trend from the history index and the attachments."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from html_page import check_page_is_self_contained
from html_page import parse_page

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.html import FlakyTest
from pytest_qbench.report.html import Trend
from pytest_qbench.report.html import TrendRun
from pytest_qbench.report.html import render_html
from pytest_qbench.report.html.attachments import EMBED_EACH
from pytest_qbench.report.html.charts import axis_dates
from pytest_qbench.report.html.page import embed_json
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.shapes import new

from conftest import ALL_OUTCOMES
from conftest import RunQBench
from conftest import assert_summary_matches_pytest
from conftest import find_run_dir
from conftest import line_of


PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "javascript:alert(1)",
    "line\u2028sep\u2029para",
)


def test_html_option_writes_the_page_and_the_run_dir_copy(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """--qbench-html: the page at PATH and report.html in the run directory, counts as pytest's,
    failures with message and traceback, self-contained under its CSP."""
    pytester.makepyfile(ALL_OUTCOMES)
    run = run_qbench("--qbench-html=out/page.html")
    assert_summary_matches_pytest(run)
    page = parse_page(pytester.path / "out" / "page.html")
    assert (run.run_dir / "report.html").read_text(encoding="utf-8") == page.source
    check_page_is_self_contained(page)
    outcomes = run.result.parseoutcomes()
    counts = page.outcome_counts()
    for word, outcome in [
        ("passed", "passed"),
        ("failed", "failed"),
        ("skipped", "skipped"),
        ("xfailed", "xfailed"),
        ("xpassed", "xpassed"),
    ]:
        assert counts[outcome] == outcomes.get(word, 0), (word, counts, outcomes)
    assert counts["error"] == outcomes["errors"]
    headline = page.source.split('id="headline"', 1)[1].split("</h1>", 1)[0]
    pytest_words = run.result.outlines[-1].strip("= ").rsplit(" in ", 1)[0]
    assert pytest_words == "4 failed, 2 passed, 2 skipped, 2 xfailed, 1 xpassed, 3 errors"
    assert f"Test report: {pytest_words} in " in headline
    failed = page.detail_of("::test_fail")["fail"]
    assert failed["type"] == "AssertionError"
    assert "x must be two" in failed["msg"]
    assert "assert x == 2" in failed["tb"]
    assert failed["where"].endswith(f".py:{line_of('assert x == 2')}")
    assert page.detail_of("::test_skip")["reason"] == "not today"
    assert "donut" in page.charts() and "histogram" in page.charts()


def test_html_page_shows_no_escape_sequences(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A test that prints colours (click.style, rich) or fails with them in its message: the page
    shows the text, as report.md does, not ``[31mred`` after an invisible ESC in the row's line,
    the message, the traceback and the captured output."""
    pytester.makepyfile(
        """
        def test_colour():
            print("\\x1b[31mred\\x1b[0m \\x1b]8;;http://x\\x07link\\x1b]8;;\\x07 bell\\x07")
            assert 0, "\\x1b[1mbold\\x1b[0m"
        """
    )
    run_qbench("--qbench-html=page.html")
    page = parse_page(pytester.path / "page.html")
    assert "\\u001b" not in page.source
    detail = page.detail_of("::test_colour")
    assert detail["fail"]["msg"].startswith("bold\n")
    assert "AssertionError: bold" in detail["fail"]["tb"]
    assert detail["out"]["stdout"] == "red link bell\\x07\n"


def test_plain_run_writes_no_html(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Without --qbench-html nothing HTML is written: plain runs pay nothing for it."""
    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench()
    assert not (run.run_dir / "report.html").exists()


def test_ini_qbench_html(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The ini twin ``qbench_html``."""
    pytester.makeini("[pytest]\nqbench_html = from-ini.html\n")
    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench()
    assert parse_page(pytester.path / "from-ini.html").outcome_counts()["passed"] == 1
    assert (run.run_dir / "report.html").is_file()


def test_interrupted_run_writes_the_html(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Ctrl-C: the page is written too, says so, and holds the tests that finished."""
    pytester.makepyfile(
        """
        def test_one(): assert 0, "one failed"
        def test_stop(): raise KeyboardInterrupt
        def test_never(): pass
        """
    )
    run = run_qbench("--qbench-html=page.html", subprocess=True)
    assert run.report.run.interrupted is True
    page = parse_page(pytester.path / "page.html")
    assert page.by_id("interrupted") is not None
    assert [n.split("::")[1] for n in page.nodeids()] == ["test_one"]
    assert "one failed" in page.detail_of("::test_one")["fail"]["msg"]


def test_render_html_of_a_crashed_run_dir(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """`qbench render RUN_DIR --html OUT` for a run whose process died: recovered from the
    stream, marked interrupted; nothing else is written."""
    pytester.makepyfile(
        """
        import os
        def test_one(): pass
        def test_two(): assert 0, "two fails"
        def test_die(): __import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(9)
        """
    )
    assert pytester.runpytest_subprocess("-p", "qbench").ret == 9
    run_dir = find_run_dir(pytester.path)
    out = pytester.path / "crashed.html"
    assert main(["render", str(run_dir), "--html", str(out)]) == OK
    assert f"wrote {out}" in capsys.readouterr().out
    assert not (run_dir / "report.json").exists()
    page = parse_page(out)
    check_page_is_self_contained(page)
    assert page.by_id("interrupted") is not None
    assert page.outcome_counts()["failed"] == 2  # test_two, and test_die: the run died in it
    assert "two fails" in page.detail_of("::test_two")["fail"]["msg"]
    assert "ProcessDied" in json.dumps(page.detail_of("::test_die"))


def test_render_html_of_a_merged_report(pytester: pytest.Pytester) -> None:
    """A merged report's page: every shard's tests and the shards table."""
    pytester.makepyfile(test_a="def test_a(): pass", test_b="def test_b(): assert 0")
    pytester.runpytest("-p", "qbench", "--qbench-run-id=a", "test_a.py")
    pytester.runpytest("-p", "qbench", "--qbench-run-id=b", "test_b.py")
    runs = pytester.path / ".qbench" / "runs"
    merged = pytester.path / "merged.json"
    assert main(["merge", str(runs / "a"), str(runs / "b"), "-o", str(merged)]) in (0, 1)
    out = pytester.path / "merged.html"
    assert main(["render", str(merged), "--html", str(out)]) == OK
    page = parse_page(out)
    assert sorted(page.nodeids()) == ["test_a.py::test_a", "test_b.py::test_b"]
    assert page.by_id("shards") is not None
    shards = page.source.split('id="shards"', 1)[1].split("</section>", 1)[0]
    assert "<code>a</code>" in shards and "<code>b</code>" in shards


def test_payloads_from_tests_stay_inert(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Node ids, messages, output, properties and metadata carrying HTML, script, a
    ``</script>`` and ``javascript:``: no element of theirs, and the data block round-trips."""
    pytester.makepyfile(
        f"""
        import pytest
        PAYLOADS = {PAYLOADS!r}

        @pytest.mark.parametrize("payload", PAYLOADS, ids=[p if p.isascii() else "sep" for p in PAYLOADS])
        def test_payload(payload, record_property):
            record_property("link", payload)
            print(payload)
            assert 0, payload

        @pytest.mark.qbench_case(key="javascript:alert(1)", title="<script>alert(1)</script>", tags=["<b>x</b>"])
        def test_meta():
            pass
        """
    )
    run_qbench("--qbench-html=page.html", "--qbench-capture=all")
    page = parse_page(pytester.path / "page.html")
    check_page_is_self_contained(page)
    assert [t.tag for t in page.tags].count("script") == 2
    assert "img" not in [t.tag for t in page.tags]
    assert not any(
        (value or "").lower().startswith("javascript:")
        for t in page.tags
        for value in t.attrs.values()
    )
    block = page.source.split('id="qbench-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block and "\u2028" not in block and "\u2029" not in block
    for payload in PAYLOADS:
        detail = page.detail_of(f"[{payload if payload.isascii() else 'sep'}]")
        assert detail["fail"]["msg"] == f"{payload}\nassert 0"
        assert detail["props"] == [["link", payload]]
        assert detail["out"]["stdout"] == payload + "\n"
    assert page.data["k"] == {
        str(
            page.nodeids().index(next(n for n in page.nodeids() if n.endswith("::test_meta")))
        ): "javascript:alert(1)"
    }
    meta = page.detail_of("::test_meta")["meta"]
    assert meta["key"] == "javascript:alert(1)" and meta["title"] == "<script>alert(1)</script>"


def test_embedded_json_cannot_end_its_block() -> None:
    """``<``, ``>``, ``&``, U+2028, U+2029 escaped; the same value once parsed."""
    value = {"m": "</script><!-- & \u2028\u2029 -->", "k": ["<b>"]}
    text = str(embed_json(value))
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == value


def test_trend_from_the_history_index(pytester: pytest.Pytester) -> None:
    """After several runs the page draws pass rate, failures and duration over them and the
    flaky test with its flips; the first run's page says there is no trend yet."""
    pytester.makepyfile(
        """
        import os
        def test_steady(): pass
        def test_flips(): assert int(os.environ["QB_RUN"]) % 2 == 0
        """
    )
    for n in range(4):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("QB_RUN", str(n))
            pytester.runpytest(
                "-p", "qbench", f"--qbench-run-id=r{n}", f"--qbench-html=page{n}.html"
            )
    first = parse_page(pytester.path / "page0.html")
    trend = first.by_id("trend")
    assert trend is not None and trend.attrs.get("class") == "empty"
    assert "No trend yet" in first.source
    last = parse_page(pytester.path / "page3.html")
    assert {"trend-pass-rate", "trend-failures", "trend-duration", "flaky"} <= set(last.charts())
    flaky_svg = last.source.split('data-chart="flaky"', 1)[1].split("</svg>", 1)[0]
    assert "test_flips" in flaky_svg and "3 flips" in flaky_svg
    for n in range(4):
        assert f"r{n} · " in last.source  # each run is a point of the lines

    # qbench render of an earlier run: the trend up to that run
    out = pytester.path / "r1.html"
    assert (
        main(["render", str(pytester.path / ".qbench" / "runs" / "r1"), "--html", str(out)]) == OK
    )
    page = parse_page(out)
    assert "r1 · " in page.source and "r2 · " not in page.source


def _report(results: list[dict[str, Any]]) -> dict[str, Any]:
    base = TestReport.model_validate(
        {
            "meta": {"qbench_version": "0", "created_at": "2026-01-01T00:00:00Z"},
            "run": {"run_id": "r", "started_at": "2026-01-01T00:00:00Z", "cwd": "/", "command": []},
            "environment": {
                "python": "3",
                "implementation": "CPython",
                "platform": "x",
                "pytest_version": "8",
                "qbench_version": "0",
            },
            "summary": {"total": len(results), "passed": len(results)},
        }
    ).model_dump(mode="json")
    base["results"] = results
    return base


def _result(nodeid: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = dict(
        new("TestResult", nodeid=nodeid, test_name=nodeid, file="t.py", outcome="passed")
    )
    result.update(extra)
    return result


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_attachments_embedded_or_linked(tmp_path: Path) -> None:
    """Small images and texts embedded, large or other types linked relative to the page,
    paths out of the run directory (``..``, absolute, a scheme) neither embedded nor linked."""
    run_dir = tmp_path / ".qbench" / "runs" / "r"
    files = run_dir / "attachments"
    files.mkdir(parents=True)
    (files / "shot.png").write_bytes(PNG)
    (files / "log.txt").write_text("<script>alert(1)</script>\n", encoding="utf-8")
    (files / "big.txt").write_text("x" * (EMBED_EACH + 1), encoding="utf-8")
    (files / "data.bin").write_bytes(b"\x00\x01")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    attachments = [
        {"name": "shot", "path": "attachments/shot.png", "mime": "image/png", "size": len(PNG)},
        {
            "name": "<img src=x onerror=alert(1)>",
            "path": "attachments/log.txt",
            "mime": "text/plain",
            "size": 26,
        },
        {
            "name": "big",
            "path": "attachments/big.txt",
            "mime": "text/plain",
            "size": EMBED_EACH + 1,
        },
        {
            "name": "bin",
            "path": "attachments/data.bin",
            "mime": "application/octet-stream",
            "size": 2,
        },
        {"name": "up", "path": "../../../secret.txt", "mime": "text/plain", "size": 7},
        {"name": "abs", "path": str(tmp_path / "secret.txt"), "mime": "text/plain", "size": 7},
        {
            "name": "javascript:alert(1)",
            "path": "javascript:alert(1)",
            "mime": "text/html",
            "size": 1,
        },
    ]
    report = _report([_result("t.py::test_a", attachments=attachments), _result("t.py::test_b")])
    out_dir = tmp_path / "site"
    text = render_html(report, run_dir=run_dir, link_base=out_dir)
    page = parse_page(text)
    check_page_is_self_contained(page)
    att = page.detail_of("::test_a")["att"]
    assert att[0]["img"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert att[1]["text"] == "<script>alert(1)</script>\n"
    assert att[1]["name"] == "<img src=x onerror=alert(1)>"
    assert att[2]["href"] == "../.qbench/runs/r/attachments/big.txt"
    assert att[3]["href"] == "../.qbench/runs/r/attachments/data.bin"
    for bad in att[4:]:
        assert set(bad) == {"name", "mime", "size"}, bad
    assert "outside" not in text
    assert "att" not in page.detail_of("::test_b")
    # without the run directory nothing is embedded nor linked
    assert all(
        set(a) == {"name", "mime", "size"}
        for a in parse_page(render_html(report)).detail_of("::test_a")["att"]
    )


def test_trend_of_fewer_than_two_runs_and_charts_escaped() -> None:
    """One run: no lines, the section says so; node ids in the flaky chart are escaped."""
    report = _report([_result("t.py::test_a")])
    one = Trend(runs=[TrendRun("r1", "2026-01-01T00:00:00Z", 1, 1, 0, 0.5)])
    page = parse_page(render_html(report, trend=one))
    assert "No trend yet" in page.source and "(there is 1)" in page.source
    assert not [c for c in page.charts() if c.startswith("trend-")]
    runs = [
        TrendRun(f"r{i}", f"2026-01-0{i + 1}T00:00:00Z", 2, 2 - i % 2, i % 2, 1.0) for i in range(3)
    ]
    flaky = [FlakyTest("t.py::test_x[<script>alert(1)</script>]", 2)]
    page = parse_page(render_html(report, trend=Trend(runs, flaky)))
    assert "trend-pass-rate" in page.charts()
    assert [t.tag for t in page.tags].count("script") == 2
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.source


def test_collection_errors_and_warnings(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A collection error and a warning are listed (escaped), and the tests section says pytest
    counts the collection error among the errors."""
    pytester.makeini("[pytest]\nfilterwarnings = always::UserWarning\n")
    pytester.makepyfile(
        test_broken="raise ImportError('<b>no module</b>')",
        test_ok="""
        import warnings
        def test_warns():
            warnings.warn(UserWarning("<i>careful</i>"))
        """,
    )
    run = run_qbench("--qbench-html=page.html", "--continue-on-collection-errors")
    assert run.report.summary.errors == 1
    page = parse_page(pytester.path / "page.html")
    check_page_is_self_contained(page)
    errors = page.source.split('id="collection-errors"', 1)[1].split("</section>", 1)[0]
    assert "&lt;b&gt;no module&lt;/b&gt;" in errors
    assert "1 collection error</a> among the errors" in page.source
    warnings_part = page.source.split('id="warnings"', 1)[1].split("</section>", 1)[0]
    assert "&lt;i&gt;careful&lt;/i&gt;" in warnings_part
    assert "<b>" not in page.source.split("<body>", 1)[1].split('id="qbench-data"', 1)[0]


def test_coverage_agents_reruns_and_subtests() -> None:
    """Coverage per file (most missed first, bars), agent metrics with their score chart and
    each test's metrics against thresholds, reruns and subtests in the data."""
    metric = dict(
        new("MetricResult", metric_name="relevance", score=0.4, threshold=0.7, passed=False)
    )
    agent = _result(
        "t.py::test_agent",
        outcome="failed",
        counted_as=["failed"],
        metric_results=[metric],
        agent_response="<b>hi</b>",
        tool_calls=[{"name": "search"}],
        expected_tools=["search", "book"],
        tools_matched=False,
    )
    attempt = {"outcome": "failed", "duration": 0.5, "failure": None}
    sub = {"description": "[x] (i=1)", "outcome": "failed", "failure": None, "reason": None}
    flaky = _result("t.py::test_flaky", reruns=1, attempts=[attempt], flaky=True, subtests=[sub])
    report = _report([agent, flaky])
    summary = aggregate([agent, flaky]).summary(1.0)
    report["summary"] = summary
    files = [
        new("CoverageFile", path="few.py", statements=10, covered=9, missing=1, percent=90.0),
        new("CoverageFile", path="many.py", statements=10, covered=2, missing=8, percent=20.0),
    ]
    coverage_record = new("CoverageReport", percentage=55.0, lines_covered=11, lines_total=20)
    coverage_record["files"] = files
    report["coverage"] = dict(coverage_record)
    page = parse_page(render_html(report))
    check_page_is_self_contained(page)
    coverage = page.source.split('id="coverage"', 1)[1].split("</section>", 1)[0]
    assert "55.00%" in coverage
    assert coverage.index("many.py") < coverage.index("few.py")
    assert 'class="cov-hit" x="0" y="0" width="20.0"' in coverage
    agents = page.source.split('id="agents"', 1)[1].split("</section>", 1)[0]
    assert 'data-metric="relevance"' in agents and 'data-chart="scores"' in agents
    detail = page.detail_of("::test_agent")["agent"]
    assert detail["response"] == "<b>hi</b>"
    assert detail["metrics"] == [["relevance", 0.4, 0.7, False, False, ""]]
    assert detail["matched"] is False and detail["expected"] == ["search", "book"]
    flaky_detail = page.detail_of("::test_flaky")
    assert flaky_detail["reruns"] == 1 and flaky_detail["attempts"] == [["failed", 0.5, ""]]
    assert flaky_detail["sub"] == [["[x] (i=1)", "failed", ""]]
    assert page.data["fl"] == [1]


def test_trend_axis_dates_gain_the_time_within_one_day() -> None:
    """Runs on several days: the first and last dates; runs of one day: the date and times."""
    days = [TrendRun(f"r{i}", f"2026-01-0{i + 1}T0{i}:30:00Z", 1, 1, 0, 1.0) for i in range(3)]
    assert axis_dates(days) == ("2026-01-01", "2026-01-03")
    hours = [TrendRun(f"r{i}", f"2026-01-01T0{i}:30:00Z", 1, 1, 0, 1.0) for i in range(3)]
    assert axis_dates(hours) == ("2026-01-01 00:30", "02:30")
    page = render_html(_report([_result("t.py::test_a")]), trend=Trend(hours, []))
    assert ">2026-01-01 00:30</text>" in page and ">02:30</text>" in page


def test_metric_min_and_max_are_rounded() -> None:
    """A metric's minimum and maximum show three significant digits, not a float's repr."""
    metric = dict(new("MetricResult", metric_name="f1", score=2 / 3, passed=True))
    result = _result("t.py::test_a", metric_results=[metric], counted_as=["passed"])
    report = _report([result])
    report["summary"] = aggregate([result]).summary(1.0)
    page = render_html(report)
    row = page.split('<tr data-metric="f1">', 1)[1].split("</tr>", 1)[0]
    assert "0.667" in row and "0.6666" not in row


ACTIVE = [
    ("chart.svg", "image/svg+xml"),
    ("page.html", "text/html"),
    ("page.HTM", "application/octet-stream"),
    ("feed.xml", "application/xml"),
    ("attachment-1", "application/octet-stream"),
    ("plain.txt", "text/html"),
]


def test_active_attachments_are_never_linked(tmp_path: Path) -> None:
    """An SVG, HTML or XML file (by extension or media type) or one without an extension, too big
    to embed, is not a link (Chromium ignores ``download`` on file: URLs and would run its
    script): the page shows where it is stored; a passive type is still linked."""
    run_dir = tmp_path / ".qbench" / "runs" / "r"
    files = run_dir / "attachments"
    files.mkdir(parents=True)
    script = "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    attachments = []
    for name, mime in [*ACTIVE, ("big.txt", "text/plain")]:
        (files / name).write_text(script + " " * EMBED_EACH, encoding="utf-8")
        size = EMBED_EACH + len(script)
        attachments.append(
            {"name": name, "path": f"attachments/{name}", "mime": mime, "size": size}
        )
    report = _report([_result("t.py::test_a", attachments=attachments)])
    text = render_html(report, run_dir=run_dir, link_base=tmp_path / "site")
    att = parse_page(text).detail_of("::test_a")["att"]
    for (name, _mime), entry in zip(ACTIVE, att[:-1], strict=True):
        assert "href" not in entry and "text" not in entry and "img" not in entry, entry
        assert entry["stored"] == f"../.qbench/runs/r/attachments/{name}"
    assert att[-1]["href"] == "../.qbench/runs/r/attachments/big.txt"


def test_a_run_a_plugin_failed_is_not_green(pytester: pytest.Pytester) -> None:
    """Every test passed but a plugin failed the session (syrupy sets ``session.exitstatus``
    for unused snapshots): pytest exits 1, which fails a CI job, and the page's headline and the
    report's were green."""
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish(session, exitstatus):
            session.exitstatus = 1
        """
    )
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest("-p", "qbench", "--qbench-html=page.html")
    assert result.ret == 1
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert '<h1 id="headline" data-ok="false">' in page
    markdown = (find_run_dir(pytester.path) / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report: 1 passed in ")
