"""The Python back end's checkers: ruff, mypy, pyright and the build check, their commands and
the parsers of their output (moved from ``report/checks/``)."""
