"""One optimizer update over micro-batches: the one backward of every trainer (translation,
:mod:`lsnmt.train.step`; x-elm's LMs, :mod:`lsnmt.xelm.trainer`; the XLM-R tasks, :mod:`lsnmt.tasks.train`).

A trainer gives only what differs: one callable per micro-batch, ``micro() -> (loss_j, stats_j)``, the loss to
back-propagate (already normalised: translation ``L(b_j) * W / N``, x-elm ``nll_j / N``, the tasks the batch's
mean loss) and a vector of statistics to report, and the update's learning rate. :func:`update` does the rest::

    for j = 1 … F:   (loss_j, stats_j) = micro_j()          under autocast (bf16 / fp16 on CUDA)
                     backward(s * loss_j)                   s: the fp16 loss scale (1 otherwise); DDP all-reduces
                                                            the gradients on j = F only (``no_sync`` before)
    g <- (1 / W) sum_ranks g                                 several ranks without DDP: one flat all-reduce
    stats = sum_ranks sum_j stats_j                          float64, on the device
    g <- g / s;  n = ||g||_2;  g <- g * min(1, c / n)        clipped when ``clip_norm`` c > 0
    step with ``lr`` (AdamW), unless fp16 found an overflow: then skipped and not counted (fairseq: "gradient
    overflow detected, ignoring gradient"); below fairseq's minimum loss scale, stopped (lsnmt.train.faults)

**No host sync.** ``stats`` and ``n`` stay on the device: :func:`lsnmt.train.loop.run_updates` reads them at its
next check, where its NaN guard stops a run before any checkpoint of a non-finite update is written. Only fp16
reads one flag per update (the scaler's overflow, which ``GradScaler.step`` reads anyway).

**Several ranks.** A trainer whose ``net`` is a :class:`~torch.nn.parallel.DistributedDataParallel` wrapper
(``ddp``) lets DDP average the gradients in the backward of its last micro-batch; one whose criterion cannot go
through DDP's per-forward bookkeeping (a two-pass criterion, e.g. Fuse Distillation) leaves ``ddp`` unset and
the gradients are averaged here in one flat all-reduce (fairseq's ``legacy_ddp``). Each rank's losses are
normalised so that the average over ranks is the update's gradient (``W / N`` above).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel

from lsnmt.train.dist import Dist
from lsnmt.train.faults import MIN_LOSS_SCALE, loss_scale_error
from lsnmt.train.optim import set_lr

log = logging.getLogger(__name__)

Micro = Callable[[], tuple[Tensor, Tensor]]
"""One micro-batch's forward: ``(loss to back-propagate, statistics to sum: a 1-D tensor)``."""


def amp_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of ``precision`` on ``device``: bf16 / fp16 on CUDA, none on a CPU or for fp32."""
    if device.type != "cuda" or precision == "fp32":
        return None
    return torch.bfloat16 if precision == "bf16" else torch.float16


def autocast(dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """CUDA autocast to ``dtype`` (``None``: none)."""
    return torch.autocast("cuda", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def grad_scaler(precision: str, device: torch.device, init_scale: float = 2.0**16) -> torch.amp.GradScaler:
    """Dynamic loss scaling for fp16 on a GPU (from ``init_scale``); a disabled pass-through otherwise."""
    return torch.amp.GradScaler(device.type, init_scale=init_scale,
                                enabled=device.type == "cuda" and precision == "fp16")


class Trainee(Protocol):
    """What :func:`update` reads and mutates (translation's :class:`lsnmt.train.step.Run`, or :class:`Updater`)."""

    model: nn.Module
    """The bare model: its parameters are clipped, synchronised and stepped."""
    net: nn.Module
    """What the forwards go through: ``model``, its DDP wrapper, or either compiled."""
    dist: Dist
    ddp: DistributedDataParallel | None

    @property
    def optimizer(self) -> torch.optim.Optimizer: ...

    @property
    def scaler(self) -> torch.amp.GradScaler: ...

    @property
    def amp_dtype(self) -> torch.dtype | None: ...

    @property
    def clip_norm(self) -> float: ...


@dataclass(eq=False)
class Updater:
    """A :class:`Trainee` for the trainers that keep no other state in one object (x-elm, the tasks); built by
    :func:`updater`."""

    model: nn.Module
    net: nn.Module
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    dist: Dist
    ddp: DistributedDataParallel | None
    precision: str
    clip_norm: float
    """Clip the global gradient norm to this (``<= 0``: no clipping)."""

    @property
    def amp_dtype(self) -> torch.dtype | None:
        return amp_dtype(self.precision, self.dist.device)


def updater(model: nn.Module, optimizer: torch.optim.Optimizer, dist: Dist, *, precision: str = "fp32",
            clip_norm: float = 0.0, init_scale: float = 2.0**16) -> Updater:
    """The update state of ``model`` (already on ``dist.device``): wrapped in DDP when several ranks train, an fp16
    loss scale from ``init_scale`` on a GPU (:func:`grad_scaler`)."""
    ddp = wrap_ddp(model, dist)
    return Updater(model=model, net=ddp if ddp is not None else model, optimizer=optimizer,
                   scaler=grad_scaler(precision, dist.device, init_scale), dist=dist, ddp=ddp, precision=precision,
                   clip_norm=clip_norm)


def wrap_ddp(model: nn.Module, dist: Dist) -> DistributedDataParallel | None:
    """A DDP wrapper of ``model`` when several ranks train (``None`` for one process)."""
    if dist.world_size == 1:
        return None
    return DistributedDataParallel(model, device_ids=[dist.device.index] if dist.device.type == "cuda" else None,
                                   find_unused_parameters=True)


@dataclass(frozen=True, eq=False)
class Stepped:
    """What :func:`update` reports: the statistics summed over micro-batches and ranks (float64, on the device),
    the global gradient norm before clipping (on the device) and whether fp16 skipped the step."""

    stats: Tensor
    grad_norm: Tensor
    skipped: bool


def update(t: Trainee, micros: Sequence[Micro], lr: float, step: int) -> Stepped:
    """Update ``step + 1`` from this rank's micro-batches at learning rate ``lr`` (see the module docstring)."""
    if not micros:
        raise ValueError(f"update {step + 1}: no micro-batch")
    if not (t.net.training and t.model.training):  # validation sets the whole model to eval mode; a walk otherwise
        t.net.train()
    t.optimizer.zero_grad(set_to_none=True)
    stats: Tensor | None = None
    last = len(micros) - 1
    for i, micro in enumerate(micros):
        no_sync = t.ddp.no_sync() if t.ddp is not None and i != last else contextlib.nullcontext()
        with no_sync:
            with autocast(t.amp_dtype):
                loss, values = micro()
            t.scaler.scale(loss).backward()
        values = values.detach().double()
        stats = values if stats is None else stats + values
    assert stats is not None
    if t.dist.world_size > 1 and t.ddp is None:
        sync_grads(t.model, t.dist)
    t.dist.all_reduce(stats)
    t.scaler.unscale_(t.optimizer)
    norm = grad_norm(t.optimizer, t.clip_norm)
    set_lr(t.optimizer, lr)
    return Stepped(stats, norm, optimizer_step(t.optimizer, t.scaler, step))


def seed_forward(seed: int, device: torch.device) -> None:
    """Seed what a training forward draws from (dropout, noise): the CPU's generator and, on a GPU, ``device``'s.

    The same draws as ``torch.manual_seed(seed)``, which also seeds every other device and backend: where one is not
    initialised (MTIA and XPU on a CUDA machine, CUDA on a CPU one) each such call queues a lazy call with its
    formatted stack trace, ~0.5 ms of host time per update for nothing (``benchmarks/host_cost.py --profile``)."""
    torch.default_generator.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.init()  # fills default_generators; a flag check once CUDA is up (the model is on it by now)
        index = device.index if device.index is not None else torch.cuda.current_device()
        torch.cuda.default_generators[index].manual_seed(seed)


def sync_grads(model: nn.Module, dist: Dist) -> None:
    """Average gradients over ranks in one flat all-reduce, as DDP would (missing ones count as zeros)."""
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    flat = torch.cat([p.grad.reshape(-1) for p in params])  # type: ignore[union-attr]
    dist.all_reduce(flat).div_(dist.world_size)
    offset = 0
    for p in params:
        n = p.numel()
        p.grad.copy_(flat[offset:offset + n].view_as(p))  # type: ignore[union-attr]
        offset += n


def grad_norm(optimizer: torch.optim.Optimizer, clip_norm: float) -> Tensor:
    """The global gradient norm of what ``optimizer`` steps (every trainer's is :meth:`lsnmt.train.optim.Adam.build`'s,
    over all its model's parameters; read from its groups, not by walking the model's modules each update), the
    gradients clipped to ``clip_norm`` when it is > 0; a device tensor."""
    params = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    if clip_norm > 0:
        return nn.utils.clip_grad_norm_(params, clip_norm)
    return nn.utils.get_total_norm([p.grad for p in params])


def optimizer_step(optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler, step: int) -> bool:
    """Step the optimizer; returns ``True`` when the fp16 scaler skipped it (gradient overflow; not counted).
    Raises ``FloatingPointError`` once the loss scale falls below :data:`~lsnmt.train.faults.MIN_LOSS_SCALE`."""
    if not scaler.is_enabled():
        optimizer.step()
        return False
    scale = scaler.get_scale()
    scaler.step(optimizer)  # skipped by the scaler on fp16 overflow
    scaler.update()
    if scaler.get_scale() < scale:  # not counted, as in fairseq
        log.info("update %d: fp16 gradient overflow, skipped (loss scale %g)", step + 1, scaler.get_scale())
        if scaler.get_scale() < MIN_LOSS_SCALE:
            raise loss_scale_error(step + 1, scaler.get_scale())
        return True
    return False
