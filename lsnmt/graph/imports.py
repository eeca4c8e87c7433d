"""The code a stage runs: every repository module its ``stages.<name>`` module imports, transitively.

Read from the source with :mod:`ast` (nothing is imported, so no torch); every ``import`` statement counts,
function-local ones included. The kind table (``models.config.kinds``) names each kind's builder and criterion as
``"module:attribute"`` strings, imported when a model is built: a stage that runs a loader of them
(:data:`LOADERS`) runs every module such a string in its code names. Only the repository's own packages
(``lsnmt``, ``models``, ``stages``) are followed.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lsnmt", "models", "stages")
REFERENCE = re.compile(rf"^((?:{'|'.join(PACKAGES)})(?:\.\w+)+):\w+$")
"""A ``"module:attribute"`` string naming one of our modules (imported by name at run time)."""
LOADERS = ("models/ls/__init__.py",)
"""Files that import what the references name (``models.ls.builder`` / ``criterion``)."""


def _file(module: str, root: Path) -> Path | None:
    """``a/b.py`` or ``a/b/__init__.py`` of dotted ``module`` under ``root``, if it is ours."""
    if module.split(".")[0] not in PACKAGES:
        return None
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


def _imported(path: Path, root: Path) -> frozenset[str]:
    """Dotted names ``path`` imports: ``import a.b`` gives ``a.b``; ``from a import b`` gives ``a`` and ``a.b``.

    Parsed once per version of the file: the Snakefile asks for the code of every stage, and most stages share
    most files (23 stages parsed ~1,400 files, 2 s of each Snakemake start)."""
    stat = path.stat()
    return _imported_version(path, root, stat.st_mtime_ns, stat.st_size)


@cache
def _imported_version(path: Path, root: Path, mtime_ns: int, size: int) -> frozenset[str]:
    names: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = _package_of(path, root).split(".")
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join([*pkg, base] if base else pkg)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)


@cache
def _references(path: Path, mtime_ns: int, size: int) -> frozenset[str]:
    """Modules the ``"module:attribute"`` strings of ``path`` name (:data:`REFERENCE`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return frozenset(m.group(1) for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and isinstance(node.value, str)
                     and (m := REFERENCE.match(node.value)))


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (never run)."""
    out, todo = [], [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _with_parents(module: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: importing a submodule runs its packages' ``__init__``."""
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@cache
def module_files(module: str, root: Path = ROOT) -> tuple[str, ...]:
    """Repository files (relative, sorted) that importing ``module`` runs."""
    seen: set[Path] = set()
    todo = _with_parents(module)
    loaded: set[str] = set()
    while True:
        while todo:
            path = _file(todo.pop(), root)
            if path is None or path in seen:
                continue
            seen.add(path)
            for name in _imported(path, root):
                todo.extend(_with_parents(name))
        if not any(p.relative_to(root).as_posix() in LOADERS for p in seen):
            break
        refs = {r for p in seen for r in _references(p, p.stat().st_mtime_ns, p.stat().st_size)} - loaded
        if not refs:
            break
        loaded |= refs
        todo = [n for r in refs for n in _with_parents(r)]
    return tuple(sorted(p.relative_to(root).as_posix() for p in seen))


def folded(files: tuple[str, ...], root: Path = ROOT) -> tuple[str, ...]:
    """``files`` with every folder whose ``.py`` files are all listed written as the folder (shorter dvc.yaml;
    DVC hashes a folder's files)."""
    chosen = set(files)
    dirs = sorted({p for f in files for p in Path(f).parents if p != Path(".")}, key=lambda d: len(d.parts))
    out: set[str] = set()
    covered: set[str] = set()
    for d in dirs:
        if any(d.as_posix().startswith(c + "/") for c in covered):
            continue
        py = {p.relative_to(root).as_posix() for p in (root / d).rglob("*.py") if "__pycache__" not in p.parts}
        if py and py <= chosen:
            covered.add(d.as_posix())
            out.add(d.as_posix())
    out.update(f for f in files if not any(f.startswith(c + "/") for c in covered))
    return tuple(sorted(out))
