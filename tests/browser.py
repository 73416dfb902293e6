"""Debian's Chromium driven by Playwright, for the HTML report's tests (a pytest plugin of
tests/conftest.py).

The ``page`` fixture opens a new page in one headless Chromium per session (per xdist worker).
It uses the system's browser (``/usr/bin/chromium``, or ``$QBENCH_CHROMIUM``) through Playwright's
``executable_path``: no browser is downloaded. Chromium is started without the background
services that reach for the network (this machine has none). Without the browser or the
``playwright`` package, the tests that need it are skipped, saying so; ``.ci/run`` installs
Debian's ``chromium`` when it is missing.

Every page records its console errors and dialogs (``page_log``): a report's page must show
neither, and an XSS payload that ran would show as a dialog.
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

    def problems(self) -> list[str]:
        """Every console error, uncaught page error and dialog, in that order."""
        return [*self.console_errors, *self.page_errors, *(f"dialog: {d}" for d in self.dialogs)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per test module; skips when Chromium or Playwright is missing.

    Per module, not per session: Playwright's sync API keeps an asyncio loop running in the
    thread while it is open, and every later test of the worker that runs a loop of its own
    (``anyio.run``: the MCP client tests) would fail with "Already running asyncio"."""
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
    """A new page (its own context) whose console errors and dialogs go to ``page_log``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    new_page = context.new_page()
    new_page.on("console", lambda msg: _log_console(page_log, msg))
    new_page.on("pageerror", lambda exc: page_log.page_errors.append(str(exc)))
    new_page.on("dialog", lambda dialog: _log_dialog(page_log, dialog))
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
