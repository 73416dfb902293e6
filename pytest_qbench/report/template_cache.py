"""Compiled templates kept between runs: Jinja's bytecode cache, never an error.

Compiling ``report.md.j2`` (parse, generate Python, ``compile``) costs more CPU than a small
test run's whole reporting; Jinja can keep the compiled code on disk instead. The cache is
Jinja's own ``FileSystemBytecodeCache`` in its default directory (``$TMPDIR/_jinja2-cache-<uid>``,
created mode 0700 and refused when another user owns it), with qbench's own file names. An
entry is used only when the template's source and the Python version match the ones it was
compiled from, so a changed template or a new Python compiles again. A cache that cannot be
made or written is left out: the template is compiled as it would be without one.
``QBENCH_TEMPLATE_CACHE=0`` (`DISABLE_ENV`) compiles every template on every run, writing nothing.
"""

from __future__ import annotations

import contextlib
import os
from types import CodeType
from typing import Any

import jinja2

from pytest_qbench.report.precompiled import DISABLE_ENV as DISABLE_ENV


CACHE_PATTERN = "__qbench_{kind}_%s.cache"
"""One set of files per kind of environment: Jinja's key (the template's name and file) does
not hold the environment's options (autoescape, trim_blocks...), which shape the code."""


class _QuietCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache whose failures to write (a full or read-only disk) lose the entry
    only. It remembers each template it gave or took code for (``loaded``: name to source and
    code), which `report.precompiled` keeps for runs that render without importing Jinja."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._buckets: dict[str, tuple[str, jinja2.bccache.Bucket]] = {}

    @property
    def loaded(self) -> dict[str, tuple[str, CodeType | None]]:
        return {name: (source, b.code) for name, (source, b) in self._buckets.items()}

    def get_bucket(
        self, environment: jinja2.Environment, name: str, filename: str | None, source: str
    ) -> jinja2.bccache.Bucket:
        bucket = super().get_bucket(environment, name, filename, source)
        self._buckets[name] = (source, bucket)  # its code is set once Jinja has compiled it
        return bucket

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()


def bytecode_cache(kind: str) -> jinja2.BytecodeCache | None:
    """The cache for the template environments of ``kind`` (all built with the same options),
    or ``None`` when it is switched off or its directory cannot be made safely."""
    if os.environ.get(DISABLE_ENV, "1").strip() == "0":
        return None
    try:
        return _QuietCache(pattern=CACHE_PATTERN.format(kind=kind))
    except (OSError, RuntimeError):  # no safe directory: Jinja raises RuntimeError
        return None
