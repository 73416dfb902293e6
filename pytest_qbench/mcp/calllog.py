"""The server's tool-call log, without the SDK: what a call is logged as, and writing it.

``server.QBenchServer.call_tool`` times every call (failed ones too) and hands it to
``CallLog.record``, which redacts its arguments, works out the bytes of raw output the response
replaced, and adds it to the history index (``history.toollog``). The log never makes a call
fail: an index that cannot be written is one warning in the server's log (stderr), once.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.redact import Redactor
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.process import OUTPUT_NAMES
from pytest_qbench.report import store


LOG_WAIT = 5.0
"""Seconds a busy index is waited for before a call goes unlogged."""
MAX_TOOL_NAME = 100
"""Characters of a tool name that are logged (a client may call any name)."""
REPLACES_RUN_OUTPUT = (
    "run_test_workflow",
    "get_test_failure",
    "run_build_workflow",
    "generate_tests_workflow",
)
"""The tools whose response stands for a run's raw output (pytest's stdout and stderr; the
checkers' logs of a check run; a generation's result and log)."""

logger = logging.getLogger(__name__)


class CallLog:
    """Logs each tool call of one server in the history index of its project."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._redactor = Redactor(os.environ)
        self._warned = False

    def redact(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` with the values of secret environment variables and the passwords of
        URLs replaced by ``[redacted]``."""
        self._redactor.refresh(os.environ)
        return {str(key): self._redact(value) for key, value in arguments.items()}

    def _redact(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._redactor.argv([value])[0]
        if isinstance(value, (list, tuple)):
            return [self._redact(item) for item in value]
        if isinstance(value, dict):
            return {str(key): self._redact(item) for key, item in value.items()}
        return value

    def replaced_bytes(
        self, tool: str, arguments: Mapping[str, Any], content: Mapping[str, Any] | None
    ) -> int:
        """Bytes of raw output a successful response of ``tool`` stood for: the run's stdout
        and stderr for ``run_test_workflow`` and ``generate_tests_workflow`` (the run it made)
        and ``get_test_failure`` (the run asked about), every checker's raw log for
        ``run_build_workflow`` (issue 13.7); 0 for the others (``get_run_output``'s pages are
        the raw output)."""
        if tool not in REPLACES_RUN_OUTPUT:
            return 0
        with contextlib.suppress(QBenchError, OSError, TypeError, ValueError, KeyError):
            if tool == "run_build_workflow" and content is not None:
                run_dir = store.run_dir(self.config.qbench_dir, str(content["run_id"]))
                return sum(log.stat().st_size for log in run_dir.glob("*.log") if log.is_file())
            if tool in ("run_test_workflow", "generate_tests_workflow") and content is not None:
                run_dir = store.run_dir(self.config.qbench_dir, str(content["run_id"]))
            else:
                run_dir = runs.find_run(self.config, str(arguments["run_id"]))
            return sum(
                (run_dir / name).stat().st_size
                for name in OUTPUT_NAMES.values()
                if (run_dir / name).is_file()
            )
        return 0

    def record(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        called_at: datetime,
        duration: float,
        *,
        error: BaseException | None,
        response_bytes: int,
        content: Mapping[str, Any] | None = None,
    ) -> None:
        """Log one call; ``error`` is what it failed with, ``content`` its structured result.
        Never raises: a log that cannot be written is a warning."""
        try:
            from pytest_qbench.history.toollog import ToolCall
            from pytest_qbench.history.toollog import record_call

            call = ToolCall(
                tool=tool[:MAX_TOOL_NAME],
                arguments=self.redact(arguments),
                success=error is None,
                error_type=None if error is None else error_type(error),
                duration=duration,
                response_bytes=response_bytes,
                replaced_bytes=0 if error else self.replaced_bytes(tool, arguments, content),
                called_at=called_at,
            )
            self.config.qbench_dir.mkdir(parents=True, exist_ok=True)
            index = runs.open_history(self.config, create=True, wait=LOG_WAIT)
            try:
                record_call(index, call)
            finally:
                index.close()
        except Exception as exc:  # the log is never worth a failed call
            self._warn(tool, exc)

    def _warn(self, tool: str, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(
                "qbench: tool call %s not logged (%s: %s); later failures to log are not reported",
                tool[:MAX_TOOL_NAME],
                type(exc).__name__,
                exc,
            )


def error_type(error: BaseException) -> str:
    """The type of what a call failed with (the server passes the tool's own exception, not
    the SDK's wrapping of it)."""
    return type(error).__name__
