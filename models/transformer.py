"""Encoder-decoder Transformer (Vaswani et al. 2017) with fairseq semantics.

``Encoder``: ``x_0 = dropout(sqrt(d) E[src] + P)``, padded positions zeroed,
then the layers, then a final LayerNorm when pre-norm (fairseq adds
``encoder.layer_norm`` only if ``normalize_before``).

``Decoder``: the same embedding of the previous target tokens, then a
:class:`DecoderStack` (layers + final LayerNorm when pre-norm), then
``logits = h W_out^T`` with ``W_out`` tied to the decoder input embedding. With
per-target decoders (LSL paper, Pires et al. 2023, "separate decoder"; Dong et
al. 2015) there is one stack per target language; the token embedding and output
projection stay shared, as the LSL paper shares them between encoder, decoders
and output layer. Each row goes to ``stacks[langs.tgt[row]]``.

Every forward takes a :class:`~models.lang.LangContext`; batches may mix
directions. Tensors are batch-first: ``(B, T, D)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from models.embedding import TransformerEmbedding
from models.lang import LangContext, group_rows
from models.layers import LayerCache
from models.ls.base import active_parameters


@dataclass(eq=False)
class EncoderOut:
    out: Tensor  # (B, S, D)
    padding_mask: Tensor  # (B, S), True at pads

    def index_select(self, idx: Tensor) -> EncoderOut:
        return EncoderOut(self.out.index_select(0, idx), self.padding_mask.index_select(0, idx))


class Encoder(nn.Module):
    def __init__(self, embed: TransformerEmbedding, layers: Sequence[nn.Module], final_norm: nn.Module | None,
                 padding_idx: int) -> None:
        super().__init__()
        self.embed = embed
        self.layers = nn.ModuleList(layers)
        self.final_norm = final_norm
        self.padding_idx = padding_idx

    def forward(self, src_tokens: Tensor, langs: LangContext) -> EncoderOut:
        """``src_tokens (B, S)`` -> encoder states ``(B, S, D)`` and padding mask ``(B, S)``."""
        padding_mask = src_tokens.eq(self.padding_idx)  # (B, S)
        x = self.embed(src_tokens)  # (B, S, D)
        x = x * (~padding_mask).unsqueeze(-1).type_as(x)
        for layer in self.layers:
            x = layer(x, langs, padding_mask)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return EncoderOut(x, padding_mask)


class DecoderStack(nn.Module):
    """The decoder layers (and pre-norm's final LayerNorm): what a per-target decoder owns."""

    def __init__(self, layers: Sequence[nn.Module], final_norm: nn.Module | None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.final_norm = final_norm

    def forward(self, x: Tensor, langs: LangContext, enc: EncoderOut, self_padding_mask: Tensor | None,
                caches: list[LayerCache] | None) -> Tensor:
        """``x (B, T, D)`` -> ``(B, T, D)``; ``caches``: one per layer, or ``None`` (no incremental state)."""
        for i, layer in enumerate(self.layers):
            x = layer(x, langs, enc.out, enc.padding_mask, self_padding_mask=self_padding_mask,
                      cache=None if caches is None else caches[i])
        if self.final_norm is not None:
            x = self.final_norm(x)
        return x


@dataclass(eq=False)
class DecoderCache:
    """Incremental decoding state of ``N = beam * B`` decoder rows over ``B`` encoded sentences.

    Rows ``b * beam … (b + 1) * beam - 1`` are the beams of sentence ``b`` and share its encoder output:
    self-attention state is kept per row, cross-attention keys/values per sentence (computed at the first
    step, never copied per beam). ``stacks[g]`` holds the caches of the rows routed to stack ``g``
    (``group == g``), in batch order; beams of a sentence share its stack.
    """

    group: Tensor  # (N,) stack index of each row
    uniform: bool  # all rows use one stack: reorder without regrouping
    beam: int = 1
    step: int = 0
    stacks: dict[int, list[LayerCache]] = field(default_factory=dict)
    _split: list[tuple[int, Tensor, Tensor]] | None = None
    _local: Tensor | None = None
    _sub_langs: tuple[LangContext, list[LangContext]] | None = None

    def split(self) -> list[tuple[int, Tensor, Tensor]]:
        """``[(stack, rows, sentences)]`` of a mixed batch: found once per batch layout (a host sync), reused by
        every step."""
        if self._split is None:
            self._split = [(g, rows, rows[:: self.beam] // self.beam) for g, rows in group_rows(self.group)]
            self._local = torch.empty_like(self.group)  # each row's position among its stack's rows
            for _, rows, _ in self._split:
                self._local[rows] = torch.arange(rows.numel(), device=rows.device)
        return self._split

    def sub_langs(self, langs: LangContext) -> list[LangContext]:
        """The languages of each stack's rows (in :meth:`split`'s order), found once per batch layout with their
        shared ids resolved, so that modules asking for them read nothing from the device at every step."""
        if self._sub_langs is None or self._sub_langs[0] is not langs:
            subs = [langs.index_select(rows) for _, rows, _ in self.split()]
            for sub in subs:
                sub.uniform_src, sub.uniform_tgt  # noqa: B018  (cached properties: resolved here, once)
            self._sub_langs = (langs, subs)
        return self._sub_langs[1]

    def reorder_(self, rows: Tensor) -> None:
        """Row ``i`` takes row ``rows[i]``'s state, a beam of the same sentence (beam search), in place.

        Only self-attention state moves, and no host sync happens once the layout is known (:meth:`split`).
        """
        if self.uniform:
            for caches in self.stacks.values():
                for cache in caches:
                    cache.reorder_(rows)
            return
        split = self.split()
        assert self._local is not None
        for g, own, _ in split:
            local = self._local.index_select(0, rows.index_select(0, own))
            for cache in self.stacks.get(g, []):
                cache.reorder_(local)

    def select_(self, rows: Tensor, sentences: Tensor) -> None:
        """Keep sentences ``sentences`` and their decoder rows ``rows`` (``beam`` per sentence, in the same order):
        drop finished sentences, or reorder a batch. In place."""
        new_group = self.group.index_select(0, rows)
        for g in list(self.stacks):
            if self.uniform:
                local_rows, local_sents = rows, sentences
            else:
                old_rows = (self.group == g).nonzero().squeeze(1)
                new_rows = (new_group == g).nonzero().squeeze(1)
                if new_rows.numel() == 0:
                    del self.stacks[g]
                    continue
                local_rows = torch.searchsorted(old_rows, rows.index_select(0, new_rows))
                local_sents = torch.searchsorted(old_rows[:: self.beam] // self.beam,
                                                 sentences.index_select(0, new_rows[:: self.beam] // self.beam))
            for cache in self.stacks[g]:
                cache.select_(local_rows, local_sents)
        self.group, self._split, self._local, self._sub_langs = new_group, None, None, None


class Decoder(nn.Module):
    def __init__(self, embed: TransformerEmbedding, stacks: Sequence[DecoderStack], output_projection: nn.Linear,
                 *, per_target: bool) -> None:
        super().__init__()
        if not per_target and len(stacks) != 1:
            raise ValueError(f"a shared decoder has one stack, got {len(stacks)}")
        self.embed = embed
        self.stacks = nn.ModuleList(stacks)
        self.output_projection = output_projection
        self.per_target = per_target
        self.padding_idx = embed.positions.padding_idx

    def stack_ids(self, langs: LangContext) -> tuple[Tensor, int | None]:
        """Stack of each row ``(B,)`` and the stack shared by all rows (``None`` if mixed)."""
        if self.per_target:
            return langs.tgt, langs.uniform_tgt
        return torch.zeros_like(langs.tgt), 0

    def init_cache(self, langs: LangContext, beam: int = 1) -> DecoderCache:
        """Empty state for rows with languages ``langs``, ``beam`` consecutive rows per sentence."""
        group, uniform = self.stack_ids(langs)
        return DecoderCache(group=group, uniform=uniform is not None, beam=beam)

    @staticmethod
    def _split(ids: Tensor, beam: int, cache: DecoderCache | None) -> list[tuple[int, Tensor, Tensor]]:
        """``[(stack, rows, sentences)]``: the cache's (found once), else from ``ids``."""
        if cache is not None:
            return cache.split()
        return [(g, rows, rows[::beam] // beam) for g, rows in group_rows(ids)]

    def _stack_caches(self, cache: DecoderCache | None, g: int) -> list[LayerCache] | None:
        if cache is None:
            return None
        return cache.stacks.setdefault(g, [LayerCache() for _ in self.stacks[g].layers])

    def forward(self, prev_tokens: Tensor, enc: EncoderOut, langs: LangContext,
                cache: DecoderCache | None = None) -> Tensor:
        """``prev_tokens (N, T)`` -> logits ``(N, T, V)``; ``enc`` has ``B`` rows, ``N = k B`` (``k`` beams per
        sentence, consecutive rows; 1 in training).

        With ``cache``, ``prev_tokens`` are only the new tokens (usually ``T = 1``),
        positions continue from ``cache.step`` and the cache is updated in place.
        """
        offset = 0 if cache is None else cache.step
        x = self.embed(prev_tokens, offset)  # (N, T, D)
        self_pad = None
        if cache is None:  # incremental steps feed no padding; an all-False mask masks nothing (no host sync to
            self_pad = prev_tokens.eq(self.padding_idx)  # find out whether the batch has padding)
        ids, uniform = self.stack_ids(langs)
        if uniform is not None:  # fast path: one stack for the whole batch
            x = self.stacks[uniform](x, langs, enc, self_pad, self._stack_caches(cache, uniform))
        else:
            out = torch.zeros_like(x)
            split = self._split(ids, x.size(0) // max(enc.out.size(0), 1), cache)
            subs = cache.sub_langs(langs) if cache is not None else [langs.index_select(r) for _, r, _ in split]
            for (g, rows, sentences), sub in zip(split, subs, strict=True):
                y = self.stacks[g](x.index_select(0, rows), sub, enc.index_select(sentences),
                                   None if self_pad is None else self_pad.index_select(0, rows),
                                   self._stack_caches(cache, g))
                out = out.index_copy(0, rows, y)
            x = out
        if cache is not None:
            cache.step += prev_tokens.size(1)
        return self.output_projection(x)  # (B, T, V)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """Embedding, output projection and the one stack that serves ``tgt``."""
        stack = self.stacks[tgt if self.per_target else 0]
        for module in (self.embed, stack, self.output_projection):
            yield from active_parameters(module, src, tgt)


class Transformer(nn.Module):
    """Encoder-decoder model: ``forward(src_tokens, prev_tokens, langs) -> logits (B, T, V)``."""

    def __init__(self, encoder: Encoder, decoder: Decoder, *, num_languages: int, max_positions: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.num_languages = num_languages
        self.max_positions = max_positions
        self._aux_modules: tuple[nn.Module, ...] | None = None

    def forward(self, src_tokens: Tensor, prev_tokens: Tensor, langs: LangContext) -> Tensor:
        """Teacher-forced logits: ``src (B, S)``, ``prev (B, T)`` -> ``(B, T, V)``."""
        return self.decoder(prev_tokens, self.encoder(src_tokens, langs), langs)

    def encode(self, src_tokens: Tensor, langs: LangContext) -> EncoderOut:
        return self.encoder(src_tokens, langs)

    def decode(self, prev_tokens: Tensor, enc: EncoderOut, langs: LangContext,
               cache: DecoderCache | None = None) -> Tensor:
        return self.decoder(prev_tokens, enc, langs, cache)

    def init_cache(self, langs: LangContext, beam: int = 1) -> DecoderCache:
        """Empty incremental state for decoder rows with languages ``langs`` (``beam`` consecutive rows per
        sentence of the encoder output)."""
        return self.decoder.init_cache(langs, beam)

    def aux_loss(self) -> Tensor | None:
        """Sum of the sub-modules' auxiliary losses of the last forward (``None`` if none has one)."""
        if self._aux_modules is None:  # found once (HasAuxLoss, without a runtime protocol's slow isinstance)
            self._aux_modules = tuple(m for m in self.modules()
                                      if m is not self and getattr(type(m), "aux_loss", None) is not None)
        present = [loss for m in self._aux_modules if (loss := m.aux_loss()) is not None]
        return torch.stack(present).sum() if present else None
