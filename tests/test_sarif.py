"""``qbench ingest-sarif`` (issue 13): SARIF 2.1.0 into diagnostics, on ruff's real SARIF output;
malformed files refused with the JSON path of the problem."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_checks import make_project
from test_checks import printed_rows
from test_checks import rows
from test_checks import ruff_executable
from test_checks import run

from pytest_qbench.cli import main
from pytest_qbench.core.errors import SarifFormatError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.report.checks.ingest import ingest_sarif
from pytest_qbench.report.checks.sarif import parse_sarif
from pytest_qbench.report.models import CheckReport


pytestmark = pytest.mark.engine


def ruff_sarif(project: Path) -> Path:
    """ruff's own SARIF for the project, written to a file."""
    done = run([ruff_executable(), "check", "--output-format", "sarif", "."], project)
    path = project / "ruff.sarif"
    path.write_bytes(done.stdout)
    return path


def test_ruff_sarif_equals_what_ruff_prints(tmp_path: Path) -> None:
    """issue 13: ruff's SARIF gives the diagnostics ruff prints itself."""
    project = make_project(tmp_path)
    sarif = ruff_sarif(project)
    [(tool, found)] = list(parse_sarif(sarif.read_bytes(), str(sarif), project))
    concise = run([ruff_executable(), "check", "--output-format", "concise", "."], project)
    expected = printed_rows(
        concise.stdout.decode(), r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<code>\S+) "
    )
    assert tool == "ruff" and len(found) == 3
    assert sorted(rows(found)) == sorted(expected)
    assert {d.severity for d in found} == {"error"}
    assert found[0].code_snippet == "import os" and found[0].end_column == 10


def test_ingest_sarif_cli_stores_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: the command prints counts and errors, exit 1, the file copied into the run."""
    project = make_project(tmp_path)
    sarif = ruff_sarif(project)
    monkeypatch.chdir(project)
    assert main(["ingest-sarif", str(sarif)]) == ERR
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ruff: 3 errors"
    assert lines[1] == "pkg/mod.py:2:8: error ruff F401: `os` imported but unused"
    run_dir = Path(lines[-1].rsplit(" ", 1)[1])
    assert (run_dir / "sarif-1-ruff.sarif").read_bytes() == sarif.read_bytes()
    report = CheckReport.model_validate_json((run_dir / "check.json").read_text("utf-8"))
    assert report.run.tool == "qbench.ingest-sarif" and report.run.exit_code == ERR


def test_sarif_notes_only_exit_zero(tmp_path: Path) -> None:
    """issue 13: levels map to severities; no level is a warning; no error is exit 0."""
    document = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "semgrep"}},
                "results": [
                    {"ruleId": "r1", "level": "note", "message": {"text": "n"}},
                    {"rule": {"id": "r2"}, "message": {"text": "w"}, "locations": [
                        {"physicalLocation": {"artifactLocation": {"uri": "src/a%20b.py"},
                                              "region": {"startLine": 3}}}]},
                ],
            }
        ],
    }  # fmt: skip
    path = tmp_path / "s.sarif"
    path.write_text(json.dumps(document), encoding="utf-8")
    report, _ = ingest_sarif([path], tmp_path, tmp_path / ".qbench")
    found = report.checks[0].diagnostics
    assert [(d.severity, d.code, d.file, d.line) for d in found] == [
        ("info", "r1", None, None),
        ("warning", "r2", "src/a b.py", 3),
    ]
    assert report.run.exit_code == OK and report.checks[0].status == "clean"


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("{not json", "$: not JSON"),
        ('{"version": "2.0.0", "runs": []}', "$.version: is '2.0.0'"),
        ('{"version": "2.1.0"}', "$.runs: missing"),
        ('{"version": "2.1.0", "runs": [{"tool": {}}]}', "$.runs[0].tool.driver: missing"),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": '
            '[{"message": {"text": "ok"}}, {"message": {"text": "m"}, "level": "fatal"}]}]}',
            "$.runs[0].results[1].level: must be one of error, warning, note, none",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": '
            '[{"message": {"text": "m"}, "locations": [{"physicalLocation": {"region": '
            '{"startLine": "3"}}}]}]}]}',
            "$.runs[0].results[0].locations[0].physicalLocation.region.startLine: must be an "
            "integer",
        ),
    ],
)
def test_malformed_sarif_is_refused_with_its_json_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: str,
    where: str,
) -> None:
    """issue 13: a malformed file is one error line naming the JSON path; nothing is stored."""
    path = tmp_path / "bad.sarif"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SarifFormatError) as info:
        ingest_sarif([path], tmp_path, tmp_path / ".qbench")
    assert info.value.slug == "sarif-invalid"
    assert str(info.value).startswith(f"{path}: {where}")
    monkeypatch.chdir(tmp_path)
    assert main(["ingest-sarif", str(path)]) == ERR
    assert capsys.readouterr().err.startswith(f"qbench: error: {path}: {where}")
    assert not (tmp_path / ".qbench").exists()


def located(uri: str, line: int = 1) -> dict[str, object]:
    """A SARIF result at ``uri``'s line ``line``, with no snippet of its own."""
    where = {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}
    return {"ruleId": "r", "message": {"text": "m"}, "locations": [{"physicalLocation": where}]}


def test_snippets_only_from_regular_files_inside_the_project(tmp_path: Path) -> None:
    """issue 20.6: a SARIF naming files outside the project, a device, a FIFO or a link out
    reads none of them (nor hangs); a regular file inside is read, within a byte bound."""
    import os
    import subprocess

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "ok.py").write_text("first = 1\n", encoding="utf-8")
    os.mkfifo(project / "src" / "fifo.py")
    (project / "src" / "zero.py").symlink_to("/dev/zero")
    (project / "src" / "out.py").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("outside-secret\n", encoding="utf-8")
    with (project / "src" / "big.py").open("w", encoding="utf-8") as handle:
        handle.write("x = 1\n" * 3_000_000)  # 18 MB: its last line is past the bound
    uris = [
        "file:///etc/passwd",
        "/etc/passwd",
        "../../../../../../../../etc/passwd",
        "/proc/self/environ",
        "src/fifo.py",
        "src/zero.py",
        "src/out.py",
        "../secret.txt",
    ]
    results = [located(uri) for uri in uris]
    results += [located("src/ok.py"), located("src/big.py", 3_000_000)]
    document = {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "t"}}, "results": results}],
    }
    sarif = project / "x.sarif"
    sarif.write_text(json.dumps(document), encoding="utf-8")
    env = {**os.environ, "QBENCH_CANARY_TOKEN": "canary-7f3a"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench.cli", "ingest-sarif", "--json", str(sarif)],
        cwd=project, env=env, capture_output=True, timeout=600, check=False,
    )  # fmt: skip
    report = CheckReport.model_validate_json(done.stdout)
    snippets = [d.code_snippet for d in report.checks[0].diagnostics]
    assert snippets == [None] * len(uris) + ["first = 1", None]
    assert b"root:" not in done.stdout and b"canary-7f3a" not in done.stdout
    assert b"outside-secret" not in done.stdout


def test_deeply_nested_sarif_is_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 20.12: 200 000 nested arrays are refused in one line, not a RecursionError."""
    path = tmp_path / "deep.sarif"
    path.write_text('{"version": "2.1.0", "runs": ' + "[" * 200_000 + "]" * 200_000 + "}")
    monkeypatch.chdir(tmp_path)
    assert main(["ingest-sarif", str(path)]) == ERR
    err = capsys.readouterr().err
    assert err == f"qbench: error: {path}: $: JSON nested too deep; not valid SARIF 2.1.0\n"


def test_huge_names_and_messages_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 20.12: 1 000 runs with tool names, rules and messages of 100 000 characters (the
    first; 10 000 the others, twice every bound: a file of 40 MB, not 400 MB) print a bounded
    text and store bounded names."""

    def sarif_run(i: int) -> dict[str, Any]:
        huge = "n" * (100_000 if i == 0 else 10_000)
        result = {**located(huge), "ruleId": huge, "level": "error", "message": {"text": huge}}
        return {"tool": {"driver": {"name": f"{i}{huge}"}}, "results": [result]}

    runs = [sarif_run(i) for i in range(1000)]
    path = tmp_path / "wide.sarif"
    path.write_text(json.dumps({"version": "2.1.0", "runs": runs}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["ingest-sarif", str(path)]) == ERR
    out = capsys.readouterr().out
    assert len(out) < 100_000 and out.count("\n") < 200
    assert "more" in out
    report, _ = ingest_sarif([path], tmp_path, tmp_path / ".qbench")
    assert len(report.checks) == 1000
    assert max(len(check.run.tool) for check in report.checks) <= 201
    found = report.checks[0].diagnostics[0]
    assert len(found.message) <= 5000 and len(found.code or "") <= 201
    assert len(found.file or "") <= 1001
