"""Config of the ``adapter`` method kind, torch-free (its modules: ``models/ls/adapter.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError

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

    def __post_init__(self) -> None:
        if self.bottleneck < 1:
            raise FieldError("bottleneck", f"must be >= 1, got {self.bottleneck}")
        if self.decoder == "src-tgt":
            raise FieldError("decoder", "src-tgt (bottom half source, top half target) is an encoder placement")
