"""The search algorithms as ``lsnmt.decode`` had them before issue 21 (commit 595e326), kept as a reference.

Same steps, same candidate order, same finalisation and same scores; only the model call differs: every step
recomputes the whole prefix (``model(src, prefix, langs)``, no incremental cache), with the encoder input
repeated per beam. So the reference shares no decoding-state code with the search it checks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from lsnmt.decode.common import Hypothesis, max_lengths
from models.lang import LangContext
from models.transformer import Transformer


def _step_lprobs(
    model: Transformer,
    src: Tensor,
    tokens: Tensor,
    langs: LangContext,
    step: int,
    *,
    pad: int,
    eos: int,
    min_len: int,
    at_max: Tensor,
) -> Tensor:
    lprobs = F.log_softmax(model(src, tokens, langs)[:, -1].float(), dim=-1)  # (N, V)
    lprobs[:, pad] = -torch.inf
    eos_lp = lprobs[:, eos].clone()
    if step < min_len:
        lprobs[:, eos] = -torch.inf
    lprobs = torch.where(at_max.unsqueeze(1), torch.full_like(lprobs, -torch.inf), lprobs)
    lprobs[:, eos] = torch.where(at_max, eos_lp, lprobs[:, eos])
    return lprobs


def _ranked(finalized: list[list[Hypothesis]], nbest: int) -> list[list[Hypothesis]]:
    return [sorted(hyps, key=lambda h: h.score, reverse=True)[:nbest] for hyps in finalized]


@torch.no_grad()
def reference_beam(
    model: Transformer,
    src_tokens: Tensor,
    langs: LangContext,
    *,
    beam: int,
    lenpen: float = 1.0,
    max_len_a: float = 0.0,
    max_len_b: int = 200,
    min_len: int = 1,
    eos: int = 2,
    pad: int = 1,
    start_tokens: Tensor | None = None,
    nbest: int = 1,
) -> list[list[Hypothesis]]:
    """The old ``beam_search``: each sentence's ranked hypotheses (up to ``nbest``)."""
    B, K, device = src_tokens.size(0), beam, src_tokens.device
    src_k, langs_k = src_tokens.repeat_interleave(K, dim=0), langs.repeat_interleave(K)
    start = torch.full((B,), eos, dtype=torch.long, device=device) if start_tokens is None else start_tokens
    tokens = start.repeat_interleave(K).unsqueeze(1)  # (N, 1), N = B * K
    scores = torch.full((B, K), -torch.inf, device=device)
    scores[:, 0] = 0.0
    max_lens = max_lengths(src_tokens, pad, max_len_a, max_len_b, model.max_positions - 1)
    finalized: list[list[Hypothesis]] = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool, device=device)
    base = (torch.arange(B, device=device) * K).unsqueeze(1)
    for step in range(int(max_lens.max()) + 1 if B else 0):
        at_max = (step >= max_lens).repeat_interleave(K)
        lprobs = _step_lprobs(model, src_k, tokens, langs_k, step, pad=pad, eos=eos, min_len=min_len, at_max=at_max)
        V = lprobs.size(1)
        cand = (scores.unsqueeze(2) + lprobs.view(B, K, V)).view(B, K * V)
        cand = cand.masked_fill(done.unsqueeze(1), -torch.inf)
        cand_scores, cand_idx = cand.topk(min(2 * K, K * V), dim=1)
        cand_beam, cand_tok = cand_idx // V, cand_idx % V
        is_eos = (cand_tok == eos) & torch.isfinite(cand_scores)
        finish = is_eos.clone()
        finish[:, K:] = False
        for b, j in finish.nonzero().tolist():
            row = b * K + int(cand_beam[b, j])
            norm = float(cand_scores[b, j]) / (step + 1) ** lenpen
            finalized[b].append(Hypothesis(tokens[row, 1:].tolist(), norm))
        live_scores, live = cand_scores.masked_fill(is_eos, -torch.inf).topk(K, dim=1)
        order = (base + cand_beam.gather(1, live)).view(-1)
        tokens = torch.cat([tokens.index_select(0, order), cand_tok.gather(1, live).view(-1, 1)], dim=1)
        scores = live_scores
        n_final = torch.tensor([len(f) for f in finalized], device=device)
        done |= (n_final >= K) | (step >= max_lens) | ~torch.isfinite(scores).any(1)
        if bool(done.all()):
            break
    return _ranked(finalized, nbest)


@torch.no_grad()
def reference_greedy(
    model: Transformer,
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
) -> list[list[Hypothesis]]:
    """The old ``greedy_search``: each sentence's one hypothesis."""
    B, device = src_tokens.size(0), src_tokens.device
    start = torch.full((B,), eos, dtype=torch.long, device=device) if start_tokens is None else start_tokens
    tokens = start.unsqueeze(1)
    total = torch.zeros(B, dtype=torch.float, device=device)
    max_lens = max_lengths(src_tokens, pad, max_len_a, max_len_b, model.max_positions - 1)
    finished: list[Hypothesis | None] = [None] * B
    for step in range(int(max_lens.max()) + 1 if B else 0):
        lprobs = _step_lprobs(
            model, src_tokens, tokens, langs, step, pad=pad, eos=eos, min_len=min_len, at_max=step >= max_lens
        )
        best_lp, best = lprobs.max(dim=1)
        total = total + best_lp
        for b in (best == eos).nonzero().squeeze(1).tolist():
            if finished[b] is None:
                finished[b] = Hypothesis(tokens[b, 1:].tolist(), float(total[b]) / (step + 1) ** lenpen)
        tokens = torch.cat([tokens, best.unsqueeze(1)], dim=1)
        if all(h is not None for h in finished):
            break
    return [[h] if h is not None else [] for h in finished]
