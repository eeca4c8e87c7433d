"""Strict layers (issue 17): leaves (``lsnmt.typed``, ``lsnmt.io``, ``lsnmt.languages``) <- ``models`` (with its
own torch-free configs, ``models/config``) <- ``lsnmt.config`` (schema) <- methods / search / train / eval <-
stages. Read from the source (every import statement, function-local ones included)."""

from __future__ import annotations

import subprocess
import sys

from lsnmt.graph.imports import ROOT, _imported, module_files

LEAVES = ("lsnmt.typed", "lsnmt.io", "lsnmt.languages")


def _ours(path, prefix: str) -> set[str]:
    return {n for n in _imported(path, ROOT) if n == prefix or n.startswith(prefix + ".")}


def test_models_import_only_the_leaves_of_lsnmt() -> None:
    for path in sorted((ROOT / "models").rglob("*.py")):
        wrong = {n for n in _ours(path, "lsnmt") - {"lsnmt"}
                 if not any(n == leaf or n.startswith(leaf + ".") for leaf in LEAVES)}
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}: models may use lsnmt's leaves only"


def test_leaves_import_nothing_of_ours() -> None:
    for leaf in ("typed", "io", "languages"):
        path = ROOT / "lsnmt" / f"{leaf}.py"
        assert not (_ours(path, "lsnmt") | _ours(path, "models")), leaf


def test_model_configs_are_torch_free() -> None:
    """``models/config`` imports no module of ``models`` outside it (those import torch)."""
    files = module_files("models.config.kinds") + module_files("models.config.lm") + module_files("models.config.xlmr")
    assert all(f.startswith(("models/config/", "models/__init__", "lsnmt/")) for f in files), files


def test_the_schema_imports_no_method_search_train_or_eval_code() -> None:
    files = module_files("lsnmt.config")
    assert not [f for f in files if f.startswith(("lsnmt/train", "lsnmt/eval", "lsnmt/decode", "models/ls/"))
                or f in ("lsnmt/methods.py", "lsnmt/search.py")], files


def test_loading_params_imports_no_torch() -> None:
    code = ("import sys, lsnmt.config; assert 'torch' not in sys.modules\n"
            "lsnmt.config.Params.load('params.yaml'); lsnmt.config.Params.load('tests/fixtures/params.tiny.yaml')\n"
            "assert 'torch' not in sys.modules, 'loading params.yaml imported torch'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
