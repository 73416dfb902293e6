"""``qbench mcp`` and ``qbench-mcp``: parse the options, then import the SDK and serve.

Nothing here imports the SDK at module level, so without the ``mcp`` extra both commands say
in one line what to install.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from collections.abc import Sequence

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.install import install_extra
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.config import add_server_options
from pytest_qbench.mcp.config import config_from_args
from pytest_qbench.mcp.server_import import import_without


SDK_MODULES = frozenset({"mcp", "mcp_types", "anyio", "starlette", "httpx2", "sse_starlette"})
DESCRIPTION = (
    "Serve pytest-qbench's MCP tools over stdio: run the tests, read failures and raw output "
    "of runs, search the test catalog, list runs and flaky tests."
)


def parse_server_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    """The server's options (``qbench mcp ...`` or ``qbench-mcp ...``); ``--help`` lists them."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"pytest-qbench {__version__}")
    add_server_options(parser)
    return parser.parse_args(argv)


def run(argv: Sequence[str]) -> int:
    """``qbench mcp``: parse the server's options, then serve until the client closes stdin.

    Raises:
        QBenchError: the ``mcp`` extra is missing, or an option is wrong.
    """
    return cmd_mcp(parse_server_args(argv, "qbench mcp"))


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client closes stdin.

    Raises:
        QBenchError: the ``mcp`` extra is missing, or an option is wrong.
    """
    config = config_from_args(args)
    load_server()(config)
    return 0


def load_server() -> Callable[[ServerConfig], None]:
    """The SDK-backed ``serve``, imported without what only the SDK's HTTP server needs
    (``server_import``).

    Raises:
        QBenchError: the MCP SDK (or one of its dependencies) is not installed.
    """
    try:
        import_without("pytest_qbench.mcp.server")
        from pytest_qbench.mcp.server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in SDK_MODULES:
            raise QBenchError(missing_extra(), slug="mcp-extra") from None
        raise
    return serve


def missing_extra() -> str:
    """The line that says what to install when the MCP SDK is missing."""
    return f"qbench mcp requires the 'mcp' extra; install it: {install_extra('mcp')}"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``qbench-mcp`` console script."""
    args = parse_server_args(sys.argv[1:] if argv is None else argv, "qbench-mcp")
    try:
        return cmd_mcp(args)
    except QBenchError as exc:
        print(f"qbench-mcp: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # a bug in qbench: one line, the traceback in a file
        from pytest_qbench.core.crash import report_internal_error

        return report_internal_error(exc, "qbench-mcp")
