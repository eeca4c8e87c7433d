"""Token log-probabilities of a decoder-only LM, perplexity, and the TF-IDF mixture of experts.

A sequence ``s_0 … s_L`` is scored in windows of at most ``block`` predictions (``s_w … s_{w+B-1}`` predict
``s_{w+1} … s_{w+B}``; the context restarts at each window, fairseq ``eval_lm`` without ``context_window``).
A document ``d`` is scored as ``EOS d EOS``: every token of ``d`` and the final EOS are predicted, the first
EOS is the beginning-of-sequence context (XGLM). Perplexity over a set of predicted tokens:

    ppl = exp(-(1/N) sum_t log p(x_t | x_<t))

The x-elm ensemble (Sec. 3.3) mixes probabilities, ``p_E(x_t | x_<t) = sum_e alpha_e(x_<t) p_e(x_t | x_<t)``,
computed in log space as ``logsumexp_e(log alpha_e + log p_e)``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


def _windows(seqs: list[np.ndarray], block: int) -> list[tuple[int, int, np.ndarray]]:
    """(sequence, first predicted position, tokens of the window incl. its last target)."""
    out = []
    for i, s in enumerate(seqs):
        for w in range(0, len(s) - 1, block):
            out.append((i, w, s[w:w + block + 1]))
    return out


@torch.no_grad()
def token_logprobs(model: nn.Module, seqs: list[np.ndarray], *, block: int, pad: int, batch_tokens: int = 2048,
                   device: torch.device | str = "cpu") -> list[np.ndarray]:
    """``log p(s_t | s_<t)`` for ``t = 1 … len(s) - 1`` of each sequence (natural log, float64)."""
    model.eval()
    out = [np.zeros(max(len(s) - 1, 0)) for s in seqs]
    wins = sorted(_windows(seqs, block), key=lambda x: -len(x[2]))
    start = 0
    while start < len(wins):
        width = len(wins[start][2]) - 1
        n = max(1, batch_tokens // max(width, 1))
        batch = wins[start:start + n]
        tokens = torch.full((len(batch), width + 1), pad, dtype=torch.long)
        for r, (_, _, w) in enumerate(batch):
            tokens[r, :len(w)] = torch.from_numpy(w.astype(np.int64))
        tokens = tokens.to(device)
        lp = torch.log_softmax(model(tokens[:, :-1]).float(), dim=-1)  # (b, width, V)
        gold = lp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1).double().cpu().numpy()  # (b, width)
        for r, (i, w0, w) in enumerate(batch):
            out[i][w0:w0 + len(w) - 1] = gold[r, :len(w) - 1]
        start += n
    return out


def doc_sequences(docs: list[np.ndarray], eos: int) -> list[np.ndarray]:
    """``EOS d EOS`` for every document."""
    return [np.concatenate([[eos], d, [eos]]).astype(np.int64) for d in docs]


def perplexity(logprobs: np.ndarray) -> float:
    """``exp(-mean log p)`` of predicted tokens' natural-log probabilities."""
    return math.exp(-float(np.mean(logprobs))) if len(logprobs) else math.nan


def mixture_logprobs(weights: np.ndarray, logprobs: np.ndarray) -> np.ndarray:
    """``log sum_e alpha_e p_e`` per position: ``weights (n, k)`` rows summing to 1, ``logprobs (n, k)``."""
    with np.errstate(divide="ignore"):
        a = np.log(weights) + logprobs
    top = a.max(1, keepdims=True)
    return (top + np.log(np.exp(a - top).sum(1, keepdims=True)))[:, 0]
