"""``qbench pr-comment``: one comment with what changed, within GitHub's limit, posted (created,
then found by its marker and updated) through a local server that checks the requests the way
GitHub's REST API documents them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from datetime import timezone
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.cli import main
from pytest_qbench.history.compare import Change
from pytest_qbench.history.compare import RunDiff
from pytest_qbench.history.pr_comment import MARKER
from pytest_qbench.history.pr_comment import MAX_CHARS
from pytest_qbench.history.pr_comment import pr_comment
from pytest_qbench.history.queries import FailureInfo
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.thresholds import Thresholds

from conftest import RunQBench


SUITE = """
    import os

    BROKEN = os.environ.get("BROKEN", "").split(",")
    CALLS = {"flip": 0}

    def test_a():
        assert "a" not in BROKEN, "a broke"

    def test_b():
        assert "b" not in BROKEN, "b broke"

    def test_flip():
        CALLS["flip"] += 1
        assert "flip" not in BROKEN, "flip broke"
        assert "flip-once" not in BROKEN or CALLS["flip"] > 1, "flip broke once"
"""


def run_on(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    branch: str,
    sha: str,
    broken: str,
    run_id: str,
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REF_NAME", branch)
    monkeypatch.setenv("GITHUB_SHA", sha)
    monkeypatch.setenv("BROKEN", broken)
    args = ("-p", "pytest_rerunfailures", "--reruns=1", f"--qbench-run-id={run_id}")
    pytester.runpytest("-p", "qbench", *args)


@pytest.fixture
def history(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """main: b fails, and twice flip passes only after a rerun (flaky evidence: the monitors
    want it in two runs); the pull request: a fails anew, b is fixed, flip fails (known flaky),
    test_gone removed, test_new added."""
    pytester.makepyfile(test_suite=SUITE, test_gone="def test_gone():\n    pass\n")
    run_on(pytester, monkeypatch, "main", "c0", "b,flip-once", "main0")
    run_on(pytester, monkeypatch, "main", "c1", "b", "main1")
    run_on(pytester, monkeypatch, "main", "c2", "b,flip-once", "main2")
    (pytester.path / "test_gone.py").unlink()
    pytester.makepyfile(test_later="def test_new():\n    pass\n")
    run_on(pytester, monkeypatch, "feature", "c3", "a,flip", "pr1")
    monkeypatch.delenv("GITHUB_ACTIONS")
    return pytester.path / ".qbench"


def comment(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["pr-comment", *args]) == 0
    return capsys.readouterr().out


def section(text: str, title: str) -> str:
    return text.split(f"#### {title}")[1].split("####")[0]


def test_comment_says_what_changed(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = comment(capsys, "--dir", str(history), "pr1", "--base", "main1")
    lines = text.splitlines()
    assert lines[0] == MARKER
    assert "1 new failure, 1 fixed, 1 known flaky" in lines[1]
    assert "against run `main1`" in text and "on `main`" in text
    assert "2 failed (+1)" in text
    sections = [line for line in lines if line.startswith("#### ")]
    assert sections == [
        "#### New failures (1)",
        "#### Fixed (1)",
        "#### Known flaky failures, set aside (1)",
        "#### Tests added (1)",
        "#### Tests removed (1)",
    ]
    new = section(text, "New failures")
    assert "test_suite.py::test_a" in new and "a broke" in new and "fingerprint `" in new
    assert "test_suite.py::test_b" in section(text, "Fixed")
    assert "test_suite.py::test_flip" in section(text, "Known flaky")
    assert "test_gone.py::test_gone" in section(text, "Tests removed")
    assert "test_later.py::test_new" in section(text, "Tests added")
    # a branch names its newest run; a name that is neither is refused
    assert "against run `main2`" in comment(capsys, "--dir", str(history), "--base", "main")
    assert main(["pr-comment", "--dir", str(history), "--base", "nowhere"]) == 1
    assert "--base 'nowhere' is neither a run nor a branch" in capsys.readouterr().err


def test_the_headline_is_green_only_when_no_test_failed(
    history: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The headline's mark agrees with ``qbench diff``'s exit status and with pytest: a
    known flaky test failing again fails the comparison (red); a run that only fails as its
    base did is not green (pytest says "1 failed"), and the headline counts it."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run_on(pytester, monkeypatch, "feature", "c4", "flip", "pr2")
    monkeypatch.delenv("GITHUB_ACTIONS")
    capsys.readouterr()
    flaky = comment(capsys, "--dir", str(history), "pr2", "--base", "main1").splitlines()[1]
    assert flaky.startswith("### :x: qbench: 0 new failures") and "1 known flaky" in flaky
    assert main(["diff", "--dir", str(history), "main1", "pr2"]) == 1
    capsys.readouterr()
    still = comment(capsys, "--dir", str(history), "main2", "--base", "main1").splitlines()[1]
    assert still == "### :warning: qbench: 0 new failures, 0 fixed, 1 still failing"
    assert main(["diff", "--dir", str(history), "main1", "main2"]) == 0


def _run(run_id: str, failed: int, total: int) -> RunInfo:
    counts = dict.fromkeys(
        ("total", "passed", "failed", "errors", "skipped", "xfailed", "xpassed"), 0
    )
    counts.update(total=total, failed=failed, passed=total - failed)
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return RunInfo(
        run_id,
        "pytest",
        moment,
        moment,
        1,
        False,
        "/",
        [],
        counts,
        1.0,
        "main",
        "abc",
        None,
        None,
        None,
        None,
        None,
    )


def ten_thousand() -> tuple[RunInfo, RunDiff, dict[str, str]]:
    base, head = _run("base", 0, 10_000), _run("head", 10_000, 10_000)
    info = FailureInfo("AssertionError", "tests/test_many.py:3", "x" * 150)
    diff = RunDiff(base, head, Thresholds())
    diff.new_failures = [
        Change(f"tests/test_many.py::test_{i}", "passed", "failed", info) for i in range(10_000)
    ]
    diff.fixed = [Change("tests/test_fixed.py::test_ok", "failed", "passed", info)]
    return head, diff, {c.nodeid: f"{i:016x}" for i, c in enumerate(diff.new_failures)}


def test_ten_thousand_failures_fit_with_the_new_failures_first() -> None:
    head, diff, fingerprints = ten_thousand()
    text = pr_comment(head, diff, fingerprints)
    assert len(text) <= MAX_CHARS
    lines = text.splitlines()
    assert lines[0] == MARKER and "10000 new failures" in lines[1]
    first = lines.index("#### New failures (10000)")
    assert first < 8
    assert lines[first + 2].startswith("- `tests/test_many.py::test_0` AssertionError")
    assert lines[first + 3].startswith("- `tests/test_many.py::test_1` ")  # not test_10
    assert "- … and 9850 more (`qbench diff` lists them all)" in lines
    assert "#### Fixed (1)" in lines  # the other sections still fit


def test_what_does_not_fit_is_cut_with_a_note() -> None:
    head, diff, fingerprints = ten_thousand()
    text = pr_comment(head, diff, fingerprints, limit=20_000)
    assert len(text) <= 20_000
    lines = text.splitlines()
    assert lines[0] == MARKER and "#### New failures (10000)" in lines
    assert "more lines cut: GitHub limits a comment to 65,536 characters" in lines[-1]
    assert "#### Fixed (1)" not in lines


class GitHub:
    """A local stand-in for GitHub's issue comments API that checks every request."""

    def __init__(self) -> None:
        self.comments: list[dict[str, Any]] = [
            {"id": 1, "body": "LGTM"},
            *({"id": 100 + i, "body": f"note {i}"} for i in range(3)),
        ]
        self.requests: list[tuple[str, str]] = []
        self.problems: list[str] = []
        self.url = ""

    def handle(self, handler: BaseHTTPRequestHandler) -> tuple[int, Any, dict[str, str]]:
        method, path = handler.command, handler.path
        self.requests.append((method, path))
        headers = handler.headers
        if headers.get("Authorization") != "Bearer tok-123":
            return 401, {"message": "Bad credentials"}, {}
        if headers.get("Accept") != "application/vnd.github+json":
            self.problems.append(f"Accept: {headers.get('Accept')}")
        if headers.get("X-GitHub-Api-Version") != "2022-11-28":
            self.problems.append("no X-GitHub-Api-Version")
        base = "/repos/octo/app/issues"
        if method == "GET" and path.startswith(f"{base}/7/comments?"):
            page = 2 if "page=2" in path else 1
            chunk = self.comments[:2] if page == 1 else self.comments[2:]
            link = f'<{self.url}{base}/7/comments?per_page=100&page=2>; rel="next"'
            return 200, chunk, ({"Link": link} if page == 1 else {})
        payload = self.body(handler)
        if method == "POST" and path == f"{base}/7/comments":
            created = {"id": 999, "body": payload["body"]}
            self.comments.append(created)
            return 201, created, {}
        if method == "PATCH" and path.startswith(f"{base}/comments/"):
            found = next(c for c in self.comments if c["id"] == int(path.rsplit("/", 1)[1]))
            found["body"] = payload["body"]
            return 200, found, {}
        return 404, {"message": "Not Found"}, {}

    def body(self, handler: BaseHTTPRequestHandler) -> dict[str, Any]:
        if handler.headers.get("Content-Type") != "application/json":
            self.problems.append("no JSON content type")
        length = int(handler.headers.get("Content-Length") or 0)
        payload: dict[str, Any] = json.loads(handler.rfile.read(length))
        if set(payload) != {"body"}:
            self.problems.append(f"fields {sorted(payload)}")
        return payload


@pytest.fixture
def github() -> Iterator[GitHub]:
    api = GitHub()

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            status, data, headers = api.handle(self)
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_PATCH = _any

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield api
    server.shutdown()
    server.server_close()


def test_post_creates_then_updates_one_comment(
    history: Path,
    github: GitHub,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_TOKEN", "tok-123")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/app")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    args = ["pr-comment", "--dir", str(history), "--post", "--base", "main1"]
    assert main(args) == 0
    assert "created comment 999 on pull request #7" in capsys.readouterr().err
    assert main([*args[:-2], "--base", "main2"]) == 0
    assert "updated comment 999 on pull request #7" in capsys.readouterr().err
    assert github.problems == []
    assert [m for m, _ in github.requests] == ["GET", "GET", "POST", "GET", "GET", "PATCH"]
    ours = [c for c in github.comments if MARKER in c["body"]]
    assert len(ours) == 1 and "against run `main2`" in ours[0]["body"]
    # the fork recipe's second workflow: a prepared comment, the number given, no event file
    prepared = tmp_path / "comment.md"
    prepared.write_text("### from the first workflow\n", encoding="utf-8")
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    assert main(["pr-comment", "--post", "--body", str(prepared), "--pr", "7"]) == 0
    assert "updated comment 999 on pull request #7" in capsys.readouterr().err
    ours = [c for c in github.comments if MARKER in c["body"]]
    assert len(ours) == 1 and ours[0]["body"] == f"{MARKER}\n### from the first workflow\n"


def test_post_without_token_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert main(["pr-comment", "--dir", str(tmp_path), "--post"]) == 1
    assert "--post needs GITHUB_TOKEN" in capsys.readouterr().err


def test_a_returning_failure_says_so() -> None:
    head, diff, fingerprints = ten_thousand()
    came_back = "new failure: failed the same way in run r3 before: a regression that came back"
    diff.new_failures = [replace(diff.new_failures[0], history=came_back)]
    line = next(x for x in pr_comment(head, diff, fingerprints).splitlines() if "test_0`" in x)
    assert "**returning failure**" in line and "run r3" in line


def test_a_quarantined_known_failure_is_set_aside(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """a failed before as it fails now: quarantined, it is set aside; b, quarantined too, fails
    for the first time (its fingerprint is new): still a new failure."""
    # the failure messages do not show which other tests are broken: a fails the same way
    pytester.makepyfile(
        test_suite="""
        import os

        BROKEN = os.environ.get("BROKEN", "").split(",")
        A_BROKEN, B_BROKEN = "a" in BROKEN, "b" in BROKEN

        def test_a():
            assert not A_BROKEN, "a broke"

        def test_b():
            assert not B_BROKEN, "b broke"
        """
    )
    # a failed twice in a row (one episode: not flaky by the failure-rate monitor), was fixed
    run_on(pytester, monkeypatch, "main", "c1", "a", "r1")
    run_on(pytester, monkeypatch, "main", "c2", "a", "r2")
    run_on(pytester, monkeypatch, "main", "c3", "", "r3")
    run_on(pytester, monkeypatch, "feature", "c4", "a,b", "r4")
    monkeypatch.delenv("GITHUB_ACTIONS")
    qbench_dir = str(pytester.path / ".qbench")
    for nodeid in ("test_suite.py::test_a", "test_suite.py::test_b"):
        assert main(["quarantine", "add", nodeid, "--dir", qbench_dir]) == 0
    capsys.readouterr()
    text = comment(capsys, "--dir", qbench_dir, "r4", "--base", "r3")
    assert "1 new failure, 0 fixed, 1 quarantined" in text.splitlines()[1]
    assert "test_suite.py::test_b" in section(text, "New failures")
    assert "test_suite.py::test_a" not in section(text, "New failures")
    assert "test_suite.py::test_a" in section(text, "Quarantined known failures")


def test_the_counts_line_has_the_deselected_tests_and_reruns_of_pytest_s_closing_line() -> None:
    """pytest said ``1 failed, 2 passed, 6 deselected, 2 rerun``; the comment's counts left out
    the deselected tests and the reruns (found on django-ninja with ``-k``)."""
    base, head = _run("base", 3, 9), _run("head", 1, 3)
    head.counts.update(deselected=6, reruns=2)
    diff = RunDiff(base, head, Thresholds())
    counts = pr_comment(head, diff, {}).splitlines()[3]
    assert counts.startswith(
        "**3 tests**: 1 failed (-2), 2 passed (-4), 6 deselected (+6), 2 rerun (+2) · "
    )


@pytest.mark.parametrize(("exit_code", "icon"), [(0, ":white_check_mark:"), (1, ":warning:")])
def test_the_headline_is_not_green_when_pytest_failed_the_run(exit_code: int, icon: str) -> None:
    """Every test passed but pytest exited 1 (a plugin such as syrupy failed the session): the
    comment's headline was green beside a red CI job."""
    base, head = _run("base", 0, 3), replace(_run("head", 0, 3), exit_code=exit_code)
    diff = RunDiff(base, head, Thresholds())
    assert pr_comment(head, diff, {}).splitlines()[1].startswith(f"### {icon} qbench: ")


@pytest.mark.parametrize("selection", [("-k", "nosuchtest"), ("-m", "nosuchmark")])
def test_a_last_run_that_ran_no_tests_is_not_commented_green(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    selection: tuple[str, str],
) -> None:
    """The CI's pytest ran no test (a `-k` matching nothing: exit status 5; an unknown marker
    under `--strict-markers`: 4): such a run is never indexed, so the last indexed run is an
    older one. `qbench pr-comment` with no run named refuses, naming the run and why, rather
    than comment on the older run. Before, it posted `:white_check_mark:` about the green run
    before (found on python-tabulate and toolz, sixth round); `qbench diff` compared the two
    runs before it, exit status 0. Naming the runs still works."""
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r0", run_dir="r0")
    run_qbench("--qbench-run-id=r1", run_dir="r1")
    empty = run_qbench("--qbench-run-id=r2", "--strict-markers", *selection, run_dir="r2")
    assert empty.result.ret in (4, 5) and empty.report.summary.total == 0
    qbench_dir = str(pytester.path / ".qbench")
    capsys.readouterr()
    assert main(["pr-comment", "--dir", qbench_dir]) != 0
    captured = capsys.readouterr()
    assert MARKER not in captured.out
    assert f"the last run, r2, ran no tests (pytest's exit status {empty.result.ret}" in (
        captured.err
    )
    assert main(["pr-comment", "--dir", qbench_dir, "r1"]) == 0
    assert "run `r1`" in capsys.readouterr().out
    # `qbench diff` (the last two runs) likewise: not a green comparison of r0 and r1
    assert main(["diff", "--dir", qbench_dir]) != 0
    assert "the last run, r2, ran no tests" in capsys.readouterr().err
    assert main(["diff", "--dir", qbench_dir, "r0", "r1"]) == 0


def test_a_last_run_interrupted_before_its_tests_is_not_told_to_fix_its_selection(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CI's pytest was interrupted before its first test (Ctrl-C during pyrsistent's
    collection under `-n 2`: exit status 2, `no tests ran`): `qbench pr-comment` refuses, as for
    a selection that matched nothing, but its fix was `fix that run's selection (its test paths,
    -k, -m)`, which had nothing to do with it."""
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r0", run_dir="r0")
    pytester.makeconftest(
        "import os\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    if os.environ.get('QBENCH_TEST_CTRL_C'):\n        raise KeyboardInterrupt\n"
    )
    monkeypatch.setenv("QBENCH_TEST_CTRL_C", "1")
    stopped = run_qbench("--qbench-run-id=r1", subprocess=True, run_dir="r1")
    monkeypatch.delenv("QBENCH_TEST_CTRL_C")
    assert stopped.result.ret == 2 and stopped.report.summary.total == 0
    capsys.readouterr()
    assert main(["pr-comment", "--dir", str(pytester.path / ".qbench")]) != 0
    err = capsys.readouterr().err
    assert "the last run, r1, ran no tests (pytest's exit status 2: interrupted)" in err
    assert "fix what stopped that run (its output says) and run the tests again" in err
    assert "selection" not in err
