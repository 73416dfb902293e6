"""A default ``pytest -p qbench`` run imports only what it uses (its fixed cost)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


UNUSED = (
    "pytest_qbench.report.digest",  # only for --qbench-digest
    "pytest_qbench.history.shardplan",  # only sharded runs plan
    "pytest_qbench.report.runref",  # run references: the CLI's
    "pytest_qbench.report.github",  # only in a GitHub job (its step summary, annotations)
    "pytest_qbench.history.diagnostics",  # only when a static checker reported diagnostics
    "pytest_qbench.core.stats",  # metric statistics: only runs whose tests record metrics
    "pytest_qbench.report.gates.stats",  # --qbench-repeat's pass@k and the baseline gate's
    "pytest_qbench.report.gates.text",  # how a configured gate's verdict is told
    "statistics",
    "fractions",
    "pytest_qbench.report.attachments",  # only when a test attaches a file
    "mimetypes",
    "pytest_qbench.report.coverage.reports",  # only for coverage.py's reports
    "secrets",  # the run id's random part comes from os.urandom (secrets and hmac not imported)
    "hmac",
    "pytest_qbench.tools.names",  # only --qbench-check's value is parsed with it
    "pytest_qbench.core.install",  # only the message of a missing PostgreSQL driver
    "encodings.ascii",  # the umask is read from /proc as UTF-8
    "pytest_qbench.report.coverage",  # report.md's coverage filters import it when used
    "pytest_qbench.report.coverage.view",
    "pytest_qbench.report.metric_text",  # report.md's score_pair filter, when a test scores
)
GREEN_UNUSED = (
    "pytest_qbench.history.failure_history",  # the history of failing tests, judged
    "pytest_qbench.history.flakiness",
    "pytest_qbench.history.queries",
    "pytest_qbench.history.analysis",
    "pytest_qbench.history.fingerprint",  # failures' fingerprints
    "pytest_qbench.history.deselection",  # only runs that deselect tests (and the queries)
    "pytest_qbench.plugin.doctest_failure",  # a failure's facts look for a doctest's
)


def loaded_after_run(
    pytester: pytest.Pytester, modules: tuple[str, ...], tests: str
) -> tuple[pytest.RunResult, list[str]]:
    """Run ``tests`` with qbench in a child pytest; which of ``modules`` it had imported by
    its end."""
    pytester.makeconftest(
        f"""
        import json, sys
        def pytest_unconfigure(config):
            loaded = [m for m in {modules!r} if m in sys.modules]
            print("UNUSED LOADED:", json.dumps(loaded))
        """
    )
    pytester.makepyfile(tests)
    result = pytester.runpytest_subprocess("-s", "-p", "qbench", "-p", "no:cacheprovider")
    line = next(x for x in result.stdout.lines if x.startswith("UNUSED LOADED:"))
    loaded: list[str] = json.loads(line.split(":", 1)[1])
    return result, loaded


def test_a_default_run_imports_only_what_it_uses(pytester: pytest.Pytester) -> None:
    """After a run that wrote the stream, report.json, report.md and the index (a failing test:
    its history is looked up), none of the modules only other features use was imported."""
    result, loaded = loaded_after_run(
        pytester, UNUSED, "def test_a(): pass\ndef test_b(): assert 0\n"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert loaded == []
    runs = list((pytester.path / ".qbench" / "runs").iterdir())
    assert {p.name for p in runs[0].iterdir()} >= {"results.jsonl", "report.json", "report.md"}
    assert (pytester.path / ".qbench" / "index.sqlite").is_file()


def test_a_green_run_imports_none_of_the_failures_history(pytester: pytest.Pytester) -> None:
    """A run where no test failed indexes its results and judges no history: the modules that
    read and judge a failing test's past are not imported."""
    result, loaded = loaded_after_run(
        pytester, UNUSED + GREEN_UNUSED, "def test_a(): pass\ndef test_b(): pass\n"
    )
    assert result.ret == pytest.ExitCode.OK
    assert loaded == []
    assert (pytester.path / ".qbench" / "index.sqlite").is_file()


def test_the_session_end_runs_with_the_cyclic_collector_paused(pytester: pytest.Pytester) -> None:
    """The session end (Jinja's import, the history's modules, rendering, indexing) makes no
    cyclic garbage worth a collection: the collector is paused while it runs, and on again after
    it, as the user's run had it."""
    pytester.makeconftest(
        """
        import gc
        import pytest_qbench.history.publish as publish

        real = publish.index_live_run

        def index_live_run(*args, **kwargs):
            print("GC DURING SESSION END:", gc.isenabled())
            return real(*args, **kwargs)

        publish.index_live_run = index_live_run

        def pytest_unconfigure(config):
            print("GC AFTER:", gc.isenabled())
        """
    )
    pytester.makepyfile("def test_a(): pass\ndef test_b(): assert 0\n")
    result = pytester.runpytest_subprocess("-s", "-p", "qbench", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*GC DURING SESSION END: False", "GC AFTER: True"])


LAZY_PATTERNS = (
    ("pytest_qbench.core.text", "_EXCEPTION_LINE"),  # a failure's error line, when read back
    ("pytest_qbench.core.text", "_NAMED_ERROR"),
    ("pytest_qbench.history.indexer", "SAFE_RUN_ID"),  # removing old runs, the MCP server
    ("pytest_qbench.history.indexer", "_EXCEPTION_NAME"),  # collection errors
    ("pytest_qbench.plugin.collectors", "_TRACE_FRAME"),  # a failure located from its text
    ("pytest_qbench.plugin.collectors", "_SYNTAX_ERROR_AT"),
    ("pytest_qbench.history.session_end", "_LINE"),  # a stream read without its writer's rows
    ("pytest_qbench.core.text", "ANSI_ESCAPE"),  # text holding a terminal escape
)


def compiled_by_run(
    pytester: pytest.Pytester, patterns: tuple[tuple[str, str], ...], tests: str
) -> tuple[pytest.RunResult, list[str]]:
    """Run ``tests`` with qbench in a child pytest; which of ``patterns`` (module, name) it had
    compiled by its end (``re``'s cache)."""
    pytester.makeconftest(
        f"""
        import importlib, json, re

        def pytest_unconfigure(config):
            wanted = {{
                getattr(p, "pattern", p)
                for p in (getattr(importlib.import_module(m), n) for m, n in {patterns!r})
            }}
            compiled = sorted(k[1] for k in re._cache if k[1] in wanted)
            print("COMPILED:", json.dumps(compiled))
        """
    )
    pytester.makepyfile(tests)
    result = pytester.runpytest_subprocess("-s", "-p", "qbench", "-p", "no:cacheprovider")
    line = next(x for x in result.stdout.lines if x.startswith("COMPILED:"))
    return result, json.loads(line.split(":", 1)[1])


def test_a_default_run_compiles_only_the_patterns_it_uses(pytester: pytest.Pytester) -> None:
    """A run with a failing test (its trace, report.md, the index) compiles none of the
    patterns only other paths use (each costs about 0.5 M instructions to compile)."""
    tests = "def test_a(): pass\ndef test_b(): assert 0\n"
    result, compiled = compiled_by_run(pytester, LAZY_PATTERNS, tests)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert compiled == []


def test_a_green_run_compiles_no_failing_line_pattern(pytester: pytest.Pytester) -> None:
    """A run where no test failed indexes its results without compiling the pattern of a
    failing line's head (1.8 M instructions)."""
    tests = "def test_a(): pass\ndef test_b(): pass\n"
    result, compiled = compiled_by_run(
        pytester, (*LAZY_PATTERNS, ("pytest_qbench.history.session_end", "_HEAD")), tests
    )
    assert result.ret == pytest.ExitCode.OK
    assert compiled == []
    assert (pytester.path / ".qbench" / "index.sqlite").is_file()


def test_the_run_s_text_helpers_compile_no_pattern_for_ordinary_text() -> None:
    """Markdown's escaping, the secrets' names and URLs, and the descriptor paths of the atomic
    writes compile no pattern at import, nor for text that cannot need one (no backtick, no
    ``://``, a path outside ``/proc`` and ``/dev``, an ASCII name): every run reads its
    environment and command line, writes its files and escapes report.md's names."""
    code = """
import re, sys
from pathlib import Path
import json  # its own patterns, compiled at its import
import pytest_qbench.core.text
before = set(re._cache)
from pytest_qbench.core import atomic, markdown, redact
for text in ("test_a[1-2] *x* <b>|c", "12. done", "# title", "tab\\there\\x07"):
    markdown.md_text(text), markdown.md_code(text), markdown.md_cell(text, code=True)
    markdown.md_fence(text), markdown.clean(text)
redact.Redactor({"API_TOKEN": "abcdefgh", "HOME": "/root", "Path": "/usr/bin"}).argv(["-q"])
redact.is_secret_name("private_key"), atomic.descriptor_of(Path("/tmp/qbench/report.json"))
print(sorted(str(k[1]) for k in set(re._cache) - before))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_ascii_secret_imports_no_escape_codec() -> None:
    """A printable ASCII secret (most tokens) is its own ``unicode_escape`` form: the codec
    (``encodings.unicode_escape``) is not imported for it; a secret with a backslash or a
    non-ASCII character still goes through it. The forms are those the codec gives."""
    code = """
import sys
from pytest_qbench.core import redact
redact.written_forms("abc-DEF_123 ~!@#$%^&*()")
print("encodings.unicode_escape" in sys.modules)
redact.written_forms("tab\\\\there-\\u00e9-secret")
print("encodings.unicode_escape" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
    from pytest_qbench.core.redact import written_forms

    for secret in ("abc-DEF_123 ~!@#$%^&*()", "tab\\there-\u00e9-secret", "line\nbreak-secret"):
        assert secret.encode("unicode_escape").decode("ascii") in written_forms(secret)


NOT_INDEXED_UNUSED = (
    "pytest_qbench.history.session_end",  # indexing a run (14.7 M instructions with these)
    "pytest_qbench.history.indexer",
    "pytest_qbench.history.files",
    "pytest_qbench.history.database",  # opening an index, or a PostgreSQL URL's driver
    "pytest_qbench.history.backend",
    "pytest_qbench.history.sql",
    "sqlite3",
)


def test_a_collect_only_run_imports_none_of_the_indexing(pytester: pytest.Pytester) -> None:
    """``pytest --co -p qbench`` (what an assistant runs to list tests) writes its reports and
    indexes nothing: none of the history index's modules is imported, nor sqlite3."""
    pytester.makeconftest(
        f"""
        import json, sys
        def pytest_unconfigure(config):
            loaded = [m for m in {NOT_INDEXED_UNUSED!r} if m in sys.modules]
            print("UNUSED LOADED:", json.dumps(loaded))
        """
    )
    pytester.makepyfile("def test_a(): pass\ndef test_b(): assert 0\n")
    result = pytester.runpytest_subprocess("--co", "-p", "qbench", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    line = next(x for x in result.stdout.lines if x.startswith("UNUSED LOADED:"))
    assert json.loads(line.split(":", 1)[1]) == []
    runs = list((pytester.path / ".qbench" / "runs").iterdir())
    assert {p.name for p in runs[0].iterdir()} >= {"report.json", "report.md"}
    assert not (pytester.path / ".qbench" / "index.sqlite").exists()
