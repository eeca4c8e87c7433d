"""The run record (lsnmt/record.py): each training's and evaluation's output says which Python, torch, CUDA, git
commit (or "dirty") and machine produced it; the train stage also draws its curve as an image. Failed before the
record existed (no ``run.json`` anywhere)."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import pytest
import torch

from lsnmt import record
from lsnmt.experiment.params import Params
from lsnmt.runner.base import Job
from lsnmt.view import load_view
from tests.eval.helpers import train_view

ROOT = Path(__file__).resolve().parents[1]


def test_the_record_names_versions_commit_and_machine() -> None:
    rec = record.current()
    assert rec["python"] == platform.python_version() and rec["torch"] == torch.__version__
    assert rec["cuda"] == torch.version.cuda and rec["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert rec["commit"] == head.strip() and len(rec["commit"]) == 40 and isinstance(rec["dirty"], bool)
    assert rec["machine"]["cores"] and rec["machine"]["host"] and rec["machine"]["processor"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_dirty_means_changed_tracked_code_not_run_outputs(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    assert record.git_state(tmp_path)["dirty"] is False
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n")  # DVC rewrites it during a run
    (tmp_path / "index.html").write_text("a report\n")  # an untracked output of a run (reports/, dvclive/)
    assert record.git_state(tmp_path)["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    state = record.git_state(tmp_path)
    assert state["dirty"] is True and len(state["commit"]) == 40
    assert record.commit_text(state).endswith("+ uncommitted changes (dirty)")


def test_outside_a_git_checkout_there_is_no_commit(tmp_path: Path) -> None:
    assert record.git_state(tmp_path / "nowhere") == {"commit": None, "dirty": None}
    assert record.commit_text({"commit": None}) == "no git commit"


def test_only_the_main_rank_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    assert record.write(tmp_path) is None and not (tmp_path / record.NAME).exists()
    monkeypatch.setenv("RANK", "0")
    assert record.write(tmp_path, extra=1) == tmp_path / record.NAME
    assert json.loads((tmp_path / record.NAME).read_text())["extra"] == 1


def test_the_train_stage_writes_its_record_and_curve_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``stages.train`` around a stand-in training that writes what ``train_method`` writes."""
    import stages.train as stage

    def fake_train(view: Any, exp: str, method: str, bin_dir: Path, out: Path, work: Path) -> dict:
        out.mkdir(parents=True, exist_ok=True)
        (out / "curve.tsv").write_text(
            "step\tloss\tnll\tlr\tvalid_loss\n10\t5.0\t4.9\t0.001\t\n20\t4.0\t3.9\t0.002\t4.5\n", encoding="utf-8"
        )
        return {}

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.setattr(stage, "train_method", fake_train)
    exp = Params.load(ROOT / "params.yaml").get("default")
    stage._train(train_view(exp), Job(exp.name, item="naive"), [])
    out = tmp_path / "results" / "default" / "train" / "naive"
    rec = json.loads((out / record.NAME).read_text(encoding="utf-8"))
    assert rec["torch"] == torch.__version__ and rec["machine"]["cores"]
    png = (out / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_the_evaluation_record_carries_its_trainings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``stages.evaluate`` copies each method's training record into ``evaluate/run.json`` (its declared input
    ``results/{exp}/train``), where the report reads the run's machine."""
    import stages.evaluate as stage

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANK", raising=False)
    trained = tmp_path / "results" / "default" / "train"
    (trained / "naive").mkdir(parents=True)
    (trained / "naive" / record.NAME).write_text(json.dumps({"machine": {"host": "node-1"}}), encoding="utf-8")

    def fake_evaluate(view: Any, exp: str, methods: tuple[str, ...], *paths: Path) -> dict:
        paths[-1].mkdir(parents=True)
        return {}

    monkeypatch.setattr(stage, "evaluate", fake_evaluate)
    monkeypatch.setattr(stage, "mt_rows", lambda summary: {})
    monkeypatch.setattr(stage, "write_metrics", lambda *args: None)
    _, view = load_view(ROOT / "params.yaml", "default", stage.VIEW)
    stage._evaluate(view, Job("default", {"methods": ("naive", "lms")}))
    rec = json.loads((tmp_path / "results" / "default" / "evaluate" / record.NAME).read_text(encoding="utf-8"))
    assert rec["train"] == {"naive": {"machine": {"host": "node-1"}}, "lms": None}
    assert rec["python"] == platform.python_version() and "commit" in rec
