"""A stage depends on the settings it reads: the data stages load their own views (lsnmt.view; lsnmt.data.config,
lsnmt.xelm.data_config), so editing a method's config module (models/config/lms.py) plans no data stage, in either
front end; the stages that build a method still depend on it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsnmt.graph.imports import module_files
from lsnmt.graph.snakemake import code
from lsnmt.typed import load_yaml

from .conftest import ROOT, copy_repo, use_params, venv_env

DATA_STAGES = ("download", "prepare", "spm", "sample", "encode", "lm_data")
METHOD_CONFIG = "models/config/lms.py"
SCHEMA = ("lsnmt/experiment/params.py", "lsnmt/methods/schema.py", "models/config/kinds.py", METHOD_CONFIG)
"""The whole params schema and the method configs it imports: no data stage runs them."""


def _covers(dep: str, path: str) -> bool:
    return path == dep or path.startswith(dep.rstrip("/") + "/")


def _dvc_deps(stage: str) -> list[str]:
    return load_yaml(ROOT / "dvc.yaml")["stages"][stage]["deps"]


@pytest.mark.parametrize("stage", DATA_STAGES)
def test_no_data_stage_depends_on_the_method_schema(stage: str) -> None:
    """dvc.yaml's deps (a folder covers its files) and the Snakefile's code inputs of a data stage hold no schema
    module beyond the data sections (main put the whole schema and all of models/config in every stage's)."""
    dvc = [p for p in SCHEMA if any(_covers(d, p) for d in _dvc_deps(stage))]
    assert dvc == [], f"dvc.yaml: {stage} depends on {dvc}"
    smk = [p for p in SCHEMA if p in code(stage)]
    assert smk == [], f"Snakefile: {stage} depends on {smk}"


def test_a_stage_that_builds_a_method_still_depends_on_its_config() -> None:
    """The other side: train (and translate) run the method's config module, in both front ends."""
    for stage in ("train", "translate"):
        assert any(_covers(d, METHOD_CONFIG) for d in _dvc_deps(stage)), stage
        assert METHOD_CONFIG in code(stage) and METHOD_CONFIG in module_files(f"stages.{stage}"), stage


@pytest.mark.slow
def test_editing_a_method_config_leaves_the_data_stages_current(tmp_path: Path) -> None:
    """For real, in DVC: `dvc repro encode` on the tiny experiment (download .. encode), then an edit of
    models/config/lms.py's docstring; `dvc status` names no data stage (on main it named all five)."""
    repo = copy_repo(tmp_path / "repo")
    use_params(repo, ROOT / "tests" / "fixtures" / "params.tiny.yaml")
    env = venv_env()
    run = subprocess.run(["dvc", "repro", "encode"], cwd=repo, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    config = repo / METHOD_CONFIG
    config.write_text(config.read_text(encoding="utf-8").replace('"""', '"""Edited. ', 1), encoding="utf-8")
    status = subprocess.run(["dvc", "status", *DATA_STAGES[:-1]], cwd=repo, env=env, capture_output=True, text=True)
    assert status.returncode == 0, status.stderr[-3000:]
    assert "up to date" in status.stdout.lower(), status.stdout
    data = repo / "lsnmt" / "data" / "config.py"  # the control: an edit of code the data stages run is seen
    data.write_text(data.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    status = subprocess.run(["dvc", "status", *DATA_STAGES[:-1]], cwd=repo, env=env, capture_output=True, text=True)
    assert all(f"{s}:" in status.stdout for s in DATA_STAGES[:-1]), status.stdout
