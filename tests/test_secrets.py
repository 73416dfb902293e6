"""Secrets in every form they are written in, set before or during the run, never reach what
qbench writes or shows (issue 12.8, 12.9)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pytest

from pytest_qbench.mcp.output import output_page
from pytest_qbench.mcp.results import output_tail
from pytest_qbench.report.environment import Redactor
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
