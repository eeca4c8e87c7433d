"""The language-specific forwards as they were before they stopped reading the device (reference implementations,
not used by the models): one sub-batch per language or expert, found with ``nonzero`` on the device, scattered
back with ``index_copy``; the decoder's self-attention padding mask given only when a pad exists. The models now
compute all languages at once on rows tiled by language (``models/ls/grouped.py``): these per-language loops are
what that must equal, output and gradient.

``tests/models/test_ls_parity.py`` swaps each in for the new forward and compares outputs and gradients on fixed
weights in fp32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from models.lang import LangContext, group_rows
from models.ls.clsr import LangProjection
from models.ls.fd import FDFFN
from models.ls.lsl import LanguageSpecific, SearchLayer
from models.ls.switch import SwitchFFN, balance_loss, top1_dispatch
from models.transformer import Decoder, EncoderOut


def _rows(value: Any, rows: Tensor) -> Any:
    if isinstance(value, Tensor):
        return value.index_select(0, rows)
    if isinstance(value, LangContext):
        return value.index_select(rows)
    return value


def lsl_route(one: Callable[..., Tensor], index: str, x: Tensor, langs: LangContext, *args: Any,
              **kwargs: Any) -> Tensor:
    """``models.ls.lsl.route`` before: per language, ``nonzero`` rows and ``index_copy``; ``one(lang, x, langs, …)``
    runs language ``lang``'s copy."""
    uniform = langs.uniform_src if index == "src" else langs.uniform_tgt
    if uniform is not None:
        return one(uniform, x, langs, *args, **kwargs)
    out = torch.zeros_like(x)
    for lang, rows in group_rows(langs.src if index == "src" else langs.tgt):
        y = one(lang, x.index_select(0, rows), langs.index_select(rows), *(_rows(a, rows) for a in args),
                **{k: _rows(v, rows) for k, v in kwargs.items()})
        out = out.index_copy(0, rows, y)
    return out


def lsl_forward(self: LanguageSpecific, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
    """``LanguageSpecific.forward`` before its copies were grouped: :func:`lsl_route` over them."""
    return lsl_route(self.one, self.index, x, langs, *args, **kwargs)


def search_forward(self: SearchLayer, x: Tensor, langs: LangContext, padding_mask: Tensor | None) -> Tensor:
    """``SearchLayer.forward`` (Eq. 1) before its LSL's copies were grouped."""
    w = self.weights()
    return (w[0] * self.shared(x, langs, padding_mask) + w[1] * lsl_route(self.one, "src", x, langs, padding_mask)
            + w[2] * lsl_route(self.one, "tgt", x, langs, padding_mask))


def fd_forward(self: FDFFN, x: Tensor, langs: LangContext) -> Tensor:
    """``FDFFN.forward`` before."""
    if (langs.route or self.route) == "share":
        return self.shared(x, langs)
    one = langs.uniform_src if self.use_src else langs.uniform_tgt
    if one is not None:
        return self.expert(one, x, langs)
    out = torch.zeros_like(x)
    for lang, rows in group_rows(langs.src if self.use_src else langs.tgt):
        out = out.index_copy(0, rows, self.expert(lang, x.index_select(0, rows), langs.index_select(rows)))
    return out


def lang_projection_forward(self: LangProjection, h: Tensor, langs: LangContext) -> Tensor:
    """CLSR's ``LangProjection.forward`` before."""
    if langs.uniform_tgt is not None:
        return h @ self.weight[langs.uniform_tgt].T
    out = torch.zeros_like(h)
    for lang, rows in group_rows(langs.tgt):
        out = out.index_copy(0, rows, h.index_select(0, rows) @ self.weight[lang].T)
    return out


def switch_forward(self: SwitchFFN, x: Tensor, langs: LangContext) -> Tensor:
    """``SwitchFFN.forward`` before: the real tokens selected with ``nonzero``, one call per expert on its kept
    tokens (eval mode: no capacity limit, which ``eval_capacity_fraction: 1`` gives now)."""
    tokens = x.reshape(-1, x.size(-1))
    real = None if langs.padding is None else (~langs.padding.reshape(-1)).nonzero().squeeze(1)
    routed = tokens if real is None else tokens.index_select(0, real)
    probs = torch.softmax(self.router(routed).float(), dim=-1)
    expert, keep = top1_dispatch(probs, self.capacity(routed.size(0)))
    self._aux = balance_loss(probs, expert) if routed.size(0) else probs.sum()
    gate = probs.gather(1, expert.unsqueeze(1)).squeeze(1).to(x.dtype)
    out = torch.zeros_like(routed)
    for e in range(self.cfg.experts):
        idx = ((expert == e) & keep).nonzero().squeeze(1)
        if idx.numel():
            y = self.expert(e, routed.index_select(0, idx).unsqueeze(0), langs).squeeze(0)
            out = out.index_copy(0, idx, y * gate.index_select(0, idx).unsqueeze(1))
    if real is not None:
        out = torch.zeros_like(tokens).index_copy(0, real, out)
    return out.view_as(x)


def decoder_forward(self: Decoder, prev_tokens: Tensor, enc: EncoderOut, langs: LangContext,
                    cache: None = None) -> Tensor:
    """``Decoder.forward`` before, teacher-forced (no cache): the padding mask only when a pad exists, per-target
    stacks on ``nonzero`` rows."""
    assert cache is None
    x = self.embed(prev_tokens, 0)
    pad = prev_tokens.eq(self.padding_idx)
    self_pad = pad if bool(pad.any()) else None
    ids, uniform = self.stack_ids(langs)
    if uniform is not None:
        x = self.stack(uniform)(x, langs, enc, self_pad, None)
    else:
        out = torch.zeros_like(x)
        beam = x.size(0) // max(enc.out.size(0), 1)
        for g, rows in group_rows(ids):
            sentences = rows[::beam] // beam
            y = self.stack(g)(x.index_select(0, rows), langs.index_select(rows), enc.index_select(sentences),
                               None if self_pad is None else self_pad.index_select(0, rows), None)
            out = out.index_copy(0, rows, y)
        x = out
    return self.output_projection(x)
