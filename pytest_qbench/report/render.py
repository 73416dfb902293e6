"""Rendering reports with Jinja templates: ``render(report, template) -> str``.

Templates are looked up in the user's template directory first, then among the built-ins
(``report.md.j2``, ``summary.md.j2``). A template receives:

``report``
    the ``TestReport`` (``report.results`` may be empty during a live run: use ``results``);
``results``
    an iterable over every ``TestResult`` (read lazily from the run's stream during a live run);
``summary``
    ``report.summary``;
``view``
    bounded selections for concise reports: ``view.failures.items``/``.total``/``.omitted``,
    ``view.errors``, ``view.xfailed``, ``view.xpassed``, ``view.flaky``, ``view.skip_groups``
    (``reason``, ``count``, ``example``), ``view.skip_groups_omitted``, ``view.slowest``,
    ``view.agents`` (tests with agent-evaluation results), ``view.attached`` (tests with
    attachments);
``max_items``
    the cap on listed items;
``green``
    whether the run is green (`pytest_qbench.report.verdict.run_green`: the built-in headline's
    ✅ or ❌);
``reasons``
    why it is not (`pytest_qbench.report.verdict.red_reasons`, empty when green): each has a
    ``kind`` (``tests``, ``interrupted``, ``incomplete``, ``coverage``, ``gate``,
    ``exit_code``, ``undecided``: qbench erred while deciding) and a ``text`` in plain words
    (escape it: ``md_text``);
``recording_errors``
    what qbench failed to record of the run (empty nearly always: then the report is whole);
``incomplete``
    the sentence that says so and names the fix ("" when the report is whole).

Filters: ``md_text``, ``md_code``, ``md_cell``, ``md_fence``, ``duration``, ``tojson``, ``clean``,
``summary_parts`` (``summary | summary_parts``: the counts in the words of pytest's closing line),
``collected_text`` (``collected | collected_text(deselected)``: its ``--collect-only`` line),
``rate`` (``97.5%``: a pass rate, never ``100.0%`` short of 100),
``score_pair`` (``score | score_pair(threshold)``: both with 2 decimals, more when needed to tell
them apart), ``without_message`` (``trace | without_message(error_type, error_message)``: the
traceback without its copy of a long message), ``where`` (``failure | where(result)``: where a
failure or a teardown's happened, ``file:line``, as the digest says it), ``run_duration``
(``summary.duration | run_duration(report.run)``: ``at least 0.29s (it died; when is unknown)``
for a run whose process died before its session's end, else ``duration``'s).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.errors import TemplateError
from pytest_qbench.core.markdown import clean
from pytest_qbench.core.markdown import died_unseen
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.markdown import md_cell
from pytest_qbench.core.markdown import md_code
from pytest_qbench.core.markdown import md_fence
from pytest_qbench.core.markdown import md_text
from pytest_qbench.core.markdown import run_duration_text
from pytest_qbench.core.summary_words import collected_text
from pytest_qbench.core.summary_words import rate_text
from pytest_qbench.core.summary_words import summary_parts
from pytest_qbench.core.text import failure_where
from pytest_qbench.core.text import trace_without_message
from pytest_qbench.report import precompiled
from pytest_qbench.report.aggregate import DEFAULT_MAX_ITEMS
from pytest_qbench.report.aggregate import ReportView
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.aggregate import as_record
from pytest_qbench.report.shapes import Record
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.verdict import verdict_of


if TYPE_CHECKING:
    import jinja2


MARKDOWN_TEMPLATE = "report.md.j2"
HTML_TEMPLATE = "report.html.j2"
"""The HTML report's template (``report/html/``)."""


def builtin_template_dir() -> Path:
    """The built-in templates: inside the installed package, or the checkout's ``templates/``."""
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parents[2] / "templates"


def make_environment(template_dir: Path | None = None) -> jinja2.Environment:
    """A Jinja environment: the user's directory first, then the built-ins; strict undefined."""
    import jinja2

    from pytest_qbench.report.template_cache import bytecode_cache

    loaders: list[jinja2.BaseLoader] = []
    if template_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(template_dir)))
    loaders.append(jinja2.FileSystemLoader(str(builtin_template_dir())))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=bytecode_cache("text"),
    )
    globals_, filters = additions()
    env.globals.update(globals_)
    env.filters.update(filters)
    return env


def additions() -> tuple[dict[str, Any], dict[str, Callable[..., Any]]]:
    """qbench's globals and filters, beside Jinja's own (`make_environment`; `precompiled`)."""
    return {"trace_fence": trace_fence}, dict(
        md_text=md_text,
        md_code=md_code,
        md_cell=md_cell,
        md_fence=md_fence,
        duration=format_duration,
        clean=clean,
        tojson=_tojson,
        when=_when,
        percent=_lazy(_COVERAGE_VIEW, "percent_text"),
        threshold=_lazy(_COVERAGE_VIEW, "threshold_text"),
        least_covered=_lazy(_COVERAGE_VIEW, "least_covered"),
        ranges=_lazy(_COVERAGE_VIEW, "short_ranges"),
        score_pair=_lazy("pytest_qbench.report.metric_text", "score_pair"),
        without_message=trace_without_message,
        where=failure_where,
        run_duration=run_duration,
        summary_parts=summary_parts,
        collected_text=collected_text,
        rate=rate_text,
    )


_COVERAGE_VIEW = "pytest_qbench.report.coverage.view"


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """A filter that imports its module when a template first uses it: a run without coverage
    or metrics does not import their texts (three modules)."""

    def use(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    use.__name__ = use.__qualname__ = name
    return use


PYTHON_TOOLS = frozenset({"pytest"})
"""Runners whose traces are Python's (fenced ``pytb``); any other runner's (vitest, jest, go...)
get a neutral ``text`` fence, so a viewer does not colour a JavaScript stack as Python."""


def trace_fence(report: Mapping[str, Any]) -> str:
    """The Markdown fence language of ``report``'s traces: ``pytb`` for pytest, else ``text``."""
    tools = str(report["run"]["tool"]).split("+")  # merged reports: "pytest+vitest"
    return "pytb" if all(tool in PYTHON_TOOLS for tool in tools) else "text"


def run_duration(seconds: float, run: Mapping[str, Any]) -> str:
    """The filter ``run_duration`` (report.md's and the HTML report's headline):
    ``summary.duration | run_duration(report.run)``."""
    died = died_unseen(bool(run["interrupted"]), run["exit_code"])
    return run_duration_text(seconds, died=died)


def _tojson(value: Any, indent: int | None = None) -> str:
    # Records are JSON already; the view's dataclasses, models and datetimes as in report.json.
    return json.dumps(value, indent=indent, default=_jsonable, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, datetime):
        return iso(value)
    return str(value)


def _when(value: Any, fmt: str = "%Y-%m-%d %H:%M:%S UTC") -> str:
    """A report timestamp (ISO text in records) formatted for people."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.strftime(fmt) if isinstance(value, datetime) else ""


def find_template(env: jinja2.Environment, template: str | Path) -> jinja2.Template:
    """Load a template: a ``Path`` is that file; a name comes from the lookup path (the user's
    template directory, then the built-ins), and only a name the lookup path lacks is read as a
    file. So a ``report.md.j2`` that happens to lie in the working directory never replaces the
    built-in one: an option's value that names a file is passed as a ``Path``
    (`template_option`).

    Raises:
        TemplateError: it does not exist or does not parse.
    """
    import jinja2

    try:
        if isinstance(template, Path):
            return _from_file(env, template)
        try:
            return env.get_template(template)
        except jinja2.TemplateNotFound:
            if not Path(template).is_file():
                raise
            return _from_file(env, Path(template))
    except jinja2.TemplateNotFound:
        raise TemplateError(
            f"template '{template}' not found; give a file path or put it in the template "
            f"directory (built-ins: {', '.join(sorted(list_builtin_templates()))})",
            slug="template-missing",
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(
            f"template '{template}' has a syntax error at line {exc.lineno}: {exc.message}",
            slug="template-syntax",
        ) from None


def _from_file(env: jinja2.Environment, path: Path) -> jinja2.Template:
    import jinja2

    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise jinja2.TemplateNotFound(str(path)) from None
    return env.from_string(text)


def template_option(value: str, base: Path | None = None) -> str | Path:
    """A template option's value (``--qbench-template``, ``qbench render --template``): the
    file it names, relative to ``base`` (the working directory), else a name to look up."""
    path = Path(value) if base is None else base / value
    return path if path.is_file() else value


def list_builtin_templates() -> list[str]:
    """Names of the built-in templates (not ``report.html.j2``: only ``render_html`` gives it
    its context, the CSP hashes and the embedded data)."""
    return sorted(p.name for p in builtin_template_dir().glob("*.j2") if p.name != HTML_TEMPLATE)


def template_context(
    report: Record, results: Iterable[Any], view: ReportView, max_items: int
) -> dict[str, Any]:
    """The variables a Markdown template sees (the module's docstring lists them)."""
    verdict = verdict_of(report)
    return {
        "report": report,
        "results": results,
        "summary": report["summary"],
        "view": view,
        "max_items": max_items,
        "green": verdict.green,
        "reasons": verdict.reasons,
        "recording_errors": verdict.recording_errors,
        "incomplete": verdict.incomplete,
    }


def render(
    report: Record | Any,
    template: str | Path = MARKDOWN_TEMPLATE,
    *,
    view: ReportView | None = None,
    results: Iterable[Record | Any] | None = None,
    env: jinja2.Environment | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> str:
    """Render ``report`` with ``template``: a pure function of its inputs.

    Args:
        report: The report: a ``TestReport`` or its record (``model_dump(mode="json")``).
        template: Template name (looked up first, see `find_template`) or path.
        view: Precomputed bounded selections; computed from ``results`` when omitted.
        results: Every result; ``report.results`` when omitted.
        env: A Jinja environment from ``make_environment``; built-ins only when omitted (then
            the built-in ``report.md.j2`` is rendered from its kept code when it can be:
            `report.precompiled`, no Jinja import).
        max_items: Cap on listed failures, errors, skips... when ``view`` is computed here.

    Raises:
        TemplateError: the template is missing or fails while rendering.
    """
    report = as_record(report)
    all_results: Iterable[Any] = report["results"] if results is None else results
    if view is None:
        if isinstance(all_results, Iterator):  # one pass only: the view would consume it
            all_results = list(all_results)
        view = aggregate(all_results, max_items=max_items).view()
    context = template_context(report, all_results, view, max_items)
    keep = False
    if env is None and template == MARKDOWN_TEMPLATE and "jinja2" not in sys.modules:
        text, keep = precompiled.render_builtin(
            template, builtin_template_dir(), additions, context
        )
        if text is not None:
            return text
    env = env or make_environment()
    tmpl = find_template(env, template)
    try:
        text = tmpl.render(**context)
    except Exception as exc:  # anything a template does wrong is the template's error
        raise TemplateError(
            f"template '{template}' failed: {type(exc).__name__}: {exc}", slug="template-render"
        ) from None
    if keep:
        precompiled.store(env, builtin_template_dir())
    return text
