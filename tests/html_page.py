"""Reading a written HTML report back: its elements (with html.parser), its CSP, its data."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from dataclasses import field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    text: str = ""


@dataclass
class ParsedPage:
    """Every start tag, the text of each script and style, the CSP and the embedded data."""

    source: str
    tags: list[Element] = field(default_factory=list)
    scripts: list[Element] = field(default_factory=list)
    styles: list[Element] = field(default_factory=list)

    @property
    def csp(self) -> str:
        metas = [
            t.attrs.get("content") or ""
            for t in self.tags
            if t.tag == "meta" and t.attrs.get("http-equiv") == "Content-Security-Policy"
        ]
        assert len(metas) == 1, metas
        return metas[0]

    @property
    def data(self) -> dict[str, Any]:
        blocks = [s for s in self.scripts if s.attrs.get("id") == "qbench-data"]
        assert len(blocks) == 1
        assert blocks[0].attrs.get("type") == "application/json"
        loaded: dict[str, Any] = json.loads(blocks[0].text)
        return loaded

    def nodeids(self) -> list[str]:
        d = self.data
        return [d["files"][f] + r for f, r in zip(d["f"], d["r"], strict=True)]

    def detail_of(self, suffix: str) -> dict[str, Any]:
        """The detail object of the one row whose node id ends with ``suffix``."""
        rows = [i for i, n in enumerate(self.nodeids()) if n.endswith(suffix)]
        assert len(rows) == 1, self.nodeids()
        found: dict[str, Any] = self.data["x"].get(str(rows[0]), {})
        return found

    def outcome_counts(self) -> dict[str, int]:
        d = self.data
        counts = dict.fromkeys(d["oc"], 0)
        for code in d["o"]:
            counts[d["oc"][code]] += 1
        for codes in d["a"].values():
            for code in codes:
                counts[d["oc"][code]] += 1
        return counts

    def by_id(self, element_id: str) -> Element | None:
        return next((t for t in self.tags if t.attrs.get("id") == element_id), None)

    def charts(self) -> list[str]:
        return [
            str(t.attrs.get("data-chart"))
            for t in self.tags
            if t.tag == "svg" and "data-chart" in t.attrs
        ]


class _Parser(HTMLParser):
    def __init__(self, page: ParsedPage) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.open: Element | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.page.tags.append(element)
        if tag in ("script", "style"):
            self.open = element
            (self.page.scripts if tag == "script" else self.page.styles).append(element)

    def handle_data(self, data: str) -> None:
        if self.open is not None:
            self.open.text += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.open = None


def parse_page(path_or_text: Path | str) -> ParsedPage:
    """Parse a page (a path, or its text)."""
    text = (
        path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    )
    page = ParsedPage(text)
    parser = _Parser(page)
    parser.feed(text)
    parser.close()
    return page


def sha256_source(text: str) -> str:
    """The CSP source that allows an inline block of ``text``."""
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "html"


def check_page_is_self_contained(page: ParsedPage) -> None:
    """The page's own script and style only, allowed by their hashes; nothing from the network."""
    csp = page.csp
    assert "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "img-src data:" in csp
    executable = [s for s in page.scripts if s.attrs.get("type") != "application/json"]
    assert len(executable) == 1
    assert executable[0].text == (TEMPLATES / "report.js").read_text(encoding="utf-8")
    assert f"script-src {sha256_source(executable[0].text)};" in csp
    assert len(page.styles) == 1
    assert f"style-src {sha256_source(page.styles[0].text)};" in csp
    assert "http://" not in page.source and "https://" not in page.source
    for element in page.tags:
        assert "src" not in element.attrs or element.tag == "img"
        assert not any(name.startswith("on") for name in element.attrs), element
        assert "style" not in element.attrs, element  # the CSP refuses inline style attributes
