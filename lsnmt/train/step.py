"""One optimizer update and the validation pass (fairseq ``Trainer.train_step`` / ``valid_step``).

An update over micro-batches ``b_1 … b_F`` on each of ``W`` ranks (``F = update_freq``):

    g = (1 / N) * sum_{ranks} sum_j grad L(b_j),      N = sum of non-pad target tokens of all W*F batches

where ``L`` is the summed label-smoothed loss (:mod:`lsnmt.train.loss`). ``N`` is known before the forward
(:mod:`lsnmt.train.feed`), so each micro-batch back-propagates ``L(b_j) * W / N``; DDP averages gradients over
ranks, which leaves ``g`` (fairseq scales the summed gradients afterwards, ``multiply_grads(world_size /
sample_size)``: equal up to rounding). Gradients are all-reduced once per update (``no_sync`` on the first
``F - 1`` micro-batches). Then the global norm is clipped to ``clip_norm`` (if > 0) and AdamW (fused) steps with
``lr(step)``. With fp16, an update whose gradients overflow is skipped by the ``GradScaler`` and not counted
(fairseq: "gradient overflow detected, ignoring gradient"); its batches are consumed. The backward, AMP, the
all-reduce, clipping and the step are the project's one update, :func:`lsnmt.train.update.update`; this module
gives it the micro-batches' losses. A model with an auxiliary
loss (:class:`models.ls.base.HasAuxLoss`, e.g. MoE balance) adds ``aux * n_tokens`` per micro-batch, so that
it enters ``g`` once per token-weighted batch (fairseq ``moe_cross_entropy``).

**No host sync.** The update's summed loss and nll (all-reduced over ranks) and its gradient norm stay on the
device: the loop (:mod:`lsnmt.train.loop`) reads them at its next check, where its NaN guard stops a run before
any checkpoint of a non-finite update is written.

The loss of a micro-batch comes from ``run.criterion(model, sample, label_smoothing, pad)``
(default: one forward and label-smoothed cross entropy; Fuse Distillation registers a
two-pass criterion, ``models/ls/distill.py``). Training forwards carry
``langs.progress = step / max_steps`` (CLSR's gate-noise ramp). A criterion with two
forwards cannot go through DDP's per-forward bookkeeping, so such runs replace DDP by
one explicit gradient all-reduce per update (fairseq's ``legacy_ddp``, :func:`lsnmt.train.update.sync_grads`).

Dropout draws from the global torch generator, re-seeded before each
micro-batch with ``(seed, epoch, index)`` of that global batch: the masks do
not depend on the rank, the number of ranks or where a run was resumed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel

from lsnmt.data.corpus import Direction, Sample, Vocab, collate
from lsnmt.train.batching import eval_batches
from lsnmt.train.compiled import step_begin
from lsnmt.train.config import TrainConfig
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.feed import Feed, StepBatches, pinned
from lsnmt.train.job import Parts
from lsnmt.train.loop import Update
from lsnmt.train.loss import LOG2, default_criterion, smoothed_cross_entropy
from lsnmt.train.update import Micro, amp_dtype, autocast, seed_forward, update
from models.ls.base import Criterion, HasAuxLoss


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
    parts: Parts
    """The optimizer, loss scale, schedule and checkpoints (:func:`lsnmt.train.job.assemble`)."""
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
    def optimizer(self) -> torch.optim.Optimizer:
        return self.parts.optimizer

    @property
    def scaler(self) -> torch.amp.GradScaler:
        return self.parts.scaler

    @property
    def amp_dtype(self) -> torch.dtype | None:
        """Autocast dtype: bf16/fp16 on CUDA, none on CPU."""
        return amp_dtype(self.cfg.precision, self.dist.device)

    @property
    def clip_norm(self) -> float:
        """``train.clip_norm`` (the :class:`~lsnmt.train.update.Trainee` protocol)."""
        return self.cfg.clip_norm


def _micro(run: Run, seed: int, sample: Sample, scale: float) -> Micro:
    """One micro-batch's forward (dropout seeded with ``seed``): its loss (plus the auxiliary loss) times
    ``scale`` to back-propagate, and (loss, nll) to report."""

    def forward() -> tuple[Tensor, Tensor]:
        seed_forward(seed, run.dist.device)
        step_begin(run.cfg.compile, run.dist.device)
        on_device = sample.to(run.dist.device)
        on_device = dataclasses.replace(on_device, langs=on_device.langs.with_(progress=run.step / run.cfg.max_steps))
        loss, nll, _ = run.criterion(run.net, on_device, run.cfg.label_smoothing, run.vocab.pad)
        total = loss
        if run.has_aux and (aux := run.model.aux_loss()) is not None:  # type: ignore[operator]
            total = total + aux.float() * on_device.ntokens
        return total * scale, torch.stack([loss.detach(), nll.detach()])

    return forward


def train_step(run: Run, step: StepBatches) -> Update:
    """One update from this rank's share of the update's batches (:func:`lsnmt.train.update.update`);
    ``run.step`` advances unless it was skipped."""
    scale = run.dist.world_size / max(step.ntokens, 1)
    micros = [_micro(run, seed, sample, scale) for seed, sample in zip(step.seeds, step.samples, strict=True)]
    lr = run.parts.lr(run.step)
    done = update(run, micros, lr, run.step)
    if not done.skipped:
        run.step += 1
    return Update(loss=done.stats[0], nll=done.stats[1], ntokens=step.ntokens, lr=lr, grad_norm=done.grad_norm,
                  skipped=done.skipped)


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
            with autocast(run.amp_dtype):
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
