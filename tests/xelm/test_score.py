"""The decoder-only LM, token scoring, perplexity and the expert mixture."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lsnmt.xelm.score import doc_sequences, mixture_logprobs, perplexity, token_logprobs
from models.lm import build_lm

from .helpers import EOS, LM, PAD, VOCAB


def _model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_lm(LM, vocab_size=VOCAB, padding_idx=PAD).eval()


def test_lm_is_causal_and_tied() -> None:
    model = _model()
    x = torch.randint(4, VOCAB, (2, 8))
    y = x.clone()
    y[:, 5:] = torch.randint(4, VOCAB, (2, 3))
    with torch.no_grad():
        a, b = model(x), model(y)
    assert a.shape == (2, 8, VOCAB)
    assert torch.allclose(a[:, :5], b[:, :5], atol=1e-6)  # positions < 5 never see tokens >= 5
    assert not torch.allclose(a[:, 5:], b[:, 5:])
    assert model.output_projection.weight is model.embed.tokens.weight


def test_uniform_model_has_perplexity_vocab_size() -> None:
    model = _model()
    with torch.no_grad():
        model.embed.tokens.weight.zero_()  # tied output projection: every logit 0, p = 1/V everywhere
    rng = np.random.default_rng(0)
    docs = [rng.integers(4, VOCAB, size=n) for n in (3, 9, 20)]
    lps = token_logprobs(model, doc_sequences(docs, EOS), block=LM.block_size, pad=PAD)
    assert [len(x) for x in lps] == [4, 10, 21]  # every token and the closing EOS
    assert perplexity(np.concatenate(lps)) == pytest.approx(VOCAB, rel=1e-6)  # float32 softmax


def test_windows_and_batching_do_not_change_scores() -> None:
    model = _model(1)
    rng = np.random.default_rng(1)
    seqs = doc_sequences([rng.integers(4, VOCAB, size=n) for n in (5, 13, 2, 7)], EOS)
    batched = token_logprobs(model, seqs, block=LM.block_size, pad=PAD, batch_tokens=64)
    for s, got in zip(seqs, batched, strict=True):
        expected = []
        for w in range(0, len(s) - 1, LM.block_size):  # the context restarts every block
            chunk = torch.from_numpy(s[w:w + LM.block_size + 1])[None]
            with torch.no_grad():
                lp = torch.log_softmax(model(chunk[:, :-1]), -1)[0]
            expected += lp.gather(-1, chunk[0, 1:, None])[:, 0].tolist()
        assert np.allclose(got, expected, atol=1e-5)


def test_mixture_of_identical_experts_is_one_expert() -> None:
    rng = np.random.default_rng(2)
    lp = np.log(rng.uniform(0.01, 1.0, size=30))
    weights = rng.dirichlet(np.ones(4), size=30)
    assert np.allclose(mixture_logprobs(weights, np.repeat(lp[:, None], 4, axis=1)), lp)


def test_mixture_mixes_probabilities() -> None:
    lp = np.log(np.array([[0.2, 0.6], [0.5, 0.1]]))
    w = np.array([[0.25, 0.75], [1.0, 0.0]])
    assert np.allclose(np.exp(mixture_logprobs(w, lp)), [0.25 * 0.2 + 0.75 * 0.6, 0.5])
    assert perplexity(np.log(np.full(5, 0.1))) == pytest.approx(10.0)
    assert math.isnan(perplexity(np.zeros(0)))
