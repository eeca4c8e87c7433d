"""Per-sentence language ids, passed explicitly through every forward.

A :class:`LangContext` carries the source and target language id of each row
of a batch (ids index the experiment's ``data.languages``). Language-specific
modules read it to pick their per-language weights; the per-target decoder
reads ``tgt`` to route each row to its decoder. Batches may mix directions; the
``uniform_*`` properties give the single-direction fast path
(one ``index_select``-free call instead of one call per language group).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

import torch
from torch import Tensor


def _uniform(ids: Tensor) -> int | None:
    """The id shared by every row, or ``None`` (mixed or empty batch)."""
    if ids.numel() == 0:
        return None
    first = ids[0]
    return int(first) if bool((ids == first).all()) else None


def group_rows(ids: Tensor) -> list[tuple[int, Tensor]]:
    """Split rows by id: ``[(id, rows)]`` in increasing id order, ``rows`` ascending (LongTensor)."""
    values = torch.unique(ids)
    return [(int(v), (ids == v).nonzero().squeeze(1)) for v in values]


@dataclass(frozen=True, eq=False)
class LangContext:
    """Source and target language id of each sentence of a batch.

    ``src`` and ``tgt`` are LongTensors of shape ``(B,)`` on the batch's device.
    Instances are immutable; reordering returns a new context.

    Two batch-level fields reach modules explicitly through every forward (never
    through attributes set on a module from outside):

    * ``route``: which path a method with two routes takes (LMS-FD paper Sec. 3-4:
      ``"ls"``, the language-specific modules, or ``"share"``, the shared one);
      ``None`` means the module's configured inference route. Training criteria set it
      per forward pass (:mod:`models.ls.distill`).
    * ``progress``: the fraction of training done, ``step / max_steps`` in ``[0, 1]``,
      set by the trainer for training forwards and ``None`` otherwise (CLSR's gate-noise
      ramp, Zhang et al. 2021).
    * ``padding``: the token padding mask of one sublayer call (see the field).
    """

    src: Tensor  # (B,)
    tgt: Tensor  # (B,)
    route: Literal["ls", "share"] | None = None
    progress: float | None = None
    padding: Tensor | None = None
    """``(B, T)`` True at the padded positions of the tensor a sublayer is called with (the queries of an attention,
    the inputs of a feed-forward; set by the layer for that call only; ``None``: no padding). Token routers (Switch)
    leave pads out of routing, CLSR out of its budget."""

    def __post_init__(self) -> None:
        if self.src.dim() != 1 or self.src.shape != self.tgt.shape:
            raise ValueError(f"src and tgt must both be (B,), got {tuple(self.src.shape)} and {tuple(self.tgt.shape)}")
        if self.src.dtype != torch.long or self.tgt.dtype != torch.long:
            raise TypeError(f"language ids must be torch.long, got {self.src.dtype} and {self.tgt.dtype}")

    @classmethod
    def single(cls, src: int, tgt: int, batch_size: int, device: torch.device | str | None = None) -> LangContext:
        """A one-direction batch of ``batch_size`` rows (fast path known without a device sync)."""
        ctx = cls(
            torch.full((batch_size,), src, dtype=torch.long, device=device),
            torch.full((batch_size,), tgt, dtype=torch.long, device=device),
        )
        if batch_size > 0:  # pre-fill the cached properties: no GPU sync later
            ctx.__dict__["uniform_src"] = src
            ctx.__dict__["uniform_tgt"] = tgt
        return ctx

    def __len__(self) -> int:
        return self.src.numel()

    @cached_property
    def uniform_src(self) -> int | None:
        """The source id if every row shares it, else ``None``."""
        return _uniform(self.src)

    @cached_property
    def uniform_tgt(self) -> int | None:
        """The target id if every row shares it, else ``None``."""
        return _uniform(self.tgt)

    def src_groups(self) -> list[tuple[int, Tensor]]:
        """``[(src id, rows)]``: the rows of each source language."""
        return group_rows(self.src)

    def tgt_groups(self) -> list[tuple[int, Tensor]]:
        """``[(tgt id, rows)]``: the rows of each target language."""
        return group_rows(self.tgt)

    def with_(self, **changes: Any) -> LangContext:
        """This context with ``route=``/``progress=`` replaced (the cached ``uniform_*`` answers are kept)."""
        out = replace(self, **changes)
        for name in ("uniform_src", "uniform_tgt"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name]
        return out

    def _keep_uniform(self, out: LangContext) -> LangContext:
        """``out`` (rows of this context) with this context's known single ids: no device sync to find them."""
        if len(out) > 0:
            for name in ("uniform_src", "uniform_tgt"):
                if self.__dict__.get(name) is not None:
                    out.__dict__[name] = self.__dict__[name]
        return out

    def index_select(self, idx: Tensor) -> LangContext:
        """Rows ``idx`` in that order (beam reordering, batch sub-selection)."""
        out = LangContext(self.src.index_select(0, idx), self.tgt.index_select(0, idx), self.route, self.progress)
        return self._keep_uniform(out)

    def repeat_interleave(self, k: int) -> LangContext:
        """Each row repeated ``k`` times in place: ``[a, b] -> [a, a, b, b]`` (beams of a sentence)."""
        out = LangContext(self.src.repeat_interleave(k), self.tgt.repeat_interleave(k), self.route, self.progress)
        return self._keep_uniform(out)

    def take_every(self, k: int) -> LangContext:
        """Rows ``0, k, 2k, …``: one row per sentence of a batch of ``k`` beams each (undoes ``repeat_interleave``)."""
        return self._keep_uniform(LangContext(self.src[::k], self.tgt[::k], self.route, self.progress))

    def to(self, device: torch.device | str) -> LangContext:
        return LangContext(self.src.to(device), self.tgt.to(device), self.route, self.progress)
