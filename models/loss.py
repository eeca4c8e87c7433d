"""Label-smoothed cross entropy, exactly fairseq's ``label_smoothed_nll_loss`` (the maths: ``lsnmt/train/loss.py``).

Here, in ``models``, because Fuse Distillation's criterion (``models/ls/distill.py``) uses it too: ``models``
imports nothing from ``lsnmt`` but its leaves.
"""

from __future__ import annotations

from torch import Tensor


def label_smoothed_nll_loss(lprobs: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor, int]:
    """Summed (label-smoothed loss, nll) and the number of non-pad targets (counted on the device and read: a
    host-device synchronisation; :func:`label_smoothed_terms` has none).

    ``lprobs (..., V)`` are log-probabilities (compute them in fp32), ``target (...)`` ids.
    """
    loss, nll = label_smoothed_terms(lprobs, target, epsilon, pad)
    return loss, nll, int(target.ne(pad).sum())


def label_smoothed_terms(lprobs: Tensor, target: Tensor, epsilon: float, pad: int) -> tuple[Tensor, Tensor]:
    """Summed (label-smoothed loss, nll) of :func:`label_smoothed_nll_loss`, without the token count."""
    target = target.unsqueeze(-1)  # (..., 1)
    mask = target.eq(pad)
    nll = -lprobs.gather(dim=-1, index=target).masked_fill(mask, 0.0).sum()
    smooth = -lprobs.sum(dim=-1, keepdim=True).masked_fill(mask, 0.0).sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    return (1.0 - epsilon - eps_i) * nll + eps_i * smooth, nll
