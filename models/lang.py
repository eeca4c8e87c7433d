"""Per-sentence language ids, passed explicitly through every forward.

A :class:`LangContext` carries the source and target language id of each row of a batch (ids index the
experiment's ``data.languages``) twice: as LongTensors on the batch's device, which modules index their
per-language weights with, and as host arrays (:class:`HostIds`), which say how the batch divides into languages
without reading the device. Batches may mix directions.

**No host-device synchronisation.** Everything a module asks of the languages' layout, whether one language
covers the batch (``uniform_*``) and which rows each language has (:meth:`LangContext.groups`), is answered from
the host arrays, which the batch's builder knows before the forward (``lsnmt.data.corpus.collate``,
:meth:`LangContext.single`, the decoders' batches); row indices reach the device as non-blocking copies, once per
context and side. Contexts derived from one (rows selected, beams repeated, a route set) carry their host ids
along. A context built from device tensors alone reads them once, when first asked (one synchronisation, at the
caller's, never inside a method's forward: the project builds every context from the host).

Per-language sub-batches (:class:`RowGroups`) are formed by one stable sort of the rows by language: each
language's rows keep their batch order, ``split`` gathers once and slices, ``merge`` concatenates and gathers back,
so a mixed batch gives row by row what each language's rows give on their own (tools, decoding). A training forward
instead lays the rows out in tiles of one language each (:meth:`LangContext.tiled`, ``models/tiles.py``), found on
the device with fixed shapes, and applies every language's weights at once (``models/ls/grouped.py``).

Nothing here is a ``functools.cached_property``: on Python 3.11 it takes an ``RLock``, which ``torch.compile``
cannot trace (a graph break per property read); values are cached in the instance's ``__dict__`` by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

import models.tiles as tiles_module
from models.tiles import Tiles

Side = Literal["src", "tgt"]


def group_rows(ids: Tensor) -> list[tuple[int, Tensor]]:
    """Split rows by id: ``[(id, rows)]`` in increasing id order, ``rows`` ascending (LongTensor).

    Reads ``ids`` (a host-device synchronisation on a GPU): for tools and tests; a forward uses
    :meth:`LangContext.groups`, which reads the host ids instead.
    """
    values = torch.unique(ids)
    return [(int(v), (ids == v).nonzero().squeeze(1)) for v in values]


def to_device(a: np.ndarray, device: torch.device) -> Tensor:
    """A host int64 array as a LongTensor on ``device``, copied without waiting for the device's queue."""
    return host_copy(torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)), device)


def host_copy(t: Tensor, device: torch.device) -> Tensor:
    """CPU tensor ``t`` on ``device`` without blocking the host: to CUDA through page-locked memory (a copy from
    pageable memory may wait for the stream's queued work, CUDA runtime API, "API synchronization behavior"; the
    caching host allocator keeps the pinned buffer until the copy is done). ``t`` itself where it already is; from
    a device, an ordinary (waiting) copy."""
    if t.device.type != "cpu":
        return t.to(device)
    if device.type == "cuda" and not t.is_pinned():
        t = t.pin_memory()
    return t.to(device, non_blocking=True)


@dataclass(frozen=True, eq=False)
class HostIds:
    """The language ids of a batch's rows on the host: ``src``, ``tgt`` int64 arrays of shape ``(B,)``."""

    src: np.ndarray
    tgt: np.ndarray

    def side(self, side: Side) -> np.ndarray:
        return self.src if side == "src" else self.tgt

    def take(self, rows: np.ndarray | slice) -> HostIds:
        return HostIds(self.src[rows], self.tgt[rows])

    def uniform(self, side: Side) -> int | None:
        ids = self.side(side)
        return int(ids[0]) if len(ids) and bool((ids == ids[0]).all()) else None


class RowGroups:
    """The rows of a batch grouped by one side's language, found on the host.

    ``ids``: the languages present, increasing; ``counts``: rows of each; ``host_order`` (host) / ``order``
    (device): the rows sorted by language, stably; ``inverse``: each row's position in ``order``.
    """

    def __init__(self, ids: np.ndarray, device: torch.device) -> None:
        self.host_order = np.argsort(ids, kind="stable")
        values, counts = np.unique(ids[self.host_order], return_counts=True)
        self.ids, self.counts = tuple(int(v) for v in values), tuple(int(c) for c in counts)
        self.device = device

    @property
    def single(self) -> bool:
        """One language covers every row (no gather needed)."""
        return len(self.ids) == 1

    @property
    def order(self) -> Tensor:
        if "_order" not in self.__dict__:
            self._order = to_device(self.host_order, self.device)
        return self._order

    @property
    def inverse(self) -> Tensor:
        if "_inverse" not in self.__dict__:
            inverse = np.empty_like(self.host_order)
            inverse[self.host_order] = np.arange(len(self.host_order))
            self._inverse = to_device(inverse, self.device)
        return self._inverse

    def host_rows(self) -> list[np.ndarray]:
        """Each language's rows (ascending), host arrays."""
        return np.split(self.host_order, np.cumsum(self.counts)[:-1])

    def rows(self) -> tuple[Tensor, ...]:
        """Each language's rows (ascending), device LongTensors."""
        return self.order.split(self.counts)

    def split(self, x: Tensor) -> tuple[Tensor, ...]:
        """``x (B, …)`` -> each language's rows ``(n_l, …)``, in :attr:`ids` order."""
        return (x,) if self.single else x.index_select(0, self.order).split(self.counts)

    def merge(self, parts: Sequence[Tensor]) -> Tensor:
        """Inverse of :meth:`split`: the parts back in batch order ``(B, …)``."""
        return parts[0] if self.single else torch.cat(list(parts)).index_select(0, self.inverse)


@dataclass(frozen=True, eq=False)
class LangContext:
    """Source and target language id of each sentence of a batch.

    ``src`` and ``tgt`` are LongTensors of shape ``(B,)`` on the batch's device; ``host``, the same ids on the
    host (module docstring; ``None``: read from ``src``/``tgt`` when first needed). Instances are immutable;
    reordering returns a new context.

    Batch-level fields reach modules explicitly through every forward (never through attributes set on a
    module from outside):

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
    host: HostIds | None = field(default=None, repr=False)
    """The ids on the host (``None``: unknown, read from the device when first needed)."""
    tiling: Tiles | None = field(default=None, repr=False)
    """Set on the context of rows laid out in tiles (:meth:`tiled`): which language each tile is, what the grouped
    modules inside a language-specific module read (``models/ls/grouped.py``)."""

    def __post_init__(self) -> None:
        if self.src.dim() != 1 or self.src.shape != self.tgt.shape:
            raise ValueError(f"src and tgt must both be (B,), got {tuple(self.src.shape)} and {tuple(self.tgt.shape)}")
        if self.src.dtype != torch.long or self.tgt.dtype != torch.long:
            raise TypeError(f"language ids must be torch.long, got {self.src.dtype} and {self.tgt.dtype}")
        if self.host is not None and len(self.host.src) != len(self.src):
            raise ValueError(f"{len(self.host.src)} host ids for {len(self.src)} rows")
        self.__dict__["_tiles"] = {}  # tiled(): shared with every context with_() derives, found once for all
        self.__dict__["_memo"] = {}  # memo(): likewise

    @classmethod
    def from_ids(
        cls, src: Sequence[int] | np.ndarray, tgt: Sequence[int] | np.ndarray, device: torch.device | str | None = None
    ) -> LangContext:
        """A batch whose rows' ids are known on the host (a collated batch): no device read, ever."""
        host = HostIds(np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64))
        dev = torch.device(device or "cpu")
        return cls(to_device(host.src, dev), to_device(host.tgt, dev), host=host)

    @classmethod
    def single(cls, src: int, tgt: int, batch_size: int, device: torch.device | str | None = None) -> LangContext:
        """A one-direction batch of ``batch_size`` rows."""
        host = HostIds(np.full(batch_size, src, dtype=np.int64), np.full(batch_size, tgt, dtype=np.int64))
        return cls(
            torch.full((batch_size,), src, dtype=torch.long, device=device),
            torch.full((batch_size,), tgt, dtype=torch.long, device=device),
            host=host,
        )

    def __len__(self) -> int:
        return self.src.numel()

    @property
    def ids(self) -> HostIds:
        """The host ids: ``host``, or read from the device once (a synchronisation: module docstring)."""
        if self.host is not None:
            return self.host
        if "ids" not in self.__dict__:
            self.__dict__["ids"] = HostIds(self.src.cpu().numpy(), self.tgt.cpu().numpy())
        return self.__dict__["ids"]

    @property
    def uniform_src(self) -> int | None:
        """The source id if every row shares it, else ``None`` (also for an empty batch)."""
        return self.uniform("src")

    @property
    def uniform_tgt(self) -> int | None:
        """The target id if every row shares it, else ``None`` (also for an empty batch)."""
        return self.uniform("tgt")

    def uniform(self, side: Side) -> int | None:
        """The ``side`` id if every row shares it, else ``None`` (found once, on the host). ``None`` while
        ``torch.compile`` traces: the modules take their general path, valid for any batch, and nothing on the
        host is traced (a host array read there is a graph break)."""
        if torch.compiler.is_compiling():
            return None
        name = f"uniform_{side}"
        if name not in self.__dict__:
            self.__dict__[name] = self.ids.uniform(side)
        return self.__dict__[name]

    def tiled(self, side: Side, languages: int) -> LangContext:
        """These rows laid out in tiles of one ``side`` language each (:class:`~models.tiles.Tiles`, ``languages``
        ids; on a CPU, in segments: ``models/tiles.py``): the context of the laid-out rows (this one's route and
        progress, no padding), its ``tiling`` set. The layout is found once per context, side and number of
        languages and shared with the contexts :meth:`with_` derives."""
        cache: dict[tuple[str, int], tuple[Tiles, Tensor, Tensor]] = self.__dict__["_tiles"]
        key = (side, languages)
        if key not in cache:
            cpu = self.src.device.type == "cpu" and not torch.compiler.is_compiling()
            if cpu and tiles_module.CPU_LAYOUT == "segments":
                g = self.groups(side)  # a CPU: segments of the exact sizes (models/tiles.py)
                tiles = Tiles.sorted(g.order, g.inverse, tuple(zip(g.ids, g.counts, strict=True)))
            else:
                tiles = Tiles.of(self.src if side == "src" else self.tgt, languages)
            cache[key] = tiles, tiles.tile(self.src), tiles.tile(self.tgt)
        tiles, src, tgt = cache[key]
        return LangContext(src, tgt, self.route, self.progress, tiling=tiles)

    def memo(self, key: Hashable, make: Callable[[], Tensor]) -> Tensor:
        """``make()``, made once per context and ``key`` and shared with the contexts :meth:`with_` derives: a value
        of the batch's rows that every module of a kind computes alike (e.g. the rows of a keyed table,
        ``models/ls/keys.py``), so that a model computes it once per forward, not once per module."""
        cache: dict[Hashable, Tensor] = self.__dict__["_memo"]
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def groups(self, side: Side) -> RowGroups:
        """The rows of each ``side`` language (:class:`RowGroups`), found once per context and side on the host
        and shared with the contexts :meth:`with_` derives."""
        cache: dict[str, RowGroups] = self.__dict__.setdefault("_groups", {})
        if side not in cache:
            cache[side] = RowGroups(self.ids.side(side), self.src.device)
        return cache[side]

    def split(self, side: Side) -> list[LangContext]:
        """The contexts of each ``side`` language's rows, in :meth:`groups` order (``padding`` split alike)."""
        g = self.groups(side)
        if g.single:
            return [self]
        pads = g.split(self.padding) if self.padding is not None else [None] * len(g.ids)
        ordered = self._derived(
            self.src.index_select(0, g.order), self.tgt.index_select(0, g.order), self._host_take(g.host_order)
        )
        ends = np.cumsum(g.counts)
        return [
            ordered._slice(int(b) - n, int(b)).with_(padding=pad)
            for n, b, pad in zip(g.counts, ends, pads, strict=True)
        ]

    def map(self, side: Side, fn: Callable[..., Tensor], x: Tensor, *batch_args: Any) -> Tensor:
        """``fn(lang, langs_l, x_l, *args_l)`` on each ``side`` language's rows, put back in batch order.

        ``batch_args``: batch-major tensors (e.g. padding masks) split like ``x``; anything else is passed as is.
        One call for a one-language batch; an empty batch gives ``zeros_like(x)``.
        """
        g = self.groups(side)
        if not g.ids:
            return torch.zeros_like(x)
        if g.single:
            return fn(g.ids[0], self, x, *batch_args)
        parts = [g.split(a) if isinstance(a, Tensor) else [a] * len(g.ids) for a in (x, *batch_args)]
        return g.merge([fn(lang, sub, *args) for lang, sub, *args in zip(g.ids, self.split(side), *parts, strict=True)])

    def src_groups(self) -> list[tuple[int, Tensor]]:
        """``[(src id, rows)]``: the rows of each source language."""
        g = self.groups("src")
        return list(zip(g.ids, g.rows(), strict=True))

    def tgt_groups(self) -> list[tuple[int, Tensor]]:
        """``[(tgt id, rows)]``: the rows of each target language."""
        g = self.groups("tgt")
        return list(zip(g.ids, g.rows(), strict=True))

    def with_(self, **changes: Any) -> LangContext:
        """This context with ``route=``/``progress=``/``padding=`` replaced (what is known of its rows is kept)."""
        out = replace(self, **changes)
        for name in ("ids", "uniform_src", "uniform_tgt", "_groups", "_tiles", "_memo"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name]
        return out

    def _known_host(self) -> HostIds | None:
        return self.host if self.host is not None else self.__dict__.get("ids")

    def _host_take(self, rows: np.ndarray | slice | None) -> HostIds | None:
        known = self._known_host()
        return None if known is None or rows is None else known.take(rows)

    def _derived(self, src: Tensor, tgt: Tensor, host: HostIds | None) -> LangContext:
        """A context of some of these rows (same route and progress); one direction stays known as such, and so does
        a tiling of one language (the rows of a tiled layout are not these)."""
        single = self.tiling is not None and self.tiling.single is not None
        out = LangContext(src, tgt, self.route, self.progress, host=host, tiling=self.tiling if single else None)
        if host is None and len(out) > 0:
            for name in ("uniform_src", "uniform_tgt"):
                if self.__dict__.get(name) is not None:
                    out.__dict__[name] = self.__dict__[name]
        return out

    def _slice(self, a: int, b: int) -> LangContext:
        return self._derived(self.src[a:b], self.tgt[a:b], self._host_take(slice(a, b)))

    def index_select(self, idx: Tensor, host_idx: np.ndarray | None = None) -> LangContext:
        """Rows ``idx`` in that order (beam reordering, batch sub-selection); ``host_idx``: the same indices on
        the host, so that the result knows its ids without a device read."""
        return self._derived(self.src.index_select(0, idx), self.tgt.index_select(0, idx), self._host_take(host_idx))

    def repeat_interleave(self, k: int) -> LangContext:
        """Each row repeated ``k`` times in place: ``[a, b] -> [a, a, b, b]`` (beams of a sentence)."""
        known = self._known_host()
        host = None if known is None else HostIds(known.src.repeat(k), known.tgt.repeat(k))
        return self._derived(self.src.repeat_interleave(k), self.tgt.repeat_interleave(k), host)

    def take_every(self, k: int) -> LangContext:
        """Rows ``0, k, 2k, …``: one row per sentence of a batch of ``k`` beams each (undoes ``repeat_interleave``)."""
        return self._derived(self.src[::k], self.tgt[::k], self._host_take(slice(None, None, k)))

    def to(self, device: torch.device | str) -> LangContext:
        """This context on ``device`` (non-blocking copies; the host ids and what they gave are kept). Ids still on
        the CPU become the host ids if none are known: reading them waits for no device."""
        dev = torch.device(device)
        host = self._known_host()
        if host is None and self.src.device.type == "cpu":
            host = HostIds(self.src.numpy().copy(), self.tgt.numpy().copy())
        out = replace(
            self,
            src=host_copy(self.src, dev),
            tgt=host_copy(self.tgt, dev),
            padding=None if self.padding is None else host_copy(self.padding, dev),
            host=host,
        )
        for name in ("uniform_src", "uniform_tgt"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name]
        return out
