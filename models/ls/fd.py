"""Fuse Distillation over a language-level MoE (FD; Xu et al. 2023, Sec. 3.1, Fig. 3).

Each FFN is replaced by ``L`` language-specific FFNs (no gate: the expert of language
``l`` serves the sentences of ``l``; the encoder uses the source language, the decoder
the target language, Kudugunta et al. 2021's task-level routing) and one shared FFN
beside them. The route comes with the batch (``LangContext.route``):

* ``ls``: ``FFN_l(x)``, the language-level MoE (first training pass; FD-LS inference);
* ``share``: ``FFN_shared(x)`` (second training pass; FD inference, the default).

Training (``models/ls/distill.py``) runs both passes and minimises Eq. 3 with the
stop-gradient KL of Eq. 2. Parameters: ``(L + 1)`` FFNs per layer for training,
``1`` (FD) or ``L`` (FD-LS) per layer to deploy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from torch import Tensor, nn

from models.config.fd import FDConfig, Route
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.layers import FeedForward
from models.ls.grouped import call_one, fuse, grouped_call, route


class FDFFN(nn.Module):
    """``L`` language FFNs and a shared FFN; ``forward(x, langs)`` takes ``langs.route`` (or the configured one).

    The language FFNs are one grouped module (``experts``: each weight stacked over the languages,
    ``models/ls/grouped.py``), which computes every language's rows at once."""

    experts: nn.Module

    def __init__(self, spec: LayerSpec, cfg: FDConfig) -> None:
        super().__init__()
        self.shared = FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
        experts = [FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
                   for _ in range(spec.num_languages)]
        self.experts = fuse(experts) or nn.ModuleList(experts)  # grouped: each weight stacked over the languages
        self.languages = spec.num_languages
        self.use_src = spec.side == "encoder" or cfg.decoder_language == "src"
        self.route: Route = cfg.route

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``."""
        if (langs.route or self.route) == "share":
            return self.shared(x, langs)
        side = "src" if self.use_src else "tgt"
        if isinstance(self.experts, nn.ModuleList):  # experts that could not be grouped: one call per language
            return route(self.experts, side, x, langs)
        # every language's expert at once on the rows tiled by language (one expert on a one-language batch)
        return grouped_call(self.experts, self.languages, side, x, langs)

    def expert(self, lang: int, x: Tensor, langs: LangContext) -> Tensor:
        """Language ``lang``'s expert on every row."""
        if isinstance(self.experts, nn.ModuleList):
            return self.experts[lang](x, langs)
        return call_one(self.experts, lang, x, langs)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """The shared FFN (route ``share``) or the one expert ``src -> tgt`` uses here (route ``ls``)."""
        lang = src if self.use_src else tgt
        if self.route == "share":
            yield from self.shared.parameters()
        elif isinstance(self.experts, nn.ModuleList):
            yield from self.experts[lang].parameters()
        else:
            yield from (p[lang] for p in self.experts.parameters())

    def aux_loss(self) -> Tensor | None:
        return None


def build(cfg: FDConfig, defaults: Factories) -> Factories:
    """``defaults`` with every FFN replaced by an :class:`FDFFN`."""
    return dataclasses.replace(defaults, ffn=lambda spec: FDFFN(spec, cfg))
