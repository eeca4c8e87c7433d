"""Rows of a batch laid out in tiles of one language each: the layout of a grouped computation (`models/ls/grouped.py`).

A language-specific module applies language ``l``'s weights to the rows of ``l``. Calling each language's module on
its rows gives every update new tensor shapes (the sizes of the language groups change from batch to batch) and one
operation per language. Instead, the ``B`` rows are laid out in ``n`` tiles of ``r`` rows, each tile holding rows of
one language only (in batch order), so that language ``l``'s weights apply to a tile as one slice of a batched
matmul over all tiles at once:

    tiles(l) = ceil(c_l / r)            c_l: the rows of language l
    n = floor((B + L (r - 1)) / r)      >= sum_l tiles(l) for any counts: the layout's size depends on B and L only
    r = ceil(2 sqrt(B / L))             at most L (r - 1) slots unused (~ 2 sqrt(B L): 19% of 680 rows, L = 9)

Slots no row fills read row 0 (any real row does: nothing reads their outputs back, so they get no gradient) and
tiles past the last used one belong to language ``L - 1``. Everything is computed on the device from the ids with
fixed-shape operations (a one-hot count, a cumulative sum, a scatter): no host-device synchronisation, no shape
that depends on the data, so the set of shapes a model sees is the set of its batch shapes.

**On a CPU** the rows are instead sorted by language into segments of their exact sizes (:attr:`Tiles.segments`,
found on the host), and each language's weights apply to its segment: a CPU has no per-shape cost, and copying each
tile's weights (``n`` copies of every matrix per update, and their gradients) costs it several times the matmuls
(LSL's update 9x naive's at ``default_gpu``'s size). ``torch.compile`` always gets tiles; :data:`CPU_LAYOUT` set to
``"tiles"`` gives a CPU the GPU's layout (the tests that guard it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

CPU_LAYOUT: Literal["segments", "tiles"] = "segments"
"""The layout of a CPU's grouped computations (module docstring)."""


def rows_per_tile(rows: int, languages: int) -> int:
    """``r = ceil(2 sqrt(B / L))`` (module docstring), at least 1."""
    return max(1, math.ceil(2 * math.sqrt(rows / max(languages, 1))))


@dataclass(frozen=True, eq=False)
class Tiles:
    """``B`` rows in ``count`` tiles of ``rows`` rows: ``fill (count * rows,)`` the row in each slot, ``slot (B,)``
    each row's slot, ``group (count,)`` the language of each tile (``None``: tile ``g`` is language ``g``);
    ``single``: every row is of this one language, in place (:meth:`one`); ``segments``: the rows sorted by language
    instead, ``(language, rows)`` of each segment in order (``fill``: the sorted rows, ``slot``: each row's place)."""

    fill: Tensor | None
    slot: Tensor | None
    group: Tensor | None
    count: int
    rows: int
    single: int | None = None
    segments: tuple[tuple[int, int], ...] | None = None

    @classmethod
    def of(cls, ids: Tensor, languages: int) -> Tiles:
        """The layout of rows with language ids ``ids (B,)`` (each ``< languages``)."""
        b, r = ids.numel(), rows_per_tile(ids.numel(), languages)
        n = (b + languages * (r - 1)) // r
        member = ids.unsqueeze(1) == torch.arange(languages, device=ids.device)  # (B, L)
        rank = (member.cumsum(0) * member).sum(1) - 1  # (B,) position among the rows of its language
        per = (member.sum(0) + (r - 1)).div(r, rounding_mode="floor")  # (L,) tiles of each language
        end = per.cumsum(0)  # (L,) one past each language's last tile
        slot = (end - per).index_select(0, ids) * r + rank  # (B,)
        fill = torch.zeros(n * r, dtype=torch.long, device=ids.device).scatter(
            0, slot, torch.arange(b, device=ids.device)
        )
        group = torch.searchsorted(end, torch.arange(n, device=ids.device), right=True).clamp_(max=languages - 1)
        return cls(fill, slot, group, n, r)

    @classmethod
    def identity(cls, groups: int, rows: int) -> Tiles:
        """``groups`` tiles of ``rows`` rows already in place, tile ``g`` language ``g`` (e.g. experts' buffers)."""
        return cls(None, None, None, groups, rows)

    @classmethod
    def sorted(cls, order: Tensor, inverse: Tensor, segments: tuple[tuple[int, int], ...]) -> Tiles:
        """Rows in the order ``order`` (each row's place: ``inverse``), ``segments`` of one language each."""
        return cls(order, inverse, None, len(segments), 0, segments=segments)

    @classmethod
    def one(cls, lang: int) -> Tiles:
        """Rows of language ``lang`` only, in place: a grouped module computes what ``lang``'s own would."""
        return cls(None, None, None, 1, 0, lang)

    def tile(self, x: Tensor) -> Tensor:
        """``x (B, …)`` -> ``(count * rows, …)``."""
        return x if self.fill is None else x.index_select(0, self.fill)

    def untile(self, y: Tensor) -> Tensor:
        """``y (count * rows, …)`` -> each row's own ``(B, …)``."""
        return y if self.slot is None else y.index_select(0, self.slot)

    def per_tile(self, table: Tensor) -> Tensor:
        """``table (L, …)`` -> each tile's entry ``(count, …)``."""
        return table if self.group is None else table.index_select(0, self.group)
