"""The task objectives: mean cross entropy, and LMS+FD's Eq. 4 with two routes, against hand-written formulas."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lsnmt.tasks.features import IGNORE
from lsnmt.tasks.loss import fd_loss, ner_terms, qa_terms, single_loss
from models.lang import LangContext

LANGS = LangContext.single(0, 0, 2)


def _kl(p_log: torch.Tensor, q_log: torch.Tensor) -> torch.Tensor:
    return (p_log.exp() * (p_log - q_log)).sum(-1)


def test_ner_fd_loss_is_eq4_per_labelled_token() -> None:
    torch.manual_seed(0)
    logits = {"ls": torch.randn(2, 4, 7), "share": torch.randn(2, 4, 7)}
    labels = torch.tensor([[IGNORE, 1, 2, IGNORE], [IGNORE, 0, IGNORE, IGNORE]])
    got = fd_loss(lambda ctx: logits[ctx.route], LANGS, lambda lg: ner_terms(lg, labels))
    keep = labels.ne(IGNORE)
    lp = {k: torch.log_softmax(v, -1)[keep] for k, v in logits.items()}  # (3, 7): the labelled tokens
    y = labels[keep]
    ce = {k: F.nll_loss(v, y) for k, v in lp.items()}
    kl = 0.5 * (_kl(lp["ls"], lp["share"]) + _kl(lp["share"], lp["ls"])).mean()
    assert got.item() == pytest.approx((0.5 * (ce["ls"] + ce["share"]) + kl).item(), rel=1e-6)
    single = single_loss(lambda ctx: logits["ls"], LANGS, lambda lg: ner_terms(lg, labels))
    assert single.item() == pytest.approx(ce["ls"].item(), rel=1e-6)


def test_fd_loss_with_identical_routes_is_the_plain_loss() -> None:
    torch.manual_seed(1)
    same = torch.randn(2, 5, 7)
    labels = torch.randint(0, 7, (2, 5))
    fd = fd_loss(lambda ctx: same, LANGS, lambda lg: ner_terms(lg, labels))
    assert fd.item() == pytest.approx(single_loss(lambda ctx: same, LANGS, lambda lg: ner_terms(lg, labels)).item())


def test_qa_terms_mask_padding_and_average_start_and_end() -> None:
    torch.manual_seed(2)
    logits = torch.randn(2, 6, 2)
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    start, end = torch.tensor([1, 4]), torch.tensor([2, 5])
    ce, lp, _kl_mask, n = qa_terms(logits, mask, start, end)
    assert n == 2 and lp.shape == (2, 2, 6)
    assert lp[0, :, 4:].exp().sum().item() == pytest.approx(0.0, abs=1e-30)  # padding gets no probability
    first = logits[0, :4]  # sentence 0 without its padding
    want0 = 0.5 * (F.cross_entropy(first[:, 0], start[:1].squeeze()) + F.cross_entropy(first[:, 1], end[:1].squeeze()))
    want1 = 0.5 * (F.cross_entropy(logits[1, :, 0], start[1]) + F.cross_entropy(logits[1, :, 1], end[1]))
    assert ce.item() == pytest.approx((want0 + want1).item(), rel=1e-5)
    # LMS+FD on QA: the KL over the start and the end distributions, averaged (kl_scale 0.5), per window
    other = torch.randn(2, 6, 2)
    got = fd_loss(lambda ctx: logits if ctx.route == "ls" else other, LANGS,
                  lambda lg: qa_terms(lg, mask, start, end), kl_scale=0.5)
    lp_ls, lp_sh = lp, qa_terms(other, mask, start, end)[1]
    ce_sh = qa_terms(other, mask, start, end)[0]
    kl = 0.5 * (0.5 * (_kl(lp_ls, lp_sh) + _kl(lp_sh, lp_ls))).sum() / 2
    assert got.item() == pytest.approx((0.5 * (ce + ce_sh) / 2 + kl).item(), rel=1e-5)
