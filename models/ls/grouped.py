"""One computation for all languages: ``L`` per-language copies of a module grouped into one.

A language-specific module holds a module per language (``copies[l]`` serves language ``l``). Grouped, the copies
become one module of the same tree in which every ``Linear`` and ``LayerNorm`` holds the ``L`` copies' weights
stacked (``W (L, out, in)``, ``gamma (L, D)``) and applies to each row its language's:

    Linear:     y = x W_l^T + b_l                   LayerNorm:  y = gamma_l * norm(x) + beta_l

Its context's ``tiling`` (``models/tiles.py``) says which: rows laid out in tiles of one language each take one
batched matmul over the tiles (``baddbmm``) and one ``addcmul``; a batch of one language ``l``
(:meth:`~models.tiles.Tiles.one`) takes ``l``'s slice, exactly what copy ``l`` computes. Everything else
(attention, activations, dropout, residuals) runs once on the whole batch as the plain module's own code: the group
of ``MultiheadAttention`` or ``FeedForward`` copies *is* one (its class, its forward), its projections swapped.
Row by row this is what each language's copy computes on its own rows; the batch's shapes are the only shapes,
and a layer costs a fixed number of operations whatever the number of languages.

:func:`fuse` moves the copies' parameters into the grouped module (their initial values: initialisation is that of
the per-language code; ``<name>`` of the grouped module holds the stacked ``<name>`` of every copy). Languages
absent from a batch get a zero gradient (``None`` per language before): what fairseq's fp16 optimiser, which the
papers trained with, gives every unused parameter too.

Encoder and decoder layers are grouped by :class:`GroupedLayer` (the same blocks in the same order, their residual
LayerNorms taking the tiling), per-target decoder stacks by :class:`GroupedStack`. A tree with any other
parameterised module (an LS module inside, an adapter) cannot be grouped (``None``) and its owner keeps the
per-language calls (:func:`route`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.attention import MultiheadAttention
from models.dropout import Dropout
from models.lang import LangContext
from models.layers import DecoderLayer, EncoderLayer, FeedForward, Residual, with_padding
from models.linear import Linear
from models.tiles import Tiles

PLAIN = (MultiheadAttention, FeedForward, Dropout, nn.Dropout, nn.ReLU, nn.GELU, nn.Identity)
"""Module classes grouped as they are (their own parameters, if any, are grouped leaf by leaf)."""
Modules = Sequence[nn.Module] | nn.ModuleList


class _Stacked(nn.Module):
    """A leaf whose parameters are the copies' of the same name, stacked over the languages: ``(L, …)``."""

    def __init__(self, copies: Sequence[nn.Module], names: tuple[str, ...]) -> None:
        super().__init__()
        self.names, self.languages = names, len(copies)
        for name in names:
            first = getattr(copies[0], name)
            stacked = None if first is None else torch.stack([getattr(c, name).detach() for c in copies])
            self.register_parameter(name, None if stacked is None else nn.Parameter(stacked, first.requires_grad))

    def stacked(self) -> list[Tensor | None]:
        """Each weight ``(L, …)``."""
        return [getattr(self, n) for n in self.names]

    def one(self, lang: int) -> list[Tensor | None]:
        """Language ``lang``'s weights."""
        return [None if w is None else w[lang] for w in self.stacked()]


class GroupedLinear(_Stacked):
    """``y = x W_l^T + b_l`` for each row's language ``l``: ``x (n r, …, in)`` tiled, or one language's rows."""

    def __init__(self, copies: Sequence[nn.Linear]) -> None:
        super().__init__(copies, ("weight", "bias"))
        self.in_features, self.out_features = copies[0].in_features, copies[0].out_features

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        tiles = _tiling(langs)
        if tiles.single is not None:
            return self._one(x, tiles.single)
        if tiles.segments is not None:
            return _per_segment(x, tiles, self._one)
        w, b = self.stacked()
        return grouped_linear(x, tiles, w, b)  # type: ignore[arg-type]

    def _one(self, x: Tensor, lang: int) -> Tensor:
        w, b = self.one(lang)
        return F.linear(x, w, b)  # type: ignore[arg-type]

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, languages={self.languages}"


class GroupedLayerNorm(_Stacked):
    """``gamma_l * norm(x) + beta_l`` for each row's language ``l``: ``forward(x, tiles)``."""

    def __init__(self, copies: Sequence[nn.LayerNorm]) -> None:
        super().__init__(copies, ("weight", "bias"))
        self.shape, self.eps = copies[0].normalized_shape, copies[0].eps

    def forward(self, x: Tensor, tiles: Tiles) -> Tensor:
        if tiles.single is not None:
            return self._one(x, tiles.single)
        if tiles.segments is not None:
            return _per_segment(x, tiles, self._one)
        y = F.layer_norm(x, self.shape, None, None, self.eps)
        gamma, beta = self.stacked()
        if gamma is None:
            return y
        yt = y.view(tiles.count, -1, y.size(-1))  # (n, r T, D)
        g = tiles.per_tile(gamma).unsqueeze(1)  # (n, 1, D)
        out = yt * g if beta is None else torch.addcmul(tiles.per_tile(beta).unsqueeze(1), yt, g)
        return out.view_as(x)

    def _one(self, x: Tensor, lang: int) -> Tensor:
        g, b = self.one(lang)
        return F.layer_norm(x, self.shape, g, b, self.eps)


def _per_segment(x: Tensor, tiles: Tiles, fn: Callable[[Tensor, int], Tensor]) -> Tensor:
    """``fn(x_l, l)`` on each language's segment of the sorted rows ``x``, concatenated (one segment: no copy)."""
    assert tiles.segments is not None
    langs, counts = zip(*tiles.segments, strict=True)
    parts = [fn(xs, lang) for xs, lang in zip(x.split(list(counts)), langs, strict=True)]
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def grouped_linear(x: Tensor, tiles: Tiles, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``x (n r, …, in)`` with each tile's ``weight (L, out, in)`` and ``bias (L, out)`` -> ``(n r, …, out)``; on
    rows in segments (a CPU), each segment's."""
    if tiles.segments is not None:
        return _per_segment(x, tiles, lambda xs, lang: F.linear(xs, weight[lang], None if bias is None else bias[lang]))
    w = tiles.per_tile(weight).transpose(1, 2)  # (n, in, out)
    xt = x.reshape(tiles.count, -1, x.size(-1))  # (n, r T, in)
    y = torch.bmm(xt, w) if bias is None else torch.baddbmm(tiles.per_tile(bias).unsqueeze(1), xt, w)
    return y.view(*x.shape[:-1], y.size(-1))


def _tiling(langs: LangContext) -> Tiles:
    assert langs.tiling is not None, "a grouped module takes a context with its tiling (LangContext.tiled)"
    return langs.tiling


def fuse(copies: Sequence[nn.Module]) -> nn.Module | None:
    """The copies grouped into one module owning their parameters, stacked (module docstring); ``None``: cannot."""
    first = copies[0]
    if type(first) in (nn.Linear, Linear):
        return GroupedLinear(copies)  # type: ignore[arg-type]
    if type(first) is EncoderLayer or type(first) is DecoderLayer:
        return GroupedLayer.of(copies)
    if type(first) not in PLAIN or any(t is not None for t in (*first._parameters.values(), *first._buffers.values())):
        return None
    out = copy.copy(first)  # the same class and settings; children grouped below
    out._parameters, out._buffers, out._modules = {}, {}, {}
    for name in first._modules:
        child = fuse([c._modules[name] for c in copies])  # type: ignore[misc]
        if child is None:
            return None
        out._modules[name] = child
    return out


class GroupedResidual(nn.Module):
    """:class:`~models.layers.Residual` with a :class:`GroupedLayerNorm`: ``forward(x, sublayer, tiles)``."""

    def __init__(self, copies: Sequence[Residual]) -> None:
        super().__init__()
        self.norm = GroupedLayerNorm([c.norm for c in copies])
        self.dropout = copy.copy(copies[0].dropout)
        self.normalize_before = copies[0].normalize_before

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor], tiles: Tiles) -> Tensor:
        h = sublayer(self.norm(x, tiles) if self.normalize_before else x)
        x = x + self.dropout(h)
        return x if self.normalize_before else self.norm(x, tiles)


class GroupedLayer(nn.Module):
    """Grouped encoder or decoder layers (``models/layers.py``): the same sublayers and blocks, the same names."""

    def __init__(self, subs: dict[str, nn.Module], blocks: dict[str, GroupedResidual], causal: bool | None) -> None:
        super().__init__()
        self.causal = causal  # None: a decoder layer
        for name, sub in subs.items():  # the layers' order: sublayers, then their blocks
            self.add_module(name, sub)
        for name, block in blocks.items():
            self.add_module(f"{name}_block", block)

    @classmethod
    def of(cls, copies: Sequence[nn.Module]) -> GroupedLayer | None:
        decoder = type(copies[0]) is DecoderLayer
        names = ("self_attn", "cross_attn", "ffn") if decoder else ("self_attn", "ffn")
        subs = {n: fuse([getattr(c, n) for c in copies]) for n in names}
        if any(s is None for s in subs.values()):
            return None
        blocks = {n: GroupedResidual([getattr(c, f"{n}_block") for c in copies]) for n in names}
        return cls(subs, blocks, None if decoder else copies[0].causal)  # type: ignore[arg-type]

    def _block(self, name: str, x: Tensor, call: Callable[[nn.Module, Tensor], Tensor], tiles: Tiles) -> Tensor:
        sub = getattr(self, name)
        return getattr(self, f"{name}_block")(x, lambda h: call(sub, h), tiles)

    def forward(self, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
        """Encoder: ``(x, langs, padding_mask)``; decoder: ``(x, langs, memory, memory_padding_mask, *,
        self_padding_mask, cache)``, as the layers it groups."""
        tiles = _tiling(langs)
        if self.causal is not None:
            (mask,) = args
            padded = with_padding(langs, mask)
            x = self._block("self_attn", x, lambda m, h: m(h, padded, key_padding_mask=mask, causal=self.causal), tiles)
            return self._block("ffn", x, lambda m, h: m(h, padded), tiles)
        memory, memory_mask = args
        self_mask, cache = kwargs.get("self_padding_mask"), kwargs.get("cache")
        sa, ca = (cache.self_attn, cache.cross_attn) if cache is not None else (None, None)
        padded = with_padding(langs, self_mask)
        x = self._block(
            "self_attn", x, lambda m, h: m(h, padded, key_padding_mask=self_mask, causal=True, cache=sa), tiles
        )
        x = self._block(
            "cross_attn", x, lambda m, h: m(h, padded, memory, key_padding_mask=memory_mask, cache=ca), tiles
        )
        return self._block("ffn", x, lambda m, h: m(h, padded), tiles)


class GroupedStack(nn.Module):
    """Grouped decoder stacks (``models.transformer.DecoderStack``: layers, then a final LayerNorm), called as one."""

    def __init__(self, layers: Sequence[GroupedLayer], final_norm: GroupedLayerNorm | None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.final_norm = final_norm

    @classmethod
    def of(cls, stacks: Sequence[nn.Module]) -> GroupedStack | None:
        depth = len(stacks[0].layers)  # type: ignore[arg-type]
        layers = [fuse([s.layers[i] for s in stacks]) for i in range(depth)]  # type: ignore[index,misc]
        if not all(isinstance(layer, GroupedLayer) for layer in layers):
            return None
        norms = [s.final_norm for s in stacks]
        final = None if norms[0] is None else GroupedLayerNorm(norms)  # type: ignore[arg-type]
        return cls(layers, final)  # type: ignore[arg-type]

    def forward(
        self, x: Tensor, langs: LangContext, enc: Any, self_padding_mask: Tensor | None, caches: Sequence[Any] | None
    ) -> Tensor:
        """As ``DecoderStack.forward``: ``x (N, T, D)``, ``enc`` the rows' encoder output (``out``,
        ``padding_mask``), ``caches`` one per layer or ``None`` -> ``(N, T, D)``."""
        for i, layer in enumerate(self.layers):
            x = layer(
                x,
                langs,
                enc.out,
                enc.padding_mask,
                self_padding_mask=self_padding_mask,
                cache=None if caches is None else caches[i],
            )
        return x if self.final_norm is None else self.final_norm(x, _tiling(langs))


def route(modules: Modules, side: str, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
    """``modules[lang](x_l, langs_l, …)`` on each ``side`` language's rows, put back in batch order: one call per
    language present (tensor arguments are batch-major: padding masks), found on the host. What copies that cannot
    be grouped run."""
    names = list(kwargs)

    def call(lang: int, sub: LangContext, xs: Tensor, *rest: Any) -> Tensor:
        return modules[lang](xs, sub, *rest[: len(args)], **dict(zip(names, rest[len(args) :], strict=True)))

    return langs.map(side, call, x, *args, *kwargs.values())  # type: ignore[arg-type]


def call_one(grouped: nn.Module, lang: int, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
    """Language ``lang``'s copy on every row: what ``copies[lang](x, langs, …)`` computes."""
    return grouped(x, langs.with_(tiling=Tiles.one(lang)), *args, **kwargs)


def grouped_call(
    grouped: nn.Module, languages: int, side: str, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any
) -> Tensor:
    """The copy of each row's ``side`` language (``languages`` copies grouped in ``grouped``) on the row: the one
    language's on a batch of one; else all at once on the rows tiled by language (tensor arguments with a row per
    sentence are tiled alike), or per language where an argument is not batch-major."""
    lang = langs.uniform(side)  # type: ignore[arg-type]
    if lang is not None:
        return call_one(grouped, lang, x, langs, *args, **kwargs)
    rows = x.size(0)
    if rows == 0 or not all(a.size(0) == rows for a in (*args, *kwargs.values()) if isinstance(a, Tensor)):
        copies = [lambda *a, _l=lang, **k: call_one(grouped, _l, *a, **k) for lang in range(languages)]
        return route(copies, side, x, langs, *args, **kwargs)  # type: ignore[arg-type]
    sub = langs.tiled(side, languages)  # type: ignore[arg-type]
    tiles = _tiling(sub)

    def tile(a: Any) -> Any:
        return tiles.tile(a) if isinstance(a, Tensor) else a

    out = grouped(tiles.tile(x), sub, *map(tile, args), **{k: tile(v) for k, v in kwargs.items()})
    return tiles.untile(out)
