"""Training criteria of Fuse Distillation (Xu et al. 2023, v1): two forward passes, one backward.

With ``p_l`` the LS route's and ``p_s`` the shared route's token distributions
(``LangContext.route`` = ``"ls"`` / ``"share"``), ``CE`` fairseq's label-smoothed
cross entropy (``lsnmt.train.loss``) and every term summed over non-pad target tokens:

* FD (Sec. 3.1, Eq. 2-3): ``L = 1/2 (CE(y, p_l) + CE(y, p_s)) + KL(g(p_l) || p_s)``,
  ``g`` = stop-gradient: the LS modules learn nothing from the KL term.
* LMS+FD (Sec. 4, Eq. 4): ``L = 1/2 (CE(y, p_l) + CE(y, p_s)) + 1/2 (KL(p_l || p_s) + KL(p_s || p_l))``,
  symmetric because both routes share ``W`` (Jiang et al. 2020).

``KL(p || q) = sum_v p_v (log p_v - log q_v)`` per token, computed in fp32. The returned
``nll`` is the mean of the two routes' nll (what the CE term of Eq. 3 averages).

:func:`token_kl`, :func:`symmetric_kl` and :func:`fuse` hold the objective independently of what is
predicted (target tokens here; entity labels and answer spans in the XLM-R tasks, ``lsnmt/tasks/loss.py``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from models.loss import label_smoothed_terms
from models.ls.base import SampleLike


def token_kl(lp: Tensor, lq: Tensor, mask: Tensor) -> Tensor:
    """``sum_tokens KL(p || q)`` from log-probabilities ``(B, T, V)``; ``mask (B, T)`` True at pads."""
    kl = (lp.exp() * (lp - lq)).sum(-1)  # (B, T)
    return kl.masked_fill(mask, 0.0).sum()


def symmetric_kl(lp: Tensor, lq: Tensor, mask: Tensor) -> Tensor:
    """``1/2 (KL(p || q) + KL(q || p))`` summed over unmasked positions (Eq. 4's distillation term)."""
    return 0.5 * (token_kl(lp, lq, mask) + token_kl(lq, lp, mask))


def fuse(ce_ls: Tensor, ce_sh: Tensor, kl: Tensor) -> Tensor:
    """Eq. 3/4: ``1/2 (CE_l + CE_s) + KL-term``."""
    return 0.5 * (ce_ls + ce_sh) + kl


def two_routes(model: nn.Module, sample: SampleLike) -> tuple[Tensor, Tensor]:
    """Log-probabilities ``(B, T, V)`` of the LS pass and of the shared pass (fp32)."""
    out = []
    for route in ("ls", "share"):
        logits = model(sample.src_tokens, sample.prev_output_tokens, sample.langs.with_(route=route))
        out.append(torch.log_softmax(logits.float(), dim=-1))
    return out[0], out[1]


def ntokens(sample: SampleLike, pad: int) -> int:
    """The batch's non-pad targets: a collated batch's ``ntokens`` (known on the host), else counted on the device
    and read (a host-device synchronisation), as the trainer's default criterion does."""
    known = getattr(sample, "ntokens", None)  # SampleLike does not require it: test batches lack it
    return int(known) if known is not None else int(sample.target.ne(pad).sum())


def _ce_terms(lp_ls: Tensor, lp_sh: Tensor, sample: SampleLike, eps: float,
              pad: int) -> tuple[Tensor, Tensor, Tensor, int]:
    loss_ls, nll_ls = label_smoothed_terms(lp_ls, sample.target, eps, pad)
    loss_sh, nll_sh = label_smoothed_terms(lp_sh, sample.target, eps, pad)
    return loss_ls, loss_sh, 0.5 * (nll_ls + nll_sh), ntokens(sample, pad)


def fd_criterion(model: nn.Module, sample: SampleLike, eps: float, pad: int) -> tuple[Tensor, Tensor, int]:
    """Eq. 3 with Eq. 2: ``1/2 (CE_l + CE_s) + KL(stopgrad(p_l) || p_s)``."""
    lp_ls, lp_sh = two_routes(model, sample)
    ce_ls, ce_sh, nll, ntok = _ce_terms(lp_ls, lp_sh, sample, eps, pad)
    return fuse(ce_ls, ce_sh, token_kl(lp_ls.detach(), lp_sh, sample.target.eq(pad))), nll, ntok


def lms_fd_criterion(model: nn.Module, sample: SampleLike, eps: float, pad: int) -> tuple[Tensor, Tensor, int]:
    """Sec. 4: ``1/2 (CE_l + CE_s) + 1/2 (KL(p_l || p_s) + KL(p_s || p_l))`` (Eq. 4)."""
    lp_ls, lp_sh = two_routes(model, sample)
    ce_ls, ce_sh, nll, ntok = _ce_terms(lp_ls, lp_sh, sample, eps, pad)
    return fuse(ce_ls, ce_sh, symmetric_kl(lp_ls, lp_sh, sample.target.eq(pad))), nll, ntok
