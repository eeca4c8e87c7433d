"""scripts/gpu_check.py: its short run's params load, and on a machine without a GPU it says so and runs nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
import yaml

from lsnmt.config import Params
from lsnmt.methods import resolve

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)


def test_the_short_run_is_default_gpu_on_four_languages_and_one_method_per_family(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(gpu_check.subset_params(300)), encoding="utf-8")
    params = Params.load(path)
    exp, full = params.get(), Params.load(ROOT / "params.yaml").get("default_gpu")
    assert exp.name == "gpu_check" and exp.data.languages == gpu_check.LANGUAGES
    assert exp.train.max_steps == 300 and exp.model == full.model
    assert params.methods == gpu_check.METHODS
    assert {resolve(exp, m)[0] for m in gpu_check.METHODS} == {None, "lms", "clm", "lsl"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path")
def test_without_a_gpu_it_says_so_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_check.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "**No GPU**" in out and "nothing that needs one ran" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_check.md"]  # no step logs: nothing else ran
