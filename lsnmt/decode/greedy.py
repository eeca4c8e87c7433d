"""Greedy search: ``y_t = argmax_w log p(w | y_<t, x)`` with the incremental cache, until EOS.

A sentence's hypothesis is its tokens before the first EOS the arg-max picks, scored like beam search's,
``s(y EOS) / |y EOS| ** lenpen``, so that it equals beam search with ``beam = 1`` (which is routed here). EOS is
banned before ``min_len`` tokens and forced at the maximum length ``min(floor(a |x| + b), max_positions - 1)``;
``<pad>`` is never generated. Tokens and scores stay on the device until the end (``lsnmt.decode.common``:
finished sentences leave the batch at the checks).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lsnmt.decode.common import Hypothesis, LiveBatch, SearchResult, Seq2Seq, results, start_and_limits, step_lprobs
from models.lang import LangContext


@torch.no_grad()
def greedy_search(
    model: Seq2Seq,
    src_tokens: Tensor,
    langs: LangContext,
    *,
    lenpen: float = 1.0,
    max_len_a: float = 0.0,
    max_len_b: int = 200,
    min_len: int = 1,
    eos: int = 2,
    pad: int = 1,
    start_tokens: Tensor | None = None,
    check_every: int | None = None,
) -> SearchResult:
    """Arg-max decoding of ``src_tokens (B, S)``; arguments as :func:`lsnmt.decode.beam.beam_search`'s."""
    B, device = src_tokens.size(0), src_tokens.device
    start, max_lens, steps = start_and_limits(
        model, src_tokens, start_tokens, eos=eos, pad=pad, max_len_a=max_len_a, max_len_b=max_len_b
    )
    live = LiveBatch(model, src_tokens, langs, 1, check_every)
    out = torch.full((B, steps + 1), pad, dtype=torch.long, device=device)  # (B, T + 1), all sentences
    out[:, 0] = start
    last = start.unsqueeze(1)  # (B_live, 1)
    total = torch.zeros(B, device=device)  # (B_live,) log-probability so far
    end_score = torch.zeros(B, device=device)  # (B,) s(y EOS) of each finished sentence
    end_step = torch.full((B,), -1, dtype=torch.long, device=device)  # (B,) its length; -1: not finished
    done = torch.zeros(B, dtype=torch.bool, device=device)  # (B_live,)
    for step in range(steps):
        if live.due(step) and (keep := live.drop_finished(done)) is not None:
            if keep.numel() == 0:
                break
            last, total, done, max_lens = last[keep], total[keep], done[keep], max_lens[keep]
        lprobs = step_lprobs(
            model,
            last,
            live.enc,
            live.row_langs,
            live.cache,
            step,
            pad=pad,
            eos=eos,
            min_len=min_len,
            at_max=step >= max_lens,
        )
        best_lp, best = lprobs.max(dim=1)  # (B_live,)
        total = total + best_lp
        ends = (best == eos) & ~done
        end_score[live.alive] = torch.where(ends, total, end_score[live.alive])
        end_step[live.alive] = torch.where(ends, step, end_step[live.alive])
        done = done | ends
        out[live.alive, step + 1] = best
        last = best.unsqueeze(1)
    lengths, scores, tokens = end_step.tolist(), end_score.tolist(), out[:, 1:].tolist()
    hyps = [[Hypothesis(tokens[b][:n], scores[b] / (n + 1) ** lenpen)] if n >= 0 else [] for b, n in enumerate(lengths)]
    return results(hyps, 1, device)
