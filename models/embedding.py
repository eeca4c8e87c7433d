"""Token and sinusoidal position embeddings with fairseq semantics.

fairseq (``fairseq/modules/sinusoidal_positional_embedding.py``,
``fairseq/utils.py::make_positions``, ``TransformerEncoder.forward_embedding``):

* tokens are embedded, scaled by ``sqrt(d)`` and added to position embeddings;
* positions start at ``padding_idx + 1``; padded tokens get position
  ``padding_idx``, whose row of the table is zero;
* row ``p`` of the table is ``[sin(p w_0) … sin(p w_{h-1}), cos(p w_0) … cos(p w_{h-1})]``
  with ``h = d // 2`` and ``w_i = 10000^(-i / (h - 1))`` (sin and cos halves
  concatenated, not interleaved as in Vaswani et al.); odd ``d`` gets a zero last column.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from models.dropout import Dropout


def sinusoidal_table(num_embeddings: int, dim: int, padding_idx: int | None) -> Tensor:
    """fairseq's ``SinusoidalPositionalEmbedding.get_embedding``: ``(num_embeddings, dim)`` float32."""
    half = dim // 2
    step = math.log(10000) / (half - 1)
    freqs = torch.exp(torch.arange(half, dtype=torch.float) * -step)  # (h,)
    angles = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)  # (N, h)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)  # (N, 2h)
    if dim % 2 == 1:
        table = torch.cat([table, torch.zeros(num_embeddings, 1)], dim=1)
    if padding_idx is not None:
        table[padding_idx, :] = 0
    return table


def make_positions(tokens: Tensor, padding_idx: int, offset: int = 0) -> Tensor:
    """Position ids ``padding_idx + 1 + offset + (index among non-pad tokens)``; pads get ``padding_idx``.

    Matches fairseq's ``make_positions`` (cumulative sum over the non-pad mask, so
    left-padded sources start at ``padding_idx + 1`` too); ``offset`` is the
    number of tokens already decoded in incremental decoding.
    """
    mask = tokens.ne(padding_idx).long()  # (B, T)
    return (torch.cumsum(mask, dim=1) + offset) * mask + padding_idx


class SinusoidalPositionalEmbedding(nn.Module):
    """Fixed sinusoidal positions (no parameters); the table grows on demand like fairseq's."""

    def __init__(self, dim: int, padding_idx: int, init_size: int = 1024) -> None:
        super().__init__()
        self.dim = dim
        self.padding_idx = padding_idx
        # fairseq allocates num_embeddings + padding_idx + 1 rows
        table = sinusoidal_table(init_size + padding_idx + 1, dim, padding_idx)
        self.register_buffer("weights", table, persistent=False)

    def forward(self, tokens: Tensor, offset: int = 0) -> Tensor:
        """``tokens (B, T)`` -> ``(B, T, D)``."""
        positions = make_positions(tokens, self.padding_idx, offset)  # (B, T)
        needed = self.padding_idx + 1 + offset + tokens.size(1)
        if needed > self.weights.size(0):
            self.weights = sinusoidal_table(needed, self.dim, self.padding_idx).to(self.weights.device)
        return self.weights.index_select(0, positions.reshape(-1)).view(*tokens.shape, self.dim)


def build_token_embedding(vocab_size: int, dim: int, padding_idx: int) -> nn.Embedding:
    """fairseq ``Embedding``: weights ~ N(0, dim^-0.5), padding row zero."""
    emb = nn.Embedding(vocab_size, dim, padding_idx=padding_idx)
    nn.init.normal_(emb.weight, mean=0.0, std=dim**-0.5)
    with torch.no_grad():
        emb.weight[padding_idx].zero_()
    return emb


class TransformerEmbedding(nn.Module):
    """``dropout(sqrt(d) * E[tokens] + P[positions])`` (fairseq ``forward_embedding``).

    ``tokens`` may be an embedding shared with other modules (``share_all_embeddings``).
    """

    def __init__(self, tokens: nn.Embedding, positions: SinusoidalPositionalEmbedding, dropout: float) -> None:
        super().__init__()
        self.tokens = tokens
        self.positions = positions
        self.scale = math.sqrt(tokens.embedding_dim)
        self.dropout = Dropout(dropout)

    def forward(self, tokens: Tensor, offset: int = 0) -> Tensor:
        """``tokens (B, T)`` -> ``(B, T, D)``; ``offset``: tokens already decoded."""
        x = self.scale * self.tokens(tokens) + self.positions(tokens, offset).to(self.tokens.weight.dtype)
        return self.dropout(x)
