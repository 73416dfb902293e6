"""Debian's Chromium driven by Playwright, for the HTML report's tests (a pytest plugin of
tests/conftest.py).

The ``page`` fixture opens a new page in one headless Chromium per test module (and xdist worker).
It uses the system's browser (``/usr/bin/chromium``, or ``$QBENCH_CHROMIUM``) through Playwright's
``executable_path``: no browser is downloaded. Chromium is started without the background
services that reach for the network (this machine has none). Without the browser or the
``playwright`` package, the tests that need it are skipped, saying so; ``.ci/run`` installs
Debian's ``chromium`` when it is missing.

Every page records its console errors (a Content-Security-Policy violation is one), uncaught page
errors, dialogs and requests for anything but ``file:``, ``data:`` and ``about:`` URLs
(``page_log``): a report's page must show none, and an XSS payload that ran would show as a
dialog.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest


if TYPE_CHECKING:
    from playwright.sync_api import Browser
    from playwright.sync_api import Page


CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
"""Headless, as root, and none of the background connections this closed network refuses."""


def chromium_path() -> str | None:
    """The system Chromium: ``$QBENCH_CHROMIUM``, ``/usr/bin/chromium`` or one on ``PATH``."""
    configured = os.environ.get("QBENCH_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageLog:
    """What a page said while a test used it."""

    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Every console error, uncaught page error, dialog and request off the disk, in that
        order."""
        return [
            *self.console_errors,
            *self.page_errors,
            *(f"dialog: {d}" for d in self.dialogs),
            *(f"request: {url}" for url in self.requests),
        ]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the test module; skips when Chromium or Playwright is missing.

    Module, not session: while Playwright's sync API is started, its asyncio loop counts as
    running in this thread, so ``asyncio.run`` in any later test of the same process (the MCP
    server's tests) would fail with "Already running asyncio in this thread"."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium: install Debian's chromium (or set QBENCH_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("no playwright: pip install playwright (no browser download is needed)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page_log() -> PageLog:
    """The console errors, page errors and dialogs of the test's ``page``."""
    return PageLog()


@pytest.fixture
def page(browser: Browser, page_log: PageLog) -> Iterator[Page]:
    """A new page (its own context) whose console errors, dialogs and requests go to
    ``page_log``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    new_page = context.new_page()
    new_page.on("console", lambda msg: _log_console(page_log, msg))
    new_page.on("pageerror", lambda exc: page_log.page_errors.append(str(exc)))
    new_page.on("dialog", lambda dialog: _log_dialog(page_log, dialog))
    new_page.on("request", lambda request: _log_request(page_log, request.url))
    try:
        yield new_page
    finally:
        context.close()


def _log_console(log: PageLog, message: Any) -> None:
    if message.type == "error":
        log.console_errors.append(message.text)


def _log_dialog(log: PageLog, dialog: Any) -> None:
    log.dialogs.append(f"{dialog.type}: {dialog.message}")
    dialog.dismiss()


def _log_request(log: PageLog, url: str) -> None:
    if not url.startswith(("file:", "data:", "about:")):
        log.requests.append(url)
