"""The suites and reports tests/test_html_browser.py opens in Chromium: examples/demo with
attachments, an agent and a module with missed lines added to it, run three times into one run
store; a suite whose names, messages, output, properties, metadata, attachment names and agent
answers are XSS payloads; and a 50 000-test report built from records.

Each suite is run for real, by ``python -m pytest -p qbench`` in a subprocess (this checkout's
code first on ``PYTHONPATH``), so the pages are the ones a user gets.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from child_pytest import run_child

import pytest_qbench
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.html import render_html
from pytest_qbench.report.shapes import new


PACKAGE_PARENT = Path(pytest_qbench.__file__).resolve().parents[1]
"""Where the tested pytest_qbench is imported from (the checkout, or site-packages under tox)."""
DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"
"""The checkout's demo suite (not installed with the package)."""
SUMMARY_LINE = re.compile(r"^=+ (?P<parts>.+?) in [0-9.]+s(?: \([^)]*\))? =+$", re.MULTILINE)
PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "javascript:alert(1)",
    "a\u2028b\u2029c",
)
ATTACH_CAP = "2KiB"
"""``--qbench-attach-max-size`` of the demo runs: ``video.webm`` (4 KiB) is over it."""

EXTRAS = '''
"""Added to examples/demo by the browser tests: attachments, an agent, a test that flips."""

import os
import struct
import zlib

import pytest
from stock import Stock


def png(width, height):
    """A plain green PNG image."""
    row = b"\\x00" + bytes([0x1A, 0x7F, 0x37]) * width
    def chunk(kind, data):
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def test_checkout_page(qbench):
    qbench.attach(png(160, 48), name="checkout.png")
    qbench.attach("GET /cart 200\\nPOST /checkout 201\\n", name="server.log")
    qbench.attach(bytes(range(256)), name="trace.bin")
    qbench.attach(b"\\x1aE" * 2048, name="video.webm")


@pytest.mark.qbench(
    metrics=[{"metric": "token_f1", "threshold": 0.5}],
    ground_truth="Paris",
    expected_tools=["search"],
)
def test_capital(qbench):
    qbench.record("Paris, France", input="What is the capital of France?", tool_calls=["search"])


def test_stock_sync():
    stock = Stock({"apple": 3})
    stock.take("apple", 1)
    assert os.environ.get("DEMO_RUN") != "2", "stock out of sync with the warehouse"
'''

STOCK = '''
"""A stock of items, half tested (the coverage section has missed lines to show)."""


class Stock:
    def __init__(self, items):
        self.items = dict(items)

    def take(self, name, count):
        if self.items.get(name, 0) < count:
            raise ValueError(f"only {self.items.get(name, 0)} {name} left")
        self.items[name] -= count

    def restock(self, name, count):
        if count <= 0:
            raise ValueError("restock a positive count")
        self.items[name] = self.items.get(name, 0) + count
        return self.items[name]
'''

XSS = f"""
import pytest

PAYLOADS = {PAYLOADS!r}
IDS = [p if p.isascii() else "sep" for p in PAYLOADS]


@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
def test_payload(payload, record_property, qbench):
    record_property("link", payload)
    print(payload)
    qbench.attach(payload, name=payload)
    assert 0, payload


@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
@pytest.mark.qbench(metrics=[{{"metric": "token_f1", "threshold": 0.0}}], ground_truth="x")
def test_agent(payload, qbench):
    qbench.record(payload, input=payload, tool_calls=[payload])


@pytest.mark.qbench_case(
    key="javascript:alert(1)", title="<script>alert(1)</script>", tags=["<img src=x onerror=alert(1)>"]
)
def test_meta():
    pass
"""


@dataclass
class Run:
    """One pytest run: its output and the counts of its summary line."""

    stdout: str

    @property
    def summary(self) -> str:
        """pytest's summary line without the time (``1 failed, 9 passed, 1 error``)."""
        found = SUMMARY_LINE.findall(self.stdout)
        assert found, self.stdout[-2000:]
        return str(found[-1])

    def count(self, word: str) -> int:
        """The number before ``word`` in the summary line (0 when absent)."""
        match = re.search(rf"(\d+) {word}\b", self.summary)
        return int(match.group(1)) if match else 0


def run_pytest(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """``python -m pytest -p qbench ARGS`` in ``cwd``, this checkout's code imported."""
    path = os.pathsep.join(p for p in (str(PACKAGE_PARENT), os.environ.get("PYTHONPATH", "")) if p)
    done = run_child(
        cwd,
        "-p",
        "no:cacheprovider",
        *args,
        env={"PYTHONPATH": path, "COLUMNS": "100", **(env or {})},
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return Run(done.stdout)


def build_demo(root: Path) -> tuple[Path, Run]:
    """examples/demo with the extras, run four times into one store, as CI runs two commits
    twice each (``test_stock_sync`` fails once on each commit: a pass and a fail on two commits
    are the same-commit monitor's evidence that it is flaky); the last run with coverage writes
    ``report.html``. Returns the page and the last run."""
    project = root / "demo"
    shutil.copytree(
        DEMO, project, ignore=shutil.ignore_patterns(".qbench", "__pycache__", "*.html")
    )
    (project / "test_extras.py").write_text(EXTRAS, encoding="utf-8")
    (project / "stock.py").write_text(STOCK, encoding="utf-8")
    common = (f"--qbench-attach-max-size={ATTACH_CAP}",)
    ci = {"GITHUB_ACTIONS": "true"}
    first, second = "0ddba11c0ffee", "5ca1ab1ec0de"
    # DEMO_RUN=2 is the run in which test_stock_sync fails
    for n, failing, sha in ((0, True, second), (1, False, first), (2, True, first)):
        env = {**ci, "GITHUB_SHA": sha, "DEMO_RUN": "2" if failing else str(n)}
        run_pytest(project, *common, f"--qbench-run-id=demo-{n}", env=env)
    last = run_pytest(
        project,
        *common,
        "--qbench-run-id=demo-3",
        "--qbench-cov=shop",
        "--qbench-cov=stock",
        "--qbench-html=report.html",
        env={**ci, "GITHUB_SHA": second, "DEMO_RUN": "3"},
    )
    return project / "report.html", last


def build_xss(root: Path) -> tuple[Path, Run]:
    """The payload suite run once with ``--qbench-html``; the page and the run."""
    project = root / "xss"
    project.mkdir()
    (project / "test_xss.py").write_text(XSS, encoding="utf-8")
    run = run_pytest(project, "--qbench-html=report.html", "--qbench-capture=all")
    return project / "report.html", run


def build_large(root: Path, count: int = 50_000) -> tuple[Path, list[str]]:
    """A report of ``count`` results (5% failing) rendered straight from records, as
    benchmarks/html_render.py does; the page and each result's searchable text."""
    results: list[dict[str, Any]] = []
    # every record's defaults from one: `new` deep-copies a record's list and dict defaults
    # (0.8 s of CPU over 50 000 records); the page only reads them
    blank = new("TestResult", nodeid="", test_name="", file="", line=0, outcome="passed")
    for i in range(count):
        file = f"tests/pkg_{i // 5000:02d}/test_mod_{i // 100:04d}.py"
        result: Any = {
            **blank,
            "nodeid": f"{file}::test_case_{i}",
            "test_name": f"test_case_{i}",
            "file": file,
            "line": 10 + i % 90,
            "duration": 0.001 + (i * 7919 % 1000) / 100_000,
            "counted_as": ["passed"],
        }
        if i % 20 == 7:
            failure = new(
                "Failure",
                error_type="AssertionError",
                error_message=f"order {i} total is off by {i % 13} cents",
                stack_trace=f"{file}:{10 + i % 90}: in test_case_{i}\n    assert total == expected",
                phase="call",
            )
            result.update(outcome="failed", counted_as=["failed"], failure=failure)
        results.append(dict(result))
    report = new(
        "TestReport",
        meta=new("ReportMeta", qbench_version="0", created_at="2026-01-01T00:00:00Z"),
        run=new(
            "RunMeta",
            run_id="large",
            started_at="2026-01-01T00:00:00Z",
            exit_code=1,
            cwd="/large",
            command=["pytest"],
        ),
        environment=new(
            "Environment",
            python="3.12.0",
            implementation="CPython",
            platform="Linux",
            pytest_version="8.3",
            qbench_version="0",
        ),
        summary=aggregate(results).summary(count * 0.005),
    )
    path = root / "large.html"
    path.write_text(render_html(report, results), encoding="utf-8")
    texts = [
        (r["nodeid"] + "\n" + ((r.get("failure") or {}).get("error_message") or "")).lower()
        for r in results
    ]
    return path, texts
