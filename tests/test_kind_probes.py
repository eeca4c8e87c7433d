"""No generic code asks a method kind what it is (issue 41): a kind's files answer. Outside ``models/config/`` and
``models/ls/`` no module compares a kind name (``kind == "clm"``), tests a kind's config class (``isinstance(cfg,
LMSFDConfig)``) or defines its own ``routes`` answer: ``models.config.kinds.routes`` is the one."""

from __future__ import annotations

import ast
from pathlib import Path

from models.config.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]
KIND_FILES = ("models/config/", "models/ls/")
CONFIGS = {k.config.__name__ for k in KINDS.values()}


def _generic_modules() -> list[Path]:
    files = [*ROOT.glob("lsnmt/**/*.py"), *ROOT.glob("models/**/*.py"), *ROOT.glob("stages/*.py")]
    return [p for p in files if not p.relative_to(ROOT).as_posix().startswith(KIND_FILES)]


def _probes(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, what)`` of each kind probe in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            names = [c.value for c in (node.left, *node.comparators) if isinstance(c, ast.Constant)]
            if any(n in KINDS for n in names) and "kind" in ast.unparse(node):
                found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            if len(node.args) == 2 and any(n in ast.unparse(node.args[1]) for n in CONFIGS):
                found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.FunctionDef) and node.name in ("routes", "routes_of", "_other_routes"):
            found.append((node.lineno, f"def {node.name}"))
    return sorted(found)


def test_no_generic_module_probes_a_kind() -> None:
    probes = [
        f"{p.relative_to(ROOT)}:{line}: {what}"
        for p in _generic_modules()
        for line, what in _probes(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert not probes, "kind probes outside the kinds' files (ask models.config.kinds):\n" + "\n".join(probes)


def test_one_routes_answer() -> None:
    tree = ast.parse((ROOT / "models/config/kinds.py").read_text(encoding="utf-8"))
    answers = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and "routes" in n.name]
    assert answers == ["routes"]


def test_the_probe_finder_sees_each_kind_of_probe() -> None:
    code = (
        'if cfg.get("kind") == "clm": pass\nfd = isinstance(cfg, LMSFDConfig)\ndef routes(kind, cfg):\n    return ()\n'
    )
    assert [line for line, _ in _probes(ast.parse(code))] == [1, 2, 3]
