"""LLM-as-judge: the `Judge` protocol, the `ReplayJudge` and the built-in judge metrics.

A judge is any callable ``judge(metric_name, sample, prompt) -> Verdict``; the score is in 0..1.
Judge metrics (``kind="judge"``) receive it as ``judge=``; with no judge they are skipped, so
nothing reaches the network unless a test configures a judge.

`ReplayJudge` keeps verdicts in a JSON file committed next to the tests: record once with a real
judge, then replay offline in CI.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any
from typing import Literal
from typing import final

from pytest_qbench.core import atomic
from pytest_qbench.evaluation.registry import MetricError
from pytest_qbench.evaluation.registry import metric
from pytest_qbench.evaluation.sample import Judge as Judge
from pytest_qbench.evaluation.sample import Sample
from pytest_qbench.evaluation.sample import Verdict
from pytest_qbench.evaluation.sample import as_text


ReplayMode = Literal["replay", "record"]

VERDICTS_FORMAT = "pytest-qbench-verdicts"
VERDICTS_VERSION = 1


def verdict_key(metric_name: str, prompt: str, sample: Sample) -> str:
    """The stable key of a verdict: a hash of the metric, the prompt, and the sample's input,
    response and ground truth (as sorted JSON; other values through ``str``)."""
    material = [metric_name, prompt, sample.input, sample.response, sample.ground_truth]
    text = json.dumps(
        material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@final
class ReplayJudge:
    """A judge that replays verdicts stored in a JSON file, or records them from ``inner``.

    ``mode="replay"`` (the default, for CI) answers from the file only: a sample with no stored
    verdict is an evaluation error "no recorded verdict for ...; re-record with a real judge",
    and nothing else is called. ``mode="record"`` asks ``inner`` every time and writes the file
    after each verdict (atomically, with `pytest_qbench.core.atomic`: a temporary file, then
    ``os.replace``), keys sorted, so the file is stable across runs and diffs well.

    Raises ``ValueError`` for an unknown mode, record mode without ``inner``, or a file that is
    not a verdicts file.
    """

    def __init__(
        self, path: str | os.PathLike[str], inner: Judge | None = None, mode: ReplayMode = "replay"
    ) -> None:
        if mode not in ("replay", "record"):
            raise ValueError(f"ReplayJudge mode must be 'replay' or 'record', given: {mode!r}")
        if mode == "record" and inner is None:
            raise ValueError("ReplayJudge(mode='record') needs inner=, the real judge to record")
        self.path = Path(path)
        self.inner = inner
        self.mode = mode
        self._lock = threading.Lock()
        self._verdicts = read_verdicts(self.path)

    def __call__(self, metric_name: str, sample: Sample, prompt: str, /) -> Verdict:
        """The stored verdict (replay) or the inner judge's, stored (record)."""
        key = verdict_key(metric_name, prompt, sample)
        if self.mode == "replay":
            return self._replay(key, metric_name)
        assert self.inner is not None
        verdict = self.inner(metric_name, sample, prompt)
        if not isinstance(verdict, Verdict):
            raise MetricError(f"the judge returned {type(verdict).__name__}, expected a Verdict")
        with self._lock:
            self._verdicts[key] = {
                "metric": metric_name,
                "score": verdict.score,
                "reason": verdict.reason,
                "model": verdict.model,
            }
            write_verdicts(self.path, self._verdicts)
        return verdict

    def _replay(self, key: str, metric_name: str) -> Verdict:
        stored = self._verdicts.get(key)
        if stored is None:
            raise MetricError(
                f"no recorded verdict for metric {metric_name!r} (key {key}) in {self.path}; "
                "re-record with a real judge: ReplayJudge(path, inner=judge, mode='record')"
            )
        return Verdict(stored["score"], reason=stored.get("reason"), model=stored.get("model"))


def read_verdicts(path: Path) -> dict[str, dict[str, Any]]:
    """The verdicts stored at ``path`` by key (none when the file does not exist)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ValueError(f"{path}: not a verdicts file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != VERDICTS_FORMAT:
        raise ValueError(f'{path}: not a verdicts file (no "format": "{VERDICTS_FORMAT}")')
    if data.get("version") != VERDICTS_VERSION:
        raise ValueError(
            f"{path}: verdicts file version {data.get('version')!r}, expected {VERDICTS_VERSION}"
        )
    verdicts = data.get("verdicts")
    if not isinstance(verdicts, dict):
        raise ValueError(f'{path}: "verdicts" must be an object')
    for key, stored in verdicts.items():
        _check_stored(path, key, stored)
    return verdicts


def _check_stored(path: Path, key: str, stored: object) -> None:
    valid = (
        isinstance(stored, dict)
        and isinstance(stored.get("score"), (int, float))
        and not isinstance(stored.get("score"), bool)
        and all(isinstance(stored.get(f), (str, type(None))) for f in ("reason", "model", "metric"))
    )
    if not valid:
        raise ValueError(
            f'{path}: verdict {key!r} must be {{"score": number, "reason": str|null, "model": str|null}}'
        )


def write_verdicts(path: Path, verdicts: dict[str, dict[str, Any]]) -> None:
    """Write the verdicts file atomically (`pytest_qbench.core.atomic.write_text_atomic`: a
    temporary file beside it, then ``os.replace``), as readable as any new file."""
    data = {"format": VERDICTS_FORMAT, "version": VERDICTS_VERSION, "verdicts": verdicts}
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic.write_text_atomic(path, text)


def render_prompt(template: str, sample: Sample) -> str:
    """The prompt with ``{input}``, ``{response}`` and ``{ground_truth}`` filled in (other braces
    are left alone, so a prompt may show JSON)."""
    for name in ("input", "response", "ground_truth"):
        value = getattr(sample, name)
        template = template.replace("{" + name + "}", "" if value is None else as_text(value))
    return template


DEFAULT_JUDGE_PROMPT = (
    "Rate the response from 0 (unacceptable) to 1 (excellent).\n\n"
    "Input:\n{input}\n\nResponse:\n{response}\n\nExpected (may be empty):\n{ground_truth}"
)
RELEVANCE_PROMPT = (
    "Rate from 0 (off topic) to 1 (fully answers it) how relevant the response is to the "
    "input.\n\nInput:\n{input}\n\nResponse:\n{response}"
)


@metric("judge_score", needs=("response",), kind="judge")
def judge_score(
    sample: Sample, *, judge: Judge, custom_prompt: str = DEFAULT_JUDGE_PROMPT
) -> Verdict:
    """The judge's 0..1 score for ``custom_prompt`` (with ``{input}``, ``{response}``,
    ``{ground_truth}`` filled in)."""
    return judge("judge_score", sample, render_prompt(custom_prompt, sample))


@metric("answer_relevance", needs=("input", "response"), kind="judge")
def answer_relevance(sample: Sample, *, judge: Judge) -> Verdict:
    """The judge's 0..1 rating of how relevant the response is to the input."""
    return judge("answer_relevance", sample, render_prompt(RELEVANCE_PROMPT, sample))
