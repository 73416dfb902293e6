"""A run killed as pytest-timeout's thread method kills it (``os._exit`` from a thread while a
test hangs): its stream has no end record, and the duration its rebuilt report had ran to its
last result's end (0.3 s) though the process lived on in the hanging test, for a time nothing
recorded. Every text now says what is known: ``at least 0.30s (it died; when is unknown)``
(report.md's and the HTML report's headline, `qbench show`; ``>=0.30s`` in `qbench runs`' column), the reason
(report.md, the digest's next steps) says its duration runs to its last result, and the MCP
run's line says it too (``died``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_qbench.cli import main


THREAD_TIMEOUT = """
import os, threading, time

def test_a():
    time.sleep(0.3)

def test_hang():
    # what pytest-timeout's thread method does at its timeout: dump the stacks, os._exit(1)
    threading.Timer(1.0, lambda: os._exit(1)).start()
    time.sleep(60)
"""


@pytest.mark.runs_pytest
def test_a_run_killed_by_a_thread_timeout_says_its_end_is_unknown(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_t=THREAD_TIMEOUT)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "--qbench-run-id=t", "--qbench-digest=digest.json"
    )
    assert result.ret == 1
    run_dir = pytester.path / ".qbench/runs/t"
    assert main(["render", str(run_dir)]) == 0
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    took = f"{report['summary']['duration']:.2f}s"
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert markdown.splitlines()[0].endswith(f" in at least {took} (it died; when is unknown)")
    assert f"its duration ({took}) runs to the last of them: when it died is unknown" in markdown
    assert main(["render", str(run_dir / "report.json"), "--html", "report.html"]) == 0
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert f" in at least {took} (it died; when is unknown)</h1>" in html
    capsys.readouterr()
    main(["runs", "--dir", ".qbench"])
    assert f">={took}" in capsys.readouterr().out
    main(["show", "t", "--dir", ".qbench"])
    assert f"took at least {took} (it died; when is unknown)" in capsys.readouterr().out


@pytest.mark.runs_pytest
def test_the_mcp_run_of_a_run_killed_by_a_thread_timeout_says_its_end_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp")
    from mcp_helpers import quiet_children
    from test_mcp_contract import call
    from test_mcp_contract import text_of

    from pytest_qbench.mcp.config import ServerConfig

    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    root = (tmp_path / "project").resolve()
    root.mkdir()
    (root / "test_t.py").write_text(THREAD_TIMEOUT, encoding="utf-8")
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
    result = call(config, "run_test_workflow", {})
    text = text_of(result)
    content = result.structured_content
    assert isinstance(content, dict) and content["died"] is True, text
    assert f"in at least {content['summary']['duration']:.2f}s (it died; when is unknown)" in text
    assert "when it died is unknown" in text
