"""``python -m pytest_qbench.cli``: the ``qbench`` command."""

from __future__ import annotations

from pytest_qbench.cli import main


if __name__ == "__main__":
    raise SystemExit(main())
