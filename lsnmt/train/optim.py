"""Adam with decoupled weight decay and fairseq's ``inverse_sqrt`` learning-rate schedule.

**Optimizer.** fairseq's ``Adam`` (``fairseq/optim/adam.py``) is Adam (Kingma & Ba,
2015) with the decoupled weight decay of Loshchilov & Hutter (2019),
``p <- p - lr * wd * p``: that is :class:`torch.optim.AdamW`. One difference is
left as is: fairseq adds ``eps`` to ``sqrt(v_t)`` before bias correction,
torch after (``sqrt(v_t / (1 - beta2^t)) + eps``); with ``eps = 1e-8`` the two
agree to ~1e-8 relative once ``v_t`` is not tiny.

**Schedule** (fairseq ``InverseSquareRootSchedule``), ``n`` = updates done so far::

    lr(n) = warmup_init_lr + n * (lr - warmup_init_lr) / warmup     n <  warmup
    lr(n) = lr * sqrt(warmup) / sqrt(n)                              n >= warmup

As in fairseq's trainer, update ``n + 1`` runs with ``lr(n)``: the first update uses
``warmup_init_lr`` and the rate peaks at ``lr`` on update ``warmup + 1``.

**Linear decay** (fairseq / metaseq ``polynomial_decay`` with power 1; the x-elm experts, App. A.1)::

    lr(n) = warmup_init_lr + n * (lr - warmup_init_lr) / warmup     n <  warmup
    lr(n) = end_lr + (lr - end_lr) * (total - n) / (total - warmup)  warmup <= n <= total
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol

import torch
from torch import nn

from lsnmt.config import TrainConfig


class AdamSettings(Protocol):
    """What :func:`build_optimizer` reads: ``TrainConfig`` (translation) or ``LMTrainConfig`` (x-elm)."""

    adam_betas: tuple[float, ...]
    adam_eps: float
    weight_decay: float
    warmup_init_lr: float


def build_optimizer(params: Iterable[nn.Parameter], cfg: AdamSettings, *, fused: bool = False
                    ) -> torch.optim.Optimizer:
    """AdamW with ``cfg``'s betas, eps and weight decay (the rate is set by :func:`set_lr` each update)."""
    beta1, beta2 = cfg.adam_betas
    return torch.optim.AdamW(params, lr=cfg.warmup_init_lr, betas=(beta1, beta2), eps=cfg.adam_eps,
                             weight_decay=cfg.weight_decay, fused=fused or None)


def inverse_sqrt_lr(n: int, cfg: TrainConfig) -> float:
    """Learning rate after ``n`` updates (see the module docstring)."""
    return inverse_sqrt(n, lr=cfg.lr, warmup=cfg.warmup_steps, warmup_init_lr=cfg.warmup_init_lr)


def inverse_sqrt(n: int, *, lr: float, warmup: int, warmup_init_lr: float) -> float:
    """fairseq's ``inverse_sqrt`` rate after ``n`` updates."""
    if warmup < 1:
        raise ValueError(f"inverse_sqrt needs warmup_steps >= 1, got {warmup}")
    if n < warmup:
        return warmup_init_lr + n * (lr - warmup_init_lr) / warmup
    return lr * math.sqrt(warmup) / math.sqrt(n)


def linear_decay(n: int, *, lr: float, warmup: int, total: int, warmup_init_lr: float = 0.0,
                 end_lr: float = 0.0) -> float:
    """Linear warm-up then linear decay to ``end_lr`` at update ``total`` (see the module docstring)."""
    if n < warmup:
        return warmup_init_lr + n * (lr - warmup_init_lr) / warmup
    if n >= total:
        return end_lr
    return end_lr + (lr - end_lr) * (total - n) / (total - warmup)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
