"""LLM-as-judge: judge metrics, the judge protocol and the replay file (issue 4)."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.core import atomic
from pytest_qbench.evaluation import NO_JUDGE_REASON
from pytest_qbench.evaluation import ReplayJudge
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import Verdict
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation import verdict_key
from pytest_qbench.evaluation.judge import render_prompt


SAMPLE = Sample("Paris is the capital.", input="Capital of France?", ground_truth="Paris")


class FakeJudge:
    """A deterministic judge that remembers what it was asked."""

    model = "fake-judge-1"

    def __init__(self, score: float = 0.8) -> None:
        self.score = score
        self.asked: list[tuple[str, str]] = []

    def __call__(self, metric_name: str, sample: Sample, prompt: str, /) -> Verdict:
        self.asked.append((metric_name, prompt))
        return Verdict(self.score, reason=f"looked at {len(prompt)} characters")


def no_network(metric_name: str, sample: Sample, prompt: str, /) -> Verdict:
    raise AssertionError("the real judge was called")


@pytest.mark.parametrize("name", ["judge_score", "answer_relevance"])
def test_judge_metrics_are_skipped_without_a_judge(name: str) -> None:
    evaluation = evaluate(name, SAMPLE)
    assert (evaluation.score, evaluation.error) == (None, None)
    assert evaluation.skipped_reason == NO_JUDGE_REASON


def test_answer_relevance_asks_the_judge_about_input_and_response() -> None:
    judge = FakeJudge()
    evaluation = evaluate("answer_relevance", SAMPLE, judge=judge)
    assert (evaluation.score, evaluation.model_used) == (0.8, "fake-judge-1")
    assert evaluation.reason is not None and evaluation.reason.startswith("looked at")
    [(metric_name, prompt)] = judge.asked
    assert metric_name == "answer_relevance"
    assert "Capital of France?" in prompt and "Paris is the capital." in prompt


def test_answer_relevance_needs_the_input() -> None:
    evaluation = evaluate("answer_relevance", Sample("r"), judge=FakeJudge())
    assert evaluation.error == (
        "metric 'answer_relevance' needs input; pass input= to qbench.record(...)"
    )


def test_judge_score_custom_prompt() -> None:
    """Placeholders are filled in; other braces (a JSON example) are left alone."""
    judge = FakeJudge(score=1.0)
    prompt = 'Does "{response}" match "{ground_truth}"? Answer as {"score": 0..1}'
    evaluate("judge_score", SAMPLE, params={"custom_prompt": prompt}, judge=judge)
    assert judge.asked == [
        (
            "judge_score",
            'Does "Paris is the capital." match "Paris"? Answer as {"score": 0..1}',
        )
    ]


def test_render_prompt_leaves_missing_fields_empty() -> None:
    assert render_prompt("[{input}|{ground_truth}]", Sample("r")) == "[|]"


def test_judge_out_of_range_or_failing_is_an_error() -> None:
    assert evaluate("judge_score", SAMPLE, judge=FakeJudge(score=4)).error == (
        "metric 'judge_score' returned 4, outside 0..1"
    )

    def down(metric_name: str, sample: Sample, prompt: str, /) -> Verdict:
        raise ConnectionError("judge unreachable")

    evaluation = evaluate("judge_score", SAMPLE, judge=down, retries=2)
    assert (evaluation.error, evaluation.retry_count) == ("ConnectionError: judge unreachable", 2)


# ---------------------------------------------------------------- ReplayJudge


def test_record_then_replay_offline(tmp_path: Path) -> None:
    """Record once with a real judge; replay answers from the file and never calls it."""
    path = tmp_path / "verdicts.json"
    recorder = ReplayJudge(path, inner=FakeJudge(0.6), mode="record")
    recorded = evaluate("answer_relevance", SAMPLE, judge=recorder)

    replayed = evaluate("answer_relevance", SAMPLE, judge=ReplayJudge(path, inner=no_network))
    assert (replayed.score, replayed.reason, replayed.model_used, replayed.error) == (
        recorded.score,
        recorded.reason,
        None,
        None,
    )
    assert replayed.score == 0.6


def test_replay_without_a_verdict_is_an_error_not_a_call(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    evaluation = evaluate("judge_score", SAMPLE, judge=ReplayJudge(path), retries=2)
    key = verdict_key("judge_score", render_prompt(_default_prompt(), SAMPLE), SAMPLE)
    assert evaluation.error == (
        f"no recorded verdict for metric 'judge_score' (key {key}) in {path}; "
        "re-record with a real judge: ReplayJudge(path, inner=judge, mode='record')"
    )
    assert evaluation.retry_count == 0
    assert not path.exists()


def _default_prompt() -> str:
    from pytest_qbench.evaluation.judge import DEFAULT_JUDGE_PROMPT

    return DEFAULT_JUDGE_PROMPT


def test_verdicts_file_format_is_sorted_and_stable(tmp_path: Path) -> None:
    """Recording the same verdicts twice writes the same bytes; the format is documented."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    samples = [Sample(f"answer {i}", input=f"question {i}") for i in (3, 1, 2)]
    for path, order in ((first, samples), (second, samples[::-1])):
        judge = ReplayJudge(path, inner=FakeJudge(0.5), mode="record")
        for sample in order:
            evaluate("answer_relevance", sample, judge=judge)
    assert first.read_bytes() == second.read_bytes()
    data = json.loads(first.read_text(encoding="utf-8"))
    assert (data["format"], data["version"]) == ("pytest-qbench-verdicts", 1)
    assert list(data["verdicts"]) == sorted(data["verdicts"])
    stored = next(iter(data["verdicts"].values()))
    assert stored == {
        "metric": "answer_relevance",
        "model": None,
        "reason": stored["reason"],
        "score": 0.5,
    }
    assert first.read_text(encoding="utf-8").endswith("}\n")


def test_verdict_key_is_stable_and_discriminating() -> None:
    """The key is a hash of metric, prompt, input, response and ground truth, nothing else."""
    key = verdict_key("m", "p", SAMPLE)
    assert key == "626306ef7718740d"
    assert (
        verdict_key(
            "m",
            "p",
            Sample(SAMPLE.response, input=SAMPLE.input, ground_truth="Paris", latency_ms=5),
        )
        == key
    )
    assert len({key, verdict_key("n", "p", SAMPLE), verdict_key("m", "q", SAMPLE)}) == 3
    assert verdict_key("m", "p", Sample(SAMPLE.response, input=SAMPLE.input)) != key


def test_record_writes_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed write leaves the previous file whole and no temporary file behind."""
    path = tmp_path / "deep" / "verdicts.json"
    judge = ReplayJudge(path, inner=FakeJudge(), mode="record")
    evaluate("judge_score", SAMPLE, judge=judge)
    before = path.read_bytes()

    def failing_replace(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    evaluation = evaluate("judge_score", Sample("other"), judge=judge)
    assert evaluation.error == "OSError: disk full"
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["verdicts.json"]


def test_record_failing_mid_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 10: verdicts go through the atomic writer: a write that fails halfway leaves the
    previous file whole and no temporary file; the file is as readable as any new file."""
    path = tmp_path / "verdicts.json"
    judge = ReplayJudge(path, inner=FakeJudge(), mode="record")
    evaluate("judge_score", SAMPLE, judge=judge)
    before = path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~atomic.current_umask()
    real_fdopen = os.fdopen

    class HalfWrite:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def write(self, text: str) -> int:
            self.handle.write(text[: len(text) // 2])
            self.handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self) -> None:
            self.handle.close()

    monkeypatch.setattr(os, "fdopen", lambda *args, **kw: HalfWrite(real_fdopen(*args, **kw)))
    evaluation = evaluate("judge_score", Sample("other"), judge=judge)
    assert evaluation.error == "OSError: [Errno 28] No space left on device"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdicts.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a verdicts file: Expecting property name"),
        ("[]", 'not a verdicts file \\(no "format": "pytest-qbench-verdicts"\\)'),
        (
            '{"format": "pytest-qbench-verdicts", "version": 9, "verdicts": {}}',
            "version 9, expected 1",
        ),
        (
            '{"format": "pytest-qbench-verdicts", "version": 1, "verdicts": []}',
            '"verdicts" must be an object',
        ),
        (
            '{"format": "pytest-qbench-verdicts", "version": 1, "verdicts": {"k": {"score": "high"}}}',
            "verdict 'k' must be",
        ),
    ],
)
def test_a_damaged_verdicts_file_is_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "verdicts.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        ReplayJudge(path)


def test_replay_judge_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs inner="):
        ReplayJudge(tmp_path / "v.json", mode="record")
    with pytest.raises(ValueError, match="mode must be 'replay' or 'record'"):
        ReplayJudge(tmp_path / "v.json", mode="live")  # type: ignore[arg-type]


def test_record_refuses_a_judge_that_returns_no_verdict(tmp_path: Path) -> None:
    def sloppy(metric_name: str, sample: Sample, prompt: str, /) -> Any:
        return 0.5

    judge = ReplayJudge(tmp_path / "v.json", inner=sloppy, mode="record")
    assert evaluate("judge_score", SAMPLE, judge=judge).error == (
        "the judge returned float, expected a Verdict"
    )
