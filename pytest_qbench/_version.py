"""The version of pytest-qbench, read by the build backend."""

from __future__ import annotations


__version__ = "0.1.0.dev0"
