"""Bottleneck adapters after each Transformer layer (Bapna and Firat 2019; Philip et al. 2020), trained
from scratch with the model: CLM's "+Adapter" baseline (Sec. 4.2) and LSL's adapter baselines (Sec. 4.3,
Tables 1, 5, 10).

One adapter of key ``l`` (``models/ls/keys.py``) maps a layer's output ``z`` (``d``) to

    A_l(z) = z + W_up[l] ReLU(W_down[l] LN_l(z) + b_down[l]) + b_up[l]

with ``W_down`` ``b x d`` and ``W_up`` ``d x b`` (``b`` = bottleneck). Bapna and Firat normalise the
adapter input with the adapter's own LayerNorm and add the residual (their Eq. 1-2): ``layer_norm: true``
(default). ``W_up = 0`` at initialisation (``zero_init``) makes every adapter the identity at step 0.
Placements (per side, ``none`` = no adapters there):

* ``src`` / ``tgt``: source / target language adapters (LSL "Language Adapters ENC": encoder ``src``;
  "ENC+DEC" and LSL Table 5: encoder ``src``, decoder ``tgt``, as Philip et al.);
* ``src-tgt`` (encoder only): ``src`` in the bottom half of the layers, ``tgt`` in the top half
  (LSL "ENC (SRC+TGT)");
* ``pair`` / ``direction``: language-pair adapters (Bapna and Firat; ``pair`` = English-centric pair,
  ``direction`` = any ordered pair, LSL "Language-Pair Adapters ENC"); in a one-to-many model the pair is the
  target: ``tgt`` (CLM's en-xx rows).

A per-target decoder (``model.decoder: per-target``) serves one language: with ``tgt`` each of its stacks
gets one unkeyed adapter per layer (LSL Table 10, ENC+DEC: 10 x 19 adapters, not 10 x 10 x 3 + 160).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.config.adapter import AdapterConfig, Placement
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.ls.keys import Key, key_for, key_ids, keyed_matmul, keyed_rows, table_size


class Adapter(nn.Module):
    """Keyed bottleneck adapters: one row of every table per key; ``(B, T, d)`` -> ``(B, T, d)``."""

    def __init__(self, dim: int, bottleneck: int, *, key: Key, num_languages: int, pivot: int, layer_norm: bool,
                 bias: bool, zero_init: bool) -> None:
        super().__init__()
        rows = table_size(key, num_languages)
        self.key, self.num_languages, self.pivot = key, num_languages, pivot
        self.down = nn.Parameter(torch.empty(rows, dim, bottleneck))
        self.up = nn.Parameter(torch.empty(rows, bottleneck, dim))
        bound = math.sqrt(6.0 / (dim + bottleneck))
        nn.init.uniform_(self.down, -bound, bound)
        if zero_init:
            nn.init.zeros_(self.up)
        else:
            nn.init.uniform_(self.up, -bound, bound)
        self.b_down = nn.Parameter(torch.zeros(rows, bottleneck)) if bias else None
        self.b_up = nn.Parameter(torch.zeros(rows, dim)) if bias else None
        self.ln_weight = nn.Parameter(torch.ones(rows, dim)) if layer_norm else None
        self.ln_bias = nn.Parameter(torch.zeros(rows, dim)) if layer_norm else None

    def forward(self, z: Tensor, langs: LangContext) -> Tensor:
        ids = key_ids(self.key, langs, self.num_languages, self.pivot)
        h = z
        if self.ln_weight is not None and self.ln_bias is not None:
            h = F.layer_norm(z, z.shape[-1:]) * keyed_rows(self.ln_weight, ids) + keyed_rows(self.ln_bias, ids)
        h = keyed_matmul(h, self.down, ids)  # (B, T, b)
        if self.b_down is not None:
            h = h + keyed_rows(self.b_down, ids)
        h = keyed_matmul(h.relu(), self.up, ids)  # (B, T, d)
        if self.b_up is not None:
            h = h + keyed_rows(self.b_up, ids)
        return z + h

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        row = key_for(self.key, src, tgt, self.num_languages, self.pivot)
        for p in (self.down, self.up, self.b_down, self.b_up, self.ln_weight, self.ln_bias):
            if p is not None:
                yield p[row]


class AdaptedLayer(nn.Module):
    """An encoder or decoder layer followed by an adapter: ``A(layer(x, langs, …), langs)``."""

    def __init__(self, layer: nn.Module, adapter: Adapter) -> None:
        super().__init__()
        self.layer, self.adapter = layer, adapter

    def forward(self, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
        return self.adapter(self.layer(x, langs, *args, **kwargs), langs)


def _key(placement: Placement, spec: LayerSpec) -> Key | None:
    if placement == "none":
        return None
    if placement == "src-tgt":
        return "src" if spec.layer < spec.num_layers // 2 else "tgt"
    if placement == "tgt" and spec.stack is not None:
        return "none"  # a per-target decoder stack serves one target language
    return placement


def build(cfg: AdapterConfig, defaults: Factories) -> Factories:
    """``defaults`` with an adapter after every layer of the sides that have one."""

    def wrap(spec: LayerSpec, layer: nn.Module) -> nn.Module:
        key = _key(cfg.encoder if spec.side == "encoder" else cfg.decoder, spec)
        if key is None:
            return layer
        return AdaptedLayer(layer, Adapter(spec.embed_dim, cfg.bottleneck, key=key, num_languages=spec.num_languages,
                                           pivot=cfg.pivot, layer_norm=cfg.layer_norm, bias=cfg.bias,
                                           zero_init=cfg.zero_init))

    def encoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        return wrap(spec, defaults.encoder_layer(spec, f))

    def decoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        return wrap(spec, defaults.decoder_layer(spec, f))

    return dataclasses.replace(defaults, encoder_layer=encoder_layer, decoder_layer=decoder_layer)
