"""The code's layers, bottom first, and the imports that break them (issue 41, item 2).

A *part* is one folder of ours: ``lsnmt``'s root modules, each folder under ``lsnmt/`` with its subfolders
(``lsnmt/data/sources`` is part of ``lsnmt/data``), ``models/config`` (the models' torch-free configs), ``models``
with ``models/ls``, and ``stages``; and the ``lsnmt`` command (:data:`COMMAND`: ``lsnmt/cli.py`` and the
``lsnmt/__main__.py`` that ``python -m lsnmt`` runs), an entry point like ``stages``, so a part on top of its own
although its files lie in the root (``python -m lsnmt`` needs its ``__main__.py`` there). :data:`LAYERS` puts
every part in a layer of its own, bottom first: a part may import the parts below it. The imports are
:mod:`lsnmt.graph.imports`' reading of the source (every ``import`` statement, function-local ones included,
``if TYPE_CHECKING:`` blocks left out).

* A *climb* is a pair of parts ``(A, B)`` where some module of ``A`` imports a module of ``B`` and ``B`` sits in
  a higher layer than ``A`` (:func:`climbs`; :func:`climbing_imports` lists the imports behind each).
* A *ring* is a pair of parts that import each other (:func:`rings`); :func:`cycles` gives every set of parts
  that import one another around, longer rings included (strongly connected parts of the graph).

``python -m lsnmt.graph.layers`` prints the counts and every climbing import; ``tests/test_import_layers.py`` bounds
them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from lsnmt.graph.imports import PACKAGES, ROOT, _imported

LAYERS: tuple[str, ...] = (
    "lsnmt",  # the root's modules: typed, io, stops, languages, paths, record, figures, view
    "models/config",
    "models",
    "lsnmt/runner",
    "lsnmt/data",
    "lsnmt/methods",
    "lsnmt/train",
    "lsnmt/decode",
    "lsnmt/eval",
    "lsnmt/claim",
    "lsnmt/xelm",
    "lsnmt/tasks",
    "lsnmt/experiment",
    "lsnmt/report",
    "lsnmt/protocol",
    "lsnmt/graph",
    "lsnmt/gpucheck",
    "stages",
    "lsnmt/cli",
)
"""Every part, bottom first: the pipeline's order (data, methods, training, decoding, scoring, then what reads the
scores), with the root's shared modules and the models beneath, then the whole params.yaml composed of the sections
below (``lsnmt/experiment``), and the stage table and entry points on top."""

COMMAND = ("lsnmt/__main__.py", "lsnmt/cli.py")
"""The ``lsnmt`` command's files: the part ``lsnmt/cli``."""


def part_of(rel: str) -> str:
    """The part of the repository file ``rel`` (``lsnmt/data/sources/base.py`` -> ``lsnmt/data``)."""
    if rel in COMMAND:
        return "lsnmt/cli"
    parts = Path(rel).parts
    if parts[0] == "models":
        return "models/config" if len(parts) > 2 and parts[1] == "config" else "models"
    if parts[0] == "lsnmt" and len(parts) > 2:
        return f"lsnmt/{parts[1]}"
    return parts[0]


def _module_file(name: str, root: Path) -> str | None:
    """The repository file a dotted ``name`` imports (``a.b.c`` of ``from a.b import c`` may be a name in ``a.b``)."""
    parts = name.split(".")
    while parts and parts[0] in PACKAGES:
        base = root.joinpath(*parts)
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path.relative_to(root).as_posix()
        parts = parts[:-1]
    return None


def sources(root: Path = ROOT) -> list[str]:
    """Every module of ours, relative and sorted."""
    return sorted(
        p.relative_to(root).as_posix()
        for pkg in PACKAGES
        for p in (root / pkg).rglob("*.py")
        if "__pycache__" not in p.parts
    )


@cache
def imports(root: Path = ROOT) -> tuple[tuple[str, str], ...]:
    """Every ``(importing file, imported file)`` pair between two different parts; ``from a import b`` names ``a/b.py``
    only (not also ``a/__init__.py``, which it runs too) where ``b`` is a module."""
    out: set[tuple[str, str]] = set()
    for rel in sources(root):
        targets = {t for name in _imported(root / rel, root) if (t := _module_file(name, root)) is not None}
        inner = {str(Path(t).parent) for t in targets if not t.endswith("__init__.py")}
        out.update(
            (rel, t)
            for t in targets
            if part_of(t) != part_of(rel) and not (t.endswith("__init__.py") and str(Path(t).parent) in inner)
        )
    return tuple(sorted(out))


def _rank(part: str) -> int:
    if part not in LAYERS:
        raise KeyError(f"{part}: a folder with no layer; add it to lsnmt.graph.layers.LAYERS")
    return LAYERS.index(part)


def climbing_imports(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(importing file, imported file)`` pairs whose target sits in a higher layer."""
    return [(a, b) for a, b in pairs if _rank(part_of(b)) > _rank(part_of(a))]


def climbs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(part, higher part)`` pairs of :func:`climbing_imports`."""
    return sorted({(part_of(a), part_of(b)) for a, b in climbing_imports(pairs)})


def _graph(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for a, b in pairs:
        graph.setdefault(part_of(a), set()).add(part_of(b))
    return graph


def rings(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs of parts that import each other."""
    graph = _graph(pairs)
    return sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, ()))


def cycles(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """Every set of two or more parts that import one another around (Tarjan's strongly connected components)."""
    graph = _graph(pairs)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[tuple[str, ...]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                out.append(tuple(sorted([v, *component])))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    """Print the climbs, rings and cycles of the repository at ``argv[0]`` (default: this one)."""
    root = Path(argv[0]).resolve() if argv else ROOT
    pairs = imports(root)
    up = climbing_imports(pairs)
    print(f"climbs: {len(climbs(pairs))} (pairs of parts; {len(up)} imports)")
    for a, b in climbs(pairs):
        print(f"  {a} -> {b}: " + ", ".join(f"{x} -> {y}" for x, y in up if (part_of(x), part_of(y)) == (a, b)))
    print(f"rings: {len(rings(pairs))} (pairs of parts importing each other)")
    for a, b in rings(pairs):
        print(f"  {a} <-> {b}")
    print(f"cycles: {len(cycles(pairs))} (parts importing one another around)")
    for c in cycles(pairs):
        print("  " + " ".join(c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
