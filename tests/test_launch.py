"""Several ranks per training job: the launcher command, the SLURM request, and `stages.train` under torchrun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from lsnmt.runner import launch
from lsnmt.train.config import TrainConfig
from lsnmt.typed import ConfigError, build
from tests.conftest import ROOT
from tests.train.helpers import TINY_MODEL, make_bin

ARGV = ["--experiment", "t", "--method", "naive", "--log", "logs/t/train/naive.log"]


def test_one_rank_trains_in_its_own_process() -> None:
    assert launch.command(TrainConfig(), ARGV, env={}) is None
    assert launch.command(TrainConfig(gpus_per_node=0), ARGV, env={}) is None
    assert launch.command(TrainConfig(gpus_per_node=4), ARGV, env={"WORLD_SIZE": "4"}) is None  # already a rank


def test_one_node_runs_torchrun_standalone_with_the_same_arguments() -> None:
    cmd = launch.command(TrainConfig(gpus_per_node=4), ARGV, env={}, python="py", flags=[])
    assert cmd == ["py", "-m", "torch.distributed.run", "--nproc-per-node=4", "--standalone", "-m", "stages.train",
                   "--", *ARGV]
    # this torch's torchrun waits SHUTDOWN_TIMEOUT, not 30 s, for ranks saving a checkpoint after SIGTERM
    assert launch.command(TrainConfig(gpus_per_node=4), ARGV, env={})[4] == "--shutdown-timeout=240"


def test_several_nodes_start_one_torchrun_per_node_through_srun() -> None:
    env = {"SLURM_JOB_ID": "12345"}
    cmd = launch.command(TrainConfig(gpus_per_node=4, nodes=2), ARGV, env=env, python="py", host="gpu07", cpus=32,
                         flags=[])
    assert cmd[:7] == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--cpus-per-task=32",
                       "--gpus-per-node=4", "--kill-on-bad-exit=1"]
    assert cmd[7:] == ["py", "-m", "torch.distributed.run", "--nproc-per-node=4", "--nnodes=2",
                       "--rdzv-backend=c10d", "--rdzv-endpoint=gpu07:32345", "--rdzv-id=lsnmt-12345", "-m",
                       "stages.train", "--", *ARGV]
    with pytest.raises(launch.LaunchError, match="train.nodes = 2: several nodes need a SLURM allocation"):
        launch.command(TrainConfig(gpus_per_node=4, nodes=2), ARGV, env={})


def test_job_resources_follow_params() -> None:
    assert launch.job_resources(TrainConfig()) == {"gpu": 1, "nodes": 1}
    assert launch.job_resources(TrainConfig(gpus_per_node=0)) == {"gpu": 0, "nodes": 1}
    assert launch.job_resources(TrainConfig(gpus_per_node=4)) == {"gpu": 4, "nodes": 1}
    assert launch.job_resources(TrainConfig(gpus_per_node=8, nodes=2)) == {
        "gpu": 16, "nodes": 2, "mpi": "srun", "tasks": 2, "tasks_per_gpu": 0}


@pytest.mark.parametrize(("settings", "message"), [
    ({"gpus_per_node": -1}, "train.gpus_per_node: must be >= 0"),
    ({"nodes": 0}, "train.nodes: must be >= 1"),
    ({"nodes": 2, "gpus_per_node": 0}, "train.nodes: several nodes need gpus_per_node >= 1"),
])
def test_bad_world_names_the_key(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build(TrainConfig, settings, "train")


def test_too_few_gpus_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(launch.LaunchError, match="train.gpus_per_node = 4, but this node shows 2 GPU"):
        launch.check_devices(TrainConfig(gpus_per_node=4))
    assert launch.check_devices(TrainConfig(gpus_per_node=2)) == "cuda"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_stage_relaunches_itself_under_torchrun(tmp_path: Path) -> None:
    """`python -m stages.train` with gpus_per_node: 2 on a CPU machine: two gloo ranks, one model, one log."""
    make_bin(tmp_path / "data" / "t" / "bin")
    params = {"experiment": "t", "methods": ["naive"], "experiments": {"t": {
        "data": {"languages": ["en", "de", "fr"], "sources": [{"name": "x", "kind": "embedded", "path": "embedded"}]},
        "model": TINY_MODEL, "method_cfg": {"naive": {"kind": "naive"}},
        "train": {"max_tokens": 64, "max_steps": 4, "warmup_steps": 2, "log_every": 2, "validate_every": 2,
                  "save_every": 2, "gpus_per_node": 2}}}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}
    out = subprocess.run([sys.executable, "-m", "stages.train", *ARGV], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=200)
    assert out.returncode == 0, out.stderr[-3000:]
    log = (tmp_path / ARGV[-1]).read_text()
    assert "2 rank(s) on cpu:" in log and "torch.distributed.run --nproc-per-node=2" in log
    assert "--standalone -m stages.train -- --experiment t --method naive" in log
    assert "step 00004/00004" in log and "[rank 0] lsnmt.train.trainer" in log  # rank 0 appended to the file
    assert "[rank 1]" not in log
    model = torch.load(tmp_path / "results/t/train/naive/model.pt", weights_only=False)
    assert model["step"] == 4
    assert ckpt_world(tmp_path) == 2
    assert (tmp_path / "work/locks/t/train@naive.lock").read_bytes() == b""  # released at torchrun's end


def ckpt_world(root: Path) -> int:
    """Ranks the run trained with, from its batch cursor: each update takes update_freq batches per rank."""
    from lsnmt.train import checkpoint as ckpt

    state = ckpt.load(root / "work/t/ckpt/naive/last.pt")
    return state["stream"]["offset"] // state["step"]


def test_xelm_lm_jobs_launch_their_own_stage_and_name_the_xelm_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each x-elm LM training stage sizes its world from params.yaml's ``xelm`` section and relaunches itself (not
    ``stages.train``) under torchrun; errors name ``xelm.<key>``."""
    import importlib
    from types import SimpleNamespace

    from lsnmt.runner.base import Job

    world = SimpleNamespace(gpus_per_node=2, nodes=1, world_size=2)
    cmd = launch.command(world, ["--experiment", "x"], env={}, python="py", flags=[], module="stages.lm_expert",
                         section="xelm")
    assert cmd is not None and cmd[-4:] == ["stages.lm_expert", "--", "--experiment", "x"]
    with pytest.raises(launch.LaunchError, match=r"xelm\.nodes = 2: several nodes need a SLURM allocation"):
        launch.command(SimpleNamespace(gpus_per_node=2, nodes=2, world_size=4), [], env={}, section="xelm")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(launch.LaunchError, match=r"xelm\.gpus_per_node = 2, but this node shows 1 GPU"):
        launch.check_devices(world, "xelm")

    class Relaunched(Exception):
        pass

    def relaunch(w: object, argv: list[str], module: str, section: str) -> None:
        raise Relaunched(w, argv, module, section)

    xelm = SimpleNamespace()
    view = SimpleNamespace(xelm=xelm, lm_data=SimpleNamespace(init="scratch", targets=("az",)), targets=("az",))
    for name, call in {"lm_seed": lambda m: m._seed(view, Job("x"), ["a"]),
                       "lm_lapt": lambda m: m._lapt(view, Job("x"), ["a"]),
                       "lm_expert": lambda m: m._expert(view, Job("x", item="e"), ["a"]),
                       "lm_hmr": lambda m: m._hmr(view, Job("x", item="az"), ["a"])}.items():
        stage = importlib.import_module(f"stages.{name}")
        monkeypatch.setattr(stage.launch, "relaunch", relaunch)
        with pytest.raises(Relaunched) as got:
            call(stage)
        assert got.value.args == (xelm, ["a"], f"stages.{name}", "xelm"), name


def test_xelm_world_is_checked_like_the_train_world() -> None:
    from lsnmt.xelm.config import XelmConfig

    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["experiments"]["mc4_xelm"]["xelm"]
    assert build(XelmConfig, {**raw, "gpus_per_node": 8, "nodes": 2}, "xelm").world_size == 16
    with pytest.raises(ConfigError, match="xelm.nodes: several nodes need gpus_per_node >= 1"):
        build(XelmConfig, {**raw, "nodes": 2, "gpus_per_node": 0}, "xelm")
