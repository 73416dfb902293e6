"""Whether two checkouts' session ends write the same index rows and report.json for the same runs.

Runs a varied suite (a flaky test, a broken one, a regression that comes back, node ids with a
quote, a backslash, non-ASCII and ``","``, non-ASCII messages, a lone surrogate, messages of
5 000 characters, paths and addresses, setup and teardown errors, skips, xfails, an xpass) with
the first checkout: four runs serially, one with ``-n 2``, two shards (``--qbench-shard 1/2``
and ``2/2``) and their ``qbench merge``. Then each checkout replays those runs, in order, through
its own session end: the stream written again by ``StreamWriter``, ``record_run`` with what the
writer kept, report.json written with the failing tests' histories, the merge indexed by
``qbench index``. Compared byte for byte: every report.json, and every row of ``runs``,
``tests``, ``results``, ``fingerprints`` and ``merge_members`` (the replay's index times aside);
then the shard planner's phase times and plans (``queries.phase_timings``, 2, 3 and 4 shards)
on each index. Exits 1 on a difference.

Usage::

    python benchmarks/session_end_compare.py /tmp/old /tmp/new
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path


SUITE = r"""
import os
import pytest

RUN = int(os.environ.get("SE_RUN", "0"))


@pytest.mark.parametrize("i", range(40))
def test_pass(i):
    assert i >= 0


@pytest.mark.parametrize("name", ['quote"d', "back\\slash", "caf\u00e9", 'k","outcome":"x'])
def test_names(name):
    assert RUN % 2 or name != "caf\u00e9", f"name {name} at 0x{id(name):x}"


@pytest.mark.parametrize("i", range(12))
def test_numbers(i):
    assert RUN * 7 + i == -1, f"value {RUN * 3.5} took {i}ms in /srv/app/{RUN}/data/f-{i}.txt"


def test_flaky():
    assert RUN % 3 != 1, "flaky: connection reset"


def test_broken():
    assert RUN < 2, "broken since run 2"


def test_returning():
    assert RUN not in (0, 3), "regression: got 41 expected 42"


def test_non_ascii():
    assert RUN < 0, "caf\u00e9 \u2014 na\u00efve \U0001f600 \u4e2d\u6587"


def test_surrogate():
    raise ValueError("lone \ud800 surrogate")


def test_long():
    assert "a" * 5000 == "b" * 5000, "x" * 5000


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup failed")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown failed")


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_fail_and_teardown_error(broken_teardown):
    assert RUN < 0


@pytest.mark.parametrize("i", range(6))
def test_skip(i):
    pytest.skip(f"reason {i % 3}")


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="passes")
def test_xpass():
    pass
"""

REPLAY = r"""
import json, os, sys
from pathlib import Path
from pytest_qbench.cli import main as qbench
from pytest_qbench.history.publish import history_patches
from pytest_qbench.history.session_end import record_run
from pytest_qbench.report.store import StreamWriter, iter_result_json, write_report_json

source, work = Path(sys.argv[1]), Path(sys.argv[2])
runs = sorted((source / "runs").iterdir(), key=lambda p: p.stat().st_mtime_ns)
for run in runs:
    report = json.loads((run / "report.json").read_text())
    report["results"] = []
    out = work / "runs" / run.name
    out.mkdir(parents=True)
    writer = StreamWriter(out / "results.jsonl")
    for item in iter_result_json(run / "results.jsonl"):
        writer.write_stored(json.loads(item))
    writer.close()
    kept = getattr(writer, "written", None)
    extra = {} if kept is None else {"written": kept}
    histories = record_run(work, report, out / "results.jsonl", [], 200, **extra).histories
    patches = history_patches(histories)
    write_report_json(out / "report.json", report, out / "results.jsonl", patches)
merged = source / "merged" / "report.json"
if merged.is_file():
    assert qbench(["index", str(merged), "--dir", str(work)]) == 0
"""

PLANS = r"""
import hashlib, json, sys
from pathlib import Path
from pytest_qbench.history.database import open_index
from pytest_qbench.history.queries import phase_timings
from pytest_qbench.history.shardplan import plan_shards

index = open_index(Path(sys.argv[1]), None)
nodeids = index.read(lambda c: [r[0] for r in c.execute("SELECT nodeid FROM tests").fetchall()])
nodeids = sorted(nodeids) + ["tests/test_new.py::test_unknown"]
out = {}
for commit in (None, "none", "c4"):
    for runs in (1, 3, 5, 10):
        found = phase_timings(index, nodeids, runs, commit)
        key = f"{commit}/{runs}"
        out[key] = {n: sorted([t.setup, t.call, t.teardown] for t in v) for n, v in sorted(found.items())}
        for count in (2, 3, 4):
            plan = plan_shards(nodeids, found, count)
            out[f"{key}/plan{count}"] = [[u.key for u in shard] for shard in plan.shards]
index.close()
print(json.dumps(out, sort_keys=True))
"""

TABLES = {
    "runs": "SELECT * FROM runs ORDER BY id",
    "tests": "SELECT * FROM tests ORDER BY id",
    "results": "SELECT * FROM results ORDER BY run_ref, test_ref",
    "fingerprints": "SELECT * FROM fingerprints ORDER BY fingerprint",
    "merge_members": "SELECT * FROM merge_members ORDER BY merge_ref, member",
}


def env_of(checkout: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QBENCH_", "PYTEST_"))}
    env["PYTHONPATH"] = os.path.abspath(checkout)
    env["PYTHONHASHSEED"] = "0"
    return {**env, **extra}


def record_runs(python: str, checkout: str, where: Path) -> Path:
    """The suite's runs with ``checkout``; its qbench directory."""
    suite = where / "suite"
    (suite / "tests").mkdir(parents=True)
    (suite / "tests" / "test_varied.py").write_text(SUITE)
    qbench_dir = where / "recorded"
    argv = [python, "-m", "pytest", "-q", "-p", "qbench", "-p", "no:cacheprovider"]
    argv += ["-p", "no:randomly", f"--qbench-dir={qbench_dir}", "tests"]
    runs = [[], [], [], [], ["-n", "2"], ["--qbench-shard=1/2"], ["--qbench-shard=2/2"]]
    for number, extra in enumerate(runs):
        env = env_of(checkout, SE_RUN=str(number), GITHUB_ACTIONS="true", GITHUB_SHA=f"c{number}")
        subprocess.run([*argv, *extra], cwd=suite, env=env, capture_output=True, check=False)
    shards = [
        run
        for run in sorted((qbench_dir / "runs").iterdir())
        if json.loads((run / "report.json").read_text())["run"].get("shard")
    ]
    merged = qbench_dir / "merged" / "report.json"
    merge = [python, "-m", "pytest_qbench", "merge", *map(str, shards), "-o", str(merged)]
    subprocess.run(merge, env=env_of(checkout), check=True, capture_output=True)
    return qbench_dir


def replay(python: str, checkout: str, source: Path, work: Path) -> dict[str, object]:
    """The rows and reports of ``source``'s runs replayed by ``checkout``'s session end."""
    work.mkdir()
    env = env_of(checkout)
    subprocess.run([python, "-c", REPLAY, str(source), str(work)], env=env, check=True)
    db = sqlite3.connect(work / "index.sqlite")
    try:
        found: dict[str, object] = {}
        for name, query in TABLES.items():
            rows = db.execute(query).fetchall()
            if name == "runs":  # the replay's own index time
                at = [d[0] for d in db.execute(query).description].index("indexed_at")
                rows = [row[:at] + row[at + 1 :] for row in rows]
            found[name] = rows
    finally:
        db.close()
    for report in sorted((work / "runs").glob("*/report.json")):
        found[f"report.json of {report.parent.name}"] = report.read_bytes()
    plans = subprocess.run(
        [python, "-c", PLANS, str(work)], env=env, check=True, capture_output=True, text=True
    )
    found["plans"] = json.loads(plans.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="se-compare-") as tmp:
        where = Path(tmp)
        source = record_runs(args.python, args.old, where)
        runs = len(list((source / "runs").iterdir()))
        shards = json.loads((source / "merged" / "report.json").read_text())["shards"]
        old = replay(args.python, args.old, source, where / "old")
        new = replay(args.python, args.new, source, where / "new")
        shutil.rmtree(source, ignore_errors=True)
    differ = [key for key in old if old[key] != new.get(key)] + [k for k in new if k not in old]
    rows = sum(len(v) for k, v in old.items() if k in TABLES and isinstance(v, list))
    reports = sum(1 for key in old if key.startswith("report.json"))
    plans = len(old["plans"]) if isinstance(old["plans"], dict) else 0
    print(f"{runs} runs replayed, a merge of {len(shards)} shards indexed: {rows} rows, ")
    print(f"{reports} report.json files, {plans} phase timings and plans")
    if differ:
        print("DIFFERENT:", ", ".join(differ))
        return 1
    print("identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
