"""A method kind that exists only in the tests: a shared FFN plus a bias per target language (``FFN(x) + b[tgt]``).

It is added to the kind table alone (``models.config.kinds.KINDS``: config, ``"module:function"`` builder,
source), to show that one entry is all a plain method needs to train, translate, reach the learning floor and
appear in the protocol's method table (tests/system/test_learning.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from models.config.kinds import Kind
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.layers import FeedForward


@dataclass(frozen=True, kw_only=True)
class ToyConfig:
    """The toy kind's settings."""

    bias_init: float = 0.0
    """Initial value of every language's bias."""


class TargetBiasFFN(nn.Module):
    """``FFN(x) + b[tgt]``: a shared feed-forward block and one learnt vector per target language."""

    def __init__(self, spec: LayerSpec, cfg: ToyConfig) -> None:
        super().__init__()
        self.ffn = FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
        self.bias = nn.Parameter(torch.full((spec.num_languages, spec.embed_dim), cfg.bias_init))

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        return self.ffn(x, langs) + self.bias.index_select(0, langs.tgt).unsqueeze(1)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        del src
        yield from self.ffn.parameters()
        yield self.bias[tgt]


def build(cfg: ToyConfig, defaults: Factories) -> Factories:
    """The toy kind's builder: every FFN a :class:`TargetBiasFFN`."""
    return Factories(attn=defaults.attn, ffn=lambda spec: TargetBiasFFN(spec, cfg),
                     encoder_layer=defaults.encoder_layer, decoder_layer=defaults.decoder_layer)


KIND = Kind(config=ToyConfig, build=f"{__name__}:build", source="the test suite's toy kind (tests/system/toy_kind.py)")
"""The one entry the toy kind needs (``monkeypatch.setitem(KINDS, "toy", KIND)``)."""
