"""Training objectives of the tasks: cross entropy, and LMS+FD's two routes with a symmetric KL.

NER: mean cross entropy over labelled positions (first pieces of words). QA: the mean over windows of
``1/2 (CE(start) + CE(end))`` over the window's positions (``XLMRobertaForQuestionAnswering``'s loss),
padding positions masked out. LMS+FD (Sec. 4, Eq. 4), as in translation (``models.ls.distill``):

    L = 1/2 (CE(y, p_l) + CE(y, p_s)) + 1/2 (KL(p_l || p_s) + KL(p_s || p_l))

with ``p_l`` the LS route's and ``p_s`` the shared route's distributions over labels (NER, per labelled
position) or over positions (QA, the start and the end distribution of every window, the two KL terms
averaged); every term is a mean over the same units as its CE, so the weights are Eq. 4's.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from lsnmt.tasks.features import IGNORE
from models.lang import LangContext
from models.ls.distill import fuse, symmetric_kl

Forward = Callable[[LangContext], Tensor]
"""``forward(langs) -> logits`` of one batch (the route travels in ``langs.route``)."""


def _masked_positions(logits: Tensor, attention_mask: Tensor) -> Tensor:
    """QA logits ``(B, T, 2)`` with padding positions at -inf-like values, as ``(2, B, T)`` fp32."""
    neg = torch.finfo(torch.float32).min / 2
    return logits.float().permute(2, 0, 1).masked_fill(~attention_mask.bool().unsqueeze(0), neg)


def ner_terms(logits: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(CE sum, log-probs (B, T, C), mask (B, T) True where ignored, labelled positions)``; the count stays a
    device tensor (reading it would stall a GPU once per batch)."""
    lp = torch.log_softmax(logits.float(), dim=-1)
    ce = F.nll_loss(lp.flatten(0, 1), labels.flatten(), ignore_index=IGNORE, reduction="sum")
    mask = labels.eq(IGNORE)
    return ce, lp, mask, (~mask).sum()


def qa_terms(logits: Tensor, attention_mask: Tensor, start: Tensor, end: Tensor) -> tuple[Tensor, Tensor, Tensor, int]:
    """``(sum over windows of 1/2 (CE_start + CE_end), log-probs (B, 2, T), mask (B, 2) all False, windows)``."""
    lp = torch.log_softmax(_masked_positions(logits, attention_mask), dim=-1).permute(1, 0, 2)  # (B, 2, T)
    ce = 0.5 * (F.nll_loss(lp[:, 0], start, reduction="sum") + F.nll_loss(lp[:, 1], end, reduction="sum"))
    return ce, lp, torch.zeros(lp.shape[:2], dtype=torch.bool, device=lp.device), lp.shape[0]


Terms = Callable[[Tensor], tuple[Tensor, Tensor, Tensor, Tensor | int]]
"""``terms(logits) -> (CE sum, log-probs, KL mask, units)`` of one batch (``ner_terms``/``qa_terms`` bound)."""


def _at_least_one(n: Tensor | int) -> Tensor | int:
    """``max(n, 1)`` of a host count or a device tensor (no host read)."""
    return n.clamp(min=1) if isinstance(n, Tensor) else max(n, 1)


def single_loss(forward: Forward, langs: LangContext, terms: Terms) -> Tensor:
    """Mean cross entropy of one forward pass (naive model, LMS)."""
    ce, _lp, _mask, n = terms(forward(langs))
    return ce / _at_least_one(n)


def fd_loss(forward: Forward, langs: LangContext, terms: Terms, *, kl_scale: float = 1.0) -> Tensor:
    """Eq. 4 averaged per unit: two passes (LS route, shared route) and the symmetric KL between them.

    ``kl_scale`` turns a KL summed over the QA start and end distributions into their mean (0.5)."""
    ce_ls, lp_ls, mask, n = terms(forward(langs.with_(route="ls")))
    ce_sh, lp_sh, _mask, _n = terms(forward(langs.with_(route="share")))
    n = _at_least_one(n)
    return fuse(ce_ls / n, ce_sh / n, kl_scale * symmetric_kl(lp_ls, lp_sh, mask) / n)
