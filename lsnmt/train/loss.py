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
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from models.loss import label_smoothed_nll_loss

if TYPE_CHECKING:
    from models.ls.base import SampleLike

LOG2 = math.log(2)
"""fairseq reports losses in bits: ``loss / ntokens / ln 2``."""


def sequence_loss(logits: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor, int]:
    """:func:`label_smoothed_nll_loss` of decoder ``logits (B, T, V)`` against ``target (B, T)``, in fp32."""
    lprobs = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    return label_smoothed_nll_loss(lprobs, target, epsilon, pad)


def default_criterion(model: torch.nn.Module, sample: SampleLike, epsilon: float,
                      pad: int) -> tuple[Tensor, Tensor, int]:
    """One teacher-forced forward and :func:`sequence_loss`: the trainer's criterion unless a method registers
    its own (``models.ls.base.Criterion``, e.g. Fuse Distillation's two passes)."""
    logits = model(sample.src_tokens, sample.prev_output_tokens, sample.langs)  # (B, T, V)
    return sequence_loss(logits, sample.target, epsilon, pad)
