"""Device faults on the CPU (``lsnmt.train.faults``; the GPU runs are ``tests/device/test_faults.py``): an update out
of memory stops with one line naming the batch and the setting, keeps the last checkpoint, and the next run
resumes; fp16 skips of a non-finite loss are counted in the log until the loss scale floor; fp32 / bf16 stop at the
NaN guard."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest
import torch
from torch import nn

from lsnmt.runner.base import guarded
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.faults import MIN_LOSS_SCALE, OutOfMemory
from lsnmt.train.loop import Job, Update, run_updates
from lsnmt.train.loss import default_criterion
from lsnmt.train.trainer import train
from lsnmt.train.update import Updater, update
from tests.train.helpers import assert_equal_weights, make_bin, tiny_experiment, weights

CUDA_OOM = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.1 GiB"


def _job(updates, saves: list[int], **kw: object) -> Job:
    def save(step: int, *, periodic: bool, improved: bool) -> None:
        saves.append(step)

    return Job(name="t", total=6, log_every=2, save_every=2, update=updates, save=save, **kw)  # type: ignore[arg-type]


def test_fp16_skips_of_a_non_finite_loss_are_counted_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """fairseq skips an fp16 update whose loss overflows and goes on; the old loop stopped on its NaN loss."""
    calls = [0]

    def updates(n: int) -> Update:
        calls[0] += 1
        if calls[0] in (2, 3):  # the scaler found the NaN and did not step
            return Update(loss=torch.tensor(math.nan), nll=torch.tensor(math.nan), ntokens=10, lr=0.1, skipped=True)
        return Update(loss=torch.tensor(1.0), nll=torch.tensor(1.0), ntokens=10, lr=0.1, grad_norm=torch.tensor(1.0))

    saves: list[int] = []
    with caplog.at_level(logging.INFO):
        assert run_updates(_job(updates, saves), 0, Meters()) == 6
    assert calls[0] == 8 and saves == [2, 4, 6]
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped")]
    assert lines == [
        "skipped 2 update(s) since step 0: fp16 loss or gradients not finite (not counted, as fairseq; "
        "the loss scale is lowered each time)"
    ]


def test_an_update_out_of_memory_stops_in_one_line_and_saves_nothing() -> None:
    def updates(n: int) -> Update:
        if n == 4:
            raise torch.OutOfMemoryError(CUDA_OOM + "\nmore lines of the allocator")
        return Update(loss=1.0, nll=1.0, ntokens=10, lr=0.1)

    saves: list[int] = []
    with pytest.raises(OutOfMemory) as exc:
        run_updates(_job(updates, saves, describe_batch=lambda: "a batch of 9 tokens; lower x.max_tokens"), 0, Meters())
    assert str(exc.value) == (
        "update 5: CUDA out of memory. Tried to allocate 2.00 GiB, on a batch of 9 tokens; lower "
        "x.max_tokens; the checkpoint of update 4 is kept, a rerun resumes from it"
    )
    assert saves == [2, 4]


def test_the_stage_prints_the_out_of_memory_line_whole(caplog: pytest.LogCaptureFixture) -> None:
    """The stage runner's generic out-of-memory line cut the message at 200 characters (the setting went first)."""
    line = "update 5: CUDA out of memory, on a batch of " + "9" * 200 + " tokens; lower train.max_tokens (now 8192)"

    def fails() -> None:
        raise OutOfMemory(line)

    with pytest.raises(SystemExit) as exc, caplog.at_level(logging.ERROR):
        guarded("train", fails)
    assert exc.value.code == 1 and [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [line]


def test_the_fp16_loss_scale_floor_stops_a_loss_that_is_never_finite() -> None:
    """Every update skipped, the scale halved each time: below fairseq's minimum the run stops (the old update
    skipped for ever)."""
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**-10)
    t = Updater(
        model=model,
        net=model,
        optimizer=opt,
        scaler=scaler,
        dist=Dist(0, 1, torch.device("cpu"), False),
        ddp=None,
        precision="fp16",
        clip_norm=0.0,
    )

    def micro() -> tuple[torch.Tensor, torch.Tensor]:
        loss = model(torch.ones(1, 2)).sum() * math.nan
        return loss, loss.detach().reshape(1)

    skipped = [update(t, [micro], 0.1, n).skipped for n in range(3)]
    assert skipped == [True, True, True] and scaler.get_scale() == 2.0**-13 > MIN_LOSS_SCALE
    with pytest.raises(FloatingPointError, match=r"^step 4: the fp16 loss scale fell to 6.10352e-05, below 0.0001"):
        update(t, [micro], 0.1, 3)


def _failing(kind: str, at: int):
    """A criterion that, on its ``at``-th call, runs out of memory (``oom``) or returns a NaN loss (``nan``)."""
    calls = [0]

    def criterion(model, sample, epsilon, pad):
        calls[0] += 1
        if calls[0] == at and kind == "oom":
            raise torch.OutOfMemoryError(CUDA_OOM)
        loss, nll, n = default_criterion(model, sample, epsilon, pad)
        return (loss * math.nan, nll, n) if calls[0] >= at and kind == "nan" else (loss, nll, n)

    return criterion


SETTINGS = {"max_steps": 8, "save_every": 2, "validate_every": 4, "log_every": 2, "keep_last": 8}


def test_out_of_memory_keeps_the_last_checkpoint_and_the_next_run_resumes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(**SETTINGS)
    train(exp, bin_dir, tmp_path / "ref" / "out", tmp_path / "ref" / "work")
    run = tmp_path / "run"
    with pytest.raises(
        OutOfMemory,
        match=r"^update 5: CUDA out of memory\. Tried to allocate 2\.00 GiB, on a batch of "
        r"\d+ target tokens \(\d+ sentences in 1 micro-batch\(es\), the largest \d+ sentences x \d+ source \+ "
        r"\d+ target positions\); lower train\.max_tokens \(now 64\); the checkpoint of update 4 is kept",
    ):
        train(exp, bin_dir, run / "out", run / "work", criterion=_failing("oom", 5))
    assert ckpt.load(run / "work" / "last.pt")["step"] == 4 and not (run / "work" / "step6.pt").exists()
    with caplog.at_level(logging.INFO):
        train(exp, bin_dir, run / "out", run / "work")
    assert "at step 4 (epoch" in caplog.text
    assert_equal_weights(weights(run / "out" / "model.pt"), weights(tmp_path / "ref" / "out" / "model.pt"))
    assert (run / "out" / "curve.tsv").read_text() == (tmp_path / "ref" / "out" / "curve.tsv").read_text()


def test_a_nan_loss_in_fp32_stops_at_the_nan_guard_and_the_next_run_resumes(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(**SETTINGS)
    with pytest.raises(
        FloatingPointError,
        match=r"^step 5: training loss is nan \(non-finite\); stopped, no "
        r"checkpoint written for it or any later update$",
    ):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work", criterion=_failing("nan", 5))
    assert ckpt.load(tmp_path / "work" / "last.pt")["step"] == 4
    assert train(exp, bin_dir, tmp_path / "out", tmp_path / "work")["step"] == 8
