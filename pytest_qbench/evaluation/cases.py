"""HoloDeck-style ``agent.yaml`` case files: reading and checking them (no pytest; `qbench_cases`, in ``plugin/agent/cases.py``, makes them parameters).

A case file holds an agent (``agent: module:function``), default metrics
(``evaluations.metrics``: EvaluationMetric entries) and ``test_cases`` (name, input,
expected_tools, ground_truth, files, evaluations). `load_agent_file` reads it with PyYAML's safe
loader and checks every field; a problem raises `AgentFileError` naming the file, the line, the
field (``test_cases[2].evaluations[0].threshold``) and the fix. PyYAML is imported only here, when
a case file is read.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.evaluation.config import AgentConfigError
from pytest_qbench.evaluation.config import parse_entry


if TYPE_CHECKING:
    import yaml

TOP_KEYS = frozenset({"agent", "evaluations", "test_cases"})
"""Keys qbench reads; HoloDeck's others (name, model, instructions, tools...) are left alone."""
EVALUATIONS_KEYS = frozenset({"model", "metrics"})
CASE_KEYS = frozenset({"name", "input", "expected_tools", "ground_truth", "files", "evaluations"})
FILE_KEYS = frozenset({"path", "url", "type", "description", "pages", "sheet", "range", "cache"})
TEXT_TYPES = {"text": "text", "txt": "text", "markdown": "markdown", "md": "markdown"}
TEXT_TYPES |= {"csv": "csv", "json": "json"}
"""File types qbench reads and passes as text, by the name ``type:`` may give."""
TEXT_SUFFIXES = {".txt": "text", ".md": "markdown", ".markdown": "markdown"}
TEXT_SUFFIXES |= {".csv": "csv", ".json": "json"}
READABLE = "txt, md, csv, json"
__tracebackhide__ = True  # pytest hides these frames: the message names the file and the field
MAX_FILES = 10
"""HoloDeck's limit of files per test case."""


class AgentFileError(AgentConfigError):
    """A case file (``agent.yaml``) that cannot be read, or breaks the schema."""


@dataclass(frozen=True)
class CaseFile:
    """A text file given to the agent with a case."""

    path: str
    """The path as written in the case file."""
    resolved: Path
    """The path, resolved from the case file's directory."""
    type: str
    """``text``, ``markdown``, ``csv`` or ``json``."""
    description: str | None = None

    def read(self) -> str:
        """The file's text (UTF-8).

        Raises:
            AgentFileError: it cannot be read or is not UTF-8 text.
        """
        try:
            return self.resolved.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AgentFileError(
                f"cannot read file input {self.path} ({self.type}): {exc}; give a UTF-8 text file"
            ) from None


@dataclass(frozen=True)
class AgentCase:
    """One test case of a case file, checked."""

    name: str
    """The case's name: its pytest id."""
    input: str
    """What the agent is asked."""
    source: Path
    """The case file."""
    line: int | None = None
    """1-based line of the case in its file."""
    ground_truth: Any = None
    expected_tools: list[Any] | None = None
    files: tuple[CaseFile, ...] = ()
    metrics: tuple[Any, ...] = ()
    """The case's metric entries, as the ``qbench`` marker takes them."""

    def read_files(self) -> dict[str, str]:
        """Each file's text by its path as written, in the order given."""
        return {file.path: file.read() for file in self.files}

    def marker_kwargs(self) -> dict[str, Any]:
        """The ``@pytest.mark.qbench`` keywords of this case."""
        return {
            "metrics": list(self.metrics),
            "ground_truth": self.ground_truth,
            "expected_tools": self.expected_tools,
        }


@dataclass(frozen=True)
class AgentSuite:
    """A case file, checked."""

    path: Path
    agent: str | None
    """``module:function`` from the file's ``agent:`` key, when given."""
    agent_line: int | None
    cases: tuple[AgentCase, ...]


class _Where:
    """Builds messages that name the file, the line and the field."""

    def __init__(self, path: Path, shown: str, lines: dict[str, int]) -> None:
        self.path = path
        self.shown = shown
        self.lines = lines

    def at(self, field: str) -> str:
        """``file:line`` of ``field``, or of its closest parent in the file (a missing field)."""
        line = None
        while line is None and field:
            line = self.lines.get(field)
            field = field.rpartition(".")[0] if "." in field else field.rpartition("[")[0]
        return f"{self.shown}:{line}" if line else self.shown

    def error(self, field: str, problem: str) -> AgentFileError:
        return AgentFileError(f"{self.at(field)}: {field} {problem}")


def load_agent_file(path: str | Path, shown: str | None = None) -> AgentSuite:
    """Read and check a case file; ``shown`` is how messages name it (default: the path).

    Raises:
        AgentFileError: invalid YAML, or a field that breaks the schema.
    """
    path = Path(path)
    label = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentFileError(f"{label}: cannot read the case file: {exc}") from None
    data, lines = _parse_yaml(text, label)
    where = _Where(path, label, lines)
    if not isinstance(data, Mapping):
        raise AgentFileError(
            f"{label}: a case file must be a mapping with test_cases, given: "
            f"{type(data).__name__}; e.g. test_cases: [{{name: hello, input: Hi}}]"
        )
    agent = data.get("agent")
    if agent is not None and not isinstance(agent, str):
        raise where.error("agent", f"must be 'module:function', given: {agent!r}")
    defaults = _read_evaluations(data.get("evaluations"), where)
    cases = _read_cases(data.get("test_cases"), defaults, where)
    return AgentSuite(path, agent, lines.get("agent"), cases)


def _parse_yaml(text: str, label: str) -> tuple[Any, dict[str, int]]:
    """The document and the 1-based line of each field path (``test_cases[0].input``)."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        raise AgentFileError(
            f"{label}: reading case files needs PyYAML: pip install 'PyYAML>=6'"
        ) from None
    # SafeLoader is what yaml.safe_load uses (plain data only, no Python objects); the node
    # tree it composes first gives each field's line for the messages.
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{label}:{mark.line + 1}" if mark is not None else label
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise AgentFileError(f"{at}: invalid YAML: {problem}") from None
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    if node is not None:
        _index_lines(node, "", lines)
    return data, lines


def _index_lines(node: yaml.Node, prefix: str, lines: dict[str, int]) -> None:
    import yaml

    lines[prefix] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = f"{prefix}.{key.value}" if prefix else str(key.value)
            _index_lines(value, name, lines)
            lines[name] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            _index_lines(value, f"{prefix}[{i}]", lines)


def _unknown_keys(
    value: Mapping[Any, Any], known: frozenset[str], field: str, where: _Where
) -> None:
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        prefix = f"{field}." if field else ""
        raise where.error(
            f"{prefix}{unknown[0]}", f"is not a known field; use {', '.join(sorted(known))}"
        )


def _read_evaluations(value: object, where: _Where) -> dict[str, Any]:
    """The file's metric entries by name (``evaluations.metrics``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise where.error("evaluations", f"must be a mapping with metrics, given: {value!r}")
    _unknown_keys(value, EVALUATIONS_KEYS, "evaluations", where)
    model = value.get("model")
    if model is not None and not isinstance(model, str):
        raise where.error("evaluations.model", f"must be a model name (str), given: {model!r}")
    metrics = value.get("metrics") or []
    if not isinstance(metrics, list):
        raise where.error(
            "evaluations.metrics", f"must be a list of metric entries, given: {metrics!r}"
        )
    entries: dict[str, Any] = {}
    for i, entry in enumerate(metrics):
        field = f"evaluations.metrics[{i}]"
        entry = _with_model(entry, model)
        config = _check_entry(entry, field, where)
        if config in entries:
            raise where.error(f"{field}.metric", f"{config!r} is listed twice; keep one entry")
        entries[config] = entry
    return entries


def _with_model(entry: object, model: str | None) -> object:
    """HoloDeck's ``evaluations.model``: the default model of the judge metrics."""
    if model is None:
        return entry
    name = entry if isinstance(entry, str) else None
    if isinstance(entry, Mapping) and "model" not in entry:
        name = entry.get("metric") if isinstance(entry.get("metric"), str) else None
    if name is None:
        return entry
    from pytest_qbench.evaluation import MetricConfigError
    from pytest_qbench.evaluation import get

    try:
        spec = get(name)
    except MetricConfigError:
        return entry  # an unknown metric: _check_entry says so
    if spec.kind != "judge":
        return entry
    return {**(dict(entry) if isinstance(entry, Mapping) else {"metric": name}), "model": model}


def _check_entry(entry: object, field: str, where: _Where) -> str:
    """Check one metric entry; its metric's name."""
    try:
        config = parse_entry(entry, field)
    except AgentConfigError as exc:
        raise _located(str(exc), where) from None
    return config.metric


def _located(message: str, where: _Where) -> AgentFileError:
    """A message that starts with a field path (``test_cases[0].files[1]: ...``), with the
    file and the line of that field (or of its closest parent) in front."""
    path = message.split(" ", 1)[0].rstrip(":")
    return AgentFileError(f"{where.at(path)}: {message}")


def _read_cases(value: object, defaults: dict[str, Any], where: _Where) -> tuple[AgentCase, ...]:
    if not isinstance(value, list) or not value:
        raise where.error(
            "test_cases",
            f"must be a non-empty list of cases, given: {value!r}; "
            "e.g. test_cases: [{name: hello, input: Hi}]",
        )
    cases: list[AgentCase] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(value):
        case = _read_case(raw, i, defaults, where)
        if case.name in seen:
            raise where.error(
                f"test_cases[{i}].name",
                f"{case.name!r} is already the name of test_cases[{seen[case.name]}]; "
                "names are test ids and must differ",
            )
        seen[case.name] = i
        cases.append(case)
    return tuple(cases)


def _read_case(raw: object, i: int, defaults: dict[str, Any], where: _Where) -> AgentCase:
    field = f"test_cases[{i}]"
    if not isinstance(raw, Mapping):
        raise where.error(field, f"must be a mapping with input, given: {raw!r}")
    _unknown_keys(raw, CASE_KEYS, field, where)
    name = raw.get("name", f"case-{i + 1}")
    if not isinstance(name, (str, int)) or not str(name).strip() or "::" in str(name):
        raise where.error(
            f"{field}.name", f"must be a non-empty text without '::', given: {name!r}"
        )
    text = raw.get("input")
    if not isinstance(text, str) or not text.strip():
        raise where.error(
            f"{field}.input", f"must be a non-empty text (what the agent is asked), given: {text!r}"
        )
    return AgentCase(
        name=str(name).strip(),
        input=text,
        source=where.path,
        line=where.lines.get(field),
        ground_truth=raw.get("ground_truth"),
        expected_tools=_read_tools(raw.get("expected_tools"), f"{field}.expected_tools", where),
        files=_read_files(raw.get("files"), f"{field}.files", where),
        metrics=_read_case_metrics(raw.get("evaluations"), defaults, f"{field}.evaluations", where),
    )


def _read_tools(value: object, field: str, where: _Where) -> list[Any] | None:
    if value is None:
        return None
    from pytest_qbench.evaluation import normalize_tool_calls

    try:
        normalize_tool_calls(value, field)  # type: ignore[arg-type]  # checked by the call
    except ValueError as exc:
        raise _located(str(exc), where) from None
    assert isinstance(value, list)  # normalize_tool_calls accepted it, and YAML has no tuples
    return value


def _read_files(value: object, field: str, where: _Where) -> tuple[CaseFile, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.error(field, f"must be a list of files, given: {value!r}")
    if len(value) > MAX_FILES:
        raise where.error(field, f"has {len(value)} files; a case takes at most {MAX_FILES}")
    return tuple(_read_file(raw, f"{field}[{i}]", where) for i, raw in enumerate(value))


def _read_file(raw: object, field: str, where: _Where) -> CaseFile:
    if isinstance(raw, str):
        raw = {"path": raw}
    if not isinstance(raw, Mapping):
        raise where.error(field, f"must be a mapping with path and type, given: {raw!r}")
    _unknown_keys(raw, FILE_KEYS, field, where)
    if raw.get("url") is not None:
        raise where.error(
            f"{field}.url",
            f"is not read: qbench never reaches the network; download {raw['url']} next to the "
            "case file and give its path",
        )
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        raise where.error(f"{field}.path", f"must be a file path, given: {path!r}")
    kind = _file_type(path, raw.get("type"), field, where)
    for key in ("pages", "sheet", "range"):
        if raw.get(key) is not None:
            raise where.error(
                f"{field}.{key}", f"applies to pdf, office and excel files, not to {kind} files"
            )
    resolved = where.path.parent / path
    if not resolved.is_file():
        raise where.error(
            f"{field}.path", f"{path} does not exist (paths are relative to {where.shown})"
        )
    description = raw.get("description")
    return CaseFile(path, resolved, kind, description if isinstance(description, str) else None)


def _file_type(path: str, given: object, field: str, where: _Where) -> str:
    if given is None:
        kind = TEXT_SUFFIXES.get(Path(path).suffix.lower())
        if kind is None:
            raise where.error(
                field,
                f"{path}: unknown file type {Path(path).suffix or '(no suffix)'}; qbench passes "
                f"text files only ({READABLE}): convert it to text, or set type: text",
            )
        return kind
    kind = TEXT_TYPES.get(str(given).lower())
    if kind is None:
        raise where.error(
            f"{field}.type",
            f"{path} has type {given}; qbench passes text files only ({READABLE}): convert it "
            "to text (e.g. markdown) and give that file",
        )
    return kind


def _read_case_metrics(
    value: object, defaults: dict[str, Any], field: str, where: _Where
) -> tuple[Any, ...]:
    """The case's ``evaluations`` (names of the file's metrics, or entries), else the file's."""
    if value is None:
        return tuple(defaults.values())
    if not isinstance(value, list):
        raise where.error(field, f"must be a list of metric names or entries, given: {value!r}")
    entries = []
    for i, entry in enumerate(value):
        if isinstance(entry, str) and entry in defaults:
            entry = defaults[entry]
        _check_entry(entry, f"{field}[{i}]", where)
        entries.append(entry)
    return tuple(entries)


def call_signature_accepts_files(agent: object) -> bool:
    """Whether ``agent(input, files)`` binds (else the agent is called ``agent(input)``)."""
    try:
        inspect.signature(agent).bind("input", {})  # type: ignore[arg-type]
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): assume the full call
        return True
    return True


__all__ = [
    "AgentCase",
    "AgentFileError",
    "AgentSuite",
    "CaseFile",
    "load_agent_file",
]
