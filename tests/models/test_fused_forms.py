"""The fewer-operation forms of issue 38 against plain reference implementations: the same outputs and gradients
(within 1e-5) as the form each replaces.

* attention's padding mask as SDPA's additive bias, made once per mask (``models.attention.padding_bias``) against
  a softmax with the padded keys filled with ``-inf``, also after a pass under ``torch.inference_mode``;
"""

from __future__ import annotations

import math

import torch

from models import attention
from models.attention import MultiheadAttention, padding_bias
from models.lang import LangContext


def reference_attention(
    m: MultiheadAttention, x: torch.Tensor, memory: torch.Tensor, pad: torch.Tensor
) -> torch.Tensor:
    """``softmax(Q K^T / sqrt(d_h) + M) V`` with ``M = -inf`` at padded keys, written out (no SDPA, no bias)."""
    d, h = m.embed_dim, m.heads
    w_k, w_v = m.kv_proj.weight.view(2, d, d).unbind(0)
    b_k, b_v = m.kv_proj.bias.view(2, d).unbind(0)

    def heads(y: torch.Tensor) -> torch.Tensor:
        return y.view(y.size(0), y.size(1), h, d // h).transpose(1, 2)

    q, k, v = heads(m.q_proj(x)), heads(memory @ w_k.T + b_k), heads(memory @ w_v.T + b_v)
    scores = (q @ k.transpose(-1, -2) / math.sqrt(d // h)).masked_fill(pad[:, None, None, :], float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(x.size(0), x.size(1), d)
    return m.out_proj(out)


def test_padding_bias_gives_the_masked_softmax() -> None:
    torch.manual_seed(0)
    m = MultiheadAttention(16, 4, fuse="kv")
    langs = LangContext.single(0, 1, 3)
    x, memory = torch.randn(3, 4, 16, requires_grad=True), torch.randn(3, 6, 16, requires_grad=True)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5])
    got, want = m(x, langs, memory, key_padding_mask=pad), reference_attention(m, x, memory, pad)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    g = torch.randn_like(got)
    grads = torch.autograd.grad(got, (x, memory, *m.parameters()), g)
    ref = torch.autograd.grad(want, (x, memory, *m.parameters()), g)
    for a, b in zip(grads, ref, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_padding_bias_is_made_once_per_mask() -> None:
    """Every layer passes the same mask: one bias, kept on the mask; a changed mask (in place) or another dtype gets
    its own."""
    pad = torch.tensor([[False, True], [False, False]])
    first = padding_bias(pad, torch.float32)
    assert padding_bias(pad, torch.float32) is first
    assert first.shape == (2, 1, 1, 2) and first[0, 0, 0].tolist() == [0.0, float("-inf")]
    assert padding_bias(pad, torch.float64).dtype == torch.float64
    pad[1, 1] = True
    again = padding_bias(pad, torch.float64)
    assert again[1, 0, 0].tolist() == [0.0, float("-inf")]
    assert padding_bias(pad.clone(), torch.float64) is not again
    assert getattr(pad, attention._KEPT)[2] is again  # kept on the mask itself: no global state


def test_padding_bias_under_inference_mode_then_training() -> None:
    """Under ``torch.inference_mode`` (the claim's measurement) the bias is made afresh and not kept (an inference
    tensor has no version counter; kept, it could not be saved for a later training pass's backward): attention
    runs there, then trains on the same mask."""
    torch.manual_seed(0)
    m = MultiheadAttention(16, 4, fuse="kv")
    langs = LangContext.single(0, 1, 2)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.inference_mode():
        inner = torch.tensor([[False] * 5, [False] * 2 + [True] * 3])
        m(torch.randn(2, 3, 16), langs, torch.randn(2, 5, 16), key_padding_mask=inner)
        m(torch.randn(2, 3, 16), langs, torch.randn(2, 5, 16), key_padding_mask=pad)
    x, memory = torch.randn(2, 3, 16, requires_grad=True), torch.randn(2, 5, 16)
    out = m(x, langs, memory, key_padding_mask=pad)
    out.sum().backward()
    torch.testing.assert_close(out, reference_attention(m, x, memory, pad), atol=1e-5, rtol=1e-5)
    assert x.grad is not None and torch.isfinite(x.grad).all()
