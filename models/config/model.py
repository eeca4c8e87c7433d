"""The encoder-decoder Transformer's config and its presets (torch-free: params.yaml loads without torch), after
fairseq's ``transformer_iwslt_de_en``, ``transformer`` and ``transformer_vaswani_wmt_en_de_big``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import Count, FieldError, Rate


@dataclass(frozen=True, kw_only=True)
class ArchDims:
    embed_dim: int
    ffn_dim: int
    heads: int
    encoder_layers: int
    decoder_layers: int


PRESETS: dict[str, ArchDims] = {
    # fairseq transformer_iwslt_de_en: the "transformer_small" of the LMS-FD paper (App. A)
    "transformer_small": ArchDims(embed_dim=512, ffn_dim=1024, heads=4, encoder_layers=6, decoder_layers=6),
    # fairseq transformer / transformer_wmt_en_de: Vaswani et al. (2017) base
    "transformer_base": ArchDims(embed_dim=512, ffn_dim=2048, heads=8, encoder_layers=6, decoder_layers=6),
    # fairseq transformer_vaswani_wmt_en_de_big: Vaswani et al. (2017) big
    "transformer_big": ArchDims(embed_dim=1024, ffn_dim=4096, heads=16, encoder_layers=6, decoder_layers=6),
}


def _pick(override: int | None, default: int) -> int:
    return default if override is None else override


def resolve_dims(cfg: ModelConfig) -> ArchDims:
    """The preset of ``cfg.arch`` with every non-``None`` override of ``cfg`` applied."""
    p = PRESETS[cfg.arch]
    dims = ArchDims(
        embed_dim=_pick(cfg.embed_dim, p.embed_dim),
        ffn_dim=_pick(cfg.ffn_dim, p.ffn_dim),
        heads=_pick(cfg.heads, p.heads),
        encoder_layers=_pick(cfg.encoder_layers, p.encoder_layers),
        decoder_layers=_pick(cfg.decoder_layers, p.decoder_layers),
    )
    if dims.embed_dim % dims.heads:
        raise ValueError(f"embed_dim {dims.embed_dim} is not divisible by heads {dims.heads}")
    return dims


def check_heads(model: ModelConfig, key: str = "heads") -> None:
    """Attention splits the width into ``heads`` equal parts: ``embed_dim`` (or the preset's) must be a multiple of
    ``heads`` (or the preset's). Raises :class:`FieldError` on ``key``."""
    preset = PRESETS[model.arch]
    width = preset.embed_dim if model.embed_dim is None else model.embed_dim
    heads = preset.heads if model.heads is None else model.heads
    if width % heads:
        raise FieldError(key, f"embed_dim {width} is not a multiple of heads {heads} (unset values come from "
                         f"the {model.arch} preset)")


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Encoder-decoder Transformer with fairseq semantics (``models/``)."""

    arch: Literal["transformer_small", "transformer_base", "transformer_big"] = "transformer_small"
    """Preset: small = IWSLT (512/1024/4 heads), base = 512/2048/8, big = 1024/4096/16; all 6+6."""
    embed_dim: Count | None = None
    ffn_dim: Count | None = None
    heads: Count | None = None
    encoder_layers: Count | None = None
    decoder_layers: Count | None = None
    """``None`` keeps the preset's value; set any of them to override it (e.g. 16+3, hidden 640)."""
    dropout: Rate = 0.1
    attention_dropout: Rate = 0.0
    activation_dropout: Rate = 0.0
    normalize_before: bool = False
    """Pre-norm (True) or fairseq's default post-norm (False)."""
    share_all_embeddings: bool = True
    """One embedding matrix for encoder input, decoder input and output projection."""
    max_positions: Count = 1024
    decoder: Literal["shared", "per-target"] = "shared"
    """``per-target``: one decoder per target language (LSL paper's separate decoders)."""

    def __post_init__(self) -> None:
        check_heads(self, "heads")
