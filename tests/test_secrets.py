"""Secrets in every form they are written in, set before or during the run, never reach what
qbench writes or shows (issue 12.8, 12.9)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pytest

from pytest_qbench.core.redact import Redactor
from pytest_qbench.mcp.output import output_page
from pytest_qbench.mcp.runs import output_tail
from pytest_qbench.report.models import RunMeta

from conftest import RunQBench


ODD_SECRETS = {
    "QUOTED_PASSWORD": "pa\\ss\"wo'rd99",
    "MULTILINE_SECRET": "line1secret\nline2secret",
    "UNICODE_TOKEN": "bytessecret\u00fc12",
}
ODD_FORMS = [
    "'pa\\\\ss\"wo\\'rd99'",
    "'line1secret\\nline2secret'",
    "b'bytessecret\\xc3\\xbc12'",
]


def written_text(run_dir: Path, *more: Path) -> str:
    """Every file qbench wrote for a run, as text (the index's rows included)."""
    texts = [p.read_text(encoding="utf-8") for p in [*run_dir.iterdir(), *more] if p.is_file()]
    index = run_dir.parent.parent / "index.sqlite"
    if index.is_file():
        with sqlite3.connect(index) as db:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                texts.extend(repr(row) for row in db.execute(f'SELECT * FROM "{table}"'))
    return "\n".join(texts)


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        for form in {
            secret,
            secret.encode("unicode_escape").decode(),
            repr(secret)[1:-1],
            repr(secret.encode())[2:-1],
        }:
            assert form not in text, form


def test_redactor_matches_escaped_and_encoded_forms() -> None:
    """A secret is redacted in repr, bytes repr, test-id and JSON forms (issue 12.9)."""
    redact = Redactor(ODD_SECRETS)
    for form in ODD_FORMS:
        assert redact(f"x = {form}") in ("x = '[redacted]'", "x = b'[redacted]'"), form
    assert redact("test_a[bytessecret\\xfc12]") == "test_a[[redacted]]"
    assert redact('{"v": "line1secret\\nline2secret"}') == '{"v": "[redacted]"}'


def test_redactor_learns_secrets_set_later() -> None:
    """refresh() learns a secret-looking variable set after the start (issue 12.9)."""
    environ = {"HOME": "/root"}
    redact = Redactor(environ)
    assert not redact.refresh(environ)
    environ["RUNTIME_TOKEN"] = "rt-0123456789"
    assert redact.refresh(environ)
    environ.pop("RUNTIME_TOKEN")
    assert redact("token rt-0123456789") == "token [redacted]"


def test_os_environ_looked_at_without_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """refresh() of os.environ copies nothing while only PYTEST_CURRENT_TEST changes (set
    anew, deleted, set again: what pytest does at each phase), and still learns a secret set
    beside it, or a value changed in place (issue 28: a copy was about 8 k instructions)."""
    import os

    from pytest_qbench.core import redact as module

    copies: list[int] = []
    snapshot = module.environment_snapshot

    def counted(environ: object) -> dict[object, object]:
        copies.append(1)
        return snapshot(environ)  # type: ignore[arg-type]

    monkeypatch.setenv("PYTEST_CURRENT_TEST", "t.py::test_a (setup)")
    monkeypatch.setenv("QB_SECRET_TOKEN", "first-token-value")
    redact = Redactor(os.environ)
    monkeypatch.setattr(module, "environment_snapshot", counted)
    for phase in ("call", "teardown"):
        os.environ["PYTEST_CURRENT_TEST"] = f"t.py::test_a ({phase})"
        assert not redact.refresh(os.environ)
    del os.environ["PYTEST_CURRENT_TEST"]
    assert not redact.refresh(os.environ)
    os.environ["PYTEST_CURRENT_TEST"] = "t.py::test_b (setup)"
    assert not redact.refresh(os.environ)
    assert copies == []
    monkeypatch.setenv("QB_SECRET_TOKEN", "second-token-value")  # in place: same length
    assert redact.refresh(os.environ)
    assert redact("second-token-value") == "[redacted]"
    assert not redact.refresh(os.environ)
    monkeypatch.setenv("QB_OTHER_PASSWORD", "third-password")
    assert redact.refresh(os.environ)
    assert redact("x third-password") == "x [redacted]"


def test_secret_in_test_id_is_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parametrized secret is redacted in node ids: report.json, report.md, the digest,
    results.jsonl and the index (issue 12.9)."""
    monkeypatch.setenv("SERVICE_TOKEN", "svc-token-0123456789")
    monkeypatch.setenv("UNICODE_TOKEN", ODD_SECRETS["UNICODE_TOKEN"])
    pytester.makepyfile(
        test_ids="""
        import os, pytest
        @pytest.mark.parametrize(
            "tok", [os.environ["SERVICE_TOKEN"], os.environ["UNICODE_TOKEN"]]
        )
        def test_param(tok):
            assert tok == "x"
        """
    )
    run = run_qbench("--qbench-digest=digest.json")
    assert [r.nodeid for r in run.report.results] == ["test_ids.py::test_param[[redacted]]"] * 2
    text = written_text(run.run_dir, pytester.path / "digest.json")
    assert "test_param[[redacted]]" in text
    assert_no_secret(text, "svc-token-0123456789", ODD_SECRETS["UNICODE_TOKEN"])


def test_secret_in_repr_form_is_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Secrets with backslashes, quotes, newlines or non-ASCII are redacted in pytest's repr
    of them, in messages, traces and captured output (issue 12.9)."""
    for name, value in ODD_SECRETS.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(
        test_forms="""
        import os, pytest
        @pytest.mark.parametrize("name", ["QUOTED_PASSWORD", "MULTILINE_SECRET", "UNICODE_TOKEN"])
        def test_form(name):
            value = os.environ[name]
            print(repr(value), repr(value.encode()))
            assert value == "x"
        """
    )
    run = run_qbench()
    assert run.report.summary.failed == 3
    text = written_text(run.run_dir)
    assert_no_secret(text, *ODD_SECRETS.values())
    assert "[redacted]" in text


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_secret_set_during_the_run_is_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, workers: list[str]
) -> None:
    """A secret a test sets with monkeypatch.setenv is redacted, with and without -n 2
    (issue 12.9)."""
    pytester.makepyfile(
        test_runtime="""
        import os
        def test_sets(monkeypatch, record_property):
            monkeypatch.setenv("RUNTIME_TOKEN", "rt-secret-0123456789")
            print("token", os.environ["RUNTIME_TOKEN"])
            record_property("token", os.environ["RUNTIME_TOKEN"])
            assert os.environ["RUNTIME_TOKEN"] == "x"
        def test_other():
            pass
        """
    )
    run = run_qbench("-p", "xdist", *workers, subprocess=True)
    assert run.report.summary.failed == 1
    result = run.by_name("test_sets")
    assert (result.worker is not None) == bool(workers)
    assert result.failure is not None and "[redacted]" in result.failure.error_message
    assert "[redacted]" in result.captured.stdout  # type: ignore[union-attr]
    assert_no_secret(written_text(run.run_dir), "rt-secret-0123456789")


def test_run_output_pages_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """get_run_output's stdout and stderr pages and the output tails are redacted (issue 12.8)."""
    monkeypatch.setenv("SERVICE_TOKEN", "svc-token-0123456789")
    (tmp_path / "stdout.txt").write_text("E   AssertionError: 'svc-token-0123456789' == 'x'\n")
    (tmp_path / "stderr.txt").write_text("token svc-token-0123456789\n")
    meta = RunMeta(run_id=tmp_path.name, started_at=datetime.now(timezone.utc), cwd=".", command=[])
    for stream in ("stdout", "stderr"):
        page = output_page(tmp_path, meta, stream, 0, 10, 20_000)
        assert "svc-token" not in page.text and "[redacted]" in page.text
        assert "svc-token" not in output_tail(tmp_path / f"{stream}.txt")


SECRET_SUITE = """
import os
from pathlib import Path

import pytest

import calc


@pytest.mark.parametrize("token", [os.environ["API_TOKEN"]])
def test_login(token, qbench, tmp_path):
    '''Logs in with the token.'''
    assert calc.double(2) == 4
    qbench.attach(b"\\x89PNG", name=f"shot-{token}.png")
    qbench.attach(f"sent Authorization: Bearer {token}\\n", name="request.log")
    out = tmp_path / f"{token}.json"
    out.write_text('{"token": "%s"}' % token)
    qbench.attach(out)
"""


def every_file_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in [root, *root.rglob("*")] if p.is_file()]


def test_secret_in_a_parametrized_id_reaches_no_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret in a parametrized id and in the test's attachments: no file of the run
    (attachment directories and names, their texts, report.json, report.md, results.jsonl, the
    HTML page, coverage-contexts.json, coverage.db, the index) nor the MCP catalog (catalog.sqlite,
    search_tests) holds it, in any of its written forms, nor any path on disk."""
    secret = "s3cr3tvalue0123456789"
    monkeypatch.setenv("API_TOKEN", secret)
    pytester.makepyfile(calc="def double(x):\n    return 2 * x\n", test_login=SECRET_SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "qbench",
        "--qbench-cov=calc",
        "--qbench-cov-contexts",
        "--qbench-html=out/report.html",
        "--qbench-json=out/report.json",
        "--qbench-md=out/report.md",
    )
    assert result.ret == 0, result.stdout.str()
    run_dir = next((pytester.path / ".qbench" / "runs").iterdir())
    assert (run_dir / "coverage-contexts.json").is_file()
    records = [
        a
        for r in json.loads((run_dir / "report.json").read_text())["results"]
        for a in r.get("attachments", [])  # absent when empty
    ]
    assert [a["name"] for a in records] == ["shot-[redacted].png", "request.log", "[redacted].json"]
    assert all(a["path"] for a in records)

    from pytest_qbench.mcp.config import ServerConfig
    from pytest_qbench.mcp.tools import QBenchTools

    root = pytester.path.resolve()
    tools = QBenchTools(ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0))
    process = tools.start_collection()
    tools.supervise(process)
    report = tools.finish_collection(process)
    assert report.added == 1
    found = tools.search_tests("logs in with the token")
    assert [r.uid for r in found.results] == ["test_login.py::test_login[[redacted]]"]
    assert_no_secret(found.model_dump_json(), secret)

    files = every_file_under(pytester.path / ".qbench", pytester.path / "out")
    assert any(p.name == "catalog.sqlite" for p in files) and any(
        p.name == "coverage.db" or p.suffix == ".db" or "coverage" in p.name for p in files
    )
    for path in files:
        assert secret not in str(path.relative_to(pytester.path)), path
        data = path.read_bytes()
        assert secret.encode() not in data, path
        assert_no_secret(data.decode("utf-8", "replace"), secret)
