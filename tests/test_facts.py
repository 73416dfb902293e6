"""Facts defined once (``core/``): each agrees with what it names, and the places that
used to keep their own copy say the same as it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_qbench.core.exit_codes import PYTEST_MEANINGS
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.mcp.testrun import exit_meaning
from pytest_qbench.report.merge import merged_exit_code
from pytest_qbench.report.models import ReportSummary

from conftest import RunQBench


def test_pytest_exit_codes_are_pytests() -> None:
    """``PytestExit`` names every exit status of the installed pytest, with its value."""
    ours = {e.name: e.value for e in PytestExit}
    assert {e.name: e.value for e in pytest.ExitCode}.items() <= ours.items()
    assert set(PYTEST_MEANINGS) == set(PytestExit)


def test_max_warnings_exit_is_known(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """pytest 9's ``--max-warnings`` exit status (6) is one pytest uses: the MCP answer says
    what it means, and merging it with a shard whose tests failed keeps the failure."""
    if "MAX_WARNINGS_ERROR" not in pytest.ExitCode.__members__:
        pytest.skip("pytest before 9 has no --max-warnings")
    pytester.makeini("[pytest]\nfilterwarnings =\n    default\n")  # not this suite's "error"
    pytester.makepyfile("import warnings\ndef test_ok():\n    warnings.warn(UserWarning('w'))\n")
    run = run_qbench("--max-warnings=0")
    code = run.result.ret
    assert code == pytest.ExitCode.MAX_WARNINGS_ERROR
    assert exit_meaning(code, None, 60) == PYTEST_MEANINGS[PytestExit.MAX_WARNINGS_ERROR]
    warned = run.report.model_copy(deep=True)
    warned.run.exit_code = int(code)
    failed = run.report.model_copy(deep=True)
    failed.run.exit_code = int(pytest.ExitCode.TESTS_FAILED)
    failed.summary = ReportSummary(total=1, failed=1)
    merged = merged_exit_code([warned, failed], ReportSummary(total=2, passed=1, failed=1))
    assert merged == pytest.ExitCode.TESTS_FAILED


def test_ci_is_recorded_and_secrets_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI detection and redaction (``core/ci.py``, ``core/redact.py``) in a real run: the
    provider, commit, branch and job link, and no secret in the command line stored."""
    for name, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": "abc123",
        "GITHUB_REF_NAME": "main",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_RUN_ID": "42",
        "SERVICE_TOKEN": "s3cr3t-value",
    }.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile("def test_ok():\n    pass\n")
    run = run_qbench("-k", "s3cr3t-value or test_ok")
    ci = run.report.environment.ci
    assert ci is not None
    assert (ci.provider, ci.commit, ci.branch) == ("github-actions", "abc123", "main")
    assert ci.build_url == "https://github.com/o/r/actions/runs/42"
    assert "s3cr3t-value" not in (run.run_dir / "report.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("value", ["inf", "nan", "0"])
def test_seconds_are_parsed_alike(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """A number of seconds is refused alike by the plugin and by ``qbench mcp`` (which took an
    infinite timeout), with the same message."""
    from pytest_qbench.cli import main

    message = f"must be a number of seconds more than 0, given: {value!r}; e.g. 300"
    with pytest.raises(SystemExit):
        main(["mcp", "--default-timeout", value])
    assert f"--default-timeout: {message}" in capsys.readouterr().err
    result = pytester.runpytest("-p", "qbench", f"--qbench-check-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--qbench-check-timeout: {message}*"])


def test_in_lists_span_batches(tmp_path: Path) -> None:
    """Queries whose ``IN (...)`` list is longer than one batch (``sql.BATCH``) read every
    value, in a real SQLite index: indexing, failure_infos, flaky_candidates, recent_results."""
    from history_data import index_reports
    from history_data import report
    from history_data import result

    from pytest_qbench.history import queries
    from pytest_qbench.history import sql
    from pytest_qbench.history.database import open_index

    count = sql.BATCH * 2 + 1
    names = [f"test_{i}" for i in range(count)]
    first = report("r1", 0, [result(n, "failed", line=i + 1) for i, n in enumerate(names)])
    second = report("r2", 1, [result(n) for n in names])
    index_reports(tmp_path, first, second)
    index = open_index(tmp_path, None)
    try:
        failing = queries.run_failures(index, "r1")
        assert len(failing) == count
        fingerprints = [r.fingerprint or "" for r in queries.run_results(index, "r1").values()]
        assert len(queries.failure_infos(index, fingerprints)) == count
        assert len(queries.flaky_candidates(index, 5)) == count
        nodeids = [f"t.py::{n}" for n in names]
        assert len(queries.recent_results(index, nodeids, "none", 5)) == count
    finally:
        index.close()


CHAINED = """\
def f():
    try:
        {}["key"]
    except KeyError as exc:
        raise RuntimeError("outer") from exc
"""


def test_error_lines_agree(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """The error line of a failure is the one pytest's short summary names, whoever picks it:
    ``qbench generate``'s verdict took the first ``E`` line (the inner KeyError of a chained
    exception), the MCP catalog's collection errors the last line with its ``E`` prefix."""
    from pytest_qbench.generate.candidate import Candidate
    from pytest_qbench.generate.target import resolve_target
    from pytest_qbench.generate.verify import verify
    from pytest_qbench.mcp import ingest

    root = tmp_path / "proj"
    root.mkdir()
    (root / "chain.py").write_text(CHAINED, encoding="utf-8")
    body = "def test_f():\n    chain.f()\n"
    candidate = Candidate("f", "template", "chain", ["f"], ["import chain"], body)
    verdict = verify(candidate, resolve_target("chain.py", root), tmp_path / "scratch", 600)
    assert (verdict.outcome, verdict.detail) == ("failed", "RuntimeError: outer")

    pytester.makepyfile(test_broken="import nope_qbench_missing\n")
    recorded = pytester.inline_run("--collect-only", "test_broken.py")
    (failed,) = [r for r in recorded.getreports("pytest_collectreport") if r.failed]
    error = {"nodeid": failed.nodeid, "message": failed.longreprtext}
    expected = "test_broken.py: ModuleNotFoundError: No module named 'nope_qbench_missing'"
    assert ingest.error_line(error) == expected


def test_checker_names_are_refused_naming_what_is_accepted(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench check --tools`` and ``--qbench-check`` (any registered checker, both) refuse an
    unknown name, naming it and the names they take."""
    from pytest_qbench.cli import main

    assert main(["check", "--tools", "ruff,pylint"]) == 1
    assert (
        "qbench: error: --checker: unknown checker 'pylint'; registered checkers: ruff, mypy, "
        "pyright, python.build, tsc, eslint, oxlint, biome, prettier"
    ) in capsys.readouterr().err
    result = pytester.runpytest("-p", "qbench", "--qbench-check=ruff,pylint")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--qbench-check: has unknown checker(s) pylint, given: 'ruff,pylint'; use a comma "
            "list of ruff, mypy, pyright, python.build, build, tsc, eslint, oxlint, biome, "
            "prettier, js.build, e.g. "
            "ruff,mypy*"
        ]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["check", "--timeout", "nan"],
            "--timeout: must be a number of seconds more than 0, given: 'nan'; e.g. 300",
        ),
        (
            ["render", "r.json", "--max-items", "-1"],
            "--max-items: must not be negative, given: -1; use 0 or more",
        ),
    ],
)
def test_cli_numbers_are_parsed_as_the_plugins(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """``qbench check --timeout`` and ``qbench render --max-items`` refuse what the plugin's
    twins refuse (a NaN timeout ran the checkers; a negative count was taken), before any work."""
    from pytest_qbench.cli import main

    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
