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


class FDFFN(nn.Module):
    """``L`` language FFNs and a shared FFN; ``forward(x, langs)`` takes ``langs.route`` (or the configured one)."""

    def __init__(self, spec: LayerSpec, cfg: FDConfig) -> None:
        super().__init__()
        self.shared = FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
        self.experts = nn.ModuleList(FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)
                                     for _ in range(spec.num_languages))
        self.use_src = spec.side == "encoder" or cfg.decoder_language == "src"
        self.route: Route = cfg.route

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``."""
        if (langs.route or self.route) == "share":
            return self.shared(x, langs)
        # each language's rows through its expert (one call on a one-language batch; rows found on the host)
        return langs.map("src" if self.use_src else "tgt", lambda lang, sub, xs: self.experts[lang](xs, sub), x)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """The shared FFN (route ``share``) or the one expert ``src -> tgt`` uses here (route ``ls``)."""
        module = self.shared if self.route == "share" else self.experts[src if self.use_src else tgt]
        yield from module.parameters()

    def aux_loss(self) -> Tensor | None:
        return None


def build(cfg: FDConfig, defaults: Factories) -> Factories:
    """``defaults`` with every FFN replaced by an :class:`FDFFN`."""
    return dataclasses.replace(defaults, ffn=lambda spec: FDFFN(spec, cfg))
