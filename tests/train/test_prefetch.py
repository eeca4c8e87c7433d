"""Batches built ahead on a thread: the resumable state is what was consumed, the items come in order, errors reach
the training thread; the translation feed's token count and cursor."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsnmt.data.corpus import Vocab, collate, load_split
from lsnmt.train.batching import BatchStream, Pool
from lsnmt.train.dist import Dist
from lsnmt.train.feed import Feed, target_tokens
from lsnmt.train.prefetch import Prefetcher
from tests.train.helpers import make_bin, tiny_experiment


class Counter:
    """A source whose items are 0, 1, 2, … and whose state is the next item."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.n, self.fail_at = 0, fail_at

    def take(self) -> int:
        if self.n == self.fail_at:
            raise ValueError(f"bad item {self.n}")
        self.n += 1
        return self.n - 1

    def state(self) -> dict[str, int]:
        return {"next": self.n}


def test_state_is_the_consumed_position_not_the_prefetched_one() -> None:
    source = Counter()
    ahead = Prefetcher(source.take, source.state, depth=3)
    assert ahead.state_dict() == {"next": 0}
    assert [ahead.next() for _ in range(2)] == [0, 1]
    deadline = time.monotonic() + 10
    while source.n < 6 and time.monotonic() < deadline:  # the worker fills its queue: 3 waiting, 1 in its hands
        time.sleep(0.01)
    assert source.n == 6 and ahead.state_dict() == {"next": 2}
    assert ahead.next() == 2 and ahead.state_dict() == {"next": 3}
    ahead.close()


def test_depth_zero_builds_on_the_calling_thread() -> None:
    source = Counter()
    ahead = Prefetcher(source.take, source.state, depth=0)
    assert [ahead.next() for _ in range(3)] == [0, 1, 2]
    assert source.n == 3 and ahead.state_dict() == {"next": 3} and not ahead.started


def test_a_worker_error_is_raised_in_the_training_thread_after_the_good_items() -> None:
    source = Counter(fail_at=2)
    ahead = Prefetcher(source.take, source.state, depth=2)
    assert [ahead.next(), ahead.next()] == [0, 1]
    with pytest.raises(ValueError, match="bad item 2"):
        ahead.next()
    ahead.close()


def _stream(bin_dir: Path) -> tuple[BatchStream, list, Vocab]:
    exp, vocab = tiny_experiment(), Vocab.load(bin_dir)
    dirs = load_split(bin_dir, "train", exp.data.train_pairs, vocab)
    return BatchStream(Pool.build(dirs, exp.train), exp.train, exp.train.seed), dirs, vocab


def _feed(bin_dir: Path, update_freq: int, rank: int = 0, world: int = 1) -> Feed:
    stream, dirs, vocab = _stream(bin_dir)
    return Feed(stream, dirs, vocab, Dist(rank, world, Dist.from_env().device, False), update_freq)


def test_feed_counts_every_ranks_target_tokens_and_resumes_at_the_consumed_cursor(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path)
    one = _feed(bin_dir, update_freq=4)
    halves = [_feed(bin_dir, update_freq=2, rank=r, world=2) for r in (0, 1)]
    for _ in range(3):  # an update of 4 batches on one rank = 2 + 2 on two ranks, with one token count
        whole, parts = one.next(), [h.next() for h in halves]
        assert whole.ntokens == sum(s.ntokens for s in whole.samples)
        assert all(p.ntokens == whole.ntokens for p in parts)
        assert [b.index for p in parts for b in p.batches] == [b.index for b in whole.batches]
    state, (ref, _, _) = one.state_dict(), _stream(bin_dir)
    ref.take(12)
    assert state == ref.state_dict()  # 3 updates of 4 batches, whatever the worker has built since
    expected = one.next()
    again = _feed(bin_dir, update_freq=4)
    again.load_state_dict(state)
    got = again.next()
    assert [(b.epoch, b.index) for b in got.batches] == [(b.epoch, b.index) for b in expected.batches]
    assert all((g.target == e.target).all() for g, e in zip(got.samples, expected.samples, strict=True))
    with pytest.raises(RuntimeError, match="before the first update"):
        again.load_state_dict(state)
    for f in (one, again, *halves):
        f.close()


def test_target_tokens_from_lengths_equal_the_collated_count(tmp_path: Path) -> None:
    stream, dirs, vocab = _stream(make_bin(tmp_path))
    batches = stream.take(7)
    assert target_tokens(stream.pool, batches) == sum(collate(dirs, b.rows, vocab).ntokens for b in batches)
