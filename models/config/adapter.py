"""Config of the ``adapter`` method kind, torch-free (its modules: ``models/ls/adapter.py``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError
from models.config.model import ModelConfig

Placement = Literal["src", "tgt", "src-tgt", "pair", "xx", "direction", "none"]


@dataclass(frozen=True, kw_only=True)
class AdapterConfig:
    """Where adapters go and their size."""

    bottleneck: int = 128
    """Bottleneck dimension ``b`` (CLM: 128; LSL: 128-1024)."""
    encoder: Placement = "pair"
    decoder: Placement = "pair"
    """Keys of the encoder's / decoder's adapters (``src-tgt`` only on the encoder); ``none``: no adapters."""
    pivot: int = 0
    """Language id of English, for ``pair``."""
    layer_norm: bool = True
    """The adapter's own LayerNorm on its input (Bapna and Firat 2019)."""
    bias: bool = True
    zero_init: bool = True
    """``W_up = 0`` (and ``b_up = 0``): identity at initialisation. ``W_down`` is Xavier-uniform."""
    embed_dim: int | None = None
    """Width override of the experiment's model (``None``: keep it): LSL Table 10's encoder adapters on the
    "+ hidden dim 640" baseline."""

    def __post_init__(self) -> None:
        if self.bottleneck < 1:
            raise FieldError("bottleneck", f"must be >= 1, got {self.bottleneck}")
        if self.decoder == "src-tgt":
            raise FieldError("decoder", "src-tgt (bottom half source, top half target) is an encoder placement")
        if self.embed_dim is not None and self.embed_dim < 1:
            raise FieldError("embed_dim", f"must be >= 1, got {self.embed_dim}")


def model(cfg: AdapterConfig, base: ModelConfig) -> ModelConfig:
    """``base`` with the adapters' width override."""
    return base if cfg.embed_dim is None else dataclasses.replace(base, embed_dim=cfg.embed_dim)
