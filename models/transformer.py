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
and output layer. Each row goes to ``stacks[langs.tgt[row]]``: a teacher-forced batch of several targets goes
through all stacks at once, its rows tiled by target (``models/ls/grouped.py``); decoding steps call each stack on
its rows (:class:`StackLayout`).

Every forward takes a :class:`~models.lang.LangContext`; batches may mix
directions. Tensors are batch-first: ``(B, T, D)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from models.embedding import TransformerEmbedding
from models.lang import LangContext, RowGroups, group_rows, to_device
from models.layers import LayerCache
from models.ls.base import active_parameters
from models.ls.grouped import GroupedStack, call_one


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
        x = x.masked_fill(padding_mask.unsqueeze(-1), 0.0)
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
class StackLayout:
    """Which rows of a mixed batch each per-target stack decodes, found from the rows' host ids (no device read).

    ``groups``: the rows of each target language (:class:`~models.lang.RowGroups`); ``sentences[i]``: the encoder
    rows (sentences) of stack ``groups.ids[i]``'s decoder rows, ``beam`` consecutive rows per sentence;
    ``sub_langs[i]``: their languages; ``local (N,)``: each row's position among its stack's rows.
    """

    langs: LangContext
    groups: RowGroups
    sentences: tuple[Tensor, ...]
    sub_langs: list[LangContext]
    local: Tensor

    @classmethod
    def of(cls, langs: LangContext, beam: int) -> StackLayout:
        groups = langs.groups("tgt")
        local = np.empty(len(langs), dtype=np.int64)
        for rows in groups.host_rows():
            local[rows] = np.arange(len(rows))
        sentences = tuple(rows[::beam] // beam for rows in groups.rows())
        return cls(langs, groups, sentences, langs.split("tgt"), to_device(local, langs.src.device))


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
    _layout: StackLayout | None = None

    def layout(self, langs: LangContext) -> StackLayout:
        """The stacks' rows of a mixed batch with languages ``langs`` (the rows' host ids: no device read), found
        once per batch layout and reused by every step."""
        if self._layout is None or self._layout.langs is not langs:
            self._layout = StackLayout.of(langs, self.beam)
        return self._layout

    def reorder_(self, rows: Tensor) -> None:
        """Row ``i`` takes row ``rows[i]``'s state, a beam of the same sentence (beam search), in place.

        Only self-attention state moves, with device index operations only (the layout of the last step).
        """
        if self.uniform:
            for caches in self.stacks.values():
                for cache in caches:
                    cache.reorder_(rows)
            return
        assert self._layout is not None, "reorder_ follows a decoding step"
        for g, own in zip(self._layout.groups.ids, self._layout.groups.rows(), strict=True):
            local = self._layout.local.index_select(0, rows.index_select(0, own))
            for cache in self.stacks.get(g, []):
                cache.reorder_(local)

    def select_(self, rows: Tensor, sentences: Tensor, langs: LangContext | None = None) -> None:
        """Keep sentences ``sentences`` and their decoder rows ``rows`` (``beam`` per sentence, in the same order):
        drop finished sentences, or reorder a batch. In place.

        ``langs``: the kept rows' languages; with their host ids (the searches' batches) a mixed batch is regrouped
        without reading the device, else from the stacks of the rows (a host read per stack).
        """
        new_group = self.group.index_select(0, rows)
        layout = None if self.uniform or langs is None else StackLayout.of(langs, self.beam)
        if not self.uniform:
            old, new = self._by_stack(self._layout, self.group), self._by_stack(layout, new_group)
        for g in list(self.stacks):
            if self.uniform:
                local_rows, local_sents = rows, sentences
            else:
                if g not in new:
                    del self.stacks[g]
                    continue
                old_rows, new_rows = old[g], new[g]
                local_rows = torch.searchsorted(old_rows, rows.index_select(0, new_rows))
                local_sents = torch.searchsorted(old_rows[:: self.beam] // self.beam,
                                                 sentences.index_select(0, new_rows[:: self.beam] // self.beam))
            for cache in self.stacks[g]:
                cache.select_(local_rows, local_sents)
        self.group, self._layout = new_group, layout

    @staticmethod
    def _by_stack(layout: StackLayout | None, group: Tensor) -> dict[int, Tensor]:
        """``{stack: rows}`` from a layout, or from ``group`` (a host read per stack)."""
        if layout is None:
            return dict(group_rows(group))
        return dict(zip(layout.groups.ids, layout.groups.rows(), strict=True))


class Decoder(nn.Module):
    def __init__(self, embed: TransformerEmbedding, stacks: Sequence[DecoderStack], output_projection: nn.Linear,
                 *, per_target: bool) -> None:
        super().__init__()
        if not per_target and len(stacks) != 1:
            raise ValueError(f"a shared decoder has one stack, got {len(stacks)}")
        self.embed = embed
        fused = GroupedStack.of(stacks) if per_target and len(stacks) > 1 else None
        self.stacks: nn.Module = fused if fused is not None else nn.ModuleList(stacks)
        """The stacks: a ``ModuleList``, or per-target stacks grouped into one (every weight stacked over the
        targets, ``models/ls/grouped.py``)."""
        self.languages = len(stacks)
        self.depth = len(stacks[0].layers)
        self.output_projection = output_projection
        self.per_target = per_target
        self.padding_idx = embed.positions.padding_idx

    def stack_ids(self, langs: LangContext) -> tuple[Tensor, int | None]:
        """Stack of each row ``(B,)`` and the stack shared by all rows (``None`` if mixed)."""
        if self.per_target:
            return langs.tgt, langs.uniform("tgt")
        return torch.zeros_like(langs.tgt), 0

    def init_cache(self, langs: LangContext, beam: int = 1) -> DecoderCache:
        """Empty state for rows with languages ``langs``, ``beam`` consecutive rows per sentence."""
        group, uniform = self.stack_ids(langs)
        return DecoderCache(group=group, uniform=uniform is not None, beam=beam)

    def _stack_caches(self, cache: DecoderCache | None, g: int) -> list[LayerCache] | None:
        if cache is None:
            return None
        return cache.stacks.setdefault(g, [LayerCache() for _ in range(self.depth)])

    def stack(self, g: int) -> Callable[..., Tensor]:
        """Stack ``g``, called as a ``DecoderStack``: its own module, or its slice of the grouped stacks."""
        if isinstance(self.stacks, nn.ModuleList):
            return self.stacks[g]  # type: ignore[no-any-return]
        return functools.partial(call_one, self.stacks, g)

    def forward(self, prev_tokens: Tensor, enc: EncoderOut, langs: LangContext,
                cache: DecoderCache | None = None) -> Tensor:
        """``prev_tokens (N, T)`` -> logits ``(N, T, V)``; ``enc`` has ``B`` rows, ``N = k B`` (``k`` beams per
        sentence, consecutive rows; 1 in training).

        With ``cache``, ``prev_tokens`` are only the new tokens (usually ``T = 1``),
        positions continue from ``cache.step`` and the cache is updated in place.
        Teacher-forced inputs get their padding mask whether they have pads or not (asking would read the
        device; an all-False mask gives what none gives); incremental steps feed no padding.
        """
        offset = 0 if cache is None else cache.step
        x = self.embed(prev_tokens, offset)  # (N, T, D)
        self_pad = prev_tokens.eq(self.padding_idx) if cache is None else None
        _, uniform = self.stack_ids(langs)
        if uniform is not None:  # fast path: one stack for the whole batch
            x = self.stack(uniform)(x, langs, enc, self_pad, self._stack_caches(cache, uniform))
        elif cache is None and isinstance(self.stacks, GroupedStack) and x.size(0) == enc.out.size(0) > 0:
            x = self._grouped(x, langs, enc, self_pad)
        else:
            beam = x.size(0) // max(enc.out.size(0), 1)
            layout = cache.layout(langs) if cache is not None else StackLayout.of(langs, beam)
            g = layout.groups
            pads = g.split(self_pad) if self_pad is not None else [None] * len(g.ids)
            x = g.merge([self.stack(s)(xs, sub, enc.index_select(sents), pad, self._stack_caches(cache, s))
                         for s, xs, sub, sents, pad in zip(g.ids, g.split(x), layout.sub_langs, layout.sentences,
                                                           pads, strict=True)])
        if cache is not None:
            cache.step += prev_tokens.size(1)
        return self.output_projection(x)  # (B, T, V)

    def _grouped(self, x: Tensor, langs: LangContext, enc: EncoderOut, self_pad: Tensor | None) -> Tensor:
        """Teacher-forced rows of several targets: every stack at once, on the rows tiled by target language (the
        grouped stacks, ``models/ls/grouped.py``: the shapes and operations of one stack)."""
        sub = langs.tiled("tgt", self.languages)
        t = sub.tiling
        assert t is not None
        pad = None if self_pad is None else t.tile(self_pad)
        tiled = EncoderOut(t.tile(enc.out), t.tile(enc.padding_mask))
        return t.untile(self.stacks(t.tile(x), sub, tiled, pad, None))

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """Embedding, output projection and the one stack that serves ``tgt`` (its slice of grouped stacks)."""
        for module in (self.embed, self.output_projection):
            yield from active_parameters(module, src, tgt)
        if isinstance(self.stacks, GroupedStack):
            yield from (p[tgt] for p in self.stacks.parameters())
        else:
            yield from active_parameters(self.stacks[tgt if self.per_target else 0], src, tgt)


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
