"""NER and QA end to end through both front ends on the embedded fixtures: download -> task_prep -> task_train ->
task_eval under Snakemake and under DVC give the same bytes, and a second ``dvc repro`` does nothing."""

from __future__ import annotations

import filecmp
import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, copy_repo, use_params, venv_env

OUTS = ("data/tinytasks/raw/tasks", "data/tinytasks/tasks", "results/tinytasks/tasks", "results/tinytasks/task_eval")


def _run(cmd: list[str], cwd: Path) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != ".snakemake_timestamp")


@pytest.mark.slow  # both front ends; tests/tasks/test_train.py trains NER and QA in the default tier
def test_tasks_pipeline_snakemake_and_dvc(tmp_path: Path) -> None:
    smk, dvc = copy_repo(tmp_path / "smk"), copy_repo(tmp_path / "dvc")
    for repo in (smk, dvc):
        use_params(repo, ROOT / "tests" / "fixtures" / "params.tasks.yaml")
    _run(["snakemake", "--cores", "2", "results/tinytasks/task_eval"], smk)
    _run(["dvc", "repro", "task_eval"], dvc)
    again = _run(["dvc", "repro", "task_eval"], dvc)
    assert "up to date" in again.lower() or "didn't change" in again.lower(), again
    for out in OUTS:
        files = _files(smk / out)
        assert files == _files(dvc / out), out
        _, mismatch, errors = filecmp.cmpfiles(smk / out, dvc / out, files, shallow=False)
        assert not mismatch and not errors, f"{out}: {mismatch or errors} differ between Snakemake and DVC"
    summary = json.loads((smk / "results/tinytasks/task_eval/summary.json").read_text())
    ner, qa = summary["tasks"]["wikiann"], summary["tasks"]["tydiqa"]
    assert ner["languages"] == ["en", "zh"] and qa["languages"] == ["en", "sw"]
    assert set(ner["methods"]) == {"naive", "lms_fd"} and set(ner["methods"]["lms_fd"]["routes"]) == {"share", "ls"}
    block = ner["methods"]["lms_fd"]["routes"]["share"]
    assert set(block["per_seed"]) == {"1", "2"} and 0.0 <= block["avg"] <= 100.0 and "win_ratio" in block
    assert "exact_match" in qa["methods"]["naive"]["routes"]["none"]
    params = ner["methods"]["lms_fd"]["params"]
    assert params["inference"]["share"] < params["inference"]["ls"] < params["train"]
    curve = (smk / "results/tinytasks/tasks/wikiann/lms_fd/seed1/curve.tsv").read_text().splitlines()
    assert curve[0] == "epoch\tstep\tloss\tdev_f1" and len(curve) == 3
    assert (smk / "logs/tinytasks/task_train.log").stat().st_size > 0
