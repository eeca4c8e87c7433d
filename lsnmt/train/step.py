"""One optimizer update and the validation pass (fairseq ``Trainer.train_step`` / ``valid_step``).

An update over micro-batches ``b_1 … b_F`` on each of ``W`` ranks (``F = update_freq``):

    g = (1 / N) * sum_{ranks} sum_j grad L(b_j),      N = sum of non-pad target tokens of all W*F batches

where ``L`` is the summed label-smoothed loss (:mod:`lsnmt.train.loss`). ``N`` is known before the forward
(:mod:`lsnmt.train.feed`), so each micro-batch back-propagates ``L(b_j) * W / N``; DDP averages gradients over
ranks, which leaves ``g`` (fairseq scales the summed gradients afterwards, ``multiply_grads(world_size /
sample_size)``: equal up to rounding). Gradients are all-reduced once per update (``no_sync`` on the first
``F - 1`` micro-batches). Then the global norm is clipped to ``clip_norm`` (if > 0) and AdamW (fused) steps with
``lr(step)``. With fp16, an update whose gradients overflow is skipped by the ``GradScaler`` and not counted
(fairseq: "gradient overflow detected, ignoring gradient"); its batches are consumed. A model with an auxiliary
loss (:class:`models.ls.base.HasAuxLoss`, e.g. MoE balance) adds ``aux * n_tokens`` per micro-batch, so that
it enters ``g`` once per token-weighted batch (fairseq ``moe_cross_entropy``).

**No host sync.** The update's summed loss and nll (all-reduced over ranks) and its gradient norm stay on the
device: the loop (:mod:`lsnmt.train.loop`) reads them at its next check, where its NaN guard stops a run before
any checkpoint of a non-finite update is written. Only fp16 reads one flag per update (the scaler's overflow,
which ``GradScaler.step`` reads anyway).

The loss of a micro-batch comes from ``run.criterion(model, sample, label_smoothing, pad)``
(default: one forward and label-smoothed cross entropy; Fuse Distillation registers a
two-pass criterion, ``models/ls/distill.py``). Training forwards carry
``langs.progress = step / max_steps`` (CLSR's gate-noise ramp). A criterion with two
forwards cannot go through DDP's per-forward bookkeeping, so such runs replace DDP by
one explicit gradient all-reduce per update (fairseq's ``legacy_ddp``, :func:`sync_grads`).

Dropout draws from the global torch generator, re-seeded before each
micro-batch with ``(seed, epoch, index)`` of that global batch: the masks do
not depend on the rank, the number of ranks or where a run was resumed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel

from lsnmt.config import TrainConfig
from lsnmt.train.batching import eval_batches
from lsnmt.train.corpus import Direction, Sample, Vocab, collate
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.feed import Feed, StepBatches, pinned
from lsnmt.train.loop import Update
from lsnmt.train.loss import LOG2, default_criterion, smoothed_cross_entropy
from lsnmt.train.optim import inverse_sqrt_lr, set_lr
from models.ls.base import Criterion, HasAuxLoss

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Run:
    """Everything the loop mutates, in one place."""

    cfg: TrainConfig
    vocab: Vocab
    dist: Dist
    model: nn.Module
    """The bare model (checkpoints, validation)."""
    net: nn.Module
    """What the forward goes through: ``model``, its DDP wrapper, or either compiled (``train.compile``)."""
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    feed: Feed
    ddp: DistributedDataParallel | None = None
    """The DDP wrapper inside ``net``, if any."""
    step: int = 0
    best_valid: float = math.inf
    meters: Meters = field(default_factory=Meters)
    criterion: Criterion = default_criterion
    """``(model, sample, label_smoothing, pad) -> (loss, nll, ntokens)`` of one micro-batch."""

    @functools.cached_property
    def has_aux(self) -> bool:
        """The model reports an auxiliary loss (:class:`~models.ls.base.HasAuxLoss`; checked once: a runtime
        protocol's ``isinstance`` is slow)."""
        return isinstance(self.model, HasAuxLoss)

    @property
    def manual_sync(self) -> bool:
        """Several ranks without a DDP wrapper: gradients are all-reduced once per update by :func:`sync_grads`."""
        return self.dist.world_size > 1 and self.ddp is None

    @property
    def amp_dtype(self) -> torch.dtype | None:
        """Autocast dtype: bf16/fp16 on CUDA, none on CPU."""
        if self.dist.device.type != "cuda" or self.cfg.precision == "fp32":
            return None
        return torch.bfloat16 if self.cfg.precision == "bf16" else torch.float16


def autocast(run: Run) -> contextlib.AbstractContextManager:
    dtype = run.amp_dtype
    return torch.autocast("cuda", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def _micro(run: Run, seed: int, sample: Sample, scale: float, sync: bool) -> Tensor:
    """Forward and backward of one micro-batch (its loss times ``scale``, dropout seeded with ``seed``); returns
    (loss, nll) as float64 ``(2,)`` on the device."""
    torch.manual_seed(seed)
    sample = sample.to(run.dist.device)
    sample = dataclasses.replace(sample, langs=sample.langs.with_(progress=run.step / run.cfg.max_steps))
    no_sync = run.ddp.no_sync() if run.ddp is not None and not sync else contextlib.nullcontext()
    with no_sync:
        with autocast(run):
            loss, nll, _ = run.criterion(run.net, sample, run.cfg.label_smoothing, run.vocab.pad)
            total = loss
            if run.has_aux and (aux := run.model.aux_loss()) is not None:  # type: ignore[operator]
                total = total + aux.float() * sample.ntokens
        run.scaler.scale(total * scale).backward()
    return torch.stack([loss.detach(), nll.detach()]).double()


def sync_grads(run: Run) -> None:
    """Average gradients over ranks in one flat all-reduce, as DDP would (missing ones count as zeros)."""
    params = [p for p in run.model.parameters() if p.requires_grad]
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    flat = torch.cat([p.grad.reshape(-1) for p in params])  # type: ignore[union-attr]
    run.dist.all_reduce(flat).div_(run.dist.world_size)
    offset = 0
    for p in params:
        n = p.numel()
        p.grad.copy_(flat[offset:offset + n].view_as(p))  # type: ignore[union-attr]
        offset += n


def grad_norm(run: Run) -> Tensor:
    """The global gradient norm (a device tensor), the gradients clipped to ``clip_norm`` when it is > 0."""
    params = [p for p in run.model.parameters() if p.grad is not None]
    if run.cfg.clip_norm > 0:
        return nn.utils.clip_grad_norm_(params, run.cfg.clip_norm)
    return nn.utils.get_total_norm([p.grad for p in params])  # type: ignore[misc]


def _optimizer_step(run: Run) -> bool:
    """Step the optimizer; returns ``True`` when the fp16 scaler skipped it (gradient overflow)."""
    if not run.scaler.is_enabled():
        run.optimizer.step()
        return False
    scale = run.scaler.get_scale()
    run.scaler.step(run.optimizer)  # skipped by the scaler on fp16 overflow
    run.scaler.update()
    if run.scaler.get_scale() < scale:  # not counted, as in fairseq
        log.info("step %d: fp16 gradient overflow, update skipped (loss scale %g)", run.step + 1,
                 run.scaler.get_scale())
        return True
    return False


def train_step(run: Run, step: StepBatches) -> Update:
    """One update from this rank's share of the update's batches; ``run.step`` advances unless it was skipped."""
    run.net.train()
    run.optimizer.zero_grad(set_to_none=True)
    scale = run.dist.world_size / max(step.ntokens, 1)
    sums = torch.zeros(2, dtype=torch.float64, device=run.dist.device)
    last = len(step.batches) - 1
    for i, (seed, sample) in enumerate(zip(step.seeds, step.samples, strict=True)):
        sums += _micro(run, seed, sample, scale, sync=i == last)
    if run.manual_sync:
        sync_grads(run)
    run.dist.all_reduce(sums)
    run.scaler.unscale_(run.optimizer)
    norm = grad_norm(run)
    lr = inverse_sqrt_lr(run.step, run.cfg)
    set_lr(run.optimizer, lr)
    skipped = _optimizer_step(run)
    if not skipped:
        run.step += 1
    return Update(loss=sums[0], nll=sums[1], ntokens=step.ntokens, lr=lr, grad_norm=norm, skipped=skipped)


@dataclass(frozen=True, eq=False)
class EvalSet:
    """One validation direction and this rank's share of its batches, collated once (pinned on CUDA)."""

    direction: Direction
    batches: list[np.ndarray]
    samples: list[Sample]


def eval_plan(dirs: list[Direction], vocab: Vocab, max_tokens: int, dist: Dist,
              max_sentences: int | None = None) -> list[EvalSet]:
    """Each direction's validation batches for this rank, collated here rather than at every validation."""
    plan = []
    for d in dirs:
        batches = eval_batches(d, max_tokens, max_sentences)[dist.rank::dist.world_size]
        samples = [collate([d], rows, vocab) for rows in batches]
        plan.append(EvalSet(d, batches, [pinned(s) for s in samples] if dist.device.type == "cuda" else samples))
    return plan


@torch.no_grad()
def validate(run: Run, plan: list[EvalSet]) -> dict[str, dict[str, float]]:
    """Per-direction loss and nll (bits per target token), summed over ranks."""
    run.model.eval()
    sums = torch.zeros(len(plan), 3, dtype=torch.float64, device=run.dist.device)
    for k, es in enumerate(plan):
        for sample in es.samples:
            sample = sample.to(run.dist.device)
            with autocast(run):
                logits = run.model(sample.src_tokens, sample.prev_output_tokens, sample.langs)
                loss, nll = smoothed_cross_entropy(logits, sample.target, run.cfg.label_smoothing, run.vocab.pad)
            sums[k, :2] += torch.stack([loss, nll]).double()
            sums[k, 2] += sample.ntokens
    out = {}
    for es, (loss, nll, ntok) in zip(plan, run.dist.all_reduce(sums).tolist(), strict=True):
        out[es.direction.name] = {"loss": loss / max(ntok, 1) / LOG2, "nll": nll / max(ntok, 1) / LOG2,
                               "tokens": int(ntok)}
    return out


def mean_loss(results: dict[str, dict[str, float]]) -> float:
    """The validation loss the best checkpoint is chosen on: every direction's loss weighted by its target tokens,

        L = sum_d loss_d * tokens_d / sum_d tokens_d      (``nan`` without tokens)

    i.e. the loss per token over all validation directions together, as fairseq computes it (the papers' toolkit:
    translation_multi_simple_epoch concatenates the directions' valid sets and the criterion reports
    sum(loss) / sum(tokens); LMS-FD's scripts select with ``--best-checkpoint-metric loss``)."""
    tokens = sum(r["tokens"] for r in results.values())
    return sum(r["loss"] * r["tokens"] for r in results.values()) / tokens if tokens else math.nan
