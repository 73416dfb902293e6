"""Naming a run (``last``, ``last~N``, an id, a prefix) the same way in every command and MCP
tool: by the start time each run recorded, not by directory names or file times."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK


MOD = "def f(x):\n    if x:\n        return 1\n    return 2\n"
TESTS = "import mod\n\ndef test_f():\n    assert mod.f(1) == 1\n\ndef test_g():\n    assert 0\n"


@pytest.fixture
def ci_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs ``ci-8``, ``ci-9`` (no coverage) and ``ci-10`` (coverage), started in that order:
    by name, ``ci-9`` sorts last. ``ci-8``'s directory is touched after the others ended (a
    later ``qbench html`` writes into it), so its directory time is the newest."""
    pytester.makepyfile(mod=MOD, test_mod=TESTS)
    for run_id, extra in (("ci-8", ()), ("ci-9", ()), ("ci-10", ("--qbench-cov=.",))):
        pytester.runpytest_subprocess("-p", "qbench", f"--qbench-run-id={run_id}", *extra)
    runs = pytester.path / ".qbench" / "runs"
    (runs / "ci-8" / "later.txt").write_text("written after the other runs\n")
    newest = max(os.stat(runs / name).st_mtime for name in ("ci-9", "ci-10"))
    os.utime(runs / "ci-8", (newest + 60, newest + 60))
    monkeypatch.chdir(pytester.path)
    return pytester.path


def test_commands_name_runs_by_start_time(
    ci_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench coverage`` (the run store) and ``qbench show`` (the index) agree on ``last``,
    ``last~N`` and prefixes; an ambiguous prefix lists its candidates, newest first."""
    capsys.readouterr()
    assert main(["coverage", "last"]) == OK
    assert "mod.py" in capsys.readouterr().out
    assert main(["coverage", "last~1"]) == ERR
    assert "runs/ci-9 has no coverage data" in capsys.readouterr().err
    assert main(["coverage", "last~3"]) == ERR
    err = capsys.readouterr().err
    assert "last~3 needs 4 runs" in err and "holds 3" in err
    assert main(["coverage", "ci-1"]) == OK  # ci-10, the only id it begins
    capsys.readouterr()
    assert main(["coverage", "ci-"]) == ERR
    err = capsys.readouterr().err
    assert "run 'ci-' is ambiguous: it begins several run ids (ci-10, ci-9, ci-8, newest" in err
    for ref, expected in (("last", "ci-10"), ("last~1", "ci-9"), ("last~2", "ci-8")):
        capsys.readouterr()
        assert main(["show", ref, "--json"]) in (OK, 1)
        assert f'"run_id": "{expected}"' in capsys.readouterr().out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")
def test_mcp_tools_name_runs_by_start_time(ci_runs: Path) -> None:
    """Through a real MCP client over stdio, as an assistant calls the tools."""
    pytest.importorskip("mcp")
    import shutil

    import anyio
    from mcp import Client
    from mcp import StdioServerParameters

    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    params = StdioServerParameters(
        command=script,
        args=["--root", str(ci_runs)],
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=str(ci_runs),
    )

    async def session() -> dict[str, object]:
        answers: dict[str, object] = {}
        async with Client(params) as client:
            for ref in ("last", "last~1", "last~2", "ci-", "ci-9"):
                result = await client.call_tool(
                    "get_test_failure", {"run_id": ref, "test": "test_g"}
                )
                answers[ref] = (
                    result.content[0].text  # type: ignore[union-attr]
                    if result.is_error
                    else (result.structured_content or {}).get("run_id")
                )
        return answers

    async def main_() -> dict[str, object]:
        with anyio.fail_after(600):
            return await session()

    answers = anyio.run(main_)
    assert answers["last"] == "ci-10"
    assert answers["last~1"] == "ci-9"
    assert answers["last~2"] == "ci-8"
    assert answers["ci-9"] == "ci-9"
    assert "is ambiguous" in str(answers["ci-"]) and "ci-10, ci-9, ci-8" in str(answers["ci-"])
