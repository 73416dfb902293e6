"""The exceptions pytest-qbench raises, and the one warning class it emits.

Every error carries an optional ``slug``: the anchor of its explanation in ``docs/messages.md``.
"""

from __future__ import annotations


class QBenchError(Exception):
    """Base class of every error raised by pytest-qbench's library and CLI."""

    def __init__(self, message: str, *, slug: str | None = None) -> None:
        super().__init__(message)
        self.slug = slug


class ReportFormatError(QBenchError):
    """A report or stream file cannot be read: bad JSON, wrong schema version, missing file."""


class TemplateError(QBenchError):
    """A Jinja template is missing or fails to render."""


class MergeError(QBenchError):
    """Reports cannot be merged: none given, or the same run given twice."""


class JUnitFormatError(ReportFormatError):
    """A JUnit XML file cannot be read: not XML, not JUnit, or it declares a DTD or entities."""


class HistoryError(QBenchError):
    """The run store's index cannot be used: missing, newer than this qbench, locked, or a run or
    test that it does not hold."""


class ToolFailure(QBenchError):
    """An MCP tool cannot do what it was asked: a refused argument, a busy runner, a run that
    pytest ended with a usage or internal error. The message says what happened and what to do;
    the MCP server returns it as a tool error."""


class CheckOutputError(QBenchError):
    """A static checker's output cannot be read as its documented machine-readable format
    (issue 13); the checker is reported as crashed, its raw output kept."""

    def __init__(self, message: str) -> None:
        super().__init__(message, slug="checker-crashed")


class SarifFormatError(ReportFormatError):
    """A SARIF file cannot be read (issue 13): not JSON, not SARIF 2.1.0, or a field of the wrong
    type; the message names the file and the JSON path of the problem."""

    def __init__(self, message: str) -> None:
        super().__init__(message, slug="sarif-invalid")


class AttachmentError(QBenchError):
    """``qbench.attach`` (or the ``pytest_qbench_attachments`` hook) was given something it
    cannot store: data that is not bytes, str or a path, a missing file, a bad name or media
    type."""
