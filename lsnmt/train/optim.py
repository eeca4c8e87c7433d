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

**Linear warm-up from the first update** (the XLM-R tasks: the XTREME recipe's Hugging Face
``get_linear_schedule_with_warmup``, whose first update would run at rate 0; here it runs at ``lr / warmup``)::

    lr(n) = lr * (n + 1) / warmup                                   n <  warmup
    lr(n) = lr * max(0, (total - n) / max(1, total - warmup))       n >= warmup

**No decay on biases and LayerNorms** (``exempt`` of :func:`adamw`; the XTREME / Hugging Face fine-tuning recipe
the tasks follow): those parameters form a group with weight decay 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import torch
from torch import nn


class AdamSettings(Protocol):
    """What :func:`build_optimizer` reads: ``TrainConfig`` (translation) or ``LMTrainConfig`` (x-elm)."""

    @property
    def adam_betas(self) -> tuple[float, ...]: ...
    @property
    def adam_eps(self) -> float: ...
    @property
    def weight_decay(self) -> float: ...
    @property
    def warmup_init_lr(self) -> float: ...


def adam_of(cfg: AdamSettings, *, fused: bool | None = None) -> Adam:
    """The :class:`Adam` settings of a ``train`` section (translation) or an x-elm job's."""
    beta1, beta2 = cfg.adam_betas
    return Adam(betas=(beta1, beta2), eps=cfg.adam_eps, weight_decay=cfg.weight_decay, fused=fused)


def build_optimizer(params: Iterable[nn.Parameter], cfg: AdamSettings, *, fused: bool = False
                    ) -> torch.optim.Optimizer:
    """AdamW with ``cfg``'s betas, eps and weight decay over ``params`` (the rate is set by :func:`set_lr` each
    update): what the trainers build (:class:`Adam`), for code that optimises outside a job (benchmarks)."""
    a = adam_of(cfg)
    return adamw(params, lr=cfg.warmup_init_lr, betas=a.betas, eps=a.eps, weight_decay=a.weight_decay, fused=fused)


@dataclass(frozen=True, kw_only=True)
class Adam:
    """AdamW's settings, flat (each trainer fills them from its own section: ``train``, an x-elm job's, a task's)."""

    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    exempt: Callable[[str], bool] | None = None
    """Parameters (by name) that get weight decay 0 (the tasks: :func:`bias_or_layer_norm`); ``None``: none."""
    fused: bool | None = None
    """Fused AdamW: ``True`` always (translation, as before), ``None``: on CUDA only (x-elm, the tasks). Fused and
    unfused kernels round differently on a CPU, so each trainer keeps the one it had."""

    def build(self, model: nn.Module, device: torch.device, lr: float) -> torch.optim.Optimizer:
        """:func:`adamw` over ``model``'s parameters, starting at rate ``lr`` (set again before every update)."""
        fused = device.type == "cuda" if self.fused is None else self.fused
        if self.exempt is None:
            return adamw(model.parameters(), lr=lr, betas=self.betas, eps=self.eps, weight_decay=self.weight_decay,
                         fused=fused)
        return adamw(model, lr=lr, betas=self.betas, eps=self.eps, weight_decay=self.weight_decay, fused=fused,
                     exempt=self.exempt)


@dataclass(frozen=True, kw_only=True)
class Schedule:
    """A learning-rate schedule: :meth:`at` ``(n)`` is the rate of update ``n + 1`` (the module docstring):
    ``constant``; ``inverse_sqrt`` (translation); ``linear``, warm-up from ``warmup_init_lr`` then decay to
    ``end_lr`` at ``total`` (x-elm); ``linear_warmup``, warm-up from ``lr / warmup`` then decay to 0 (the tasks)."""

    kind: Literal["constant", "inverse_sqrt", "linear", "linear_warmup"]
    lr: float
    """The peak rate."""
    warmup: int = 0
    total: int = 0
    """The updates of the whole job (``linear``, ``linear_warmup``)."""
    warmup_init_lr: float = 0.0
    end_lr: float = 0.0

    def at(self, n: int) -> float:
        """The rate of update ``n + 1``."""
        if self.kind == "constant":
            return self.lr
        if self.kind == "inverse_sqrt":
            return inverse_sqrt(n, lr=self.lr, warmup=self.warmup, warmup_init_lr=self.warmup_init_lr)
        if self.kind == "linear":
            return linear_decay(n, lr=self.lr, warmup=self.warmup, total=self.total,
                                warmup_init_lr=self.warmup_init_lr, end_lr=self.end_lr)
        return linear_warmup_decay(n, lr=self.lr, warmup=self.warmup, total=self.total)


def bias_or_layer_norm(name: str) -> bool:
    """A parameter the XTREME recipe does not decay: a bias or a LayerNorm weight (Hugging Face's names)."""
    return name.endswith("bias") or "LayerNorm" in name


def adamw(params: Iterable[nn.Parameter] | nn.Module, *, lr: float, eps: float, weight_decay: float,
          betas: tuple[float, float] = (0.9, 0.999), fused: bool = False,
          exempt: Callable[[str], bool] | None = None) -> torch.optim.Optimizer:
    """:class:`torch.optim.AdamW` (fused on request); with ``exempt`` (``params`` then a module), the parameters
    whose name it accepts get weight decay 0 (e.g. :func:`bias_or_layer_norm`)."""
    groups: Iterable[nn.Parameter] | list[dict[str, Any]]
    if exempt is not None:
        if not isinstance(params, nn.Module):
            raise TypeError("adamw(exempt=...) needs the module, to read its parameter names")
        decay: list[nn.Parameter] = []
        rest: list[nn.Parameter] = []
        for name, p in params.named_parameters():
            (rest if exempt(name) else decay).append(p)
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]
    else:
        groups = params.parameters() if isinstance(params, nn.Module) else params
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, fused=fused or None)


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


def linear_warmup_decay(n: int, *, lr: float, warmup: int, total: int) -> float:
    """The tasks' rate after ``n`` updates: linear warm-up from ``lr / warmup`` on update 1, then linear decay to 0
    at update ``total`` (see the module docstring)."""
    if n < warmup:
        return lr * ((n + 1) / warmup)
    return lr * max(0.0, (total - n) / max(1, total - warmup))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
