"""What greedy and beam search share: the model protocol, results, length limits, the step's log-probabilities
and the batch of sentences still being decoded.

Neither search reads the device inside its step loop, except through :class:`LiveBatch`'s check, which drops the
finished sentences (and ends the search when none is left): every step on CPU, where reading a flag costs
nothing, every ``check_every`` steps on an accelerator (each check waits for the device's queue to drain).
Finished sentences that have not been dropped yet are decoded along and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from models.lang import LangContext, to_device
from models.transformer import DecoderCache, EncoderOut

CHECK_EVERY = 4
"""Steps between two finished-sentence checks on an accelerator (CPU: every step)."""


class Seq2Seq(Protocol):
    """What the search needs from a model (``models.transformer.Transformer``)."""

    max_positions: int

    def encode(self, src_tokens: Tensor, langs: LangContext) -> EncoderOut: ...

    def decode(
        self, prev_tokens: Tensor, enc: EncoderOut, langs: LangContext, cache: DecoderCache | None = None
    ) -> Tensor: ...

    def init_cache(self, langs: LangContext, beam: int = 1) -> DecoderCache: ...


@dataclass(frozen=True)
class Hypothesis:
    tokens: list[int]
    """Token ids, without the start token and EOS."""
    score: float
    """Length-normalised log-probability ``s(y EOS) / |y EOS| ** lenpen``."""


@dataclass(frozen=True)
class SearchResult:
    tokens: list[list[int]]
    """Best hypothesis of each sentence (no start token, no EOS)."""
    scores: Tensor
    """``(B,)`` its score."""
    nbest: list[list[Hypothesis]]
    """Up to ``nbest`` finalised hypotheses per sentence, best first."""


def tag_start_tokens(langs: LangContext, tag_ids: Sequence[int] | Tensor) -> Tensor:
    """Decoder start token of each row: the tag of its target language, ``(B,)``."""
    tags = torch.as_tensor(tag_ids, dtype=torch.long, device=langs.tgt.device)
    return tags.index_select(0, langs.tgt)


def max_lengths(src_tokens: Tensor, pad: int, a: float, b: int, cap: int) -> Tensor:
    """``min(floor(a * |x| + b), cap)`` per sentence, ``(B,)`` long (``|x|`` counts non-pad tokens)."""
    src_len = src_tokens.ne(pad).sum(1).to(torch.float64)
    return (a * src_len + b).floor().clamp(max=cap).long()


def step_lprobs(
    model: Seq2Seq,
    last: Tensor,
    enc: EncoderOut,
    langs: LangContext,
    cache: DecoderCache,
    step: int,
    *,
    pad: int,
    eos: int,
    min_len: int,
    at_max: Tensor,
) -> Tensor:
    """Log-probabilities of the next token for every row ``(N, V)`` with fairseq's constraints.

    ``last (N, 1)``: each row's latest token; ``at_max (N,)``: rows at their maximum length, where only EOS
    may follow (with its own log-probability); EOS is banned before ``min_len`` tokens, ``<pad>`` always.
    """
    logits = model.decode(last, enc, langs, cache)[:, -1]  # (N, V)
    lprobs = F.log_softmax(logits.float(), dim=-1)
    lprobs[:, pad] = -torch.inf
    eos_lp = lprobs[:, eos].clone()
    if step < min_len:
        lprobs[:, eos] = -torch.inf
    lprobs.masked_fill_(at_max.unsqueeze(1), -torch.inf)
    lprobs[:, eos] = torch.where(at_max, eos_lp, lprobs[:, eos])
    return lprobs


def start_and_limits(
    model: Seq2Seq,
    src_tokens: Tensor,
    start_tokens: Tensor | None,
    *,
    eos: int,
    pad: int,
    max_len_a: float,
    max_len_b: int,
) -> tuple[Tensor, Tensor, int]:
    """First decoder input ``(B,)`` (default EOS, as fairseq), maximum lengths ``(B,)`` and the number of steps
    the longest may take (one host read, before the loop)."""
    b, device = src_tokens.size(0), src_tokens.device
    start = torch.full((b,), eos, dtype=torch.long, device=device) if start_tokens is None else start_tokens
    max_lens = max_lengths(src_tokens, pad, max_len_a, max_len_b, model.max_positions - 1)
    return start, max_lens, int(max_lens.max()) + 1 if b else 0


class LiveBatch:
    """The sentences still being decoded, ``beam`` decoder rows each, with their encoder output and cache.

    ``alive (B_live,)``: each one's index in the input batch, so that results go to the full-batch buffers.
    """

    def __init__(
        self, model: Seq2Seq, src_tokens: Tensor, langs: LangContext, beam: int, check_every: int | None
    ) -> None:
        self.beam = beam
        self.enc = model.encode(src_tokens, langs)  # (B, S, D): once per sentence, not per beam
        self.langs = langs
        self.row_langs = langs.repeat_interleave(beam) if beam > 1 else langs  # (B * beam,)
        self.cache = model.init_cache(self.row_langs, beam)
        self.alive = torch.arange(src_tokens.size(0), device=src_tokens.device)
        cpu = src_tokens.device.type == "cpu"
        self.check_every = check_every or (1 if cpu else CHECK_EVERY)

    def rows(self, sentences: Tensor) -> Tensor:
        """The decoder rows of ``sentences`` (live positions), ``(len * beam,)``."""
        k = self.beam
        return (sentences.unsqueeze(1) * k + torch.arange(k, device=sentences.device)).view(-1)

    def due(self, step: int) -> bool:
        """Whether finished sentences are looked for before ``step``."""
        return step > 0 and step % self.check_every == 0

    def drop_finished(self, done: Tensor) -> Tensor | None:
        """Drop the sentences with ``done (B_live,)`` set (one host read): the live positions kept, empty when
        none is left (then nothing changes), ``None`` when all are kept. The kept positions are known on the
        host, so the sentences' languages and the decoder's layout follow without another read."""
        kept = np.flatnonzero(~done.cpu().numpy())
        if len(kept) == 0 or len(kept) == len(done):
            return None if len(kept) else done.new_zeros(0, dtype=torch.long)
        keep = to_device(kept, done.device)
        self.alive = self.alive.index_select(0, keep)
        self.enc = self.enc.index_select(keep)
        self.langs = self.langs.index_select(keep, kept)
        self.row_langs = self.langs.repeat_interleave(self.beam) if self.beam > 1 else self.langs
        self.cache.select_(self.rows(keep), keep, self.row_langs)
        return keep


def results(hyps: list[list[Hypothesis]], nbest: int, device: torch.device) -> SearchResult:
    """Rank each sentence's finalised hypotheses (best first, ties in the order found) and keep ``nbest``."""
    ranked = [sorted(h, key=lambda x: x.score, reverse=True)[:nbest] for h in hyps]
    best = [h[0] if h else Hypothesis([], float("-inf")) for h in ranked]
    scores = torch.tensor([h.score for h in best], device=device)
    return SearchResult([h.tokens for h in best], scores, ranked)
