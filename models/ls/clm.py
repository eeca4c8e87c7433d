"""Cross-lingual feature mixing (CLM; Liu et al. 2022, "Adaptive Token-level Cross-lingual Feature
Mixing for Multilingual NMT", Sec. 3), sCLM / mCLM and the LS ablation (Table 3).

For a token representation ``h`` (row vector, ``d``) and ``k`` features:

* proportions (Eq. 1): ``P(h) = (1 - a) softmax(h P) + a / k``, ``P`` in ``R^{d x k}``, ``a = 0.05``;
* mixing (Eq. 2): ``h~ = sum_j (h W_j) P_j(h)``, ``W_j`` in ``R^{d x d}``;
* module (Eq. 3): ``z = LN(h + h~)``.

Sharing. One set ``{W_j}`` for the whole encoder and one for the whole decoder (footnote 2): the
builder creates one :class:`FeatureBank` per side and hands the same object to every module of that
side. ``P`` is "distinguished across different Transformer layers" (Sec. 3.3): one per layer, used by
the CLM modules of all its sublayers (``proportion_per: layer``, default). The paper's sizes need this:
sCLM-top (12 modules) and sCLM (30 modules) differ by 0.02M = 18 LayerNorms (Table 9), and mCLM's
224.63M = 94 pairs x 12 layers x d x 134 (``reports/params.csv``). ``proportion_per: sublayer`` gives every
sublayer its own ``P``. sCLM: one ``P`` for all pairs; mCLM: one per pair (``key``, ``models/ls/keys.py``).

LS ablation (``ls``): no gate, ``h~ = h W_key`` with one ``d x d`` map per key, one set per side (Table 3:
"makes the linear transformations language-specific ... keep the number of features and languages the same").

Sparsity (Sec. 5.4, Figure 4), an inference-time option: with ``T_w(h)`` the indices of the ``w`` largest
``P_j(h)``, ``P^w_j(h) = P_j(h) [j in T_w(h)] / sum_{i in T_w(h)} P_i(h)`` (``top_w_renormalise``, our choice:
the paper says only "selecting the top-w important features ... and pruning others"; unrenormalised, the
denominator is 1), and ``h~ = sum_j (h W_j) P^w_j(h)``. ``w = k`` is Eq. 2 itself (``sum_j P_j = 1``), computed
unchanged. Only in eval mode: training always mixes every feature. Figure 4 is a decoding sweep of one trained
sCLM (``sweep_top_w``, ``lsnmt.methods.systems``).
Efficiency (``mix``): the bank product is Eq. 2's cost, ``2 N d^2 k`` per module for ``N`` tokens, and no exact
rewrite is cheaper. :class:`MixFunction` (``mix: function``, default) computes the mix and its gradients in three
such products, keeping only ``h (N, d)`` and ``p (N, k)`` (2.9 MB per module for 1,024 tokens at k = 194, d = 512)::

    forward   Y = h W            W = [W_1 … W_k] as (d, k d); Y (N, k, d);   y_n = sum_j p_nj Y_nj
    backward  Z = g W'^T         W' = W as (d k, d);  Z (N, d, k);  Z_naj = sum_b W_j[a, b] g_nb
              dh_n = sum_j Z_n:j p_nj      dp_nj = sum_a h_na Z_naj      dW = (h ⊗ p)^T g  ((d k, N) x (N, d))

``checkpoint`` (the former default) recomputes the forward's products in the backward instead: four products at
the same memory; ``autograd`` keeps the ``(N, k, d)`` products (407 MB per module at the size above): three
products.

Choices the paper leaves open (all config fields, defaults below): where the module sits relative to the
sublayer's own residual block (``position``), initialisation (``init``), no bias in ``W_j``/``P`` (Eq. 1-2
have none; the sizes agree), no dropout on ``h~``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from models.config.clm import CLMConfig, Mix, Mode, Sublayer  # noqa: F401  (the kind's config, torch-free)
from models.factories import Factories, LayerSpec, Side
from models.lang import LangContext
from models.layers import DecoderLayer, EncoderLayer, LayerCache
from models.ls.keys import Key, key_for, key_ids, keyed_matmul, table_size


class FeatureBank(nn.Module):
    """The ``k`` maps ``W_j`` of one side, stored as one ``(d, k, d)`` parameter: ``weight[:, j, :] = W_j``."""

    def __init__(self, dim: int, features: int, init: str = "xavier") -> None:
        super().__init__()
        self.dim, self.features = dim, features
        self.weight = nn.Parameter(torch.empty(dim, features, dim))
        if init == "zeros":
            nn.init.zeros_(self.weight)
        else:
            bound = math.sqrt(6.0 / (2 * dim))  # xavier_uniform of each d x d map
            nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, h: Tensor) -> Tensor:
        """``h (B, T, d)`` -> ``h W_j`` for every ``j``: ``(B, T, k, d)`` (one matmul with ``k d`` outputs)."""
        return (h @ self.weight.view(self.dim, -1)).unflatten(-1, (self.features, self.dim))


class Proportions(nn.Module):
    """Eq. 1 with one ``P`` (sCLM, ``rows = 1``) or one per key (mCLM): ``(B, T, d)`` -> ``(B, T, k)``."""

    def __init__(self, dim: int, features: int, rows: int, smoothing: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(rows, dim, features))
        bound = math.sqrt(6.0 / (dim + features))
        nn.init.uniform_(self.weight, -bound, bound)
        self.smoothing, self.features = smoothing, features

    def forward(self, h: Tensor, ids: int | Tensor) -> Tensor:
        logits = keyed_matmul(h, self.weight, 0 if self.weight.size(0) == 1 else ids)
        return (1.0 - self.smoothing) * logits.softmax(-1) + self.smoothing / self.features


def top_w(p: Tensor, w: int, renormalise: bool = True) -> Tensor:
    """``P^w``: the ``w`` largest entries of each ``p[..., :]``, the others 0, renormalised to sum 1 unless
    ``renormalise`` is off (Sec. 5.4; module docstring). ``w >= k`` returns ``p`` itself: nothing is pruned."""
    if w >= p.size(-1):
        return p
    kept = p.topk(w, dim=-1)
    sparse = torch.zeros_like(p).scatter(-1, kept.indices, kept.values)
    return sparse / kept.values.sum(-1, keepdim=True) if renormalise else sparse


class MixFunction(torch.autograd.Function):
    """Eq. 2's mix ``y_n = sum_j p_nj (h_n W_j)`` of ``h (N, d)``, ``p (N, k)`` and the bank ``weight (d, k, d)``
    in three bank products, saving only ``h`` and ``p`` (module docstring). The products call ``mm``/``bmm``
    themselves (``@`` on 3-D operands adds broadcasting views around each: ``expand``, ``view``, ``_unsafe_view``).
    Under CUDA autocast both passes run at the autocast dtype (``torch.amp.custom_fwd/custom_bwd``); the backward
    casts to the incoming gradient's dtype, so a CPU autocast forward (``benchmarks/ls_speed.py --precision bf16``)
    differentiates too."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx: Any, h: Tensor, p: Tensor, weight: Tensor) -> Tensor:
        d, k = weight.shape[0], weight.shape[1]
        ctx.save_for_backward(h, p, weight)
        y = torch.mm(h, weight.view(d, k * d))  # (N, k d)
        return torch.bmm(p.unsqueeze(-2), y.view(-1, k, d)).squeeze(-2)  # (N, 1, k) @ (N, k, d) -> (N, d)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        h, p, weight = ctx.saved_tensors
        d, k = weight.shape[0], weight.shape[1]
        hc, pc, wc = h.to(g.dtype), p.to(g.dtype), weight.to(g.dtype)
        z = torch.mm(g, wc.view(d * k, d).t()).view(-1, d, k)  # (N, d, k): z[n, a, j] = sum_b W_j[a, b] g[n, b]
        dh = dp = dw = None
        if ctx.needs_input_grad[0]:
            dh = torch.bmm(z, pc.unsqueeze(-1)).squeeze(-1).to(h.dtype)  # (N, d, k) @ (N, k, 1)
        if ctx.needs_input_grad[1]:
            dp = torch.bmm(hc.unsqueeze(-2), z).squeeze(-2).to(p.dtype)  # (N, 1, d) @ (N, d, k)
        del z  # one (N, d k) temporary at a time
        if ctx.needs_input_grad[2]:
            outer = (hc.unsqueeze(-1) * pc.unsqueeze(-2)).view(-1, d * k)  # (N, d k): h_a p_j
            dw = torch.mm(outer.t(), g).view(d, k, d).to(weight.dtype)  # (d k, N) @ (N, d)
        return dh, dp, dw


def mix(h: Tensor, p: Tensor, weight: Tensor) -> Tensor:
    """:class:`MixFunction` on ``h (..., d)`` and ``p (..., k)``: ``(..., d)``."""
    d, k = weight.shape[0], weight.shape[1]
    out = MixFunction.apply(h.reshape(-1, d), p.reshape(-1, k), weight)
    return out.view(h.shape)


class CLMModule(nn.Module):
    """``z = LN(h + h~)`` (Eq. 3) with ``h~`` from a shared bank (s/mCLM, Eq. 2) or a keyed map (LS)."""

    def __init__(self, bank: nn.Module, proportions: Proportions | None, *, dim: int, key: Key,
                 num_languages: int, pivot: int, top_w: int | None, renormalise: bool = True,
                 mix: Mix = "function") -> None:
        super().__init__()
        self.bank, self.proportions, self.norm = bank, proportions, nn.LayerNorm(dim)
        self.key, self.num_languages, self.pivot = key, num_languages, pivot
        self.top_w, self.renormalise, self.mix = top_w, renormalise, mix

    def _ids(self, langs: LangContext) -> int | Tensor:
        return key_ids(self.key, langs, self.num_languages, self.pivot)

    def forward(self, h: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, d)`` -> ``(B, T, d)``."""
        keyed = self.proportions is None or self.proportions.weight.size(0) > 1  # sCLM's one P needs no ids
        ids = self._ids(langs) if keyed else 0
        if self.proportions is None:  # LS ablation: one map per key, no gate
            return self.norm(h + keyed_matmul(h, self.bank.weight, ids))
        p = self.proportions(h, ids)  # (B, T, k)
        if self.top_w is not None and not self.training:
            p = top_w(p, self.top_w, self.renormalise)
        if not (self.training and torch.is_grad_enabled()) or self.mix == "autograd":
            mixed = self._mix(h, p)
        elif self.mix == "function":
            mixed = mix(h, p, self.bank.weight)
        else:
            mixed = checkpoint(self._mix, h, p, use_reentrant=False)
        return self.norm(h + mixed)

    def _mix(self, h: Tensor, p: Tensor) -> Tensor:
        """Eq. 2: ``(B, T, 1, k) @ (B, T, k, d) -> (B, T, d)``."""
        return (p.unsqueeze(-2) @ self.bank(h)).squeeze(-2)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """The side's whole bank (every ``W_j`` is used), this direction's ``P`` (or LS map) and the LN."""
        row = key_for(self.key, src, tgt, self.num_languages, self.pivot)
        yield from self.norm.parameters()
        if self.proportions is None:
            yield self.bank.weight[row]
            return
        yield self.bank.weight
        p = self.proportions.weight
        yield p[0] if p.size(0) == 1 else p[row]


Mixers = dict[str, CLMModule]


def _block(mix: Mixers, name: str, position: str, block: nn.Module, x: Tensor, f: Callable[[Tensor], Tensor],
           langs: LangContext) -> Tensor:
    m = mix.get(name)
    if m is None:
        return block(x, f)
    if position == "inside":
        return block(x, lambda h: m(f(h), langs))
    return m(block(x, f), langs)


class CLMEncoderLayer(EncoderLayer):
    """:class:`EncoderLayer` with a CLM module after (or inside) its ``self``/``ffn`` blocks."""

    def __init__(self, attn: nn.Module, ffn: nn.Module, *, mix: Mixers, position: str, embed_dim: int,
                 dropout: float, normalize_before: bool) -> None:
        super().__init__(attn, ffn, embed_dim=embed_dim, dropout=dropout, normalize_before=normalize_before)
        self.mix, self.position = nn.ModuleDict(mix), position

    def forward(self, x: Tensor, langs: LangContext, padding_mask: Tensor | None) -> Tensor:
        mix = dict(self.mix.items())
        x = _block(mix, "self", self.position, self.self_attn_block, x,
                   lambda h: self.self_attn(h, langs, key_padding_mask=padding_mask), langs)
        return _block(mix, "ffn", self.position, self.ffn_block, x, lambda h: self.ffn(h, langs), langs)


class CLMDecoderLayer(DecoderLayer):
    """:class:`DecoderLayer` with a CLM module after (or inside) its ``self``/``cross``/``ffn`` blocks."""

    def __init__(self, self_attn: nn.Module, cross_attn: nn.Module, ffn: nn.Module, *, mix: Mixers, position: str,
                 embed_dim: int, dropout: float, normalize_before: bool) -> None:
        super().__init__(self_attn, cross_attn, ffn, embed_dim=embed_dim, dropout=dropout,
                         normalize_before=normalize_before)
        self.mix, self.position = nn.ModuleDict(mix), position

    def forward(self, x: Tensor, langs: LangContext, memory: Tensor, memory_padding_mask: Tensor | None, *,
                self_padding_mask: Tensor | None = None, cache: LayerCache | None = None) -> Tensor:
        sa, ca = (cache.self_attn, cache.cross_attn) if cache is not None else (None, None)
        mix = dict(self.mix.items())
        x = _block(mix, "self", self.position, self.self_attn_block, x,
                   lambda h: self.self_attn(h, langs, key_padding_mask=self_padding_mask, causal=True, cache=sa),
                   langs)
        x = _block(mix, "cross", self.position, self.cross_attn_block, x,
                   lambda h: self.cross_attn(h, langs, memory, key_padding_mask=memory_padding_mask, cache=ca),
                   langs)
        return _block(mix, "ffn", self.position, self.ffn_block, x, lambda h: self.ffn(h, langs), langs)


class LSBank(nn.Module):
    """The LS ablation's maps of one side: ``(rows, d, d)``, one per key."""

    def __init__(self, dim: int, rows: int, init: str = "xavier") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(rows, dim, dim))
        if init == "zeros":
            nn.init.zeros_(self.weight)
        else:
            nn.init.uniform_(self.weight, -math.sqrt(3.0 / dim), math.sqrt(3.0 / dim))


def build(cfg: CLMConfig, defaults: Factories) -> Factories:
    """``defaults`` with CLM layers; one bank per side, created once and shared by all its modules."""
    banks: dict[Side, nn.Module] = {}

    def mixers(spec: LayerSpec, names: tuple[Sublayer, ...]) -> Mixers:
        mode = cfg.encoder if spec.side == "encoder" else cfg.decoder
        names = tuple(n for n in names if n in cfg.sublayers)
        if mode == "none" or not names:
            return {}
        rows = table_size(cfg.key, spec.num_languages)
        if spec.side not in banks:
            banks[spec.side] = (LSBank(spec.embed_dim, rows, cfg.init) if mode == "ls"
                                else FeatureBank(spec.embed_dim, cfg.features, cfg.init))

        def props() -> Proportions | None:
            if mode == "ls":
                return None
            return Proportions(spec.embed_dim, cfg.features, rows if mode == "mclm" else 1, cfg.smoothing)

        layer_p = props()
        return {n: CLMModule(banks[spec.side], layer_p if cfg.proportion_per == "layer" else props(),
                             dim=spec.embed_dim, key=cfg.key, num_languages=spec.num_languages, pivot=cfg.pivot,
                             top_w=cfg.top_w, renormalise=cfg.top_w_renormalise, mix=cfg.mix)
                for n in names}

    def encoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        mix = mixers(spec, ("self", "ffn"))
        if not mix:
            return defaults.encoder_layer(spec, f)
        return CLMEncoderLayer(f.attn(spec, "self"), f.ffn(spec), mix=mix, position=cfg.position,
                               embed_dim=spec.embed_dim, dropout=spec.dropout, normalize_before=spec.normalize_before)

    def decoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        mix = mixers(spec, ("self", "cross", "ffn"))
        if not mix:
            return defaults.decoder_layer(spec, f)
        return CLMDecoderLayer(f.attn(spec, "self"), f.attn(spec, "cross"), f.ffn(spec), mix=mix,
                               position=cfg.position, embed_dim=spec.embed_dim, dropout=spec.dropout,
                               normalize_before=spec.normalize_before)

    return dataclasses.replace(defaults, encoder_layer=encoder_layer, decoder_layer=decoder_layer)
