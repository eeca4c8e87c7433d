"""Two gloo ranks on CPU train an x-elm LM like one process on the same update (the shared update's DDP path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from lsnmt.train import checkpoint as ckpt
from lsnmt.xelm import jobs
from lsnmt.xelm import trainer as lm_trainer
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm
from tests.train.test_ddp import _assert_close, _free_port

from .helpers import experiment, make_lm_dir

LM = {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "layers": 2, "block_size": 8, "dropout": 0.0}
"""No dropout: each rank draws its own masks, so only a dropout-free run can equal one process."""
SEED = {"updates": 3, "batch_tokens": 32, "lr": 0.003, "warmup_updates": 1, "log_every": 1, "save_every": 1,
        "adam_eps": 1e-4}
"""``adam_eps`` 1e-4: see ``tests/train/test_ddp.py`` (float noise on gradients that are zero in exact arithmetic)."""


def _train(root: Path, name: str) -> None:
    exp = experiment(lm=LM, seed=SEED)
    lm = root / "data" / "t" / "lm"
    train_lm(jobs.seed_job(exp.xelm, lm), exp.xelm.lm, lm, load_meta(lm), root / "work" / name, root / "results" / name)


def _rank(rank: int, world: int, port: int, root: Path) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    real = lm_trainer._update

    def recorded(*args, **kwargs):  # the blocks this rank trains on, per update
        blocks = next(a for a in args if isinstance(a, torch.Tensor))
        with (root / f"rows{rank}.txt").open("a") as fh:
            fh.write(f"{blocks.shape[0]}\n")
        return real(*args, **kwargs)

    lm_trainer._update = recorded  # this spawned process only
    _train(root, "ddp")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_two_gloo_ranks_train_an_lm_like_one_process(tmp_path: Path) -> None:
    make_lm_dir(tmp_path / "data" / "t")
    mp.spawn(_rank, args=(2, _free_port(), tmp_path), nprocs=2, join=True)
    _train(tmp_path, "one")
    for rank in (0, 1):  # each rank trained 2 of every update's 4 blocks
        assert (tmp_path / f"rows{rank}.txt").read_text().split() == ["2"] * 3
    ddp, one = (ckpt.load(tmp_path / "work" / r / "last.pt") for r in ("ddp", "one"))
    assert ddp["step"] == one["step"] == 3 and ddp["stream"] == one["stream"]
    _assert_close(ddp["model"], one["model"], "weight")
    rows = [(tmp_path / "results" / r / "curve.tsv").read_text().splitlines()[1:] for r in ("ddp", "one")]
    losses = [[float(line.split("\t")[1]) for line in r] for r in rows]
    assert len(losses[0]) == 3 and losses[0] == pytest.approx(losses[1], abs=1e-6)  # the loss summed over ranks
