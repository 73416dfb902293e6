"""TARGET (a module file, a package directory or a dotted name) -> the module files to cover,
their import names and the directory to put on ``sys.path``. Nothing is imported here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.errors import QBenchError


class GenerateError(QBenchError):
    """``qbench generate`` cannot start: a target that is not found, a missing extra, an output
    file it must not overwrite."""


@dataclass(frozen=True)
class ModuleFile:
    """One module of the target."""

    path: Path
    """Absolute path of the ``.py`` file."""
    name: str
    """Its import name (``pkg.sub.mod``)."""
    origin: Path | None = None
    """The project's file when ``path`` is its disposable copy (sandbox.py)."""

    @property
    def real(self) -> Path:
        """The project's file: coverage measured in the copy is counted for it."""
        return self.origin or self.path


@dataclass(frozen=True)
class Target:
    """The resolved target."""

    given: str
    modules: tuple[ModuleFile, ...]
    import_root: Path
    """The directory that makes ``name`` importable (goes first on ``sys.path``)."""


def resolve_target(given: str, project: Path) -> Target:
    """Resolve ``given`` against ``project``; `GenerateError` when it names nothing usable."""
    path = (project / given).resolve()
    if not path.exists():
        path = _from_dotted(given, project)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.py") if _is_source(p, path))
    elif path.suffix == ".py":
        files = [path]
    else:
        raise GenerateError(
            f"target {given!r} is not a .py file, a package directory or a dotted module name; "
            "e.g. qbench generate src/pkg/mod.py",
            slug="generate-target",
        )
    if not files:
        raise GenerateError(
            f"target {given!r} holds no Python module; give a .py file or a package directory",
            slug="generate-target",
        )
    root = import_root(files[0])
    return Target(given, tuple(ModuleFile(f, module_name(f, root)) for f in files), root)


def _from_dotted(given: str, project: Path) -> Path:
    parts = given.split(".")
    if all(part.isidentifier() for part in parts):
        for base in (project, project / "src"):
            for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts)):
                if candidate.exists():
                    return candidate.resolve()
    raise GenerateError(
        f"target {given!r} not found: no such file, and no module of that name under "
        f"{project} or {project / 'src'}; give the module's path",
        slug="generate-target",
    )


def _is_source(path: Path, top: Path) -> bool:
    relative = path.relative_to(top).parts
    if any(part.startswith(".") or part in {"tests", "test", "__pycache__"} for part in relative):
        return False
    return not path.name.startswith("test_") and not path.name.endswith("_test.py")


def import_root(path: Path) -> Path:
    """The first directory above ``path`` that is not a package (no ``__init__.py``)."""
    directory = path.parent
    while (directory / "__init__.py").exists() and directory.parent != directory:
        directory = directory.parent
    return directory


def module_name(path: Path, root: Path) -> str:
    """``root/pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)
