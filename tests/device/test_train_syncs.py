"""The translation trainer's steady-state update on a GPU under ``torch.cuda.set_sync_debug_mode("error")``: any
host-device synchronisation (a device value read, a blocking copy) raises. The CPU twin is
``tests/train/test_syncs.py`` (models/syncs.py counts the same calls on a CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from lsnmt.train.dist import Dist
from lsnmt.train.step import train_step
from lsnmt.train.trainer import setup, wrap
from models.build import build_transformer
from tests.train.helpers import make_bin, tiny_experiment

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("batching", ["direction", "mixed"])
@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_updates_raise_no_sync_on_the_gpu(tmp_path: Path, batching: str, precision: str) -> None:
    exp = tiny_experiment(batching=batching, precision=precision, max_steps=100, max_tokens=96)
    run, _ = setup(exp, make_bin(tmp_path), Dist.from_env(), build_transformer, None)
    wrap(run, None)
    try:
        for _ in range(2):  # warm-up
            train_step(run, run.feed.next())
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            updates = [train_step(run, run.feed.next()) for _ in range(6)]
        finally:
            torch.cuda.set_sync_debug_mode("default")
    finally:
        run.feed.close()
    assert all(bool(torch.isfinite(u.loss)) for u in updates)
