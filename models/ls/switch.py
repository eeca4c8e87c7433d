"""Switch Transformer feed-forward layers (Fedus et al. 2021), the LMS-FD paper's MoE baseline (Sec. 5.1).

Every ``every``-th layer (1-based: layers 2, 4, 6 with ``every = 2``; fairseq's
``moe_freq``) replaces its FFN by ``E`` expert FFNs and a router ``W_g`` (``E x D``,
no bias). For the ``n`` real tokens of a batch (padded positions, ``langs.padding``, take
no part: they are not routed, do not count toward capacity or the balance loss, and get 0):

* ``p = softmax(x W_g^T)`` (fp32), top-1 expert ``e(x) = argmax p``;
* capacity: ``C = ceil(capacity_factor * n / E)`` tokens per expert in training; in eval mode (validation,
  decoding) ``C = ceil(eval_capacity_fraction * n)``, fairseq's ``moe_eval_capacity_token_fraction`` (default
  0.25: "maximum capacity of 1 expert as a fraction of number of tokens in the batch", ``top1gating`` of the
  reference fork fe1ixxu/LMS_FD, ``fairseq/modules/moe/top1gate.py``; a fraction <= 0, fairseq's -1, keeps the
  training capacity). Tokens past an expert's capacity, in batch order, are dropped: the layer outputs 0 for
  them and the residual connection passes them through. fairseq counts the pads in ``n`` and computes the
  training capacity as ``int(capacity_factor * ceil(n / E))``, the same for ``E | n``;
* ``y = p_e(x) * FFN_e(x)`` for the others;
* load balance (Switch eq. 4-6): ``E * sum_e f_e P_e`` with ``f_e`` the fraction of real tokens whose
  top-1 is ``e`` (before dropping) and ``P_e`` the mean router probability of ``e``; the model's
  auxiliary loss is ``weight`` times the **mean** of it over the MoE layers (fairseq's ``MoECriterion``,
  ``moe_gate_loss_combine_method: average``), so that 0.01 weighs the same whatever the depth or
  ``every`` (a sum would weigh 6 MoE layers six times as much as one).

Dispatch has fixed shapes, as fairseq's and GShard's: every expert takes a buffer of ``S`` slots (the capacity
of all ``N`` positions, pads included, a bound known from the shapes), token ``i`` fills slot ``position_i`` of
its expert's buffer (a scatter of token indices; empty slots read a zero row) and reads its output back from it
(a gather; dropped and padded tokens read a zero row). The real tokens' capacity ``C <= S`` is a device tensor,
so nothing is read from the device: no host-device synchronisation in the forward or the backward.

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
from models.ls.grouped import call_one, fuse
from models.tiles import Tiles


def top1_dispatch(probs: Tensor, capacity: int | Tensor, real: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Top-1 expert of each token ``(N,)`` and whether it fits the expert's capacity ``(N,)`` (batch order).

    ``real (N,)``: False at padded positions, which are never kept and take no place in an expert's queue.
    """
    expert = probs.argmax(-1)  # (N,)
    position = _position(_member(expert, probs.size(-1), real))  # (N,)
    return expert, (position >= 0) & (position < capacity)

def _member(expert: Tensor, experts: int, real: Tensor | None) -> Tensor:
    """``(N, E)`` True where real token ``i`` has top-1 expert ``e`` (no ``one_hot``: on a CPU it reads the ids)."""
    member = expert.unsqueeze(1) == torch.arange(experts, device=expert.device)
    return member if real is None else member & real.unsqueeze(1)


def _position(member: Tensor) -> Tensor:
    """``(N,)`` 0-based rank of each token among the real tokens of its expert, -1 for a pad."""
    return (member.long().cumsum(0) * member).sum(-1) - 1


def balance_loss(probs: Tensor, expert: Tensor, real: Tensor | None = None) -> Tensor:
    """``E * sum_e f_e P_e`` (Switch eq. 4) over the real tokens (``real (N,)``, default all): 1 when routing is
    uniform, 0 without real tokens."""
    n_exp = probs.size(-1)
    weight = probs.new_ones(probs.size(0)) if real is None else real.to(probs.dtype)  # (N,)
    n = weight.sum().clamp(min=1)
    f = _member(expert, n_exp, None).to(probs.dtype).mul(weight.unsqueeze(1)).sum(0) / n  # (E,)
    return n_exp * (f * (probs * weight.unsqueeze(1)).sum(0) / n).sum()


@dataclasses.dataclass(eq=False)
class MoELayers:
    """The MoE layers of one model, counted as the builder creates them (the balance loss is their mean)."""

    count: int = 0


class SwitchFFN(nn.Module):
    """Router and ``E`` expert FFNs, grouped into one module (``experts``: each weight stacked over the experts)."""

    experts: nn.Module

    def __init__(self, spec: LayerSpec, cfg: SwitchConfig, layers: MoELayers | None = None) -> None:
        super().__init__()
        self.router = nn.Linear(spec.embed_dim, cfg.experts, bias=False)
        experts = [FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout) for _ in range(cfg.experts)]
        self.experts = fuse(experts) or nn.ModuleList(experts)  # grouped: each weight stacked over the experts
        self.cfg = cfg
        self.layers = layers or MoELayers()
        self.layers.count += 1
        self._aux: Tensor | None = None

    def capacity(self, tokens: int | Tensor) -> int | Tensor:
        """Tokens an expert takes of ``tokens`` routed ones (an int, or a device count): training
        ``ceil(capacity_factor * tokens / E)``, eval mode ``ceil(eval_capacity_fraction * tokens)`` (module
        docstring), at least 1."""
        fraction = self.cfg.eval_capacity_fraction
        if isinstance(tokens, Tensor):
            t = tokens.to(torch.float64)
            c = fraction * t if not self.training and fraction > 0 else t * self.cfg.capacity_factor / self.cfg.experts
            return torch.ceil(c).clamp(min=1)
        if not self.training and fraction > 0:
            return max(1, math.ceil(fraction * tokens))
        return max(1, math.ceil(self.cfg.capacity_factor * tokens / self.cfg.experts))

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``; dropped and padded tokens get 0 (module docstring: fixed shapes)."""
        tokens = x.reshape(-1, x.size(-1))  # (N, D)
        n_tok, n_exp = tokens.size(0), self.cfg.experts
        real = None if langs.padding is None else ~langs.padding.reshape(-1)  # (N,)
        probs = torch.softmax(self.router(tokens).float(), dim=-1)  # (N, E)
        expert = probs.argmax(-1)  # (N,)
        position = _position(_member(expert, n_exp, real))  # (N,) rank in the expert's queue, -1: a pad
        slots = int(self.capacity(n_tok))  # S: the capacity of all positions, a bound on C
        capacity = slots if real is None else self.capacity(real.sum())
        keep = (position >= 0) & (position < capacity)  # (N,)
        self._aux = balance_loss(probs, expert, real)
        gate = probs.gather(1, expert.unsqueeze(1)).squeeze(1).to(x.dtype)  # (N,)
        slot = torch.where(keep, expert * slots + position, n_exp * slots)  # (N,) slot E*S: nowhere
        fill = torch.full((n_exp * slots + 1,), n_tok, dtype=torch.long, device=x.device)
        fill = fill.scatter(0, slot, torch.arange(n_tok, device=x.device))[:-1]  # (E*S,) token of each slot
        zero = tokens.new_zeros(1, tokens.size(-1))
        buffers = torch.cat([tokens, zero]).index_select(0, fill).view(n_exp, slots, -1)  # (E, S, D)
        out = self._experts(buffers, langs)  # (E*S, D), autocast's dtype
        out = torch.cat([out, out.new_zeros(1, out.size(-1))])  # (E*S + 1, D)
        return (out.index_select(0, slot) * gate.unsqueeze(1)).view_as(x)  # dropped and pads: the zero row

    def _experts(self, buffers: Tensor, langs: LangContext) -> Tensor:
        """Expert ``e`` on its buffer ``(E, S, D)`` -> ``(E*S, D)``, all at once: the grouped experts on the buffers
        as ``E`` tiles of ``S`` rows (``models/ls/grouped.py``)."""
        n_exp, slots, dim = buffers.shape
        if isinstance(self.experts, nn.ModuleList):  # experts that could not be grouped: one call each
            return torch.cat([ffn(buffers[e : e + 1], langs).squeeze(0) for e, ffn in enumerate(self.experts)])
        ids = buffers.new_zeros(n_exp * slots, dtype=torch.long)
        tiled = LangContext(ids, ids, langs.route, langs.progress, tiling=Tiles.identity(n_exp, slots))
        return self.experts(buffers.reshape(n_exp * slots, 1, dim), tiled).view(n_exp * slots, -1)

    def expert(self, e: int, x: Tensor, langs: LangContext) -> Tensor:
        """Expert ``e`` on every token of ``x``."""
        if isinstance(self.experts, nn.ModuleList):
            return self.experts[e](x, langs)
        return call_one(self.experts, e, x, langs)

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
