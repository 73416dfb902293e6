"""``qbench merge`` of ``--qbench-shard`` shards that planned differently: not green."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.report.merge import Source
from pytest_qbench.report.merge import merge_reports
from pytest_qbench.report.verdict import run_green
from pytest_qbench.report.verdict import verdict_of

from conftest import RunQBench


def test_shards_that_planned_differently_do_not_merge_green(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Shards 1/2 and 2/2 whose plans differ (run one after the other outside CI, each saw
    the other's history) cover the suite only by chance: jsonschema's 8512 tests merged as
    `✅ 5924 passed, 512 skipped, 2076 deselected` (2951 run twice, 2076 never). The merged
    run is not whole, with a note, and `qbench merge` says so on stderr; the same plan merges
    green."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)  # an earlier commit's run: the shards plan by time
    for n in range(4):
        pytester.makepyfile(**{f"test_m{n}": "def test_ok():\n    pass\n"})
    run_qbench("--qbench-run-id=h1", run_dir="h1")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")  # one commit
    first, second = (
        run_qbench(f"--qbench-shard={i}/2", f"--qbench-run-id=s{i}", run_dir=f"s{i}")
        for i in (1, 2)
    )
    same = merge_reports([Source("s1", first.report), Source("s2", second.report)])
    assert first.report.run.shard is not None and first.report.run.shard.plan
    assert same.run.interrupted is False and run_green(same.model_dump(mode="json"))
    shard = second.report.run.shard
    assert shard is not None
    replanned = second.report.model_copy(
        update={
            "run": second.report.run.model_copy(
                update={"shard": shard.model_copy(update={"plan": [p + 1 for p in shard.plan]})}
            )
        }
    )
    differ = merge_reports([Source("s1", first.report), Source("s2", replanned)])
    assert differ.run.interrupted is True
    assert not run_green(differ.model_dump(mode="json"))
    notes = [w.message for w in differ.warnings if w.code == "merge-plans-differ"]
    assert len(notes) == 1 and notes[0].startswith("the shards of the 2-shard plan planned")
    # the summaries say why it is red: the plans, not a run that "did not finish"
    reasons = [r.text for r in verdict_of(differ.model_dump(mode="json")).reasons]
    assert reasons == ["the merged run is not whole: " + notes[0]]
    path = pytester.path / "s2-replanned.json"
    path.write_text(replanned.model_dump_json(), encoding="utf-8")
    capsys.readouterr()
    out = pytester.path / "m.json"
    assert main(["merge", str(first.run_dir / "report.json"), str(path), "-o", str(out)]) == OK
    assert "qbench: warning: the shards of the 2-shard plan planned" in capsys.readouterr().err
