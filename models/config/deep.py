"""Config of the ``deep`` method kind, torch-free (its modules: ``models/ls/deep.py``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lsnmt.typed import FieldError
from models.config.model import ModelConfig


@dataclass(frozen=True, kw_only=True)
class DeepConfig:
    encoder_layers: int = 26
    decoder_layers: int = 26
    """Depth of each stack (CLM: 26 OPUS-100, 8 WMT-14)."""
    normalize_before: bool = True
    """Pre-norm, as deep Transformers need to train stably (and as the paper's sizes imply)."""

    def __post_init__(self) -> None:
        if min(self.encoder_layers, self.decoder_layers) < 1:
            raise FieldError("encoder_layers", "both stacks need at least one layer")


def model(cfg: DeepConfig, base: ModelConfig) -> ModelConfig:
    """``base`` with the deep stacks."""
    return dataclasses.replace(base, encoder_layers=cfg.encoder_layers, decoder_layers=cfg.decoder_layers,
                               normalize_before=cfg.normalize_before)
