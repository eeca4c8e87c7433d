"""Switch Transformer feed-forward layers (Fedus et al. 2021), the LMS-FD paper's MoE baseline (Sec. 5.1).

Every ``every``-th layer (1-based: layers 2, 4, 6 with ``every = 2``; fairseq's
``moe_freq``) replaces its FFN by ``E`` expert FFNs and a router ``W_g`` (``E x D``,
no bias). For the ``N`` real tokens of a batch (padded positions, ``langs.padding``, take
no part: they are not routed, do not count toward capacity or the balance loss, and get 0):

* ``p = softmax(x W_g^T)`` (fp32), top-1 expert ``e(x) = argmax p``;
* capacity ``C = ceil(capacity_factor * N / E)`` tokens per expert in training; tokens past an
  expert's capacity, in batch order, are dropped: the layer outputs 0 for them and the residual
  connection passes them through. In eval mode (validation, decoding) nothing is dropped
  (``eval_capacity_factor: null``, C = N), as fairseq's MoE evaluates (``moe_eval_capacity_token_fraction``
  -1: no limit);
* ``y = p_e(x) * FFN_e(x)`` for the others;
* load balance (Switch eq. 4-6): ``E * sum_e f_e P_e`` with ``f_e`` the fraction of real tokens whose
  top-1 is ``e`` (before dropping) and ``P_e`` the mean router probability of ``e``; the model's
  auxiliary loss is ``weight`` times the **mean** of it over the MoE layers (fairseq's ``MoECriterion``,
  ``moe_gate_loss_combine_method: average``), so that 0.01 weighs the same whatever the depth or
  ``every`` (a sum would weigh 6 MoE layers six times as much as one).

The paper uses 16 experts every two layers with balance weight 0.01 (Sec. 5.1); the weight
is explicit here because the reference fork's criterion defaulted it to 0. Switch trains on
mixed-direction batches (``train.batching_by_kind``): LMS-FD v1 Sec. 5, footnote 4, the
one-direction batches "do not apply to Switch Transformer".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import torch
from torch import Tensor, nn

from models.config.switch import SwitchConfig
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.layers import FeedForward


def top1_dispatch(probs: Tensor, capacity: int) -> tuple[Tensor, Tensor]:
    """Top-1 expert of each token ``(N,)`` and whether it fits the expert's capacity ``(N,)`` (batch order)."""
    expert = probs.argmax(-1)  # (N,)
    onehot = torch.nn.functional.one_hot(expert, probs.size(-1))  # (N, E)
    position = (onehot.cumsum(0) * onehot).sum(-1) - 1  # (N,) 0-based rank of the token in its expert
    return expert, position < capacity


def balance_loss(probs: Tensor, expert: Tensor) -> Tensor:
    """``E * sum_e f_e P_e`` (Switch eq. 4): 1 when routing is uniform."""
    n_exp = probs.size(-1)
    f = torch.bincount(expert, minlength=n_exp).to(probs.dtype) / expert.numel()  # (E,)
    return n_exp * (f * probs.mean(0)).sum()


@dataclasses.dataclass(eq=False)
class MoELayers:
    """The MoE layers of one model, counted as the builder creates them (the balance loss is their mean)."""

    count: int = 0


class SwitchFFN(nn.Module):
    def __init__(self, spec: LayerSpec, cfg: SwitchConfig, layers: MoELayers | None = None) -> None:
        super().__init__()
        self.router = nn.Linear(spec.embed_dim, cfg.experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
                                     for _ in range(cfg.experts))
        self.cfg = cfg
        self.layers = layers or MoELayers()
        self.layers.count += 1
        self._aux: Tensor | None = None

    def capacity(self, tokens: int) -> int:
        """Tokens an expert takes: ``ceil(factor * tokens / E)``, or all of them in eval mode without a factor."""
        factor = self.cfg.capacity_factor if self.training else self.cfg.eval_capacity_factor
        if factor is None:
            return max(1, tokens)
        return max(1, math.ceil(factor * tokens / self.cfg.experts))

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``; dropped and padded tokens get 0."""
        tokens = x.reshape(-1, x.size(-1))  # (N, D)
        real = None if langs.padding is None else (~langs.padding.reshape(-1)).nonzero().squeeze(1)  # (n,)
        routed = tokens if real is None else tokens.index_select(0, real)  # (n, D)
        probs = torch.softmax(self.router(routed).float(), dim=-1)  # (n, E)
        expert, keep = top1_dispatch(probs, self.capacity(routed.size(0)))
        self._aux = balance_loss(probs, expert) if routed.size(0) else probs.sum()
        gate = probs.gather(1, expert.unsqueeze(1)).squeeze(1).to(x.dtype)  # (n,)
        out = torch.zeros_like(routed)
        for e, ffn in enumerate(self.experts):
            idx = ((expert == e) & keep).nonzero().squeeze(1)
            if idx.numel():
                y = ffn(routed.index_select(0, idx).unsqueeze(0), langs).squeeze(0)  # (n_e, D)
                out = out.index_copy(0, idx, y * gate.index_select(0, idx).unsqueeze(1))
        if real is not None:
            out = torch.zeros_like(tokens).index_copy(0, real, out)
        return out.view_as(x)

    def aux_loss(self) -> Tensor | None:
        """``balance_weight * E * sum_e f_e P_e / L`` of the last forward, L the model's MoE layers: summed over
        the layers by ``Transformer.aux_loss``, it is the weighted mean over layers."""
        if self._aux is None:
            return None
        return self.cfg.balance_weight * self._aux / self.layers.count

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """Every expert: tokens of any direction may go to any of them."""
        del src, tgt
        yield from self.parameters()


def build(cfg: SwitchConfig, defaults: Factories) -> Factories:
    """``defaults`` with a :class:`SwitchFFN` in every ``cfg.every``-th layer."""

    layers = MoELayers()

    def ffn(spec: LayerSpec) -> nn.Module:
        return SwitchFFN(spec, cfg, layers) if spec.layer % cfg.every == cfg.every - 1 else defaults.ffn(spec)

    return dataclasses.replace(defaults, ffn=ffn)
