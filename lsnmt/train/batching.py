"""Token-based batching and the epoch schedule (fairseq ``--max-tokens`` semantics).

**Batch size.** A batch of sentences ``b`` costs

    cost(b) = |b| * max_{i in b} max(|x_i| + 1, |y_i| + 1)   <= max_tokens

(lengths count the EOS the collater appends: fairseq's ``num_tokens`` with
``batch_by_size``). Sentences are filled greedily in length order, so padding
stays small. A sentence that alone exceeds ``max_tokens`` or the position
limits is dropped (and counted; fairseq raises unless
``--skip-invalid-size-inputs-valid-test``).

**Fixed shapes** (``train.bucket_width`` w > 0; sockeye's length buckets, ``--bucket-width``): a sentence's bucket
is its cost length rounded up, ``L = w * ceil(max(|x| + 1, |y| + 1) / w)``; every batch holds sentences of one
bucket (and one direction with homogeneous batches) and exactly ``B_L = max(1, max_tokens // L)`` of them, and the
collater pads both sides to ``L`` (``train.bucket_width`` is its ``pad_to``). A bucket's last ``r < B_L`` sentences
are completed to the next power of two ``>= r`` by repeating sentences of the same bucket, drawn with the epoch's
generator (sockeye's ``fill_up="replicate"``, which fills to ``B_L``; the power of two is our choice: fewer repeats,
still a known set of shapes). A run then sees at most ``(buckets) x (1 + log2 B_L)`` batch shapes, each ``(B, L)``
on both sides, so that a compiled step records a few CUDA graphs and replays them (``train.compile``).

**Order.** Each epoch ``e`` uses its own generator seeded with ``(seed, e)``.
As fairseq's ``LanguagePairDataset.ordered_indices``: a random permutation,
then a stable sort by source length, ties broken by target length, then by the
random order. The sorted bucket is the direction (``batching: direction``,
homogeneous batches) or the whole pool (``batching: mixed``).

**Schedule.** The sampled epoch (``lsnmt.data.sample``) already holds direction
``l`` in proportion ``p_l``; the schedule spreads each direction evenly over
the epoch. With homogeneous batches, direction ``l``'s batches are shuffled and
batch ``k`` (``n_k`` sentences, ``c_k`` sentences before it) gets the key

    t_k = (c_k + u_k n_k) / N_l,   u_k ~ U(0, 1)

(its jittered position in the direction, as a fraction of the epoch); all
batches are sorted by key. After any prefix of the epoch each direction has thus
used the same fraction of its sentences, i.e. directions are visited in
proportion to their sampled sizes. Mixed batches are simply shuffled.

**Per-epoch draw.** With a ``sampling.json`` of ``redraw: epoch`` beside the shards (the
``sample`` stage wrote every line once), epoch ``e`` is not the shards themselves but the
multiset :func:`lsnmt.data.sample.epoch_draw` draws for ``e`` in every direction (m_l
lines, re-drawn each epoch as fairseq does); the random order and the batches above are
then built over that multiset.

**Stream.** Epochs follow each other as one endless stream of global batches;
the cursor ``(epoch, offset)`` is the resumable state. An optimizer step takes
the next ``world_size * update_freq`` global batches and rank ``r`` keeps the
``update_freq`` of them at ``[r * update_freq, (r + 1) * update_freq)``: disjoint
shards whose union is what one process with ``update_freq * world_size`` sees.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lsnmt.data.corpus import Direction
from lsnmt.data.sample import epoch_draw
from lsnmt.io import DataError
from lsnmt.train.config import TrainConfig

log = logging.getLogger(__name__)

Bounds = np.ndarray  # (K, 2) int64: [start, stop) of each batch in an order array


@dataclass(frozen=True, eq=False)
class Pool:
    """The sentences of several directions, numbered ``0 … N-1`` direction after direction."""

    dirs: Sequence[Direction]
    offsets: np.ndarray  # (D + 1,) first global id of each direction
    src_sizes: np.ndarray  # (N,) with EOS
    tgt_sizes: np.ndarray  # (N,) with EOS
    keep: np.ndarray  # (N,) bool: within max_tokens and the position limits
    sampling: Mapping[str, Any] | None = None
    """``sampling.json`` of a ``redraw: epoch`` sample stage: each epoch draws its lines anew; ``None``: every
    line once per epoch."""

    @classmethod
    def build(cls, dirs: Sequence[Direction], cfg: TrainConfig, sampling: Mapping[str, Any] | None = None) -> Pool:
        src = np.concatenate([d.src_sizes for d in dirs]) if dirs else np.zeros(0, np.int64)
        tgt = np.concatenate([d.tgt_sizes for d in dirs]) if dirs else np.zeros(0, np.int64)
        keep = ((src <= cfg.max_source_positions) & (tgt <= cfg.max_target_positions)
                & (np.maximum(src, tgt) <= cfg.max_tokens))
        offsets = np.cumsum([0] + [len(d) for d in dirs])
        if sampling is not None and sampling.get("redraw") != "epoch":
            sampling = None
        for d in dirs if sampling is not None else ():
            n = sampling["directions"][d.name]["n"]
            if n != len(d):
                raise DataError(f"sampling.json has {n} lines of {d.name}, its shards {len(d)}: encode again")
        pool = cls(dirs, offsets, src, tgt, keep, sampling)
        if (~keep).any():
            log.warning("skipping %d of %d sentences longer than max_tokens=%d or the position limits (%d, %d)",
                        int((~keep).sum()), len(keep), cfg.max_tokens, cfg.max_source_positions,
                        cfg.max_target_positions)
        return pool

    @property
    def direction_of(self) -> np.ndarray:
        """``(N,)`` direction index of every sentence."""
        return np.repeat(np.arange(len(self.dirs)), np.diff(self.offsets))

    def epoch_ids(self, epoch: int) -> np.ndarray:
        """Global ids of epoch ``epoch``'s sentences that fit the limits, with repeats (up-sampling)."""
        if self.sampling is None:
            return np.flatnonzero(self.keep)
        ids = np.concatenate([off + epoch_draw(self.sampling, d.name, epoch)
                              for d, off in zip(self.dirs, self.offsets[:-1].tolist(), strict=True)])
        return ids[self.keep[ids]]

    def rows(self, gids: np.ndarray) -> np.ndarray:
        """``(n, 2)`` (direction index, sentence index) of global ids ``gids``."""
        d = np.searchsorted(self.offsets, gids, side="right") - 1
        return np.stack([d, gids - self.offsets[d]], axis=1)


def batch_bounds(num_tokens: np.ndarray, groups: np.ndarray | None, max_tokens: int) -> Bounds:
    """Greedy fairseq ``batch_by_size`` over an ordered list; a batch never spans two ``groups``."""
    sizes, grp = num_tokens.tolist(), None if groups is None else groups.tolist()
    bounds, start, longest = [], 0, 0
    for i, n in enumerate(sizes):
        new_longest = max(longest, n)
        full = (i - start + 1) * new_longest > max_tokens
        if i > start and (full or (grp is not None and grp[i] != grp[start])):
            bounds.append((start, i))
            start, new_longest = i, n
        longest = new_longest
    if len(sizes) > start:
        bounds.append((start, len(sizes)))
    return np.asarray(bounds, dtype=np.int64).reshape(-1, 2)


def bucket_batches(order: np.ndarray, num_tokens: np.ndarray, groups: np.ndarray, max_tokens: int, width: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, Bounds]:
    """Fixed-shape batches (module docstring, "Fixed shapes") over the length-ordered ``order`` with its
    ``num_tokens`` and ``groups``: the order with the repeated sentences in place, and the batches' bounds."""
    lengths = -(-num_tokens // width) * width  # (N,) bucket length L
    keys = groups.astype(np.int64) * (int(lengths.max(initial=0)) + 1) + lengths
    parts, bounds, at = [], [], 0
    for key in np.unique(keys).tolist():
        ids = order[keys == key]
        size = max(1, max_tokens // int(lengths[keys == key][0]))
        rest = len(ids) % size
        if rest:
            fill = min(size, 1 << (rest - 1).bit_length())  # the next power of two >= rest
            ids = np.concatenate([ids, rng.choice(ids, fill - rest)])
        starts = np.arange(0, len(ids), size)
        bounds.append(np.stack([starts, np.minimum(starts + size, len(ids))], axis=1) + at)
        parts.append(ids)
        at += len(ids)
    if not parts:
        return order[:0], np.zeros((0, 2), np.int64)
    return np.concatenate(parts), np.concatenate(bounds).astype(np.int64)


def _interleave(bounds: Bounds, groups: np.ndarray, rng: np.random.Generator) -> Bounds:
    """Homogeneous batches ordered by the jittered key ``(c_k + u_k n_k) / N_l`` of their direction."""
    keys = np.empty(len(bounds))
    for g in np.unique(groups):
        mine = rng.permutation(np.flatnonzero(groups == g))
        n = (bounds[mine, 1] - bounds[mine, 0]).astype(np.float64)
        before = np.cumsum(n) - n
        keys[mine] = (before + rng.random(len(mine)) * n) / n.sum()
    return bounds[np.argsort(keys, kind="stable")]


def epoch_plan(pool: Pool, cfg: TrainConfig, seed: int, epoch: int) -> tuple[np.ndarray, Bounds]:
    """Epoch ``epoch``'s global ids in length order and its batches in schedule order."""
    rng = np.random.default_rng([seed, epoch])
    perm = rng.permutation(pool.epoch_ids(epoch))
    homogeneous = cfg.batching == "direction"
    groups = pool.direction_of[perm] if homogeneous else np.zeros(len(perm), np.int64)
    order = perm[np.lexsort((pool.tgt_sizes[perm], pool.src_sizes[perm], groups))]
    num_tokens = np.maximum(pool.src_sizes[order], pool.tgt_sizes[order])
    ordered_groups = pool.direction_of[order] if homogeneous else None
    if cfg.bucket_width > 0:
        grouped = ordered_groups if ordered_groups is not None else np.zeros(len(order), np.int64)
        order, bounds = bucket_batches(order, num_tokens, grouped, cfg.max_tokens, cfg.bucket_width, rng)
    else:
        bounds = batch_bounds(num_tokens, ordered_groups, cfg.max_tokens)
    if homogeneous:
        bounds = _interleave(bounds, pool.direction_of[order[bounds[:, 0]]], rng)
    else:
        bounds = bounds[rng.permutation(len(bounds))]
    return order, bounds


def eval_batches(direction: Direction, max_tokens: int, max_sentences: int | None = None) -> list[np.ndarray]:
    """Deterministic batches of one validation direction: ``(n, 2)`` rows with direction index 0.

    ``max_sentences``: use only the first N sentences of the direction (quick runs).
    """
    src, tgt = direction.src_sizes[:max_sentences], direction.tgt_sizes[:max_sentences]
    order = np.lexsort((tgt, src))
    fits = np.maximum(src[order], tgt[order]) <= max_tokens
    if not fits.all():
        log.warning("validation %s: skipping %d sentences longer than max_tokens=%d", direction.name,
                    int((~fits).sum()), max_tokens)
    order = order[fits]
    bounds = batch_bounds(np.maximum(src[order], tgt[order]), None, max_tokens)
    return [np.stack([np.zeros(b - a, np.int64), order[a:b]], axis=1) for a, b in bounds.tolist()]


@dataclass(frozen=True)
class GlobalBatch:
    epoch: int
    index: int
    """Position in the epoch's schedule: ``(epoch, index)`` names the batch (and seeds its dropout)."""
    rows: np.ndarray  # (n, 2) direction index, sentence index


class BatchStream:
    """The endless, seeded sequence of global batches; ``state_dict()`` is its cursor."""

    def __init__(self, pool: Pool, cfg: TrainConfig, seed: int) -> None:
        if not pool.keep.any():
            raise DataError("no training sentence fits max_tokens and the position limits")
        self.pool, self.cfg, self.seed = pool, cfg, seed
        self.epoch, self.offset = 0, 0
        self._plan: tuple[int, np.ndarray, Bounds] | None = None

    def _current(self) -> tuple[np.ndarray, Bounds]:
        if self._plan is None or self._plan[0] != self.epoch:
            self._plan = (self.epoch, *epoch_plan(self.pool, self.cfg, self.seed, self.epoch))
        return self._plan[1], self._plan[2]

    def take(self, n: int) -> list[GlobalBatch]:
        """The next ``n`` global batches (crossing epoch boundaries); advances the cursor."""
        out = []
        while len(out) < n:
            order, bounds = self._current()
            if self.offset >= len(bounds):
                self.epoch, self.offset = self.epoch + 1, 0
                continue
            a, b = bounds[self.offset]
            out.append(GlobalBatch(self.epoch, self.offset, self.pool.rows(order[a:b])))
            self.offset += 1
        return out

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "offset": self.offset}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.epoch, self.offset = int(state["epoch"]), int(state["offset"])


def rank_share(batches: list[GlobalBatch], rank: int, update_freq: int) -> list[GlobalBatch]:
    """Rank ``rank``'s disjoint share of one optimizer step's global batches."""
    return batches[rank * update_freq:(rank + 1) * update_freq]
