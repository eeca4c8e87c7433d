"""GPU faults, run with ``--device cuda`` (the CPU analogues: ``tests/train/test_faults.py``): a real CUDA
out-of-memory error in an update stops in one line naming the batch and the setting, keeps the last checkpoint, and
the next run resumes; a NaN loss in fp16 is skipped and counted in the log, and stops the run only at the loss
scale floor; in bf16 it stops at the NaN guard."""

from __future__ import annotations

import gc
import json
import logging
import math
import re
from pathlib import Path

import pytest
import torch

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.faults import OutOfMemory
from lsnmt.train.loss import default_criterion
from lsnmt.train.trainer import train
from tests.train.helpers import make_bin, tiny_experiment

pytestmark = pytest.mark.cuda

BIG_VOCAB = 32_000
"""The tiny corpus's meta.json says 32,000 pieces: a batch's logits, 4 bytes x tokens x 32,000, then dwarf the
model (the ids stay below 40, so the shards are unchanged)."""


def _big_vocab_bin(root: Path) -> Path:
    bin_dir = make_bin(root)
    meta = json.loads((bin_dir / "meta.json").read_text())
    (bin_dir / "meta.json").write_text(json.dumps({**meta, "vocab_size": BIG_VOCAB}))
    return bin_dir


def _nan_from(at: int, until: int | None = None):
    calls = [0]

    def criterion(model, sample, epsilon, pad):
        calls[0] += 1
        loss, nll, n = default_criterion(model, sample, epsilon, pad)
        bad = calls[0] >= at and (until is None or calls[0] < until)
        return (loss * math.nan, nll * math.nan, n) if bad else (loss, nll, n)

    return criterion


@pytest.mark.timeout(300)
def test_a_real_out_of_memory_stops_in_one_line_keeps_the_checkpoint_and_resumes(tmp_path: Path) -> None:
    bin_dir = _big_vocab_bin(tmp_path / "bin")
    settings = {"max_tokens": 2048, "save_every": 2, "validate_every": 100, "log_every": 2, "keep_last": 4}
    train(tiny_experiment(max_steps=4, **settings), bin_dir, tmp_path / "out", tmp_path / "work")
    gc.collect()
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(200 * 2**20 / total, 0)  # the model fits, a batch's logits do not
    try:
        with pytest.raises(
            OutOfMemory,
            match=r"^update 5: CUDA out of memory\. Tried to allocate .*, on a batch of "
            r"[\d,]+ target tokens \(.*\); lower train\.max_tokens \(now 2048\); the checkpoint of "
            r"update 4 is kept, a rerun resumes from it$",
        ) as exc:
            train(tiny_experiment(max_steps=8, **settings), bin_dir, tmp_path / "out", tmp_path / "work")
        assert "\n" not in str(exc.value)
    finally:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(1.0, 0)
    assert ckpt.load(tmp_path / "work" / "last.pt")["step"] == 4 and not (tmp_path / "work" / "step6.pt").exists()
    assert train(tiny_experiment(max_steps=8, **settings), bin_dir, tmp_path / "out", tmp_path / "work")["step"] == 8


def test_fp16_skips_a_nan_loss_counts_it_in_the_log_and_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=6, save_every=2, log_every=2, precision="fp16")
    with caplog.at_level(logging.INFO):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work", criterion=_nan_from(3, until=4))
    state = ckpt.load(tmp_path / "work" / "last.pt")
    assert state["step"] == 6 and all(torch.isfinite(v).all() for v in state["model"].values())
    assert state["scaler"]["scale"] <= 2.0**15  # halved for the NaN (and for any overflow of its own)
    assert re.search(r"skipped \d+ update\(s\) since step 2: fp16 loss or gradients not finite", caplog.text)


def test_fp16_stops_at_the_loss_scale_floor_when_the_loss_stays_nan(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=60, save_every=2, log_every=2, precision="fp16")
    with pytest.raises(FloatingPointError, match=r"^step 3: the fp16 loss scale fell to 6\.10352e-05, below 0\.0001"):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work", criterion=_nan_from(3))
    assert ckpt.load(tmp_path / "work" / "last.pt")["step"] == 2


def test_bf16_stops_at_the_nan_guard(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=8, save_every=2, log_every=2, precision="bf16")
    with pytest.raises(
        FloatingPointError,
        match=r"^step 5: training loss is nan \(non-finite\); stopped, no "
        r"checkpoint written for it or any later update$",
    ):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work", criterion=_nan_from(5))
    assert ckpt.load(tmp_path / "work" / "last.pt")["step"] == 4
