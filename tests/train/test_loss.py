"""Label smoothing against a hand computation (fairseq ``label_smoothed_nll_loss``, eps_i = eps / (V - 1))."""

from __future__ import annotations

import math

import pytest
import torch

from lsnmt.train.loss import label_smoothed_nll_loss, sequence_loss, smoothed_cross_entropy

PAD = 1


def test_matches_hand_computed_value() -> None:
    # V = 4, probabilities (0.2, 0.4, 0.2, 0.2), target 1, eps = 0.1:
    #   nll    = -ln 0.4
    #   smooth = -(3 ln 0.2 + ln 0.4)
    #   loss   = (1 - 0.1 - 0.1/3) nll + (0.1/3) smooth
    #          = -(0.9 ln 0.4 + 0.1 ln 0.2)      (mass 0.9 on the target, 0.1/3 on each other type)
    lprobs = torch.tensor([[0.2, 0.4, 0.2, 0.2]]).log()
    loss, nll, n = label_smoothed_nll_loss(lprobs, torch.tensor([1]), 0.1, pad=PAD + 10)
    assert n == 1
    assert nll.item() == pytest.approx(-math.log(0.4), abs=1e-6)
    assert loss.item() == pytest.approx(0.9 * -math.log(0.4) + 0.1 * -math.log(0.2), abs=1e-6)
    assert loss.item() == pytest.approx(0.985605449932, abs=1e-6)


def test_equals_cross_entropy_with_smoothed_targets() -> None:
    torch.manual_seed(0)
    logits, target, eps = torch.randn(3, 5, 7), torch.randint(2, 7, (3, 5)), 0.2
    target[0, 3:] = PAD
    loss, nll, n = sequence_loss(logits, target, eps, PAD)
    q = torch.full((3, 5, 7), eps / 6).scatter(-1, target.unsqueeze(-1), 1 - eps)
    keep = target.ne(PAD)
    ref = -(q * logits.log_softmax(-1)).sum(-1)[keep].sum()
    assert loss.item() == pytest.approx(ref.item(), rel=1e-6)
    assert nll.item() == pytest.approx(torch.nn.functional.cross_entropy(
        logits.reshape(-1, 7), target.reshape(-1), ignore_index=PAD, reduction="sum").item(), rel=1e-6)
    assert n == int(keep.sum()) == 13


def test_padding_contributes_nothing() -> None:
    logits = torch.randn(1, 4, 6, requires_grad=True)
    target = torch.tensor([[3, 4, PAD, PAD]])
    loss, _, n = sequence_loss(logits, target, 0.1, PAD)
    loss.backward()
    assert n == 2
    assert torch.all(logits.grad[0, 2:] == 0)


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_fused_form_matches_autograd_of_the_reference(eps: float) -> None:
    """The fused loss, nll and their gradient (any mix of the two) equal fairseq's form on ``log_softmax``."""
    torch.manual_seed(1)
    logits = torch.randn(3, 6, 50, dtype=torch.float64, requires_grad=True)
    target = torch.randint(2, 50, (3, 6))
    target[1, 2:] = PAD
    loss, nll = smoothed_cross_entropy(logits, target, eps, PAD)
    (0.7 * loss + 0.3 * nll).backward()
    fused = logits.grad.clone()
    logits.grad = None
    ref_loss, ref_nll, _ = label_smoothed_nll_loss(logits.log_softmax(-1), target, eps, PAD)
    (0.7 * ref_loss + 0.3 * ref_nll).backward()
    torch.testing.assert_close((loss, nll), (ref_loss.float(), ref_nll.float()), rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(fused, logits.grad, rtol=1e-5, atol=1e-6)
    assert torch.all(fused[1, 2:] == 0)
