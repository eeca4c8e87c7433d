"""The seam for language-specific modules: factories that build every sub-layer.

The builder (``models/build.py``) never constructs an attention or feed-forward
module itself; it calls the factories of a :class:`Factories` with a
:class:`LayerSpec` saying where the module goes. The defaults build plain shared
modules. A method in ``models/ls/`` returns a :class:`Factories` with some
entries replaced (e.g. LMS: ``ffn``; LSL: ``encoder_layer``), so
``transformer.py`` never branches on a method name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from torch import nn

from models.attention import MultiheadAttention
from models.layers import DecoderLayer, EncoderLayer, FeedForward

Side = Literal["encoder", "decoder"]
AttnKind = Literal["self", "cross"]


@dataclass(frozen=True, kw_only=True)
class LayerSpec:
    """Where a layer sits and its dimensions: everything a factory may need."""

    side: Side
    layer: int
    """0-based index within its stack."""
    num_layers: int
    """Layers in this stack (``layer == num_layers - 1`` is the top one)."""
    stack: int | None = None
    """Per-target decoders: the target language id this decoder serves; ``None`` when shared."""
    embed_dim: int
    ffn_dim: int
    heads: int
    dropout: float
    attention_dropout: float
    activation_dropout: float
    normalize_before: bool
    num_languages: int
    """Languages of the experiment (ids ``0 … num_languages - 1`` in :class:`~models.lang.LangContext`)."""


AttnFactory = Callable[[LayerSpec, AttnKind], nn.Module]
FFNFactory = Callable[[LayerSpec], nn.Module]
LayerFactory = Callable[[LayerSpec, "Factories"], nn.Module]


def plain_attention(spec: LayerSpec, kind: AttnKind) -> nn.Module:
    """Shared fairseq multi-head attention (self- or encoder-attention), its input projections fused
    (:class:`~models.attention.MultiheadAttention`'s ``fuse``: Q, K, V in one matrix; K, V in one)."""
    return MultiheadAttention(spec.embed_dim, spec.heads, dropout=spec.attention_dropout,
                              fuse="qkv" if kind == "self" else "kv")


def plain_ffn(spec: LayerSpec) -> nn.Module:
    """Shared two-layer ReLU feed-forward block."""
    return FeedForward(spec.embed_dim, spec.ffn_dim, spec.activation_dropout)


def plain_encoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
    """Encoder layer from ``f.attn(spec, "self")`` and ``f.ffn(spec)``."""
    return EncoderLayer(f.attn(spec, "self"), f.ffn(spec), embed_dim=spec.embed_dim, dropout=spec.dropout,
                        normalize_before=spec.normalize_before)


def plain_decoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
    """Decoder layer from ``f.attn(spec, "self")``, ``f.attn(spec, "cross")`` and ``f.ffn(spec)``."""
    return DecoderLayer(f.attn(spec, "self"), f.attn(spec, "cross"), f.ffn(spec), embed_dim=spec.embed_dim,
                        dropout=spec.dropout, normalize_before=spec.normalize_before)


@dataclass(frozen=True, kw_only=True)
class Factories:
    """Callables that build each module of the Transformer's layers.

    Every module they return is called as ``module(x, langs, …)``: encoder layers
    as ``(x, langs, padding_mask)``, decoder layers as
    ``(x, langs, memory, memory_padding_mask, *, self_padding_mask, cache)``,
    attention as ``(x, langs, memory=None, *, key_padding_mask, causal, cache)``,
    feed-forward as ``(x, langs)``.
    """

    attn: AttnFactory = plain_attention
    ffn: FFNFactory = plain_ffn
    encoder_layer: LayerFactory = plain_encoder_layer
    decoder_layer: LayerFactory = plain_decoder_layer
