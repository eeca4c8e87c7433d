"""Label-smoothed cross entropy, exactly fairseq's ``label_smoothed_nll_loss``.

For a target token ``y`` with log-probabilities ``lp`` over ``V`` types
(fairseq ``fairseq/criterions/label_smoothed_cross_entropy.py``, current main,
where ``eps_i = epsilon / (V - 1)``)::

    nll    = -lp[y]
    smooth = -sum_v lp[v]
    loss   = (1 - eps - eps_i) * nll + eps_i * smooth,      eps_i = eps / (V - 1)

i.e. the cross entropy against ``q = (1 - eps) onehot(y) + eps / (V - 1) * (1 - onehot(y))``:
mass ``1 - eps`` on ``y`` and ``eps`` spread over the other ``V - 1`` types
(Szegedy et al., 2016, "Rethinking the Inception architecture", sec. 7).
Earlier fairseq versions used ``eps_i = eps / V`` and ``(1 - eps) * nll`` (mass
``1 - eps + eps / V`` on ``y``); both forms are in the fairseq history, this is the newer.
Positions whose target is ``pad`` contribute nothing. Losses are summed, not
averaged: the trainer divides the gradient by the number of target tokens of
the whole update (fairseq's ``sample_size`` with ``--sentence-avg`` off).

**Fused form** (:func:`smoothed_cross_entropy`, the trainer's): with ``lse = logsumexp(z)`` of the logits ``z``,
``nll = lse - z[y]`` and ``smooth = V lse - sum_v z[v]``, so the forward writes no ``(B, T, V)`` tensor; as the
target weights ``q`` sum to 1, ``d loss / d z = softmax(z) - q``, one pass in the backward (the autograd of
``log_softmax``, ``sum`` and ``gather`` takes about four). It returns no token count: counting on the device and
reading the count would stall a GPU once per batch; the trainer knows the count from the collated batch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from lsnmt.data.corpus import Sample
from models.loss import label_smoothed_nll_loss

if TYPE_CHECKING:
    from models.ls.base import SampleLike

__all__ = ["LOG2", "default_criterion", "label_smoothed_nll_loss", "sequence_loss", "smoothed_cross_entropy"]

LOG2 = math.log(2)
"""fairseq reports losses in bits: ``loss / ntokens / ln 2``."""


class _SmoothedCE(torch.autograd.Function):
    """Summed label-smoothed loss and nll of ``logits (N, V)`` against ``target (N,)`` (module docstring)."""

    @staticmethod
    def forward(ctx: Any, logits: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor]:
        z = logits.float()  # (N, V)
        eps_i = epsilon / (z.size(-1) - 1)
        lse = torch.logsumexp(z, dim=-1)  # (N,)
        keep = target.ne(pad)  # (N,)
        nll = (lse - z.gather(-1, target.unsqueeze(-1)).squeeze(-1)).masked_fill(~keep, 0.0).sum()
        smooth = (z.size(-1) * lse - z.sum(dim=-1)).masked_fill(~keep, 0.0).sum()
        ctx.save_for_backward(logits, target, lse, keep)
        ctx.epsilon = epsilon
        return (1.0 - epsilon - eps_i) * nll + eps_i * smooth, nll

    @staticmethod
    def backward(ctx: Any, g_loss: Tensor, g_nll: Tensor) -> tuple[Tensor, None, None, None]:
        logits, target, lse, keep = ctx.saved_tensors
        eps = ctx.epsilon
        eps_i = eps / (logits.size(-1) - 1)
        w = keep.float()  # (N,)
        # d/dz [g_loss * loss + g_nll * nll] = (g_loss + g_nll) softmax(z) - g_loss eps_i - (g_loss (1 - eps - eps_i)
        # + g_nll) onehot(y), on non-pad rows
        grad = torch.sub(logits.float(), lse.unsqueeze(-1)).exp_()  # (N, V) softmax
        grad.mul_(((g_loss + g_nll) * w).unsqueeze(-1)).sub_((g_loss * eps_i * w).unsqueeze(-1))
        grad.scatter_add_(-1, target.unsqueeze(-1), (-(g_loss * (1.0 - eps - eps_i) + g_nll) * w).unsqueeze(-1))
        return grad.to(logits.dtype), None, None, None


def smoothed_cross_entropy(logits: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor]:
    """Summed label-smoothed loss and nll (fp32) of ``logits (..., V)`` against ``target (...)``, fused (no
    host sync); equal to :func:`label_smoothed_nll_loss` of ``log_softmax(logits)`` up to rounding."""
    v = logits.size(-1)
    loss, nll = _SmoothedCE.apply(logits.reshape(-1, v), target.reshape(-1), epsilon, pad)
    return loss, nll


def sequence_loss(logits: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor, int]:
    """:func:`smoothed_cross_entropy` of decoder ``logits (B, T, V)`` against ``target (B, T)`` and the number of
    non-pad targets (counted on the device and read: one host sync)."""
    loss, nll = smoothed_cross_entropy(logits, target, epsilon, pad)
    return loss, nll, int(target.ne(pad).sum())


def default_criterion(model: torch.nn.Module, sample: SampleLike, epsilon: float,
                      pad: int) -> tuple[Tensor, Tensor, int]:
    """One teacher-forced forward and :func:`smoothed_cross_entropy`: the trainer's criterion unless a method
    registers its own (``models.ls.base.Criterion``, e.g. Fuse Distillation's two passes). The token count of a
    collated :class:`~lsnmt.data.corpus.Sample` is its ``ntokens`` (known on the host); other batches are counted
    on the device (one host sync)."""
    logits = model(sample.src_tokens, sample.prev_output_tokens, sample.langs)  # (B, T, V)
    loss, nll = smoothed_cross_entropy(logits, sample.target, epsilon, pad)
    ntokens = sample.ntokens if isinstance(sample, Sample) else int(sample.target.ne(pad).sum())
    return loss, nll, ntokens
