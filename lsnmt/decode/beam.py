"""Batched beam search with the incremental cache (fairseq ``SequenceGenerator`` semantics).

For each sentence the search keeps ``beam`` live prefixes. At step ``t`` every
live prefix ``y`` is extended by every token ``w``: ``s(y w) = s(y) + log p(w | y, x)``.
Of the ``2 * beam`` best extensions of a sentence, an EOS extension among the
first ``beam`` is *finalised* with the length-normalised score

    score(y) = s(y EOS) / |y EOS| ** lenpen        (fairseq: ``eos_scores /= (step + 1) ** len_penalty``)

(the length counts the EOS), and the first ``beam`` non-EOS extensions stay live.
A sentence is done once it has ``beam`` finalised hypotheses, no live prefix,
or has reached its maximum length, where EOS is forced. The result is the best
finalised hypothesis. As in fairseq, ``<pad>`` is never generated, EOS is banned
before ``min_len`` tokens, and the decoder starts from EOS (fairseq uses EOS as
BOS) unless a per-sentence start token (e.g. the target-language tag) is given.

Differences from fairseq: the maximum length ``floor(a * |x| + b)`` uses each
sentence's own source length (fairseq: the padded batch width, so results
depended on batching), and a step keeps every EOS hypothesis it finalises
(fairseq drops those beyond the ``beam`` a sentence needs, which can drop a
better-normalised one); with a beam as large as the hypothesis space the
search is therefore exhaustive.

Cost: the encoder output and the cross-attention keys/values are computed once per sentence and shared by its
beams (``models.attention``); only the self-attention state follows the beams. Finalised hypotheses are written
to device buffers (at most ``2 beam - 1`` per sentence: fewer than ``beam`` before a step, at most ``beam`` more
in it), read once at the end; finished sentences leave the batch at the checks of ``lsnmt.decode.common``.
``beam = 1`` is greedy search (:mod:`lsnmt.decode.greedy`), which gives the same hypotheses.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lsnmt.decode.common import (
    Hypothesis,
    LiveBatch,
    SearchResult,
    Seq2Seq,
    max_lengths,
    results,
    start_and_limits,
    step_lprobs,
    tag_start_tokens,
)
from lsnmt.decode.greedy import greedy_search
from models.lang import LangContext

__all__ = ["Hypothesis", "SearchResult", "beam_search", "greedy_search", "max_lengths", "tag_start_tokens"]


class Finalised:
    """Device buffers of the finalised hypotheses of ``B`` sentences, ``slots`` each, in the order found."""

    def __init__(self, B: int, slots: int, steps: int, pad: int, device: torch.device) -> None:
        self.bin = slots  # one more slot takes the candidates that are not finalised
        self.score = torch.zeros(B, slots + 1, device=device)  # s(y EOS), not normalised
        self.length = torch.zeros(B, slots + 1, dtype=torch.long, device=device)
        self.tokens = torch.full((B, slots + 1, steps), pad, dtype=torch.long, device=device)
        self.count = torch.zeros(B, dtype=torch.long, device=device)

    def add(self, alive: Tensor, finish: Tensor, scores: Tensor, tokens: Tensor, step: int) -> None:
        """Append, for live sentence ``b`` (input index ``alive[b]``), the candidates ``j`` with ``finish[b, j]``:
        score ``scores[b, j]``, tokens ``tokens[b, j, :step]``. ``finish``, ``scores``: ``(B_live, K)``."""
        count = self.count.index_select(0, alive)  # (B_live,)
        slot = count.unsqueeze(1) + finish.long().cumsum(1) - 1
        slot = torch.where(finish, slot, self.bin)  # (B_live, K)
        sent = alive.unsqueeze(1).expand_as(slot)
        self.score[sent, slot] = scores
        self.length[sent, slot] = torch.full_like(slot, step)  # a device value: a number here would be copied (a sync)
        self.tokens[sent, slot] = tokens
        self.count[alive] = count + finish.sum(1)

    def hypotheses(self, lenpen: float) -> list[list[Hypothesis]]:
        """Every sentence's hypotheses with normalised scores (computed in double, as one host read)."""
        counts, lengths = self.count.tolist(), self.length.tolist()
        scores, tokens = self.score.tolist(), self.tokens.tolist()
        return [
            [Hypothesis(tokens[b][i][: lengths[b][i]], scores[b][i] / (lengths[b][i] + 1) ** lenpen) for i in range(n)]
            for b, n in enumerate(counts)
        ]


@torch.no_grad()
def beam_search(
    model: Seq2Seq,
    src_tokens: Tensor,
    langs: LangContext,
    *,
    beam: int = 5,
    lenpen: float = 1.0,
    max_len_a: float = 0.0,
    max_len_b: int = 200,
    min_len: int = 1,
    eos: int = 2,
    pad: int = 1,
    start_tokens: Tensor | None = None,
    nbest: int = 1,
    check_every: int | None = None,
) -> SearchResult:
    """Translate ``src_tokens (B, S)``; ``beam=1`` is greedy search.

    ``start_tokens (B,)``: first decoder input per sentence (default: EOS, as fairseq);
    ``min_len``: EOS is banned before this many tokens; ``max_len_a/b``: at most
    ``floor(a * |x| + b)`` tokens (also capped by the model's ``max_positions - 1``);
    ``check_every``: steps between finished-sentence checks (``None``: ``lsnmt.decode.common``'s default).
    """
    if beam == 1:
        return greedy_search(
            model,
            src_tokens,
            langs,
            lenpen=lenpen,
            max_len_a=max_len_a,
            max_len_b=max_len_b,
            min_len=min_len,
            eos=eos,
            pad=pad,
            start_tokens=start_tokens,
            check_every=check_every,
        )
    B, K, device = src_tokens.size(0), beam, src_tokens.device
    start, max_lens, steps = start_and_limits(
        model, src_tokens, start_tokens, eos=eos, pad=pad, max_len_a=max_len_a, max_len_b=max_len_b
    )
    live = LiveBatch(model, src_tokens, langs, K, check_every)
    tokens = torch.full((B * K, steps + 1), pad, dtype=torch.long, device=device)  # (N, T + 1), N = B_live * K
    tokens[:, 0] = start.repeat_interleave(K)
    scores = torch.full((B, K), -torch.inf, device=device)
    scores[:, 0] = 0.0  # all beams start identical: expand only the first
    final = Finalised(B, 2 * K - 1, steps, pad, device)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    for step in range(steps):
        if live.due(step) and (keep := live.drop_finished(done)) is not None:
            if keep.numel() == 0:
                break
            tokens, scores = tokens.index_select(0, live.rows(keep)), scores[keep]
            done, max_lens = done[keep], max_lens[keep]
        n = scores.size(0)
        lprobs = step_lprobs(
            model,
            tokens[:, step : step + 1],
            live.enc,
            live.row_langs,
            live.cache,
            step,
            pad=pad,
            eos=eos,
            min_len=min_len,
            at_max=(step >= max_lens).repeat_interleave(K),
        )
        V = lprobs.size(1)
        cand = (scores.unsqueeze(2) + lprobs.view(n, K, V)).view(n, K * V)  # (B_live, K*V)
        cand = cand.masked_fill(done.unsqueeze(1), -torch.inf)
        cand_scores, cand_idx = cand.topk(min(2 * K, K * V), dim=1)  # (B_live, 2K), best first
        cand_beam, cand_tok = cand_idx // V, cand_idx % V
        base = torch.arange(n, device=device).unsqueeze(1) * K  # (B_live, 1)
        is_eos = (cand_tok == eos) & torch.isfinite(cand_scores)
        ends = tokens.index_select(0, (base + cand_beam[:, :K]).view(-1))[:, 1:].view(n, K, steps)
        final.add(live.alive, is_eos[:, :K], cand_scores[:, :K], ends, step)
        scores, live_idx = cand_scores.masked_fill(is_eos, -torch.inf).topk(K, dim=1)  # (B_live, K)
        order = (base + cand_beam.gather(1, live_idx)).view(-1)  # (N,)
        tokens = tokens.index_select(0, order)
        tokens[:, step + 1] = cand_tok.gather(1, live_idx).view(-1)
        live.cache.reorder_(order)
        n_final = final.count.index_select(0, live.alive)
        done = done | (n_final >= K) | (step >= max_lens) | ~torch.isfinite(scores).any(1)
    return results(final.hypotheses(lenpen), nbest, device)
