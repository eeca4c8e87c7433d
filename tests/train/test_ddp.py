"""Two gloo ranks on CPU train exactly like one process with twice the update_freq (same global batch)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.multiprocessing as mp

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.trainer import train
from tests.train.helpers import make_bin, tiny_experiment

SETTINGS: dict[str, Any] = {"max_steps": 2, "save_every": 1, "keep_last": 5, "clip_norm": 0.5, "max_tokens": 48,
                            "warmup_init_lr": 1e-3, "adam_eps": 1e-4}
"""A real learning rate from the first update on. ``adam_eps`` 1e-4 rather than 1e-8: Adam's update
``g / (|g| + eps)`` would otherwise turn float noise on gradients that are zero in exact arithmetic
(e.g. the key bias of attention, which softmax ignores) into differences of order ``lr``."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank: int, world: int, port: int, bin_dir: Path, root: Path, settings: dict[str, Any]) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    train(tiny_experiment(**settings), bin_dir, root / "out", root / "work")


def _assert_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], what: str) -> None:
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6, msg=lambda m, k=k: f"{what} {k}: {m}")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_gloo_ranks_equal_one_process(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    mp.spawn(_rank, args=(2, _free_port(), bin_dir, tmp_path / "ddp", SETTINGS), nprocs=2, join=True)
    train(tiny_experiment(**SETTINGS, update_freq=2), bin_dir, tmp_path / "one" / "out", tmp_path / "one" / "work")

    beta1 = tiny_experiment().train.adam_betas[0]
    for step in (1, 2):
        ddp, one = (ckpt.load(tmp_path / run / "work" / f"step{step}.pt") for run in ("ddp", "one"))
        assert ddp["stream"] == one["stream"] == {"epoch": 0, "offset": 2 * step}
        assert ddp["meters"]["ntokens"] == one["meters"]["ntokens"]
        _assert_close(ddp["model"], one["model"], f"step {step} weight")
        if step == 1:  # Adam's first moment after one update is (1 - beta1) * gradient
            grads = [{str(i): s["exp_avg"] / (1 - beta1) for i, s in run["optimizer"]["state"].items()}
                     for run in (ddp, one)]
            _assert_close(*grads, "step 1 gradient")
            assert any(g.abs().max() > 1e-3 for g in grads[0].values())
