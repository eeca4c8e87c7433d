"""The decoder-only LM's config (torch-free; ``models/lm.py``), x-elm Sec. 5.2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError


@dataclass(frozen=True, kw_only=True)
class LMConfig:
    """Decoder-only Transformer LM (``models/lm.py``); paper scale is XGLM-1.7B (Lin et al. 2022; x-elm Sec. 5.2)."""

    embed_dim: int
    ffn_dim: int
    heads: int
    layers: int
    dropout: float = 0.1
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    activation: Literal["relu", "gelu"] = "gelu"
    """XGLM uses GELU."""
    normalize_before: bool = True
    """Pre-norm with a final LayerNorm, as XGLM / GPT."""
    block_size: int = 2048
    """Tokens per training sample (x-elm App. A.1: sequence length 2048); also the longest scored window."""

    def __post_init__(self) -> None:
        if self.embed_dim % self.heads:
            raise FieldError("heads", f"embed_dim {self.embed_dim} is not divisible by heads {self.heads}")
        if self.block_size < 2:
            raise FieldError("block_size", f"must be >= 2, got {self.block_size}")
