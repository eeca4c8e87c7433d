"""Every path once: the stage table declares the templates of lsnmt.paths, and each stage hands its work exactly
those folders (no stage module spells a ``results`` / ``data`` / ``work`` / ``reports`` path of its own)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path, PurePosixPath
from typing import Any
from unittest.mock import MagicMock

import pytest

from lsnmt import paths as P
from lsnmt.graph.stages import BY_NAME, STAGES, Stage

from .conftest import ROOT

TINY = ROOT / "tests" / "fixtures" / "params.tiny.yaml"
ROOTS = ("results", "data", "work", "reports", "embedded")
"""First components of the paths lsnmt.paths defines."""
TEMPLATES = {v for k, v in vars(P).items() if k.isupper() and isinstance(v, str)}


def spelled_paths(source: str) -> list[str]:
    """String constants of ``source`` (docstrings aside) that are, or begin, a path under one of :data:`ROOTS`."""
    tree = ast.parse(source)
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docs
        and PurePosixPath(n.value).parts[:1] in {(r,) for r in ROOTS}
    ]


def test_no_stage_module_spells_a_path() -> None:
    """A stage resolves its folders from lsnmt.paths (P.at), never from a literal of its own."""
    found = {p.name: spelled_paths(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "stages").glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_a_spelled_path() -> None:
    """The check above sees ``Path("results") / ...`` and ``"data/x"``, not a docstring."""
    source = '"""Writes results/{exp}/x."""\nfrom pathlib import Path\nA = Path("results") / "x"\nB = "data/x/raw"\n'
    assert sorted(spelled_paths(source)) == ["data/x/raw", "results"]


def test_every_table_path_is_a_template_of_lsnmt_paths() -> None:
    """Each output and data input of the table is one of lsnmt.paths' templates (the report's files lie inside
    its ``reports`` folder, a metrics folder is ``METRICS`` of its stage)."""
    metrics = {m.replace("{stage}", s.name) for s in STAGES for m in (P.METRICS,)}
    for stage in STAGES:
        for path in (*(o.path for o in stage.outs), *stage.deps):
            inside_reports = stage.name == "report" and path.startswith(P.REPORTS + "/")
            assert path in TEMPLATES | metrics or inside_reports, (stage.name, path)


def _resolve(stage: Stage, template: str, job: str | None) -> Path:
    wild = {stage.each: job} if stage.each else {}
    return P.at(template, "tiny", **wild) if "{exp}" in template else P.at(template.format(**wild))


def _related(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


class Recorder:
    """Stands for a function (or a module of them) a stage calls: records every ``Path`` it is handed; its result
    is falsy (``not_configured`` says "configured")."""

    def __init__(self, seen: list[Path]) -> None:
        self.seen = seen

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.seen += [a for a in (*args, *kwargs.values()) if isinstance(a, Path)]
        result = MagicMock()
        result.__bool__.return_value = False
        return result

    def __getattr__(self, name: str) -> Recorder:
        return self


CALLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "download": (("download", "spbleu"), ()),
    "prepare": (("prepare",), ()),
    "spm": (("train_spm",), ()),
    "sample": (("sample", "ratio_masks"), ()),
    "encode": (("encode",), ()),
    "search": (("run_search", "record"), ()),
    "train": (("train_method", "launch", "record", "curve_plot"), ("--method", "naive")),
    "translate": (("translate_method",), ("--method", "naive")),
    "evaluate": (("evaluate", "mt_rows", "write_metrics", "record"), ()),
    "task_prep": (("prep",), ()),
    "task_train": (("lsnmt.tasks.train.train_tasks", "record"), ()),
    "task_eval": (("evaluate", "task_rows", "write_metrics", "record"), ()),
    "claim": (("run_claim", "claim_rows", "write_metrics", "record"), ()),
    "lm_data": (("build_lm_data", "not_configured"), ()),
    "cluster": (("cluster", "not_configured", "job_parents"), ()),
    "lm_seed": (("not_configured", "train_lm", "jobs", "xglm_weights", "load_meta", "record"), ()),
    "lm_expert": (("train_lm", "jobs", "load_meta", "record"), ("--expert", "tfidf-k2-e1")),
    "lm_hmr": (("train_lm", "jobs", "load_meta", "record"), ("--target", "sw")),
    "lm_lapt": (("not_configured", "train_lm", "jobs", "load_meta", "record"), ()),
    "lm_eval": (("not_configured", "evaluate", "xelm_ppl_rows", "write_metrics", "record"), ()),
    "lm_icl": (("not_configured", "run_icl", "xelm_icl_rows", "write_metrics", "record"), ()),
    "report": (("report", "Results"), ()),
}
"""Stage -> what its module calls with paths (replaced by a :class:`Recorder`: ``record`` writes the run record,
:mod:`lsnmt.record`), and its job's identity flags."""


def test_every_stage_is_checked() -> None:
    """Each row of the table but ``params`` (its one output: the next test) is a case below, none left out."""
    assert set(CALLS) == {s.name for s in STAGES} - {"params"}
    assert importlib.import_module("stages.params").OUT == next(o.path for o in BY_NAME["params"].outs)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_stage_hands_its_work_the_tables_paths(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run on the tiny experiment with its work replaced: every output of the stage's row lies in a folder the
    stage handed its work, and every path it handed is an output or input of the row (or a folder holding or
    within one), or resumable state under ``work/``."""
    stage, (calls, flags) = BY_NAME[name], CALLS[name]
    module = importlib.import_module(f"stages.{name}")
    seen: list[Path] = []
    for call in calls:  # a dotted name: a function the stage imports when it runs
        if "." in call:
            monkeypatch.setattr(call, Recorder(seen))
        else:
            monkeypatch.setattr(module, call, Recorder(seen))
    monkeypatch.chdir(tmp_path)
    module.main(["--experiment", "tiny", "--params", str(TINY), *flags])
    job = flags[1] if flags else None
    outs = [_resolve(stage, o.path, job) for o in stage.outs]
    declared = outs + [_resolve(stage, d, job) for d in stage.deps]
    assert seen, f"{name} handed its work no path"
    for out in outs:
        assert any(out == p or p in out.parents for p in seen), (out, seen)
    for p in seen:
        assert p.parts[0] == "work" or any(_related(p, d) for d in declared), (p, declared)
