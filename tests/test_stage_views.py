"""Each stage owns its config (issue 41, item 1): a stage on a view (lsnmt.view) tracks exactly the view's keys, so
that what reruns it follows by construction. For real, in DVC on the tiny experiment: editing a task's learning
rate reruns no data stage, editing an x-elm LM training setting reruns no ``lm_data`` (on the branch point both
did: ``download`` tracked all of ``task_cfg``, ``lm_data`` all of ``xelm``)."""

from __future__ import annotations

import importlib
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt.graph.dvc import render
from lsnmt.graph.imports import module_files
from lsnmt.graph.stages import STAGES
from lsnmt.view import keys

from .conftest import ROOT, copy_repo, use_params, venv_env

DATA_STAGES = ("download", "prepare", "spm", "sample", "encode", "lm_data")
RECORDED = (*DATA_STAGES, "task_prep")
TASK = {
    "kind": "ner",
    "languages": ["en", "de"],
    "source": {"kind": "wikiann", "path": "embedded/tasks/wikiann"},
    "encoder": {"init": "random", "hidden_size": 16, "layers": 1, "heads": 2, "ffn_dim": 32, "vocab_size": 200},
    "epochs": 2,
    "batch_size": 8,
    "lr": 0.003,
    "max_length": 32,
    "seeds": [1],
}
"""A task of the tiny experiment (tests/fixtures/params.tasks.yaml's wikiann) for the edit below."""


def test_a_viewed_stage_tracks_its_views_keys_and_its_module_loads_that_view() -> None:
    viewed = [s for s in STAGES if s.view is not None]
    assert {s.name for s in viewed} >= set(DATA_STAGES)
    for stage in viewed:
        assert stage.params == keys(stage.view), stage.name
        assert importlib.import_module(f"stages.{stage.name}").VIEW is stage.view, stage.name
    tiny = yaml.safe_load(render(ROOT / "tests/fixtures/params.tiny.yaml"))["stages"]
    assert tiny["download"]["params"] == [
        f"experiments.${{experiment}}.{k}" for k in ("data", "download", "evaluate.metrics")
    ]
    assert tiny["lm_data"]["params"] == [f"experiments.${{experiment}}.{k}" for k in ("data", "spm", "lm_data")]


def test_every_stage_of_an_experiment_reads_a_view() -> None:
    """Issue 41 item 1: only the stages that read every experiment (``params``, ``report``) load the whole
    params.yaml; train, translate, evaluate, search, task_train and the x-elm trainings did on the branch point."""
    assert {s.name for s in STAGES if s.view is None} == {"params", "report"}


def test_no_data_stage_imports_the_schema_or_code_of_what_it_does_not_read() -> None:
    """Code dependencies too (both front ends track the files a stage imports): ``download`` imports no task schema,
    ``lm_data`` neither the LMs' training schema (lsnmt/xelm/config.py) nor model or checkpoint code (on the branch
    point it imported lsnmt/train/checkpoint.py and models/ through lsnmt/xelm/xglm.py)."""
    for stage in ("download", "prepare", "spm", "sample", "encode"):
        assert [f for f in module_files(f"stages.{stage}") if f.startswith(("lsnmt/tasks/", "models/"))] == [], stage
    lm = module_files("stages.lm_data")
    assert [f for f in lm if f.startswith(("lsnmt/train/", "models/")) or f == "lsnmt/xelm/config.py"] == []


def _status(repo: Path, env: dict[str, str], stages: tuple[str, ...]) -> str:
    out = subprocess.run(["dvc", "status", *stages], cwd=repo, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def _changed(repo: Path, env: dict[str, str], edit: Callable[[dict[str, Any]], None]) -> set[str]:
    """The recorded stages ``dvc status`` finds changed after ``edit`` of ``experiments.tiny`` (then undone)."""
    path = repo / "params.yaml"
    text = path.read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    edit(raw["experiments"]["tiny"])
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    try:
        out = _status(repo, env, RECORDED)
    finally:
        path.write_text(text, encoding="utf-8")
    return {s for s in RECORDED if f"{s}:" in out.splitlines()}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A copy of the repository on the tiny experiment (with a task) whose data stages and task_prep DVC recorded
    (their declared outputs written, ``dvc commit``): their rerun decisions are DVC's own."""
    repo = copy_repo(tmp_path_factory.mktemp("views"))
    raw = yaml.safe_load((ROOT / "tests/fixtures/params.tiny.yaml").read_text(encoding="utf-8"))
    raw["experiments"]["tiny"]["task_cfg"] = {"wikiann": TASK}
    params = repo / "tiny.yaml"
    params.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    use_params(repo, params)
    for stage in (s for s in STAGES if s.name in RECORDED):
        for out in stage.outs:
            folder = repo / out.path.format(exp="tiny")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "done").write_text(stage.name, encoding="utf-8")
    env = venv_env()
    run = subprocess.run(
        ["dvc", "commit", "--force", "--quiet", *RECORDED], cwd=repo, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "up to date" in _status(repo, env, RECORDED).lower()
    return repo, env


@pytest.mark.slow
def test_editing_a_tasks_learning_rate_reruns_no_data_stage(recorded: tuple[Path, dict[str, str]]) -> None:
    repo, env = recorded
    assert _changed(repo, env, lambda exp: exp["task_cfg"]["wikiann"].update(lr=0.001)) == {"task_prep"}
    # the control: what the data stages read is seen
    assert _changed(repo, env, lambda exp: exp["download"].update(retries=5)) >= {"download", "task_prep"}


@pytest.mark.slow
def test_editing_an_lm_training_setting_reruns_no_lm_data(recorded: tuple[Path, dict[str, str]]) -> None:
    repo, env = recorded
    assert _changed(repo, env, lambda exp: exp["xelm"]["seed"].update(lr=0.001)) == set()
    assert _changed(repo, env, lambda exp: exp["xelm"]["experts"].update(updates=8)) == set()
    # the control: what lm_data reads is seen
    assert _changed(repo, env, lambda exp: exp["lm_data"].update(valid_docs=5)) == {"lm_data"}


def test_a_keyed_stage_refuses_an_item_its_view_does_not_imply(capsys: pytest.CaptureFixture[str]) -> None:
    """``--expert`` of ``lm_expert`` is one of the ids its ``xelm`` section implies (lsnmt.runner.base.Each): another
    is one line naming the list, exit 2, before any work."""
    from stages import lm_expert

    params = str(ROOT / "tests/fixtures/params.tiny.yaml")
    with pytest.raises(SystemExit) as exc:
        lm_expert.main(["--experiment", "tiny", "--params", params, "--expert", "typology-k9-e0"])
    assert exc.value.code == 2
    assert "'typology-k9-e0' is not among the xelm_experts of experiment 'tiny'" in capsys.readouterr().err


def test_a_task_method_not_defined_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``task_train`` types its methods' entries where it uses them (lsnmt.methods.resolve_task): a method the
    experiment does not define stops the stage with one line naming the key path, as a bad key at load does."""
    from stages import task_train

    raw = yaml.safe_load((ROOT / "tests/fixtures/params.tasks.yaml").read_text(encoding="utf-8"))
    raw["task_methods"] = ["naive", "nope"]
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        task_train.main(["--experiment", "tinytasks", "--params", str(params)])
    assert exc.value.code == 2
    assert "task method 'nope' is not defined under experiments.tinytasks.task_method_cfg" in capsys.readouterr().err
