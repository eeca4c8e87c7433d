"""fairseq ``inverse_sqrt`` schedule values and the optimizer's settings."""

from __future__ import annotations

import math

import pytest
import torch

from lsnmt.train.optim import build_optimizer
from lsnmt.train.trainer import schedule
from tests.train.helpers import tiny_experiment

CFG = tiny_experiment(lr=5e-4, warmup_steps=4000, warmup_init_lr=1e-7).train


def inverse_sqrt_lr(n: int, cfg: object) -> float:
    return schedule(cfg).at(n)  # type: ignore[arg-type]


@pytest.mark.parametrize(("n", "expected"), [
    (0, 1e-7),                                  # first update: warmup_init_lr
    (2000, 1e-7 + 2000 * (5e-4 - 1e-7) / 4000),  # half-way: linear
    (4000, 5e-4),                               # peak
    (16000, 2.5e-4),                            # lr * sqrt(4000 / 16000)
    (100000, 5e-4 * math.sqrt(4000 / 100000)),
])
def test_inverse_sqrt_values(n: int, expected: float) -> None:
    assert inverse_sqrt_lr(n, CFG) == pytest.approx(expected, rel=1e-12)


def test_continuous_at_the_end_of_warmup() -> None:
    assert inverse_sqrt_lr(3999, CFG) < inverse_sqrt_lr(4000, CFG) > inverse_sqrt_lr(4001, CFG)


def test_zero_warmup_is_rejected() -> None:
    with pytest.raises(ValueError, match="warmup_steps"):
        inverse_sqrt_lr(1, tiny_experiment(warmup_steps=0).train)


def test_adam_settings_come_from_config() -> None:
    cfg = tiny_experiment(adam_betas=[0.9, 0.98], adam_eps=1e-6, weight_decay=0.01).train
    opt = build_optimizer([torch.nn.Parameter(torch.zeros(2))], cfg)
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.AdamW)
    assert (group["betas"], group["eps"], group["weight_decay"]) == ((0.9, 0.98), 1e-6, 0.01)
