"""Writing a finished report to its files: JSON, Markdown, digest, user templates, copies."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core import atomic
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.records import dataclass
from pytest_qbench.report import store
from pytest_qbench.report.aggregate import ReportView
from pytest_qbench.report.render import MARKDOWN_TEMPLATE
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render
from pytest_qbench.report.shapes import Record


if TYPE_CHECKING:
    import jinja2

    from pytest_qbench.report.ctrf import CtrfHistory
    from pytest_qbench.report.html.page import Page
    from pytest_qbench.report.html.trend import Trend
    from pytest_qbench.report.records import TestReportRecord
    from pytest_qbench.report.records import TestResultRecord


Write = Callable[[], Path]
"""Writes an output already rendered; returns its path."""


def _write_text(path: Path, text: str) -> Path:
    atomic.write_text_atomic(path, text)
    return path


class StreamResults:
    """Every result of a stream (then ``after``), parsed lazily on each pass: memory stays flat.

    ``patches`` (node id to fields) amends failed and errored results, as in ``report.json``.
    """

    def __init__(
        self,
        stream: Path,
        after: list[TestResultRecord] | None = None,
        patches: Mapping[str, Record] | None = None,
        check: bool = False,
    ) -> None:
        self.stream = stream
        self.after = after or []
        self.patches = patches
        self.check = check

    def __iter__(self) -> Iterator[TestResultRecord]:
        for raw in store.iter_result_json(self.stream, self.check):
            if self.patches:
                raw = store.patch_result_json(raw, self.patches)
            yield store.read_result(raw)
        yield from self.after

    def __len__(self) -> int:
        return sum(1 for _ in store.iter_result_json(self.stream, self.check)) + len(self.after)


# no __eq__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(eq=False, repr=False)
class OutputWriter:
    """Writes one report's outputs. ``stream`` holds the results when ``report.results`` is empty."""

    report: TestReportRecord
    stream: Path | None
    view: ReportView
    template_dir: Path | None
    max_items: int
    patches: Mapping[str, Record] | None = None
    """Fields to set on the stream's failed and errored results, by node id (their history)."""
    check: bool = False
    """The stream may hold a torn line (a failed write not taken back): parse what is spliced."""
    results_json: Sequence[str] | None = None
    """The compact JSON of ``report["results"]`` as read (a stream's lines), copied into
    ``report.json`` instead of dumping the results again."""

    def __post_init__(self) -> None:
        self._env: jinja2.Environment | None = None
        self._page: tuple[Path, Page] | None = None

    @property
    def env(self) -> jinja2.Environment:
        """The Jinja environment of this writer's templates, made (and Jinja imported) at first
        use: the built-in report.md alone is rendered without it when it can be."""
        if self._env is None:
            self._env = make_environment(self.template_dir)
        return self._env

    def _results(self) -> StreamResults | list[TestResultRecord]:
        results = self.report["results"]
        if self.stream is None:
            return results
        return StreamResults(self.stream, results, self.patches, self.check)

    def forget_rendered(self) -> None:
        """Render again from here on: the report changed (an output that failed is now in it)."""
        self._page = None

    def json(self, path: Path) -> Path:
        """``report.json``: the model, with the stream's results spliced in."""
        store.write_report_json(
            path, self.report, self.stream, self.patches, self.check, self.results_json
        )
        return path

    def markdown(self, path: Path) -> Path:
        """``report.md`` from the built-in (or the user's overriding) template."""
        return self.rendered_markdown(path)()

    def rendered_markdown(self, path: Path) -> Write:
        """``report.md`` rendered, to be written by the call returned."""
        return self.rendered_template(MARKDOWN_TEMPLATE, path)

    def rendered_template(self, template: str | Path, path: Path) -> Write:
        """Any template rendered, to be written to ``path`` by the call returned."""
        builtin = self.template_dir is None and template == MARKDOWN_TEMPLATE
        text = render(
            self.report,
            template,
            view=self.view,
            results=self._results(),
            env=None if builtin and self._env is None else self.env,
            max_items=self.max_items,
        )
        return partial(_write_text, path, text)

    def rendered_html(
        self, path: Path, trend: Trend | None = None, run_dir: Path | None = None
    ) -> Write:
        """The self-contained HTML page rendered, to be written to ``path`` by the call
        returned. ``run_dir`` holds the attachments (small ones embedded, others linked relative
        to ``path``), ``trend`` the last runs. The page is rendered once per writer: written
        again elsewhere, it is reused unless it links attachments from another directory."""
        page = self._page
        if page is None or (page[1].linked and page[0] != path.parent):
            page = (path.parent, self._html_page(path, trend, run_dir))
            self._page = page
        return partial(_write_text, path, page[1].text)

    def _html_page(self, path: Path, trend: Trend | None, run_dir: Path | None) -> Page:
        from pytest_qbench.report.html import build_page

        return build_page(
            self.report,
            self._results(),
            view=self.view,
            trend=trend,
            run_dir=run_dir,
            link_base=path.parent if str(path) != "-" else None,
            max_items=self.max_items,
        )

    def rendered_ctrf(self, path: Path, history: CtrfHistory | None = None) -> Write:
        """The CTRF document rendered, to be written by the call returned; ``history`` adds
        its insights and baseline."""
        from pytest_qbench.report.ctrf import render_ctrf

        return partial(_write_text, path, render_ctrf(self.report, self._results(), history))

    def nodeids(self) -> list[str]:
        """The node ids of the report's results."""
        return [str(result["nodeid"]) for result in self._results()]

    def rendered_digest(self, path: Path) -> Write:
        """The failure digest as JSON, to be written by the call returned."""
        from pytest_qbench.report.digest import build_digest  # only for --qbench-digest

        digest = build_digest(self.report, self.view)
        return partial(_write_text, path, json.dumps(digest, indent=2, ensure_ascii=False) + "\n")

    def rendered_step_summary(self, path: Path) -> Write:
        """The job summary rendered, to be appended to GitHub's ``$GITHUB_STEP_SUMMARY`` file by
        the call returned."""
        from pytest_qbench.report import github

        text = render(
            self.report,
            github.STEP_SUMMARY_TEMPLATE,
            view=self.view,
            results=self._results(),
            env=self.env,
            max_items=min(self.max_items, 20),
        )
        return partial(github.append_step_summary, path, text)

    def copy(self, source: Path, path: Path) -> Path:
        """An extra copy of a written file, itself written atomically."""
        if not source.is_file():
            raise QBenchError(f"{source.name} was not written, so there is nothing to copy")
        with source.open(encoding="utf-8") as src, atomic.atomic_writer(path) as dst:
            shutil.copyfileobj(src, dst)
        return path
