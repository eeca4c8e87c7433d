"""A run stopped on 2 gloo ranks resumes on 1 rank where ranks x update_freq stays the same (the data of every
update does), close to the uninterrupted run, and is refused in one line naming both layouts where it does not
(``lsnmt.train.ranks``)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.loss import default_criterion
from lsnmt.train.ranks import RanksMismatch
from lsnmt.train.trainer import Interrupted, train
from tests.train.helpers import make_bin, tiny_experiment
from tests.train.test_ddp import SETTINGS as DDP_SETTINGS

SETTINGS = {**DDP_SETTINGS, "max_steps": 8, "save_every": 2, "keep_last": 2, "log_every": 2, "validate_every": 4}
STOP_AT = 5
"""Rank 1 signals itself during its fifth micro-batch: both ranks stop after update 5."""


def _signalling(rank: int):
    calls = [0]

    def criterion(model, sample, epsilon, pad):
        calls[0] += 1
        if rank == 1 and calls[0] == STOP_AT:
            os.kill(os.getpid(), signal.SIGTERM)
        return default_criterion(model, sample, epsilon, pad)

    return criterion


def _rank(rank: int, world: int, port: int, bin_dir: Path, root: Path) -> None:
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        GLOO_SOCKET_IFNAME="lo",
    )
    torch.set_num_threads(1)
    try:
        train(tiny_experiment(**SETTINGS), bin_dir, root / "out", root / "work", criterion=_signalling(rank))
    except Interrupted:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_ranks_resume_on_one_with_twice_the_update_freq_or_are_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    mp.spawn(_rank, args=(2, _free_port(), bin_dir, tmp_path / "two"), nprocs=2, join=True)
    assert ckpt.load(tmp_path / "two" / "work" / "last.pt")["step"] == STOP_AT
    torch.set_num_threads(1)
    for name in ("same", "other"):
        shutil.copytree(tmp_path / "two", tmp_path / name)

    with caplog.at_level(logging.INFO):  # 2 ranks x 1 -> 1 rank x 2: the same global batches
        train(
            tiny_experiment(**SETTINGS, update_freq=2), bin_dir, tmp_path / "same" / "out", tmp_path / "same" / "work"
        )
    assert f"at step {STOP_AT} (epoch" in caplog.text and not (tmp_path / "same" / "work.stale").exists()
    train(tiny_experiment(**SETTINGS, update_freq=2), bin_dir, tmp_path / "one" / "out", tmp_path / "one" / "work")
    resumed, one = (ckpt.load(tmp_path / run / "work" / "last.pt") for run in ("same", "one"))
    assert resumed["step"] == one["step"] == 8 and resumed["stream"] == one["stream"]
    for k in one["model"]:
        torch.testing.assert_close(resumed["model"][k], one["model"][k], rtol=0, atol=1e-5)

    with pytest.raises(
        RanksMismatch,
        match=r"work: its run took 2 global batches per update \(2 rank\(s\) x train\."
        r"update_freq 1\), this one would take 1 \(1 x 1\), another data order; set train\.update_freq:"
        r" 2 to resume it on 1 rank\(s\), or move the folder away to train afresh$",
    ):
        train(tiny_experiment(**SETTINGS), bin_dir, tmp_path / "other" / "out", tmp_path / "other" / "work")
    assert ckpt.load(tmp_path / "other" / "work" / "last.pt")["step"] == STOP_AT  # nothing moved aside
