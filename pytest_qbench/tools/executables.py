"""Finding a tool's executable."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def find_executable(name: str) -> str | None:
    """``name`` beside this Python (its virtual environment) first, else on ``PATH``."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)
