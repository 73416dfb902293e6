"""Built-in deterministic metrics: text, numbers, JSON, budgets. Offline, scores in 0..1.

Text metrics compare `as_text` of the response and the ground truth. Where a ground truth is
a list or tuple, it holds acceptable answers and the best score counts (as SQuAD does).
Formulas and examples: ``docs/reference/metrics.md``.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Sequence
from numbers import Real
from typing import Any
from typing import Literal

from pytest_qbench.evaluation.registry import MetricError
from pytest_qbench.evaluation.registry import MissingField
from pytest_qbench.evaluation.registry import metric
from pytest_qbench.evaluation.sample import Sample
from pytest_qbench.evaluation.sample import Verdict
from pytest_qbench.evaluation.sample import as_text
from pytest_qbench.evaluation.schema_check import SchemaError
from pytest_qbench.evaluation.schema_check import validate


# ---------------------------------------------------------------- text


def references(ground_truth: Any) -> list[str]:
    """The acceptable answers: each item of a list or tuple, else the one ground truth."""
    if isinstance(ground_truth, (list, tuple)):
        if not ground_truth:
            raise MetricError("ground_truth is an empty list; give at least one answer")
        return [as_text(item) for item in ground_truth]
    return [as_text(ground_truth)]


def best_of(sample: Sample, score: Callable[[str, str], float]) -> float:
    """The best ``score(response, reference)`` over the sample's references."""
    response = as_text(sample.response)
    return max(score(response, reference) for reference in references(sample.ground_truth))


def _fold(text: str, *, ignore_case: bool, normalize_whitespace: bool) -> str:
    if normalize_whitespace:
        text = " ".join(text.split())
    return text.casefold() if ignore_case else text


@metric("exact_match", needs=("response", "ground_truth"))
def exact_match(
    sample: Sample, *, ignore_case: bool = False, normalize_whitespace: bool = True
) -> float:
    """1 when the response equals the ground truth (or one of them), else 0."""

    def equal(response: str, reference: str) -> float:
        options = {"ignore_case": ignore_case, "normalize_whitespace": normalize_whitespace}
        return float(_fold(response, **options) == _fold(reference, **options))

    return best_of(sample, equal)


@metric("contains", needs=("response",))
def contains(
    sample: Sample,
    *,
    substrings: str | Sequence[str] | None = None,
    mode: Literal["all", "any"] = "all",
    ignore_case: bool = False,
) -> Verdict:
    """1 when the response contains all (or any) of the substrings, else 0."""
    if mode not in ("all", "any"):
        raise MetricError(f"contains: mode must be 'all' or 'any', given: {mode!r}")
    wanted = substrings if substrings is not None else sample.ground_truth
    if wanted is None:
        raise MissingField("ground_truth", "the substrings= param")
    items = wanted if isinstance(wanted, (list, tuple)) else [wanted]
    needles = [as_text(item) for item in items]
    if not needles:
        raise MetricError("contains: no substrings to look for")
    response = _fold(as_text(sample.response), ignore_case=ignore_case, normalize_whitespace=False)
    found = [
        _fold(n, ignore_case=ignore_case, normalize_whitespace=False) in response for n in needles
    ]
    passed = all(found) if mode == "all" else any(found)
    missing = [n for n, ok in zip(needles, found, strict=True) if not ok]
    return Verdict(float(passed), reason=f"missing: {missing!r}" if missing else None)


_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


@metric("regex", needs=("response",))
def regex(
    sample: Sample,
    *,
    pattern: str | None = None,
    flags: str = "",
    match: Literal["search", "match", "fullmatch"] = "search",
) -> float:
    """1 when the pattern (the param, else the ground truth) matches the response, else 0."""
    source = pattern if pattern is not None else sample.ground_truth
    if source is None:
        raise MissingField("ground_truth", "the pattern= param")
    if not isinstance(source, str):
        raise MetricError(f"regex: the pattern must be a str, given: {type(source).__name__}")
    if match not in ("search", "match", "fullmatch"):
        raise MetricError(
            f"regex: match must be 'search', 'match' or 'fullmatch', given: {match!r}"
        )
    compiled = _compile(source, flags)
    return float(getattr(compiled, match)(as_text(sample.response)) is not None)


def _compile(pattern: str, flags: str) -> re.Pattern[str]:
    bits = 0
    for flag in flags:
        if flag not in _REGEX_FLAGS:
            raise MetricError(f"regex: unknown flag {flag!r}; flags: {''.join(_REGEX_FLAGS)}")
        bits |= _REGEX_FLAGS[flag]
    try:
        return re.compile(pattern, bits)
    except re.error as exc:
        raise MetricError(f"regex: invalid pattern {pattern!r}: {exc}") from None


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def squad_tokens(text: str) -> list[str]:
    """SQuAD's answer normalisation: lower case, no ASCII punctuation, no articles (a, an,
    the), split on white space."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def token_f1_score(response: str, reference: str) -> float:
    """SQuAD token F1 of two texts; 1 when both normalise to nothing."""
    predicted, expected = squad_tokens(response), squad_tokens(reference)
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


@metric("token_f1", needs=("response", "ground_truth"))
def token_f1(sample: Sample) -> float:
    """SQuAD-style token F1 between the response and the ground truth."""
    return best_of(sample, token_f1_score)


_WORD = re.compile(r"\w+")


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence, bit-parallel (Crochemore et al., 2001).

    One Python big integer holds a row of the table, so the work is len(b) integer operations
    on len(a)-bit numbers: O(len(a) * len(b) / 64) machine steps, O(len(a)) memory.
    """
    if not a or not b:
        return 0
    masks: dict[Hashable, int] = {}
    for i, item in enumerate(a):
        masks[item] = masks.get(item, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for item in b:
        matches = row & masks.get(item, 0)
        row = ((row + matches) | (row - matches)) & full
    return len(a) - row.bit_count()


def rouge_l_score(response: str, reference: str, beta: float = 1.0) -> float:
    """ROUGE-L F-measure on lower-cased word tokens (Lin, 2004); 1 when both have no words."""
    candidate, expected = _WORD.findall(response.lower()), _WORD.findall(reference.lower())
    if not candidate or not expected:
        return float(candidate == expected)
    lcs = lcs_length(candidate, expected)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(candidate), lcs / len(expected)
    return (1 + beta**2) * precision * recall / (recall + beta**2 * precision)


@metric("rouge_l", needs=("response", "ground_truth"))
def rouge_l(sample: Sample, *, beta: float = 1.0) -> float:
    """ROUGE-L F-measure (longest common subsequence of words) against the ground truth."""
    if not (isinstance(beta, (int, float)) and beta > 0):
        raise MetricError(f"rouge_l: beta must be a positive number, given: {beta!r}")
    return best_of(sample, lambda response, reference: rouge_l_score(response, reference, beta))


def levenshtein_distance(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions), bit-parallel (Myers 1999, in
    Hyyrö's form for global distance): O(len(a) * len(b) / 64) steps, O(len(a)) memory."""
    if len(a) < len(b):
        a, b = b, a  # the longer text goes in the bit vectors: fewer Python-level steps
    if not b:
        return len(a)
    peq: dict[str, int] = {}
    for i, char in enumerate(a):
        peq[char] = peq.get(char, 0) | (1 << i)
    mask, high = (1 << len(a)) - 1, 1 << (len(a) - 1)
    plus, minus, distance = mask, 0, len(a)
    for char in b:
        eq = peq.get(char, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        hplus = minus | (~(xh | plus) & mask)
        hminus = plus & xh
        distance += 1 if hplus & high else -1 if hminus & high else 0
        hplus = ((hplus << 1) | 1) & mask
        hminus = (hminus << 1) & mask
        plus = hminus | (~(xv | hplus) & mask)
        minus = hplus & xv
    return distance


@metric("levenshtein_similarity", needs=("response", "ground_truth"))
def levenshtein_similarity(
    sample: Sample, *, ignore_case: bool = False, max_length: int = 100_000
) -> float:
    """1 - edit distance / length of the longer text; 1 when both are empty."""

    def similarity(response: str, reference: str) -> float:
        if ignore_case:  # before measuring: case folding may lengthen a text ("ß" -> "ss")
            response, reference = response.casefold(), reference.casefold()
        longest = max(len(response), len(reference))
        if longest > max_length:
            raise MetricError(
                f"levenshtein_similarity: a text has {longest} characters, more than "
                f"max_length={max_length}; raise max_length= to compare it"
            )
        if longest == 0:
            return 1.0
        return 1 - levenshtein_distance(response, reference) / longest

    return best_of(sample, similarity)


# ---------------------------------------------------------------- numbers

_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)


def parse_number(value: object, pick: Literal["first", "last", "only"] = "last") -> float:
    """A number from a number, or from text (``"about 1,234.5 km"`` gives 1234.5).

    Text may hold several numbers; ``pick`` chooses the first, the last, or requires exactly
    one. `MetricError` when there is none.
    """
    if isinstance(value, Real) and not isinstance(value, bool):
        return _finite(float(value), value)
    found = _NUMBER.findall(as_text(value))
    if not found:
        raise MetricError(f"no number in {_preview(value)}")
    if pick == "only" and len(found) > 1:
        raise MetricError(f"{len(found)} numbers in {_preview(value)}, expected one")
    chosen = found[0] if pick == "first" else found[-1]
    return _finite(float(chosen.replace(",", "")), value)


def _finite(number: float, value: object) -> float:
    if not math.isfinite(number):
        raise MetricError(f"not a finite number: {_preview(value)}")
    return number


def _preview(value: object, limit: int = 80) -> str:
    text = as_text(value)
    return repr(text if len(text) <= limit else text[:limit] + "...")


@metric("numeric_closeness", needs=("response", "ground_truth"))
def numeric_closeness(
    sample: Sample,
    *,
    rel_tol: float = 1e-9,
    abs_tol: float = 0.0,
    pick: Literal["first", "last", "only"] = "last",
) -> Verdict:
    """1 when |response - ground truth| <= max(rel_tol * |ground truth|, abs_tol), else 0."""
    if pick not in ("first", "last", "only"):
        raise MetricError(
            f"numeric_closeness: pick must be 'first', 'last' or 'only', given: {pick!r}"
        )
    if not all(isinstance(t, (int, float)) and t >= 0 for t in (rel_tol, abs_tol)):
        raise MetricError("numeric_closeness: rel_tol and abs_tol must be non-negative numbers")
    actual, expected = parse_number(sample.response, pick), parse_number(sample.ground_truth, pick)
    difference, tolerance = abs(actual - expected), max(rel_tol * abs(expected), abs_tol)
    close = difference <= tolerance
    reason = (
        None if close else f"|{actual:g} - {expected:g}| = {difference:g} > tolerance {tolerance:g}"
    )
    return Verdict(float(close), reason=reason)


# ---------------------------------------------------------------- JSON

_FENCE = re.compile(r"\A\s*```[\w+-]*[ \t]*\n(.*?)\n?[ \t]*```\s*\Z", re.DOTALL)


def parse_json(value: object, *, allow_code_fence: bool = False) -> Any:
    """The JSON value of a response: a str is parsed (strictly: no NaN or Infinity), anything
    else must be JSON-serialisable and is returned as is. ``ValueError`` when it is not JSON."""
    if not isinstance(value, str):
        json.dumps(value, allow_nan=False)  # raises TypeError or ValueError
        return value
    if allow_code_fence and (fenced := _FENCE.match(value)):
        value = fenced.group(1)
    return json.loads(value, parse_constant=_reject_constant)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@metric("json_valid", needs=("response",))
def json_valid(sample: Sample, *, allow_code_fence: bool = False) -> Verdict:
    """1 when the response is valid JSON, else 0 (the reason says where parsing failed)."""
    try:
        parse_json(sample.response, allow_code_fence=allow_code_fence)
    except (TypeError, ValueError) as exc:
        return Verdict(0.0, reason=f"not JSON: {exc}")
    return Verdict(1.0)


@metric("json_schema", needs=("response",))
def json_schema(
    sample: Sample, *, schema: dict[str, Any] | bool, allow_code_fence: bool = False
) -> Verdict:
    """1 when the response is JSON that conforms to ``schema`` (a JSON Schema), else 0."""
    try:
        instance = parse_json(sample.response, allow_code_fence=allow_code_fence)
    except (TypeError, ValueError) as exc:
        return Verdict(0.0, reason=f"not JSON: {exc}")
    try:
        problem = validate(instance, schema)
    except SchemaError as exc:
        raise MetricError(f"json_schema: {exc}") from None
    return Verdict(0.0 if problem else 1.0, reason=problem)


# ---------------------------------------------------------------- budgets

Over = Literal["ratio", "zero"]


def budget_score(used: float, budget: float, over: Over, name: str) -> Verdict:
    """1 within budget; over it, budget / used (``over="ratio"``) or 0 (``over="zero"``)."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
        raise MetricError(f"{name}: the budget must be a positive number, given: {budget!r}")
    if over not in ("ratio", "zero"):
        raise MetricError(f"{name}: over must be 'ratio' or 'zero', given: {over!r}")
    if used <= budget:
        return Verdict(1.0)
    return Verdict(
        budget / used if over == "ratio" else 0.0, reason=f"{used:g} > budget {budget:g}"
    )


@metric("latency_budget", needs=("latency_ms",))
def latency_budget(sample: Sample, *, budget_ms: float, over: Over = "ratio") -> Verdict:
    """1 when latency_ms <= budget_ms; over budget, budget_ms / latency_ms (or 0)."""
    assert sample.latency_ms is not None  # the registry checks needs
    return budget_score(sample.latency_ms, budget_ms, over, "latency_budget")


@metric("cost_budget", needs=("cost",))
def cost_budget(sample: Sample, *, budget: float, over: Over = "ratio") -> Verdict:
    """1 when cost <= budget; over budget, budget / cost (or 0)."""
    assert sample.cost is not None
    return budget_score(sample.cost, budget, over, "cost_budget")


@metric("token_budget", needs=("tokens",))
def token_budget(sample: Sample, *, budget: int, over: Over = "ratio") -> Verdict:
    """1 when tokens <= budget; over budget, budget / tokens (or 0)."""
    assert sample.tokens is not None
    return budget_score(sample.tokens, budget, over, "token_budget")
