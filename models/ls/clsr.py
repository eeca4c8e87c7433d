"""Conditional Language-Specific Routing (CLSR; Zhang et al. 2021), the LMS-FD paper's baseline (Sec. 5.1).

After each chosen sublayer a gate picks, per token, a shared or a target-language path:

    CLSR(h) = g(h) * h W_tgt + (1 - g(h)) * shared(h)

* attention sublayers: ``h`` is the concatenated heads' output and ``shared`` the
  attention's own output projection (CLSR replaces it);
* FFN sublayers: ``h = FFN(x)`` and ``shared`` is the identity (no extra shared matrix);
* ``W_tgt`` (``d x d``, no bias) belongs to the target language. CLSR shares one set
  ``{W_l}`` across all encoder sublayers and one across all decoder sublayers;
  CLSR* (``share: false``) gives every sublayer its own set.
* gate ``G(h) = Linear(128, 1)(ReLU(Linear(d, 128)(h)))`` per sublayer; in training
  ``g = sigmoid(G(h) + a * eps)``, ``eps ~ N(0, 1)``, with ``a = noise_max * progress``
  ramping from 0 to ``noise_max`` (5) over training. ``progress = step / max_steps`` reaches the
  gate explicitly through ``LangContext.progress``, which the trainer sets for every training
  forward (``None`` elsewhere: no noise). At inference the gate is hard: ``g = 1[G(h) >= 0]``.
* budget (weight 1, via ``aux_loss``): ``|mean(g) - p|`` with the mean over every gate decision of
  the last forward on a real token (all gated sublayers; padded positions, ``LangContext.padding``, which the layer
  sets for each sublayer call, are left out: a pad routes nothing), ``p = 0.3``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import torch
from torch import Tensor, nn

from models.attention import MultiheadAttention
from models.config.clsr import CLSRConfig, Sublayer  # noqa: F401  (the kind's config, torch-free)
from models.factories import AttnKind, Factories, LayerSpec
from models.lang import LangContext
from models.ls.grouped import grouped_linear


class LangProjection(nn.Module):
    """``h W_tgt^T`` with one ``d x d`` matrix per target language."""

    def __init__(self, num_languages: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_languages, dim, dim))
        for w in self.weight.data:
            nn.init.xavier_uniform_(w)

    def forward(self, h: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``: one matmul on a one-target batch, else one batched matmul over the rows
        tiled by target language (``models/ls/grouped.py``)."""
        lang = langs.uniform("tgt")
        if lang is not None:
            return h @ self.weight[lang].T
        if h.size(0) == 0:
            return torch.zeros_like(h)
        tiles = langs.tiled("tgt", self.weight.size(0)).tiling
        assert tiles is not None
        return tiles.untile(grouped_linear(tiles.tile(h), tiles, self.weight, None))


class Budget(nn.Module):
    """Collects every gate's ``(g, padding)`` of the last forward; one instance per model. The sums are taken in
    :meth:`totals`, once per group of gates that share a padding mask and shape (a stack's sublayers): one stack, one
    product and two sums per group instead of per gate, the same sum."""

    def __init__(self, cfg: CLSRConfig) -> None:
        super().__init__()
        self.p, self.weight = cfg.budget, cfg.budget_weight
        self.stats: dict[int, tuple[Tensor, Tensor | None]] = {}

    def totals(self) -> tuple[Tensor, Tensor | int]:
        """``(sum of g, count)`` over every gate decision of the last forward on a real token."""
        groups: dict[tuple[int, tuple[int, ...]], tuple[Tensor | None, list[Tensor]]] = {}
        for g, padding in self.stats.values():
            groups.setdefault((id(padding), tuple(g.shape)), (padding, []))[1].append(g)
        sums: list[Tensor] = []
        count: Tensor | int = 0
        for padding, gates in groups.values():
            s, n = gate_stats(torch.stack(gates) if len(gates) > 1 else gates[0], padding)
            sums.append(s)
            count = count + n
        return (torch.stack(sums).sum() if len(sums) > 1 else sums[0]), count

    def aux_loss(self) -> Tensor | None:
        """``weight * |sum g / count - p|`` over all gates of the last forward."""
        if not self.stats:
            return None
        total, count = self.totals()
        return self.weight * (total / count - self.p).abs()


class CLSRGate(nn.Module):
    def __init__(self, dim: int, hidden: int, noise_max: float) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.noise_max = noise_max

    def forward(self, h: Tensor, progress: float | None) -> Tensor:
        """Gate ``(B, T, 1)``: noisy sigmoid in training, hard 0/1 in eval mode."""
        logit = self.net(h)
        if not self.training:
            return (logit >= 0).to(h.dtype)
        a = self.noise_max * (progress or 0.0)
        return torch.sigmoid(logit + a * torch.randn_like(logit) if a > 0 else logit)


def gate_stats(g: Tensor, padding: Tensor | None) -> tuple[Tensor, Tensor | int]:
    """``(sum of g, count)`` over the real tokens: ``g (..., B, T, 1)`` (one gate, or several stacked),
    ``padding (B, T)`` True at pads (``None``: no pad). The count stays a tensor (no host sync)."""
    if padding is None:
        return g.float().sum(), g.numel()
    if padding.shape != g.shape[-3:-1]:
        raise ValueError(f"padding mask {tuple(padding.shape)} does not match the gated positions {tuple(g.shape)}")
    real = (~padding).unsqueeze(-1).to(torch.float32)  # (B, T, 1)
    return (g.float() * real).sum(), real.sum() * (g.numel() // real.numel())


class CLSRProjection(nn.Module):
    """``g * h W_tgt + (1 - g) * shared(h)``; ``shared`` ``None`` is the identity."""

    def __init__(self, shared: nn.Module | None, lang: LangProjection, gate: CLSRGate, budget: Budget) -> None:
        super().__init__()
        self.shared, self.lang, self.gate, self.budget = shared, lang, gate, budget

    def forward(self, h: Tensor, langs: LangContext | None = None) -> Tensor:
        assert langs is not None, "CLSR needs the batch's languages"
        g = self.gate(h, langs.progress)  # (B, T, 1)
        self.budget.stats[id(self)] = (g, langs.padding)
        base = h if self.shared is None else self.shared(h, langs)
        return base + g * (self.lang(h, langs) - base)  # g lang + (1 - g) base in three operations, not four

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        if self.shared is not None:
            yield from self.shared.parameters()
        yield from self.gate.parameters()
        yield self.lang.weight[tgt]


class CLSRFFN(nn.Module):
    """An FFN followed by a :class:`CLSRProjection` (identity shared path)."""

    def __init__(self, ffn: nn.Module, proj: CLSRProjection) -> None:
        super().__init__()
        self.ffn, self.proj = ffn, proj

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        return self.proj(self.ffn(x, langs), langs)

    def aux_loss(self) -> Tensor | None:
        return None


def build(cfg: CLSRConfig, defaults: Factories) -> Factories:
    """``defaults`` with CLSR after the chosen sublayers; one :class:`Budget` per built model."""
    budget = Budget(cfg)
    banks: dict[str, LangProjection] = {}

    def projection(spec: LayerSpec, shared: nn.Module | None) -> CLSRProjection:
        if cfg.share:
            lang = banks.setdefault(spec.side, LangProjection(spec.num_languages, spec.embed_dim))
        else:
            lang = LangProjection(spec.num_languages, spec.embed_dim)
        return CLSRProjection(shared, lang, CLSRGate(spec.embed_dim, cfg.gate_hidden, cfg.noise_max), budget)

    def attn(spec: LayerSpec, kind: AttnKind) -> nn.Module:
        module = defaults.attn(spec, kind)
        if kind in cfg.sublayers and isinstance(module, MultiheadAttention):
            module.out_proj = projection(spec, module.out_proj)
        return module

    def ffn(spec: LayerSpec) -> nn.Module:
        module = defaults.ffn(spec)
        return CLSRFFN(module, projection(spec, None)) if "ffn" in cfg.sublayers else module

    return dataclasses.replace(defaults, attn=attn, ffn=ffn)
