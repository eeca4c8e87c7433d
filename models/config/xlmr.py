"""The XLM-R encoder's config (torch-free; ``models/xlmr.py``), LMS-FD Sec. 5.3-5.4."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import Count, FieldError


@dataclass(frozen=True, kw_only=True)
class EncoderConfig:
    """The XLM-R encoder: a pretrained checkpoint through ``transformers``, or a small random one."""

    init: Literal["pretrained", "random"] = "pretrained"
    """``pretrained``: ``name`` and its tokenizer (downloaded from the Hugging Face hub, or a local
    ``save_pretrained`` directory); ``random``: an XLM-R of the sizes below, randomly initialised, with a
    unigram tokenizer trained on the task's training text (tests and the embedded default: nothing downloads)."""
    name: str = "xlm-roberta-base"
    hidden_size: Count = 32
    layers: Count = 2
    heads: Count = 2
    ffn_dim: Count = 64
    vocab_size: Count = 600
    """``random`` only: sizes of the encoder and of the trained tokenizer's vocabulary."""

    def __post_init__(self) -> None:
        if self.init == "random" and self.hidden_size % self.heads:
            raise FieldError("heads", f"hidden_size {self.hidden_size} is not a multiple of heads {self.heads}")
