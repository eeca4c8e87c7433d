"""The default run's scale (scripts/scale.py, run.sh's SCALE): CPU runs `default`, CUDA runs `default_gpu` with every
method, and the switch sets DVC's top-level job lists so that params.yaml still loads."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("scale", ROOT / "scripts" / "scale.py")
scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scale)


def apply(raw: dict, args: list[str]) -> dict:
    """What ``dvc exp run -S k=v ...`` does to params.yaml's top level."""
    for flag, kv in zip(args[::2], args[1::2], strict=True):
        assert flag == "-S"
        key, value = kv.split("=", 1)
        raw[key] = yaml.safe_load(value)
    return raw


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


def test_gpu_scale_runs_every_method_on_a_larger_model(params: Params) -> None:
    cpu, gpu = params.get("default"), params.get("default_gpu")
    assert gpu.data == cpu.data
    assert gpu.model.embed_dim > cpu.model.embed_dim and gpu.train.max_steps > cpu.train.max_steps
    assert set(params.methods_of("default")) < set(params.methods_of("default_gpu"))
    assert set(params.methods_of("default_gpu")) == set(params.methods_of("default_all"))


def test_dvc_switch_to_gpu_gives_a_params_file_that_loads(params: Params, tmp_path: Path) -> None:
    args = scale.switch_args(params, "default_gpu", "dvc")
    raw = apply(yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8")), args)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    switched = Params.load(tmp_path / "params.yaml")
    assert switched.experiment == "default_gpu"
    assert switched.methods == params.methods_of("default_gpu")
    back = scale.switch_args(switched, "default", "dvc")
    assert shlex.join(back[:2]) == "-S experiment=default"


def test_no_switch_when_selected_or_outside_the_default(params: Params) -> None:
    assert scale.switch_args(params, "default", "dvc") == []
    assert scale.switch_args(params, "default_gpu", "snakemake") == ["experiment=default_gpu"]
    other = type(params).__new__(type(params))
    object.__setattr__(other, "__dict__", {**params.__dict__, "experiment": "iwslt14"})
    assert scale.switch_args(other, "default_gpu", "dvc") == []


def test_auto_is_gpu_only_with_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert scale.resolve("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert scale.resolve("auto") == "gpu"
    assert scale.resolve("cpu") == "cpu"


def test_nothing_on_stdout_without_a_switch(capsys: pytest.CaptureFixture[str]) -> None:
    """run.sh reads one argument per stdout line: no switch must print no line (an empty one would reach DVC)."""
    assert scale.main(["cpu", "dvc", "--params", str(ROOT / "params.yaml")]) == 0
    assert capsys.readouterr().out == ""
    scale.main(["gpu", "snakemake", "--params", str(ROOT / "params.yaml")])
    assert capsys.readouterr().out == "experiment=default_gpu\n"


def test_gpu_slots_are_the_visible_gpus_times_the_slots_per_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert scale.gpu_slots({}) == 2 * scale.GPU_SLOTS
    assert scale.gpu_slots({"GPU_SLOTS": "3"}) == 6
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert scale.gpu_slots({"GPU_SLOTS": "1"}) == 1
    with pytest.raises(SystemExit, match="GPU_SLOTS must be >= 1"):
        scale.gpu_slots({"GPU_SLOTS": "0"})


def test_resolve_and_slots_print_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert scale.main(["cpu", "--resolve"]) == 0
    assert capsys.readouterr().out == "cpu\n"
    assert scale.main(["gpu", "--slots"]) == 0
    assert int(capsys.readouterr().out) >= 1


@pytest.mark.slow
def test_gpu_scale_runs_snakemake_with_gpu_slots(tmp_path: Path) -> None:
    """``SCALE=gpu ./run.sh``: Snakemake (DVC runs one stage at a time) on default_gpu, the GPU rules sharing the
    slots of ``--resources gpu=<GPUs x GPU_SLOTS>``; planned with ``-n``."""
    import os
    import subprocess

    from tests.conftest import copy_repo

    repo = copy_repo(tmp_path / "repo")
    (repo / ".venv").symlink_to(ROOT / ".venv")
    out = subprocess.run(["./run.sh", "-n"], cwd=repo, env={**os.environ, "SCALE": "gpu", "GPU_SLOTS": "3"},
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "--resources gpu=3 --config experiment=default_gpu -n" in text
    assert re.search(r"^train\s+21$", text, re.M), text[-3000:]
