"""Token batching, the direction schedule, the resumable stream and collation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from lsnmt.data.corpus import Vocab, collate, load_split
from lsnmt.train.batching import BatchStream, Pool, batch_bounds, epoch_plan, eval_batches, rank_share
from tests.train.helpers import make_bin, tiny_experiment, write_direction

SIZES = {"en-de": 400, "en-fr": 100, "de-en": 200, "fr-en": 50}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Vocab]:
    root = make_bin(tmp_path_factory.mktemp("bin"), SIZES, max_len=20)
    return root, Vocab.load(root)


def pool_of(corpus: tuple[Path, Vocab], **train: object) -> Pool:
    root, vocab = corpus
    exp = tiny_experiment(**train)
    return Pool.build(load_split(root, "train", exp.data.train_pairs, vocab), exp.train)


def batches(pool: Pool, epoch: int = 0, **train: object) -> list[np.ndarray]:
    cfg = tiny_experiment(**train).train
    order, bounds = epoch_plan(pool, cfg, seed=1, epoch=epoch)
    return [pool.rows(order[a:b]) for a, b in bounds.tolist()]


def cost(pool: Pool, rows: np.ndarray) -> int:
    """fairseq's batch cost: sentences * longest (source or target) length, EOS included."""
    gids = pool.offsets[rows[:, 0]] + rows[:, 1]
    return len(rows) * int(np.maximum(pool.src_sizes[gids], pool.tgt_sizes[gids]).max())


@pytest.mark.parametrize("mode", ["direction", "mixed"])
@pytest.mark.parametrize("max_tokens", [21, 64, 300])
def test_batches_fit_max_tokens_and_cover_the_epoch_once(corpus, mode: str, max_tokens: int) -> None:
    pool = pool_of(corpus, batching=mode, max_tokens=max_tokens)
    got = batches(pool, batching=mode, max_tokens=max_tokens)
    assert all(cost(pool, b) <= max_tokens for b in got)
    seen = np.concatenate([pool.offsets[b[:, 0]] + b[:, 1] for b in got])
    assert sorted(seen.tolist()) == np.flatnonzero(pool.keep).tolist()
    homogeneous = [len(np.unique(b[:, 0])) == 1 for b in got]
    assert all(homogeneous) if mode == "direction" else not all(homogeneous)


def test_greedy_batching_matches_fairseq_rule() -> None:
    # fairseq batch_by_size: add while (n + 1) * max_len <= max_tokens
    assert batch_bounds(np.array([2, 2, 3, 3, 5]), None, 9).tolist() == [[0, 3], [3, 4], [4, 5]]
    assert batch_bounds(np.array([2, 2, 2, 2]), np.array([0, 0, 1, 1]), 100).tolist() == [[0, 2], [2, 4]]


def test_too_long_sentences_are_skipped(tmp_path: Path) -> None:
    write_direction(tmp_path, "train", "en-de", [[5] * 3, [5] * 30, [5] * 4], [[6] * 3, [6] * 3, [6] * 40])
    vocab = Vocab.load(make_bin(tmp_path / "b", {"en-de": 2}))
    pool = Pool.build(load_split(tmp_path, "train", (("en", "de"),), vocab),
                      tiny_experiment(max_tokens=40, max_source_positions=20).train)
    assert pool.keep.tolist() == [True, False, False]  # source 31 > 20 positions; target 41 > 40 tokens


def test_epochs_are_seeded(corpus) -> None:
    pool = pool_of(corpus)
    same = [a.tolist() == b.tolist() for a, b in zip(batches(pool, 0), batches(pool, 0), strict=True)]
    assert all(same)
    assert [b.tolist() for b in batches(pool, 0)] != [b.tolist() for b in batches(pool, 1)]


def test_direction_schedule_visits_directions_in_proportion(corpus) -> None:
    """After any prefix of the epoch, each direction has used about the same share of its sentences."""
    pool = pool_of(corpus)
    got = batches(pool, max_tokens=64)
    total = np.bincount(np.concatenate([b[:, 0] for b in got]), minlength=4)
    assert total.tolist() == list(SIZES.values())
    used = np.zeros(4)
    largest = max(len(b) for b in got)
    for k, b in enumerate(got, start=1):
        used[b[0, 0]] += len(b)
        expected = total * sum(len(x) for x in got[:k]) / total.sum()
        assert np.all(np.abs(used - expected) <= 2 * largest), (k, used, expected)


def test_mixed_batches_mix_directions_in_proportion(corpus) -> None:
    pool = pool_of(corpus, batching="mixed")
    got = batches(pool, batching="mixed", max_tokens=300)
    rows = np.concatenate([b[:, 0] for b in got])
    assert np.bincount(rows, minlength=4).tolist() == list(SIZES.values())
    half = np.bincount(np.concatenate([b[:, 0] for b in got[:len(got) // 2]]), minlength=4)
    share = half / half.sum()
    assert np.allclose(share, np.array(list(SIZES.values())) / sum(SIZES.values()), atol=0.08)


def test_stream_resumes_and_crosses_epochs(corpus) -> None:
    pool, cfg = pool_of(corpus), tiny_experiment().train
    a = BatchStream(pool, cfg, seed=1)
    n_epoch = len(epoch_plan(pool, cfg, 1, 0)[1])
    first = a.take(n_epoch - 2)
    state = a.state_dict()
    rest = a.take(5)
    assert [(g.epoch, g.index) for g in rest] == [(0, n_epoch - 2), (0, n_epoch - 1), (1, 0), (1, 1), (1, 2)]
    b = BatchStream(pool, cfg, seed=1)
    b.load_state_dict(state)
    assert [g.rows.tolist() for g in b.take(5)] == [g.rows.tolist() for g in rest]
    assert first[0].rows.tolist() != rest[2].rows.tolist()


def test_ranks_take_disjoint_shares_of_the_global_batches(corpus) -> None:
    pool, cfg = pool_of(corpus), tiny_experiment().train
    step = BatchStream(pool, cfg, seed=1).take(6)  # world 3, update_freq 2
    shares = [rank_share(step, r, 2) for r in range(3)]
    assert [(g.epoch, g.index) for s in shares for g in s] == [(g.epoch, g.index) for g in step]


def test_collate_follows_fairseq(tmp_path: Path) -> None:
    write_direction(tmp_path, "train", "de-en", [[7, 8], [9]], [[10], [11, 12, 13]])
    vocab = Vocab.load(make_bin(tmp_path / "b", {"en-de": 1}))
    dirs = load_split(tmp_path, "train", (("de", "en"),), vocab)
    s = collate(dirs, np.array([[0, 0], [0, 1]]), vocab)
    pad, eos = vocab.pad, vocab.eos
    assert s.src_tokens.tolist() == [[7, 8, eos], [9, eos, pad]]
    assert s.prev_output_tokens.tolist() == [[eos, 10, pad, pad], [eos, 11, 12, 13]]
    assert s.target.tolist() == [[10, eos, pad, pad], [11, 12, 13, eos]]
    assert s.ntokens == 6
    assert s.langs.uniform_src == 1 and s.langs.uniform_tgt == 0  # languages en, de, fr
    assert s.src_tokens.dtype == torch.long


def test_vectorised_collate_equals_the_per_sentence_reference(corpus) -> None:
    """The feed's gather (one per direction) gives fairseq's padded rows sentence by sentence, in any row order."""
    root, vocab = corpus
    dirs = load_split(root, "train", (("en", "de"), ("fr", "en"), ("de", "en")), vocab)
    rng = np.random.default_rng(0)
    rows = np.stack([rng.integers(0, 3, 40), rng.integers(0, 30, 40)], axis=1)
    s = collate(dirs, rows, vocab)
    pad, eos = vocab.pad, vocab.eos
    src = [dirs[d].src[i].tolist() for d, i in rows.tolist()]
    tgt = [dirs[d].tgt[i].tolist() for d, i in rows.tolist()]
    width_s, width_t = max(map(len, src)) + 1, max(map(len, tgt)) + 1
    assert s.src_tokens.tolist() == [x + [eos] + [pad] * (width_s - len(x) - 1) for x in src]
    assert s.prev_output_tokens.tolist() == [[eos] + y + [pad] * (width_t - len(y) - 1) for y in tgt]
    assert s.target.tolist() == [y + [eos] + [pad] * (width_t - len(y) - 1) for y in tgt]
    assert s.ntokens == sum(len(y) + 1 for y in tgt)


def test_mixed_collate_gives_per_row_languages(corpus) -> None:
    root, vocab = corpus
    dirs = load_split(root, "train", (("en", "de"), ("fr", "en")), vocab)
    s = collate(dirs, np.array([[0, 3], [1, 0]]), vocab)
    assert s.langs.src.tolist() == [0, 2] and s.langs.tgt.tolist() == [1, 0]


def test_eval_batches_are_deterministic_and_complete(corpus) -> None:
    root, vocab = corpus
    (d,) = load_split(root, "train", (("en", "de"),), vocab)
    got = eval_batches(d, 64)
    assert sorted(np.concatenate([b[:, 1] for b in got]).tolist()) == list(range(len(d)))
    assert [b.tolist() for b in got] == [b.tolist() for b in eval_batches(d, 64)]


def test_a_switch_training_batch_holds_several_directions(corpus: tuple[Path, Vocab]) -> None:
    """Switch's own batches (its kind's ``batching``, LMS-FD v1 footnote 4): with the experiment's one-direction
    batching, a Switch run's batches mix directions; an LMS run's do not."""
    from lsnmt.methods import train_settings

    pool = pool_of(corpus, max_tokens=256, batching="direction")
    exp = tiny_experiment(max_tokens=256, batching="direction")
    for kind, mixed in (("switch", True), ("lms", False)):
        cfg = train_settings(exp.train, kind)
        order, bounds = epoch_plan(pool, cfg, seed=1, epoch=0)
        per_batch = [len(np.unique(pool.rows(order[a:b])[:, 0])) for a, b in bounds.tolist()]
        assert (max(per_batch) > 1) is mixed, kind


@pytest.mark.parametrize("mode", ["direction", "mixed"])
def test_fixed_shape_buckets(corpus, mode: str) -> None:
    """``bucket_width``: each batch holds sentences of one length bucket, ``max_tokens // L`` of them (a bucket's
    last batch: the next power of two above its remainder, completed with repeats of that bucket), collated to
    ``(B, L)`` on both sides; every sentence of the epoch is in it, and the shapes form a small known set."""
    root, vocab = corpus
    width, max_tokens = 4, 64
    pool = pool_of(corpus, batching=mode, max_tokens=max_tokens, bucket_width=width)
    got = batches(pool, batching=mode, max_tokens=max_tokens, bucket_width=width)
    dirs = load_split(root, "train", tiny_experiment().data.train_pairs, vocab)
    seen, shapes = [], set()
    for rows in got:
        gids = pool.offsets[rows[:, 0]] + rows[:, 1]
        lengths = -(-np.maximum(pool.src_sizes[gids], pool.tgt_sizes[gids]) // width) * width
        assert len(set(lengths.tolist())) == 1  # one bucket
        full = max_tokens // int(lengths[0])
        assert len(rows) == full or (len(rows) < full and len(rows) & (len(rows) - 1) == 0)  # B_L or a power of 2
        s = collate(dirs, rows, vocab, pad_to=width)
        assert s.src_tokens.shape == s.target.shape == (len(rows), int(lengths[0]))
        shapes.add(tuple(s.src_tokens.shape))
        seen.append(gids)
        if mode == "direction":
            assert len(np.unique(rows[:, 0])) == 1
    everything = np.concatenate(seen)
    assert set(everything.tolist()) == set(np.flatnonzero(pool.keep).tolist())
    assert len(everything) < 1.25 * pool.keep.sum()  # repeats only complete remainders
    buckets = max_tokens // width
    assert len(shapes) <= buckets * (1 + int(np.log2(max_tokens // width)))


def test_padding_to_a_bucket_changes_no_loss(corpus) -> None:
    """The collater's padding to the bucket length leaves the loss and the gradients as they are."""
    from lsnmt.train.loss import default_criterion
    from models.build import build_transformer
    from tests.train.helpers import TINY_MODEL

    root, vocab = corpus
    exp = tiny_experiment()
    dirs = load_split(root, "train", exp.data.train_pairs, vocab)
    rows = np.stack([np.arange(6) % 3, np.arange(6)], axis=1)
    torch.manual_seed(0)
    model = build_transformer(type(exp.model)(**{**exp.model.__dict__, **TINY_MODEL, "dropout": 0.0}),
                              vocab_size=vocab.size, num_languages=3, padding_idx=vocab.pad).train()
    losses, grads = [], []
    for pad_to in (0, 16):
        model.zero_grad()
        loss, nll, _ = default_criterion(model, collate(dirs, rows, vocab, pad_to), 0.1, vocab.pad)
        loss.backward()
        losses.append(torch.stack([loss, nll]))
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    torch.testing.assert_close(losses[0], losses[1], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6)
