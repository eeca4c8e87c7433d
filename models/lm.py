"""Decoder-only multilingual LM (XGLM, Lin et al. 2022; the experts of x-elm) from the core's blocks.

``logits = LN_f(layers(dropout(sqrt(d) E[x] + P))) E^T``: the token embedding ``E`` is tied to the output
projection, positions are fairseq's sinusoids (``models/embedding.py``), each layer is an
:class:`~models.layers.EncoderLayer` built with ``causal=True`` (causal self-attention and a feed-forward
block, no encoder attention), pre-norm with a final LayerNorm as XGLM (``LMConfig.normalize_before``).
Position ``t`` of the output predicts token ``t + 1``. Sequences are right-padded; causal attention means a
real token never attends to a pad after it, so no padding mask is needed.
"""

from __future__ import annotations

from torch import Tensor, nn

from models.attention import MultiheadAttention
from models.config.lm import LMConfig
from models.embedding import SinusoidalPositionalEmbedding, TransformerEmbedding, build_token_embedding
from models.lang import LangContext
from models.layers import EncoderLayer, FeedForward


class DecoderOnlyLM(nn.Module):
    """``forward(tokens (B, T), langs=None) -> logits (B, T, V)``."""

    def __init__(self, embed: TransformerEmbedding, layers: list[nn.Module], final_norm: nn.Module | None,
                 output_projection: nn.Linear, *, max_positions: int) -> None:
        super().__init__()
        self.embed = embed
        self.layers = nn.ModuleList(layers)
        self.final_norm = final_norm
        self.output_projection = output_projection
        self.max_positions = max_positions

    def forward(self, tokens: Tensor, langs: LangContext | None = None) -> Tensor:
        """``langs`` reaches every sub-module (shared ones ignore it); ``None``: a language-agnostic batch."""
        if tokens.size(1) > self.max_positions:
            raise ValueError(f"sequence of {tokens.size(1)} tokens exceeds max_positions {self.max_positions}")
        x = self.embed(tokens)  # (B, T, D)
        for layer in self.layers:
            x = layer(x, langs, None)  # (B, T, D)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.output_projection(x)  # (B, T, V)


def build_lm(cfg: LMConfig, *, vocab_size: int, padding_idx: int = 1) -> DecoderOnlyLM:
    """The LM of ``cfg`` on the current default device (``with torch.device("meta"): …`` counts instantly)."""
    tokens = build_token_embedding(vocab_size, cfg.embed_dim, padding_idx)
    positions = SinusoidalPositionalEmbedding(cfg.embed_dim, padding_idx, cfg.block_size)
    layers: list[nn.Module] = [
        EncoderLayer(MultiheadAttention(cfg.embed_dim, cfg.heads, dropout=cfg.attention_dropout),
                     FeedForward(cfg.embed_dim, cfg.ffn_dim, cfg.activation_dropout, activation=cfg.activation),
                     embed_dim=cfg.embed_dim, dropout=cfg.dropout, normalize_before=cfg.normalize_before,
                     causal=True)
        for _ in range(cfg.layers)
    ]
    final_norm = nn.LayerNorm(cfg.embed_dim) if cfg.normalize_before else None
    output_projection = nn.Linear(cfg.embed_dim, vocab_size, bias=False)
    output_projection.weight = tokens.weight  # tied input / output embeddings (XGLM)
    return DecoderOnlyLM(TransformerEmbedding(tokens, positions, cfg.dropout), layers, final_norm,
                         output_projection, max_positions=cfg.block_size)


def param_count(model: nn.Module) -> int:
    """Distinct parameters (tied ones once)."""
    return sum(p.numel() for p in model.parameters())

