"""Strict layers (issue 17): leaves (``lsnmt.typed``, ``lsnmt.io``, ``lsnmt.stops``, ``lsnmt.languages``) <-
``models`` (with its own torch-free configs, ``models/config``) <- the sections (each in the folder that reads it)
<- ``lsnmt.experiment.params`` (the whole schema) <- stages. Read from the source (every import statement,
function-local ones included). No function-local import dodges a cycle: what two modules share lives in the lower
one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from lsnmt.graph.imports import ROOT, _imported, module_files

LEAVES = ("lsnmt.typed", "lsnmt.io", "lsnmt.stops", "lsnmt.languages")


def _ours(path, prefix: str) -> set[str]:
    return {n for n in _imported(path, ROOT) if n == prefix or n.startswith(prefix + ".")}


def test_models_import_only_the_leaves_of_lsnmt() -> None:
    for path in sorted((ROOT / "models").rglob("*.py")):
        wrong = {n for n in _ours(path, "lsnmt") - {"lsnmt"}
                 if not any(n == leaf or n.startswith(leaf + ".") for leaf in LEAVES)}
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}: models may use lsnmt's leaves only"


def test_leaves_import_nothing_of_ours() -> None:
    for leaf in ("typed", "io", "stops", "languages"):
        path = ROOT / "lsnmt" / f"{leaf}.py"
        assert not (_ours(path, "lsnmt") | _ours(path, "models")), leaf


def test_model_configs_are_torch_free() -> None:
    """``models/config`` imports no module of ``models`` outside it (those import torch)."""
    files = module_files("models.config.kinds") + module_files("models.config.lm") + module_files("models.config.xlmr")
    assert all(f.startswith(("models/config/", "models/__init__", "lsnmt/")) for f in files), files


def test_the_schema_imports_no_method_search_train_or_eval_code() -> None:
    """Of the training, decoding, scoring and claim folders the schema imports their sections only (each folder's
    ``config.py`` and its empty ``__init__.py``)."""
    files = module_files("lsnmt.experiment.params")
    code = [f for f in files if f.startswith(("lsnmt/train", "lsnmt/eval", "lsnmt/decode", "lsnmt/claim", "models/ls/"))
            and not f.endswith(("/config.py", "/__init__.py"))]
    assert not code, code
    inits = [ROOT / f for f in files if f.startswith(("lsnmt/train/", "lsnmt/eval/", "lsnmt/decode/", "lsnmt/claim/"))
             and f.endswith("/__init__.py")]
    assert inits and not [p for p in inits if _ours(p, "lsnmt") | _ours(p, "models")], inits


def test_loading_params_imports_no_torch() -> None:
    code = ("import sys, lsnmt.experiment.params as p; assert 'torch' not in sys.modules\n"
            "p.Params.load('params.yaml'); p.Params.load('tests/fixtures/params.tiny.yaml')\n"
            "assert 'torch' not in sys.modules, 'loading params.yaml imported torch'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def _local_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of our packages inside a function of ``path``."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else
                         [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                out += [(node.lineno, n) for n in names if n.split(".")[0] in ("lsnmt", "models")]
    return out


def test_no_function_local_import_dodges_a_cycle() -> None:
    """A function-local import of ours is for laziness (torch, transformers) only: the module it imports never
    imports, even through others, the module it sits in (that would be a cycle, run at call time)."""
    cycles = []
    for path in sorted([*(ROOT / "lsnmt").rglob("*.py"), *(ROOT / "models").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        cycles += [f"{rel}:{line} imports {name}" for line, name in _local_imports(path) if rel in module_files(name)]
    assert not cycles, cycles


def test_the_schema_checks_source_kinds_without_the_catalogue() -> None:
    """lsnmt.experiment.params reads the kinds' splits from the leaf table the catalogue is built with (no import
    cycle), and of lsnmt/eval the evaluate section only."""
    from lsnmt.data.source_kinds import SOURCE_SPLITS
    from lsnmt.data.sources import SOURCES

    assert not [f for f in module_files("lsnmt.experiment.params") if f.startswith("lsnmt/data/sources/")
                or (f.startswith("lsnmt/eval/") and f not in ("lsnmt/eval/config.py", "lsnmt/eval/__init__.py"))]
    assert {k: s.splits for k, s in SOURCES.items()} == SOURCE_SPLITS
    assert not _ours(ROOT / "lsnmt" / "data" / "source_kinds.py", "lsnmt")
    assert "lsnmt/eval/scores.py" not in module_files("lsnmt.data.spbleu")
