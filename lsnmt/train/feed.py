"""The translation trainer's data stream: each update's batches, collated ahead on a background thread.

An update takes the next ``world_size * update_freq`` global batches of the :class:`BatchStream`; this rank
keeps its ``update_freq`` (:func:`rank_share`) and collates them. The update's token count ``N`` (non-pad
target tokens, EOS included, of all ranks' batches: the gradient's normaliser, :mod:`lsnmt.train.step`) comes
from the pool's sentence lengths, so no rank has to ask the others (and no device value is read) for it.

A :class:`~lsnmt.train.prefetch.Prefetcher` builds the next ``depth`` updates while the current one trains;
:meth:`Feed.state_dict` is the stream's cursor after the consumed updates, so resuming is exact. On CUDA the
collated tensors are pinned, so that their copy to the GPU does not block.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from lsnmt.data.corpus import Direction, Sample, Vocab, collate
from lsnmt.train.batching import BatchStream, GlobalBatch, Pool, rank_share
from lsnmt.train.dist import Dist
from lsnmt.train.prefetch import Prefetcher


@dataclass(frozen=True, eq=False)
class StepBatches:
    """One update's share of this rank."""

    batches: list[GlobalBatch]
    """This rank's micro-batches (``(epoch, index)`` seeds each one's dropout)."""
    samples: list[Sample]
    """The same, collated."""
    ntokens: int
    """Target tokens of the whole update, all ranks (``N``)."""
    seeds: list[int]
    """The dropout seed of each micro-batch (:func:`batch_seed`), drawn here rather than on the training thread."""


def batch_seed(seed: int, batch: GlobalBatch) -> int:
    """A 64-bit seed for the dropout of one global batch, from ``(seed, epoch, index)``: the masks do not depend on
    the rank, the number of ranks or where a run was resumed."""
    return int(np.random.SeedSequence([seed, batch.epoch, batch.index]).generate_state(1, np.uint64)[0])


def target_tokens(pool: Pool, batches: list[GlobalBatch]) -> int:
    """Non-pad target tokens (EOS included) of ``batches``, from the pool's lengths."""
    rows = np.concatenate([b.rows for b in batches])  # (n, 2) direction, sentence
    return int(pool.tgt_sizes[pool.offsets[rows[:, 0]] + rows[:, 1]].sum())


def pinned(sample: Sample) -> Sample:
    """``sample`` with its token tensors in page-locked memory (their copy to the GPU then does not block)."""
    return dataclasses.replace(
        sample,
        src_tokens=sample.src_tokens.pin_memory(),
        prev_output_tokens=sample.prev_output_tokens.pin_memory(),
        target=sample.target.pin_memory(),
    )


class Feed:
    """``next()``: the next update's :class:`StepBatches`; ``state_dict()``: the stream cursor after them."""

    def __init__(
        self, stream: BatchStream, dirs: list[Direction], vocab: Vocab, dist: Dist, update_freq: int, depth: int = 2
    ) -> None:
        self.stream, self.dirs, self.vocab, self.dist, self.update_freq = stream, dirs, vocab, dist, update_freq
        self.seed = stream.seed
        self._ahead = Prefetcher(self._produce, stream.state_dict, depth)

    def _produce(self) -> StepBatches:
        everyone = self.stream.take(self.update_freq * self.dist.world_size)
        mine = rank_share(everyone, self.dist.rank, self.update_freq)
        samples = [collate(self.dirs, b.rows, self.vocab, self.stream.cfg.bucket_width) for b in mine]
        if self.dist.device.type == "cuda":
            samples = [pinned(s) for s in samples]
        return StepBatches(
            mine, samples, target_tokens(self.stream.pool, everyone), [batch_seed(self.seed, b) for b in mine]
        )

    def next(self) -> StepBatches:
        return self._ahead.next()

    def state_dict(self) -> dict[str, int]:
        return self._ahead.state_dict()

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Set the cursor (before the first ``next()``)."""
        if self._ahead.started:
            raise RuntimeError("the feed has started prefetching: load its state before the first update")
        self.stream.load_state_dict(state)

    @property
    def epoch(self) -> int:
        """The epoch of the last consumed batch's cursor."""
        return int(self.state_dict()["epoch"])

    def close(self) -> None:
        self._ahead.close()
