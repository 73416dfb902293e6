"""How long ``qbench ingest-sarif`` takes for a large SARIF file, and its peak memory.

Writes one SARIF 2.1.0 file with N results (each with a rule, a level, a message and a location
in one of 200 files, no snippet of its own) into a temporary project, then runs
``qbench ingest-sarif --json FILE`` and ``qbench ingest-sarif FILE`` (text output, bounded by
``--max-items``) as subprocesses, each measured for wall time, CPU time and peak RSS.

Usage::

    python benchmarks/sarif_ingest.py [--results 300000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import exit_on_sigterm
from _measure import measure
from _measure import source_revision


def write_sarif(path: Path, count: int) -> None:
    """A SARIF file of ``count`` results spread over 200 source files."""
    results = [
        {
            "ruleId": f"R{index % 40}",
            "level": ("error", "warning", "note")[index % 3],
            "message": {"text": f"finding number {index}: something is wrong here"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f"src/mod{index % 200}.py"},
                        "region": {"startLine": index % 50 + 1, "startColumn": 1},
                    }
                }
            ],
        }
        for index in range(count)
    ]
    document = {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "bench"}}, "results": results}],
    }
    path.write_text(json.dumps(document), encoding="utf-8")


def main() -> None:
    """Measure and print one line per command."""
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=300_000)
    args = parser.parse_args()
    print(f"qbench at {source_revision()}, {args.results} results")
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch)
        (project / "src").mkdir()
        for index in range(200):
            lines = "".join(f"value_{n} = {n}\n" for n in range(50))
            (project / "src" / f"mod{index}.py").write_text(lines, encoding="utf-8")
        sarif = project / "big.sarif"
        write_sarif(sarif, args.results)
        print(f"SARIF file: {sarif.stat().st_size / 1e6:.1f} MB")
        qbench = [sys.executable, "-m", "pytest_qbench.cli", "ingest-sarif"]
        for label, extra in (("--json", ["--json"]), ("text", [])):
            usage = measure(
                [*qbench, *extra, "--dir", str(project / f".qbench-{label}"), str(sarif)],
                cwd=project,
                output=subprocess.DEVNULL,
            )
            print(
                f"ingest-sarif {label:6}: exit {usage.exit_code}, {usage.wall_s:.1f} s wall, "
                f"{usage.user_s + usage.sys_s:.1f} s CPU, peak RSS {usage.max_rss_mib:.0f} MiB"
            )


if __name__ == "__main__":
    main()
