"""The exit statuses of ``qbench`` commands, named once (as coverage.py's ``OK``, ``ERR``)."""

from __future__ import annotations


OK = 0
"""The command did what it was asked."""
ERR = 1
"""The command failed, or found what it reports as a failure (a new failure in ``diff``)."""
USAGE = 2
"""A usage error: an option or argument refused (argparse's own status)."""
INCOMPLETE = 3
"""``qbench check`` found no error, but a checker asked for did not run (not installed)."""
