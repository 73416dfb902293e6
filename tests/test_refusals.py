"""Values the ``qbench`` commands and the plugin's options cannot honour, refused by name before
any work (audit3): each was read on main as the option left out (an empty ``--qbench-queue``
ran every test on every CI machine), as stdout or the current directory (an empty ``-o``), or
as "every run" (``qbench gc --older-than 0d`` deleted them all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_qbench.cli import main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["quarantine", "add", ""], "argument NODEID: must not be empty, given: ''"),
        (["quarantine", "remove", "  "], "argument NODEID: must not be empty, given: '  '"),
        (["gc", "--older-than", "0d"], "--older-than: must be more than 0 (an age of 0 is every"),
        (["gc", "--older-than", "0.0s", "--dry-run"], "--older-than: must be more than 0"),
        (["render", "report.json", "-o", ""], "-o/--output: must be a file path ('-' for stdout)"),
        (["merge", "report.json", "-o", " "], "-o/--output: must be a file path"),
        (["pr-comment", "-o", ""], "-o/--output: must be a file path"),
        (["coverage", "last", "-o", ""], "-o/--output: must be a file path"),
        (["ingest-trx", "x.trx", "-o", ""], "-o/--output: must be a file path"),
        (["ingest-junit", "j.xml", "--tool", ""], "argument --tool: must not be empty"),
        # an empty path, which Path reads as the working directory: check stored ./runs/
        (["check", "--dir", ""], "argument --dir: must not be empty, given: ''"),
        (["render", ""], "argument REPORT.json|RUN_DIR: must not be empty"),
        (["runs", "--dir", " "], "argument --dir: must not be empty"),
    ],
)
def test_a_command_refuses_a_value_it_would_misread(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    """The usage error names the option and the value; nothing is read, written or removed."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as excinfo:
        main(args)
    assert excinfo.value.code == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--llm-command=echo", "--llm-log=llm.log"])
def test_generate_refuses_a_model_option_its_strategy_never_asks(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
) -> None:
    """``--strategy template`` asks no model: ``--llm-command`` beside it was ignored."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mod.py").write_text("def f(x: int) -> int:\n    return x + 1\n")
    assert main(["generate", "mod.py", "--strategy", "template", option]) == 2
    name = option.split("=")[0]
    assert f"{name} asks a model, and --strategy template asks none" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mod.py"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qbench-queue="], "--qbench-queue is empty, given: '' (an empty variable?); give a *"),
        (
            ["--qbench-shard= "],
            "--qbench-shard is empty, given: ' ' (an empty variable?); give I/N*",
        ),
        (
            ["--qbench-json="],
            "--qbench-json is empty, given: '' (an empty variable?); give a path*",
        ),
        (["--qbench-html="], "--qbench-html is empty*leave --qbench-html out"),
        (["--qbench-baseline="], "--qbench-baseline is empty*"),
        (["--qbench-dir="], "--qbench-dir is empty*"),
        (["--qbench-db="], "--qbench-db is empty, given: '' (an empty variable?)*"),
        (
            ["--qbench-cov="],
            "--qbench-cov is empty, given: '' (an empty variable?); give a SOURCE*",
        ),
        (["--qbench-capture="], "--qbench-capture: is empty, given: ''; use all, none*"),
    ],
)
def test_an_empty_option_value_is_a_usage_error(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    """``--qbench-queue=$CI_PIPELINE_ID`` with the variable empty is refused before any test
    runs (it ran the whole suite on each machine); an empty path is not read as none given."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])
    assert "passed" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (  # a percentage for a 0-1 score: the gate could never pass
            ["--qbench-metric-min=token_f1=80"],
            "",
            "--qbench-metric-min token_f1=80 is above the top of token_f1's scale (0 to 1)*",
        ),
        (
            [],
            "qbench_thresholds = exact_match=90",
            "ini qbench_thresholds exact_match=90 is above the top of exact_match's scale*",
        ),
        (  # options that do nothing without the one they bound
            ["--qbench-check-timeout=60"],
            "",
            "--qbench-check-timeout needs checkers to time, and none runs, given: 60; add *",
        ),
        (
            ["--qbench-new-tests-budget=30"],
            "",
            "--qbench-new-tests-budget bounds the repeats of new tests, and none is asked*",
        ),
    ],
)
def test_a_setting_that_cannot_act_is_a_usage_error(
    pytester: pytest.Pytester, args: list[str], ini: str, message: str
) -> None:
    """A threshold no score can reach, or an option without the one it bounds, is refused
    before any test runs, naming the option and the fix (it was ignored, or failed every run)."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "passed" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--root", ""], "argument --root: must not be empty, given: ''"),
        (["--qbench-dir", " "], "argument --qbench-dir: must not be empty"),
        (["--coverage-source", ""], "argument --coverage-source: must not be empty"),
    ],
)
def test_the_mcp_server_refuses_an_empty_option(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """``qbench mcp --root ''`` served the working directory; an empty coverage source was
    passed on to every run that measured coverage."""
    with pytest.raises(SystemExit) as excinfo:
        main(["mcp", *args])
    assert excinfo.value.code == 2
    assert message in capsys.readouterr().err


def test_the_mcp_server_refuses_a_default_timeout_above_its_maximum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--default-timeout 100 --max-timeout 10`` served runs of 10 s as if 100 were asked."""
    pytest.importorskip("mcp")
    args = ["mcp", "--root", str(tmp_path), "--default-timeout", "100", "--max-timeout", "10"]
    assert main(args) == 1
    assert "--default-timeout 100 is above --max-timeout 10" in capsys.readouterr().err
