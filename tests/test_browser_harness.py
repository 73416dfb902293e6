"""The browser harness itself (tests/browser.py): the HTML report's XSS tests rely on it seeing
a script that ran (a dialog) and a console error, so it must see them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from browser import PageLog


if TYPE_CHECKING:
    from playwright.sync_api import Page


def test_harness_sees_dialogs_and_console_errors(
    page: Page, page_log: PageLog, tmp_path: Path
) -> None:
    html = tmp_path / "page.html"
    html.write_text(
        "<!doctype html><title>t</title><p id=p>hello</p>"
        "<script>alert('ran'); console.error('broken'); undefined_name();</script>",
        encoding="utf-8",
    )
    page.goto(html.as_uri())
    assert page.text_content("#p") == "hello"
    assert page_log.dialogs == ["alert: ran"]
    assert page_log.console_errors == ["broken"]
    assert len(page_log.page_errors) == 1 and "undefined_name" in page_log.page_errors[0]


def test_a_quiet_page_has_no_problems(page: Page, page_log: PageLog, tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_text("<!doctype html><title>t</title><p>quiet</p>", encoding="utf-8")
    page.goto(html.as_uri())
    assert page_log.problems() == []
