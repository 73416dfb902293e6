"""Importing the server for stdio: uvicorn, which only the SDK's HTTP server uses, kept out.

The MCP SDK (mcp 2.3) imports its HTTP transports whatever the transport: ``import mcp``
imports its client, and the modules of both its server classes import starlette, sse-starlette
and httpx2 at their top, so no public import gives a stdio server without them. One package they
pull in is optional to its importer and serves HTTP alone: uvicorn, which sse-starlette imports
(inside ``try``) to patch its shutdown if it is installed, and which the SDK imports itself only
when it serves HTTP. While ``qbench-mcp`` imports its server, uvicorn is hidden (``None`` in
``sys.modules``, Python's own way to make an import fail), which keeps uvicorn, click,
logging.config and multiprocessing (about 45 modules) out of every start.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager


HTTP_ONLY = ("uvicorn",)
"""Packages the SDK's import reaches only through an importer that does without them."""


@contextmanager
def hidden(names: Sequence[str]) -> Iterator[None]:
    """Within the block, importing any of ``names`` not yet imported fails (ImportError)."""
    hid = [name for name in names if name not in sys.modules]
    for name in hid:
        sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not here"
    try:
        yield
    finally:
        for name in hid:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_without(module: str, names: Sequence[str] = HTTP_ONLY) -> None:
    """Import ``module`` with ``names`` hidden; should it fail so (an SDK that needs one of them
    after all), import it again with everything visible, which raises its own error if any."""
    with contextlib.suppress(Exception):  # the second import tells what is wrong, if anything
        with hidden(names):
            __import__(module)  # as an import statement does (``-X importtime`` lists it)
        return
    __import__(module)
