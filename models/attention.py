"""Multi-head attention with fairseq's parameterisation and an incremental key/value cache.

``Attention(Q, K, V) = softmax(Q K^T / sqrt(d_h) + M) V`` per head, with
``Q = x W_q^T + b_q``, ``K = m W_k^T + b_k``, ``V = m W_v^T + b_v`` and the heads
concatenated into ``out_proj`` (all four projections have a bias, as in fairseq's
``MultiheadAttention``). ``M`` is ``-inf`` at padded keys and, for causal
self-attention, at future keys (``F.scaled_dot_product_attention``, which
scales by ``d_h^-0.5`` as fairseq scales ``Q``); dropout applies to the attention
probabilities.

Beams share their sentence's memory: ``memory`` may have ``B`` rows for ``x``'s ``N = k B`` rows, rows
``b k … b k + k - 1`` of ``x`` attending to row ``b`` of ``memory`` (beam search; the cross-attention keys and
values are then projected and cached once per sentence, never copied per beam). The ``k`` queries of a sentence
go through one attention call as ``k Tq`` queries over its keys, which gives each what its own call would.

Initialisation (fairseq ``MultiheadAttention.reset_parameters``): ``xavier_uniform``
on ``W_q, W_k, W_v`` with gain ``1/sqrt(2)`` when query, key and value dims are
equal (gain 1 otherwise), ``xavier_uniform`` on ``W_out`` and ``b_out = 0``;
``b_q, b_k, b_v`` keep ``nn.Linear``'s default initialisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.lang import LangContext
from models.linear import Linear, LinearFactory


@dataclass(eq=False)
class KVCache:
    """Projected keys and values of one attention module, ``k``, ``v``: ``(B, H, T, D_h)`` each.

    Self-attention appends each step's keys (:meth:`append`) in place to a buffer ``(B, capacity, H, D_h)`` that
    grows by doubling (``k``, ``v`` are views of its first ``T`` positions), so a step copies no earlier keys; a
    beam reordering copies the ``T`` positions of each row once, into a second buffer that then takes over.
    Cross-attention sets ``k``, ``v`` once from the encoder output and reuses them.
    """

    k: Tensor | None = None
    v: Tensor | None = None
    _buffers: tuple[Tensor, Tensor] | None = None
    _spare: tuple[Tensor, Tensor] | None = None
    _length: int = 0

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add ``k``, ``v`` ``(B, Tn, H, D_h)`` after the cached positions; all keys and values so far, as
        ``(B, H, T, D_h)``."""
        t, tn = self._length, k.size(1)
        if self._buffers is None or t + tn > self._buffers[0].size(1):
            size = (k.size(0), max(16, 2 * (t + tn)), *k.shape[2:])
            grown = k.new_empty(size), v.new_empty(size)
            if self._buffers is not None:
                grown[0][:, :t], grown[1][:, :t] = self._buffers[0][:, :t], self._buffers[1][:, :t]
            self._buffers, self._spare = grown, None
        kb, vb = self._buffers
        kb[:, t : t + tn], vb[:, t : t + tn] = k, v
        self._length = t + tn
        self.k, self.v = kb[:, : t + tn].transpose(1, 2), vb[:, : t + tn].transpose(1, 2)
        return self.k, self.v

    def reorder_(self, idx: Tensor) -> None:
        """Keep rows ``idx`` in that order (beam search, dropping finished sentences), in place."""
        if self.k is None or self.v is None:
            return
        if self._buffers is None:  # static keys (cross-attention)
            self.k, self.v = self.k.index_select(0, idx), self.v.index_select(0, idx)
            return
        t, (kb, vb) = self._length, self._buffers
        spare = self._spare
        if spare is None or spare[0].size(0) != idx.numel():
            spare = kb.new_empty((idx.numel(), *kb.shape[1:])), vb.new_empty((idx.numel(), *vb.shape[1:]))
        _select_rows(kb, t, idx, spare[0])
        _select_rows(vb, t, idx, spare[1])
        self._buffers, self._spare = spare, ((kb, vb) if kb.size(0) == idx.numel() else None)
        self.k, self.v = spare[0][:, :t].transpose(1, 2), spare[1][:, :t].transpose(1, 2)


def _select_rows(src: Tensor, t: int, idx: Tensor, dst: Tensor) -> None:
    """``dst[i, :t] = src[idx[i], :t]`` in one pass, ``dst`` a buffer with room beyond ``t``."""
    out = dst[:, :t]
    torch.index_select(src[:, :t], 0, idx, out=out)
    if out.data_ptr() != dst.data_ptr():  # a backend that reallocated the view instead of filling it
        dst[:, :t] = out


def attention_mask(
    key_padding_mask: Tensor | None, causal: bool, tq: int, tk: int, device: torch.device
) -> Tensor | None:
    """Boolean mask ``(B|1, 1, Tq, Tk)``, True where a query may attend; ``None`` when nothing is masked.

    Causal queries are the last ``tq`` of ``tk`` positions (query ``i`` sees keys ``j <= i + tk - tq``).
    """
    allowed = None
    if key_padding_mask is not None:
        allowed = ~key_padding_mask[:, None, None, :]  # (B, 1, 1, Tk)
    if causal and tq > 1:
        q = torch.arange(tq, device=device).unsqueeze(1) + (tk - tq)
        k = torch.arange(tk, device=device).unsqueeze(0)
        tri = (k <= q)[None, None]  # (1, 1, Tq, Tk)
        allowed = tri if allowed is None else allowed & tri
    return allowed


def padding_bias(key_padding_mask: Tensor, dtype: torch.dtype) -> Tensor:
    """The additive mask ``(B, 1, 1, Tk)`` of ``key_padding_mask (B, Tk)`` (True at pads): ``-inf`` at pads, 0
    elsewhere, in ``dtype`` (the queries').

    SDPA turns a boolean mask into this on every call (``where(~mask, -inf, 0)``: three operations, and three more
    to invert and unsqueeze the mask here); every layer of a stack (and every step of a search) passes the same
    mask tensor, so the bias is kept on that tensor (an attribute, gone with it) and reused while the mask is
    unchanged (its ``_version``) and the dtype the same: the same maths, made once per forward. Made afresh under
    ``torch.compile`` (which fuses the conversion itself) and under ``torch.inference_mode`` (an inference tensor
    has no ``_version``, and a kept inference bias could not be saved for a later training pass's backward).
    """
    if torch.compiler.is_compiling() or torch.is_inference_mode_enabled() or key_padding_mask.is_inference():
        return _bias(key_padding_mask, dtype)
    kept = getattr(key_padding_mask, _KEPT, None)
    if kept is not None and kept[0] == key_padding_mask._version and kept[1] == dtype:
        return kept[2]
    bias = _bias(key_padding_mask, dtype)
    setattr(key_padding_mask, _KEPT, (key_padding_mask._version, dtype, bias))
    return bias


_KEPT = "_lsnmt_padding_bias"
"""The mask's attribute that keeps its :func:`padding_bias`: ``(the mask's _version, dtype, bias)``."""


def _bias(key_padding_mask: Tensor, dtype: torch.dtype) -> Tensor:
    zeros = torch.zeros(key_padding_mask.shape, dtype=dtype, device=key_padding_mask.device)
    return zeros.masked_fill_(key_padding_mask, float("-inf"))[:, None, None, :]


def sdpa_mask(key_padding_mask: Tensor | None, causal: bool, tq: int, tk: int, dtype: torch.dtype,
              device: torch.device) -> Tensor | None:
    """The mask SDPA gets: :func:`padding_bias` when only padding is masked, else :func:`attention_mask`."""
    if key_padding_mask is not None and not (causal and tq > 1):
        return padding_bias(key_padding_mask, dtype)
    return attention_mask(key_padding_mask, causal, tq, tk, device)


Fuse = Literal["qkv", "kv"] | None
"""How a plain attention computes its input projections: ``"qkv"`` (self-attention: ``[Q K V] = x W_qkv^T + b``,
one matrix multiply), ``"kv"`` (encoder attention: ``Q`` from the queries, ``[K V]`` from the memory in one), or
``None`` (three maps, each built by the ``linear`` factory: a language-specific map stands in for them)."""


class MultiheadAttention(nn.Module):
    """fairseq-style multi-head attention; ``forward(x, langs, memory=None, …)``.

    Plain (shared) attention passes ``langs`` only to its projections, which
    ignore it; ``linear`` (default :class:`~models.linear.Linear`) builds the four
    projections, so a language-specific linear map can stand in for them (LMS).

    **Fused projections** (``fuse``, plain maps only): the self-attention's ``W_q, W_k, W_v`` are the three
    ``(D, D)`` blocks of one ``(3D, D)`` matrix ``qkv_proj`` (an encoder attention's ``W_k, W_v``: ``kv_proj``), so
    a forward makes one matrix multiply where it made three, and the heads come out of one view: the same maths
    and the same parameters (each block initialised as fairseq initialises its matrix), a third of the operations
    a GPU's host dispatches for them. A state dict with separate ``q_proj``/``k_proj``/``v_proj`` (written before
    the fusion) loads into the fused form.

    **Causal self-attention over a whole sequence** (teacher forcing; no cache) ignores ``key_padding_mask`` and
    runs SDPA's ``is_causal`` (no mask to build or convert; flash attention on a GPU). The sequences are
    right-padded (the decoder's inputs, the LM's blocks), so a real position never sees a pad after it: its output
    is what the padding mask gives; only the outputs at pad positions differ, and nothing reads them (losses and
    routers skip pads, and a later position of the same row is a pad too).
    """

    def __init__(self, embed_dim: int, heads: int, *, kdim: int | None = None, vdim: int | None = None,
                 dropout: float = 0.0, bias: bool = True, linear: LinearFactory = Linear, fuse: Fuse = None) -> None:
        super().__init__()
        if embed_dim % heads:
            raise ValueError(f"embed_dim {embed_dim} is not divisible by heads {heads}")
        kdim, vdim = kdim or embed_dim, vdim or embed_dim
        self.embed_dim, self.heads, self.head_dim = embed_dim, heads, embed_dim // heads
        self.dropout = dropout
        self.qkv_same_dim = kdim == embed_dim and vdim == embed_dim
        if fuse is not None and (linear is not Linear or not self.qkv_same_dim):
            raise ValueError("fused projections need plain linear maps and kdim == vdim == embed_dim")
        self.fuse = fuse
        if fuse == "qkv":
            self.qkv_proj = Linear(embed_dim, 3 * embed_dim, bias=bias)
        else:
            self.q_proj = linear(embed_dim, embed_dim, bias=bias)
            if fuse == "kv":
                self.kv_proj = Linear(embed_dim, 2 * embed_dim, bias=bias)
            else:
                self.k_proj = linear(kdim, embed_dim, bias=bias)
                self.v_proj = linear(vdim, embed_dim, bias=bias)
        self.out_proj = linear(embed_dim, embed_dim, bias=bias)
        self.reset_parameters()

    def _input_weights(self) -> list[Tensor]:
        """``W_k, W_v, W_q`` (fairseq's initialisation order), views into the fused matrices where fused."""
        d = self.embed_dim
        if self.fuse == "qkv":
            w_q, w_k, w_v = self.qkv_proj.weight.view(3, d, d).unbind(0)
        elif self.fuse == "kv":
            w_q = self.q_proj.weight
            w_k, w_v = self.kv_proj.weight.view(2, d, d).unbind(0)
        else:
            w_q, w_k, w_v = self.q_proj.weight, self.k_proj.weight, self.v_proj.weight
        return [w_k, w_v, w_q]

    def reset_parameters(self) -> None:
        gain = 1 / math.sqrt(2) if self.qkv_same_dim else 1.0
        with torch.no_grad():
            for w in self._input_weights():
                nn.init.xavier_uniform_(w, gain=gain)
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.zeros_(self.out_proj.bias)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any, **kwargs: Any) -> None:
        """Separate ``q_proj``/``k_proj``/``v_proj`` entries (a state dict from before the fusion, or another
        toolkit's) become the fused ``qkv_proj``/``kv_proj`` ones."""
        parts = {"qkv": ("q_proj", "k_proj", "v_proj"), "kv": ("k_proj", "v_proj")}.get(self.fuse or "", ())
        for p in ("weight", "bias"):
            keys = [f"{prefix}{name}.{p}" for name in parts]
            if keys and all(k in state_dict for k in keys):
                state_dict[f"{prefix}{self.fuse}_proj.{p}"] = torch.cat([state_dict.pop(k) for k in keys])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _split(self, x: Tensor, n: int) -> tuple[Tensor, ...]:
        """``x (B, T, n D)`` -> ``n`` tensors ``(B, H, T, Dh)`` (views)."""
        b, t, _ = x.shape
        return x.view(b, t, n, self.heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)

    def _heads(self, x: Tensor) -> Tensor:
        """``(B, T, D)`` -> ``(B, H, T, Dh)``."""
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    def _memory_keys(self, x: Tensor, langs: LangContext, memory: Tensor,
                     cache: KVCache | None) -> tuple[Tensor, Tensor]:
        """Encoder attention's keys and values ``(B, H, S, Dh)``: computed once per cache and sentence."""
        if cache is not None and cache.k is not None and cache.v is not None:
            return cache.k, cache.v
        if memory.size(0) != x.size(0):  # the memory's sentences, not the beams: their languages
            langs = langs.take_every(x.size(0) // memory.size(0))
        if self.fuse == "kv":
            k, v = self._split(self.kv_proj(memory, langs), 2)
        else:
            k, v = self._heads(self.k_proj(memory, langs)), self._heads(self.v_proj(memory, langs))
        if cache is not None:
            cache.k, cache.v = k, v
        return k, v

    def _self_qkv(self, x: Tensor, langs: LangContext, cache: KVCache | None) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention's queries, keys and values ``(B, H, T, Dh)``; with a cache, the keys and values of the
        earlier steps followed by ``x``'s."""
        if cache is None and self.fuse == "qkv":
            q, k, v = self._split(self.qkv_proj(x, langs), 3)
            return q, k, v
        shape = (x.size(0), x.size(1), self.heads, self.head_dim)
        if self.fuse == "qkv":
            q_, k_, v_ = self.qkv_proj(x, langs).view(*shape[:2], 3, *shape[2:]).unbind(2)  # (B, Tq, H, Dh) each
        else:
            q_, k_, v_ = self.q_proj(x, langs).view(shape), self.k_proj(x, langs).view(shape), \
                self.v_proj(x, langs).view(shape)
        if cache is None:
            return q_.transpose(1, 2), k_.transpose(1, 2), v_.transpose(1, 2)
        k, v = cache.append(k_, v_)  # after the earlier steps' keys, (B, H, T, Dh)
        return q_.transpose(1, 2), k, v

    def forward(
        self,
        x: Tensor,
        langs: LangContext,
        memory: Tensor | None = None,
        *,
        key_padding_mask: Tensor | None = None,
        causal: bool = False,
        cache: KVCache | None = None,
    ) -> Tensor:
        """Attend from ``x (N, Tq, D)`` to ``memory (B, S, D)`` (cross; ``N = k B``: ``k`` beams per memory row)
        or to ``x`` itself (self, ``N = B``).

        ``key_padding_mask (B, Tk)``: True at padded keys. With a self-attention
        ``cache``, ``x`` holds only the new positions and the keys are the cached
        ones plus the new ones (the mask, if given, must cover all of them).
        Returns ``(N, Tq, D)``.
        """
        n, tq = x.size(0), x.size(1)
        p = self.dropout if self.training else 0.0
        if memory is None:
            q, k, v = self._self_qkv(x, langs, cache)  # (B, H, Tq | Tk, Dh)
            if causal and cache is None:  # a whole right-padded sequence: see the class docstring
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            else:
                mask = sdpa_mask(key_padding_mask, causal, tq, k.size(2), q.dtype, x.device)
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        else:
            if memory.size(0) != n and n % memory.size(0):
                raise ValueError(f"{n} query rows cannot be the beams of {memory.size(0)} memory rows")
            k, v = self._memory_keys(x, langs, memory, cache)  # (B, H, S, Dh), B = N / beams
            b = k.size(0)
            beams = n // b if b else 0
            q = self.q_proj(x, langs).reshape(b, beams * tq, self.heads, self.head_dim).transpose(1, 2)
            mask = sdpa_mask(key_padding_mask, False, beams * tq, k.size(2), q.dtype, x.device)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)  # (B, H, k Tq, Dh)
        out = out.transpose(1, 2).reshape(n, tq, self.embed_dim)  # (N, Tq, D)
        return self.out_proj(out, langs)

    def aux_loss(self) -> Tensor | None:
        return None
