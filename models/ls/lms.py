"""Language-specific Matrix Synthesis (LMS; Xu et al. 2023, "Condensing Multilingual Knowledge with
Lightweight Language-Specific Modules", Sec. 2) and its Fuse-Distillation variant LMS+FD (Sec. 4).

For a linear map with weight ``W`` (``r x c``, out x in) each language ``l`` owns a
"vertical" ``Wv[l]`` (``r x d``) and a "flat" ``Wf[l]`` (``d x c``), ``d << min(r, c)``:

* pair-wise synthesis (default for translation): ``x_o = (W + Wv[src] Wf[tgt]) x_i`` (Eq. 1);
* language-wise synthesis: ``x_o = (W + Wv[l] Wf[l]) x_i`` with ``l`` the source language
  in the encoder and the target language in the decoder (``decoder_language: src``
  reproduces the reference code, which used the source language in the decoder too).

Cost. A one-direction batch uses one pair of factors: with ``n`` tokens, forming ``W + Wv Wf`` once costs
``d r c`` and applying the product per token, ``y = x W^T + b + (x Wf^T) Wv^T``, costs ``n d (r + c)`` (forward;
backward alike), so the product is formed when ``n (r + c) > r c`` (training batches: ``n`` > 341 tokens for
512 x 1024) and applied per token otherwise (decoding steps). Both are Eq. 1; they differ in float rounding only.
A mixed batch gathers each sentence's factors and applies them per token.

Initialisation (Sec. 2.2, after LoRA): ``Wv ~ N(0, init_std^2)`` and ``Wf = 0``, so
at step 0 the model equals the dense one. ``init_std = 0.01`` is the reference
code's default (``init_sdev=0.01``); with ``Wf = 0`` its scale only sets how fast
``Wv Wf`` grows in the first updates (the gradient of ``Wf`` is proportional to ``Wv``).

LMS+FD (Sec. 4) adds one shared pair ``Wv_s, Wf_s``: the LS route computes
``W + Wv[src] Wf[tgt]``, the shared route ``W + Wv_s Wf_s``; the route comes with
the batch (``LangContext.route``, ``None`` = the configured inference route).
Parameters added: ``2 L N d (c + r)`` for LMS on both FFN projections of ``N`` layers
(Sec. 2.2), plus ``2 N d (c + r)`` for the shared pair.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.attention import MultiheadAttention
from models.config.lms import LMSConfig, LMSFDConfig, Route
from models.factories import AttnKind, Factories, LayerSpec, Side
from models.lang import LangContext
from models.layers import FeedForward
from models.linear import Linear


class LMSLinear(Linear):
    """``y = x W^T + b + (x Wf[f]^T) Wv[v]^T``, with ``(v, f)`` chosen per sentence from ``langs``."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, num_languages: int, rank: int,
                 side: Side, synthesis: str = "pair", decoder_language: str = "tgt", init_std: float = 0.01,
                 shared: bool = False, route: Route = "ls") -> None:
        super().__init__(in_features, out_features, bias)
        self.side, self.synthesis, self.decoder_language, self.route = side, synthesis, decoder_language, route
        # Wv (L, r, d) drawn through ``nn.init`` (the draws of ``Tensor.normal_``), which ``meta_device`` skips
        self.lms_v = nn.Parameter(nn.init.normal_(torch.empty(num_languages, out_features, rank), 0, init_std))
        self.lms_f = nn.Parameter(torch.zeros(num_languages, rank, in_features))  # (L, d, c)
        self.shared_v = nn.Parameter(nn.init.normal_(torch.empty(out_features, rank), 0, init_std)) if shared else None
        self.shared_f = nn.Parameter(torch.zeros(rank, in_features)) if shared else None

    def _route(self, langs: LangContext | None) -> Route:
        route = (langs.route if langs is not None else None) or self.route
        return "ls" if self.shared_v is None else route

    def _lang_ids(self, langs: LangContext) -> tuple[int | Tensor, int | Tensor]:
        """(vertical, flat) language of each row: ints on a one-direction batch, ``(B,)`` tensors otherwise."""
        if self.synthesis == "pair":
            src, tgt = langs.uniform_src, langs.uniform_tgt
            if src is not None and tgt is not None:
                return src, tgt
            return langs.src, langs.tgt
        use_src = self.side == "encoder" or self.decoder_language == "src"
        one = langs.uniform_src if use_src else langs.uniform_tgt
        ids = one if one is not None else (langs.src if use_src else langs.tgt)
        return ids, ids

    def _ids_for(self, src: int, tgt: int) -> tuple[int, int]:
        if self.synthesis == "pair":
            return src, tgt
        lang = src if self.side == "encoder" or self.decoder_language == "src" else tgt
        return lang, lang

    def forward(self, x: Tensor, langs: LangContext | None = None) -> Tensor:  # type: ignore[override]
        """``x (B, T, c)`` -> ``(B, T, r)``."""
        if self._route(langs) == "share":
            assert self.shared_v is not None and self.shared_f is not None
            return self._synthesised(x, self.shared_v, self.shared_f)
        if langs is None:
            raise ValueError("LMSLinear needs the batch's languages")
        v, f = self._lang_ids(langs)
        if isinstance(v, int) and isinstance(f, int):  # fast path: one direction
            return self._synthesised(x, self.lms_v[v], self.lms_f[f])
        assert isinstance(v, Tensor) and isinstance(f, Tensor)
        y = F.linear(x, self.weight, self.bias)
        h = torch.bmm(x, self.lms_f.index_select(0, f).transpose(1, 2))  # (B, T, d)
        return torch.baddbmm(y, h, self.lms_v.index_select(0, v).transpose(1, 2))  # (B, T, r)

    def _synthesised(self, x: Tensor, wv: Tensor, wf: Tensor) -> Tensor:
        """``x (W + Wv Wf)^T + b`` for one pair of factors: the product formed once when the batch has the tokens
        to amortise it, else applied per token (module docstring)."""
        r, c = self.weight.shape
        if (x.numel() // c) * (r + c) > r * c:
            return F.linear(x, torch.addmm(self.weight, wv, wf), self.bias)  # W + Wv Wf: (r, c)
        return F.linear(x, self.weight, self.bias) + F.linear(F.linear(x, wf), wv)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """``W``, ``b`` and the factors of the inference route for ``src -> tgt``."""
        yield self.weight
        if self.bias is not None:
            yield self.bias
        if self._route(None) == "share":
            assert self.shared_v is not None and self.shared_f is not None
            yield self.shared_v
            yield self.shared_f
            return
        v, f = self._ids_for(src, tgt)
        yield self.lms_v[v]
        yield self.lms_f[f]

    def aux_loss(self) -> Tensor | None:
        return None


def _active(cfg: LMSConfig, spec: LayerSpec) -> bool:
    return spec.layer % cfg.every == cfg.every - 1


def lms_linear(cfg: LMSConfig, *, num_languages: int, side: Side) -> functools.partial[LMSLinear]:
    """``LMSLinear(in_features, out_features, bias)`` of ``cfg``: LMS+FD's (:class:`LMSFDConfig`) with the shared
    pair and its configured route (Sec. 4), LMS's through its language-specific factors. The translation model's
    layers and XLM-R's FFNs (``models/xlmr.py``) build theirs here."""
    fd = isinstance(cfg, LMSFDConfig)
    return functools.partial(LMSLinear, num_languages=num_languages, rank=cfg.rank, side=side,
                             synthesis=cfg.synthesis, decoder_language=cfg.decoder_language, init_std=cfg.init_std,
                             shared=fd, route=cfg.route if isinstance(cfg, LMSFDConfig) else "ls")


def _linear(cfg: LMSConfig, spec: LayerSpec) -> functools.partial[LMSLinear]:
    return lms_linear(cfg, num_languages=spec.num_languages, side=spec.side)


def build(cfg: LMSConfig, defaults: Factories) -> Factories:
    """``defaults`` with LMS linear maps in the FFNs and/or attentions of every ``cfg.every``-th layer."""

    def ffn(spec: LayerSpec) -> nn.Module:
        if cfg.where == "attention" or not _active(cfg, spec):
            return defaults.ffn(spec)
        return FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout, linear=_linear(cfg, spec))

    def attn(spec: LayerSpec, kind: AttnKind) -> nn.Module:
        if cfg.where == "ffn" or kind not in cfg.attention or not _active(cfg, spec):
            return defaults.attn(spec, kind)
        return MultiheadAttention(spec.embed_dim, spec.heads, dropout=spec.attention_dropout,
                                  linear=_linear(cfg, spec))

    return dataclasses.replace(defaults, ffn=ffn, attn=attn)
