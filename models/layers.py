"""Feed-forward block and the encoder/decoder layers that compose sub-modules.

Layers receive their attention and feed-forward modules (composition, as in
torchtune's ``TransformerSelfAttentionLayer(attn, mlp, …)``): they never know
whether a sub-module is shared or language-specific. Each sub-module is called
as ``module(x, langs, …)``.

Residual blocks follow fairseq's ``TransformerEncoderLayer``/``TransformerDecoderLayer``:

* post-norm (default, ``normalize_before=False``): ``x = LN(x + dropout(f(x)))``;
* pre-norm (``normalize_before=True``): ``x = x + dropout(f(LN(x)))``, and the
  encoder/decoder add a final LayerNorm (see ``models/transformer.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import torch.nn.functional as F
from torch import Tensor, nn

from models.attention import KVCache
from models.dropout import Dropout
from models.lang import LangContext
from models.linear import Linear, LinearFactory


class FeedForward(nn.Module):
    """``FFN(x) = W_2 dropout_act(act(W_1 x + b_1)) + b_2`` (Vaswani et al. 2017, eq. 2).

    ``act`` is ReLU (Vaswani et al., fairseq's default) or GELU (Hendrycks and Gimpel 2016; XGLM, the x-elm
    seed, uses it).

    Initialisation: ``xavier_uniform`` weights and zero biases (fairseq's ``Linear``
    helper used by ``TransformerEncoderLayer`` up to fairseq 0.9; later versions
    build ``fc1``/``fc2`` with ``nn.Linear``'s default initialisation).
    ``linear`` builds ``fc1`` and ``fc2`` (default: the shared :class:`~models.linear.Linear`);
    both are called as ``fc(x, langs)``.
    """

    def __init__(self, embed_dim: int, ffn_dim: int, activation_dropout: float = 0.0,
                 linear: LinearFactory = Linear, activation: Literal["relu", "gelu"] = "relu") -> None:
        super().__init__()
        self.act = F.gelu if activation == "gelu" else F.relu
        self.fc1 = linear(embed_dim, ffn_dim)
        self.fc2 = linear(ffn_dim, embed_dim)
        self.activation_dropout = Dropout(activation_dropout)
        for fc in (self.fc1, self.fc2):
            nn.init.xavier_uniform_(fc.weight)
            nn.init.zeros_(fc.bias)

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``; ``langs`` reaches ``fc1``/``fc2`` (unused by shared ones)."""
        return self.fc2(self.activation_dropout(self.act(self.fc1(x, langs))), langs)

    def aux_loss(self) -> Tensor | None:
        return None


class Residual(nn.Module):
    """One residual block around a sub-layer call, post- or pre-norm."""

    def __init__(self, embed_dim: int, dropout: float, normalize_before: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(embed_dim)
        self.dropout = Dropout(dropout)
        self.normalize_before = normalize_before

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """``(B, T, D)`` -> ``(B, T, D)``."""
        h = sublayer(self.norm(x) if self.normalize_before else x)
        x = x + self.dropout(h)
        return x if self.normalize_before else self.norm(x)


class EncoderLayer(nn.Module):
    """Self-attention block then feed-forward block (fairseq ``TransformerEncoderLayer``).

    With ``causal=True`` position i attends to positions <= i only: the layer of a decoder-only LM (GPT,
    XGLM; ``models/lm.py``), a decoder layer without encoder attention.
    """

    def __init__(self, attn: nn.Module, ffn: nn.Module, *, embed_dim: int, dropout: float,
                 normalize_before: bool, causal: bool = False) -> None:
        super().__init__()
        self.causal = causal
        self.self_attn = attn
        self.ffn = ffn
        self.self_attn_block = Residual(embed_dim, dropout, normalize_before)
        self.ffn_block = Residual(embed_dim, dropout, normalize_before)

    def forward(self, x: Tensor, langs: LangContext, padding_mask: Tensor | None) -> Tensor:
        """``x (B, S, D)``, ``padding_mask (B, S)`` True at pads -> ``(B, S, D)``."""
        padded = with_padding(langs, padding_mask)
        x = self.self_attn_block(x, lambda h: self.self_attn(h, padded, key_padding_mask=padding_mask,
                                                             causal=self.causal))
        return self.ffn_block(x, lambda h: self.ffn(h, padded))


def with_padding(langs: LangContext, padding_mask: Tensor | None) -> LangContext:
    """``langs`` carrying the padding mask of the sublayer's positions, the queries of an attention call or the
    inputs of a feed-forward call (unchanged when there is none): token routers and CLSR's budget skip pads."""
    return langs if padding_mask is None else langs.with_(padding=padding_mask)


@dataclass(eq=False)
class LayerCache:
    """Incremental state of one decoder layer: self-attention keys per decoder row, cross-attention keys per
    sentence (the beams of a sentence share them)."""

    self_attn: KVCache = field(default_factory=KVCache)
    cross_attn: KVCache = field(default_factory=KVCache)

    def reorder_(self, rows: Tensor) -> None:
        """Row ``i`` takes row ``rows[i]``'s self-attention state (beams of the same sentences)."""
        self.self_attn.reorder_(rows)

    def select_(self, rows: Tensor, sentences: Tensor) -> None:
        """Keep decoder rows ``rows`` and sentences ``sentences``, in that order."""
        self.self_attn.reorder_(rows)
        self.cross_attn.reorder_(sentences)


class DecoderLayer(nn.Module):
    """Causal self-attention, encoder attention and feed-forward blocks (fairseq ``TransformerDecoderLayer``)."""

    def __init__(self, self_attn: nn.Module, cross_attn: nn.Module, ffn: nn.Module, *, embed_dim: int,
                 dropout: float, normalize_before: bool) -> None:
        super().__init__()
        self.self_attn = self_attn
        self.cross_attn = cross_attn
        self.ffn = ffn
        self.self_attn_block = Residual(embed_dim, dropout, normalize_before)
        self.cross_attn_block = Residual(embed_dim, dropout, normalize_before)
        self.ffn_block = Residual(embed_dim, dropout, normalize_before)

    def forward(
        self,
        x: Tensor,
        langs: LangContext,
        memory: Tensor,
        memory_padding_mask: Tensor | None,
        *,
        self_padding_mask: Tensor | None = None,
        cache: LayerCache | None = None,
    ) -> Tensor:
        """``x (B, T, D)`` (only the new positions when ``cache`` is given), ``memory (B, S, D)`` -> ``(B, T, D)``."""
        sa, ca = (cache.self_attn, cache.cross_attn) if cache is not None else (None, None)
        padded = with_padding(langs, self_padding_mask)  # the decoder positions: queries of both attentions
        x = self.self_attn_block(
            x, lambda h: self.self_attn(h, padded, key_padding_mask=self_padding_mask, causal=True, cache=sa)
        )
        x = self.cross_attn_block(
            x, lambda h: self.cross_attn(h, padded, memory, key_padding_mask=memory_padding_mask, cache=ca)
        )
        return self.ffn_block(x, lambda h: self.ffn(h, padded))
